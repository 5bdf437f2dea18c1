//! Saving a run's evidence in `--save-dir`: its log (when it found violations, or always with
//! `--save-log`) and the violating states, each with the command that rebuilds them.
//!
//! Nothing saved before is ever replaced without `--force`: a second run into the same folder
//! gets the next free name (`crash-ext4-wal-2.blocklog`, …), each name taken only if free
//! (`joj_trace::output::publish_unique`), so two runs at once keep their own files too. Each
//! file is written whole to a temporary name, synced, and only then given its name.

use std::path::{Path, PathBuf};

use joj_linux::record::BlockLog;
use joj_trace::OutputError;
use joj_trace::output::{Existing, OutputDir, Staged};

use super::error::CrashFsError;
use super::options::{CrashFsOptions, FsWorkload};
use super::report::Found;
use super::workload::StockSync;

/// Where the evidence went.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Saved {
    pub log: Option<PathBuf>,
    pub violations: Option<PathBuf>,
}

/// The stem of a recorded run's files: `crash-<fs>-<mode>` (`-postmark` for that workload).
fn stem(opts: &CrashFsOptions) -> String {
    match opts.workload {
        FsWorkload::Sqlite => format!("crash-{}-{}", opts.fs, opts.mode),
        FsWorkload::Postmark => format!("crash-{}-postmark", opts.fs),
    }
}

/// The command that checks the same states of the log at `log` again.
pub fn replay_command(opts: &CrashFsOptions, log: &Path) -> String {
    format!(
        "joj crash --fs {} --journal {}{}{}{} --states {} --seed {} --from-log {}",
        opts.fs,
        opts.mode,
        match (opts.workload, opts.emmc_journal) {
            (FsWorkload::Sqlite, false) => "",
            (FsWorkload::Sqlite, true) => " --emmc-journal",
            (FsWorkload::Postmark, false) => " --fs-workload postmark",
            (FsWorkload::Postmark, true) => " --fs-workload postmark --emmc-journal",
        },
        opts.canary
            .map_or(String::new(), |c| format!(" --fs-canary {}", c.name())),
        if opts.sync == StockSync::default_for(opts.mode) {
            String::new()
        } else {
            format!(" --synchronous {}", opts.sync.name())
        },
        opts.states,
        opts.seed,
        shell_word(log)
    )
}

/// `path` as one word of a POSIX shell command line (quoted when it needs to be): a log's name
/// is someone else's choice, and the command is made to be pasted into a shell. A name that is
/// not plain text — bytes that are not UTF-8, control or bidirectional-formatting characters,
/// which a terminal would act on or show as another name — is written in dollar-single quotes
/// (`$'…'`, POSIX.1-2024, bash, zsh, ksh) with each such byte as `\ooo`: the same bytes, and
/// nothing for the terminal to act on.
fn shell_word(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.chars().any(joj_trace::terminal::acts_on_terminal) => {
            // A path holds no NUL, the one thing the quoter refuses.
            shlex::try_quote(text).map_or_else(
                |_| "'<a path with a NUL byte>'".into(),
                std::borrow::Cow::into_owned,
            )
        }
        _ => dollar_quoted(bytes),
    }
}

/// `bytes` in dollar-single quotes, every byte outside printable ASCII as `\ooo` (octal).
fn dollar_quoted(bytes: &[u8]) -> String {
    let mut word = String::from("$'");
    for &b in bytes {
        match b {
            b'\'' => word.push_str("\\'"),
            b'\\' => word.push_str("\\\\"),
            0x20..=0x7e => word.push(char::from(b)),
            // Three octal digits: one byte in every `$'…'` (a `\x` may take more digits).
            _ => word.push_str(&format!("\\{b:03o}")),
        }
    }
    word.push('\'');
    word
}

/// Publishes `staged` in `dir` as `<stem><suffix>`: replacing that file with `force`, else
/// under the first free stem of `stem`, `stem-2`, … The path returned (and an error) names the
/// folder as the user named it.
fn publish(
    dir: &OutputDir,
    stem: &str,
    suffix: &str,
    staged: Staged,
    force: bool,
) -> Result<PathBuf, OutputError> {
    if force {
        dir.publish(staged, &format!("{stem}{suffix}"), Existing::Replace)
    } else {
        let [path] = dir.publish_unique(stem, [(suffix, staged)])?;
        Ok(path)
    }
}

/// Saves the evidence of a run of `opts` in `dir`: the recorded `log` (unless the run read a
/// saved one, `from_log`) when `found` is not empty or `opts.save_log`, then the violating
/// states, naming the log they come from.
pub fn save(
    dir: &Path,
    opts: &CrashFsOptions,
    log: &BlockLog,
    found: &[Found],
    force: bool,
) -> Result<Saved, CrashFsError> {
    let fail = CrashFsError::SaveDir;
    let mut saved = Saved::default();
    // Checked before the run too; again now, as the folder may have changed meanwhile, and
    // held open from here on (files are written through its descriptor).
    let make_dir = || {
        joj_trace::output::check_output_dir(dir).map_err(fail)?;
        OutputDir::open(dir).map_err(fail)
    };
    let mut held = None;
    let log_path = match &opts.from_log {
        Some(input) => Some(input.clone()),
        None if opts.save_log || !found.is_empty() => {
            let out = held.insert(make_dir()?);
            let name = format!("{}.blocklog", stem(opts));
            let staged = out
                .stage(&name, |w| {
                    log.write_to(w).map_err(|e| OutputError::Write {
                        path: dir.join(&name),
                        source: std::io::Error::other(e),
                    })
                })
                .map_err(fail)?;
            let path = publish(out, &stem(opts), ".blocklog", staged, force).map_err(fail)?;
            saved.log = Some(path.clone());
            Some(path)
        }
        None => None,
    };
    let (Some(log_path), false) = (log_path, found.is_empty()) else {
        return Ok(saved);
    };
    let out = match held {
        Some(out) => out,
        None => make_dir()?,
    };
    // The violations are named after the log they come from.
    let log_stem = log_path
        .file_stem()
        .map_or_else(|| stem(opts), |s| s.to_string_lossy().into_owned());
    let doc = serde_json::json!({
        "log": log_path,
        "fs": opts.fs.to_string(),
        "journal": opts.mode.to_string(),
        "seed": opts.seed,
        "states": opts.states,
        "replay": replay_command(opts, &log_path),
        "found": found,
    });
    let json_stem = format!("{log_stem}-violations");
    let name = format!("{json_stem}.json");
    let staged = out
        .stage(&name, |w| {
            serde_json::to_writer_pretty(w, &doc).map_err(|e| OutputError::Write {
                path: dir.join(&name),
                source: e.into(),
            })
        })
        .map_err(fail)?;
    let path = publish(&out, &json_stem, ".json", staged, force).map_err(fail)?;
    saved.violations = Some(path);
    Ok(saved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_logs_name_is_one_word_of_the_command_whatever_it_holds() {
        for name in [
            "rec/crash-ext4-wal.blocklog",
            "x;touch PWNED;$(id>&2).blocklog",
            "it's a `log` with spaces and \"quotes\"",
        ] {
            let word = shell_word(Path::new(name));
            assert_eq!(
                shlex::split(&word),
                Some(vec![name.to_string()]),
                "{name:?} as {word}"
            );
        }
    }

    /// What `bash` makes of `word`: the bytes of the one argument it stands for.
    fn bash_word(word: &str) -> Vec<u8> {
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("printf %s {word}"))
            .output()
            .expect("bash runs");
        assert!(out.status.success(), "{word}");
        out.stdout
    }

    #[test]
    fn a_name_that_is_not_plain_text_is_the_same_bytes_with_nothing_for_the_terminal() {
        use std::os::unix::ffi::OsStrExt;
        for name in [
            &b"caf\xe9-latin1.blocklog"[..],
            b"evil\x1b]0;pwned\x07\x1b[2J.blocklog",
            b"new\nline 'quoted' back\\slash.blocklog",
            "rtl\u{202E}gol.blocklog".as_bytes(),
            "\u{9b}c1.blocklog".as_bytes(),
        ] {
            let path = Path::new(std::ffi::OsStr::from_bytes(name));
            let word = shell_word(path);
            assert!(word.is_ascii(), "{word}");
            assert!(!word.bytes().any(|b| b.is_ascii_control()), "{word}");
            assert_eq!(bash_word(&word), name, "{word}");
        }
    }
}
