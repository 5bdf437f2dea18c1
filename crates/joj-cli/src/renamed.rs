//! Old spellings that still work for one release: each flag renamed to give joj's command line
//! one meaning per name keeps its old spelling as a hidden clap alias, and `joj crash` without a
//! subcommand becomes `joj crash device` or `joj crash fs`. A command given an old spelling
//! runs as before and says on stderr what the new spelling is. The table also feeds
//! docs/cli.md and the test that every old spelling still parses.

use std::ffi::{OsStr, OsString};

/// One renamed flag: in `command` (its words after `joj`), `old` is now `new`.
#[derive(Debug, Clone, Copy)]
pub struct Renamed {
    pub command: &'static str,
    pub old: &'static str,
    pub new: &'static str,
    /// A value the flag takes in the test that the old spelling parses (`None`: a switch).
    #[cfg_attr(not(test), allow(dead_code))]
    pub example: Option<&'static str>,
}

const fn r(
    command: &'static str,
    old: &'static str,
    new: &'static str,
    example: Option<&'static str>,
) -> Renamed {
    Renamed {
        command,
        old,
        new,
        example,
    }
}

/// Every renamed flag.
pub const RENAMED: &[Renamed] = &[
    r("bench", "--sync", "--synchronous", Some("normal")),
    r("compare", "--sync", "--synchronous", Some("normal")),
    r("speed", "--sync", "--synchronous", Some("normal")),
    r("speed", "-s", "--synchronous", Some("normal")),
    r("speed", "-n", "--transactions", Some("10")),
    r("restart", "-n", "--transactions", Some("10")),
    r("apptxn", "-n", "--transactions", Some("10")),
    r("apptxn", "-j", "--ftl", Some("xftl")),
    r("apptxn", "--journal", "--ftl", Some("xftl")),
    r("crash device", "-n", "--transactions", Some("10")),
    r("crash fs", "-n", "--transactions", Some("10")),
    r("crash fs", "-j", "--journal", Some("wal")),
    r("crash fs", "--fs-canary", "--canary", Some("skip-sync")),
    r("crash fs", "--fs-workload", "--workload", Some("postmark")),
    r("crash fs", "--save-dir", "--out", Some("joj-out")),
    r("replay", "--profile", "--device", Some("emmc5")),
    r(
        "replay",
        "--profile-for",
        "--device-for",
        Some("main=emmc5"),
    ),
    r("replay", "--same-profile-ok", "--same-device-ok", None),
    r("device format", "--profile", "--device", Some("emmc5")),
    r("device inspect", "--profile", "--device", Some("emmc5")),
    r("device run", "--profile", "--device", Some("emmc5")),
    r("device run", "--ops", "--requests", Some("10")),
];

/// `argv` with `joj crash`'s old spelling (no subcommand: power cuts; with `--fs` or
/// `--from-log`: crash states of a kernel filesystem) turned into the new one, and the notes to
/// print for every old spelling in it.
pub fn upgrade(mut argv: Vec<OsString>) -> (Vec<OsString>, Vec<String>) {
    let mut notes = Vec::new();
    if let Some(sub) = old_crash(&argv) {
        notes.push(format!(
            "note: `joj crash` without a subcommand is now `joj crash {sub}`; the old spelling \
             goes in the next release"
        ));
        argv.insert(2, sub.into());
    }
    for renamed in RENAMED {
        let given = flags_of(&argv, renamed.command)
            .is_some_and(|flags| flags.iter().any(|a| spells(a, renamed.old)));
        if given {
            notes.push(format!(
                "note: `joj {} {}` is now `{}`; the old spelling goes in the next release",
                renamed.command, renamed.old, renamed.new
            ));
        }
    }
    (argv, notes)
}

/// The old `joj crash` flags that meant crash states of a kernel filesystem.
const FS_ONLY: [&str; 14] = [
    "--fs",
    "--from-log",
    "--fs-canary",
    "--fs-workload",
    "--save-dir",
    "--save-log",
    "--judge-as",
    "--synchronous",
    "--shard",
    "--record-only",
    "--emmc-journal",
    "--states",
    "--journal",
    "-j",
];

/// `device` or `fs` when `argv` is `joj crash` in its old spelling (flags and no subcommand).
fn old_crash(argv: &[OsString]) -> Option<&'static str> {
    if argv.get(1).map(OsString::as_os_str) != Some(OsStr::new("crash")) {
        return None;
    }
    let first = argv.get(2).map(|a| a.to_string_lossy());
    match first.as_deref() {
        Some("-h" | "--help") => return None,
        Some(a) if !a.starts_with('-') => return None,
        _ => {}
    }
    let flags = until_dashdash(&argv[2..]);
    let fs = flags
        .iter()
        .any(|a| FS_ONLY.iter().any(|flag| spells(a, flag)));
    Some(if fs { "fs" } else { "device" })
}

/// The arguments after `joj COMMAND…` when `argv` runs `command` (its words), up to `--`.
fn flags_of<'a>(argv: &'a [OsString], command: &str) -> Option<&'a [OsString]> {
    let words: Vec<&str> = command.split(' ').collect();
    let given = argv.get(1..=words.len())?;
    given
        .iter()
        .zip(&words)
        .all(|(a, w)| a.as_os_str() == OsStr::new(w))
        .then(|| until_dashdash(&argv[1 + words.len()..]))
}

fn until_dashdash(args: &[OsString]) -> &[OsString] {
    let end = args
        .iter()
        .position(|a| a.as_os_str() == OsStr::new("--"))
        .unwrap_or(args.len());
    &args[..end]
}

/// Whether `arg` is the flag `flag`: `--flag`, `--flag=V`, or `-n`, `-nV`.
fn spells(arg: &OsStr, flag: &str) -> bool {
    let arg = arg.to_string_lossy();
    match arg.strip_prefix(flag) {
        Some("") => true,
        Some(rest) if flag.starts_with("--") => rest.starts_with('='),
        Some(_) => flag.len() == 2,
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<OsString> {
        s.split(' ').map(OsString::from).collect()
    }

    #[test]
    fn old_crash_spellings_get_their_subcommand() {
        let (a, notes) = upgrade(argv("joj crash --fs ext4 --fs-canary skip-sync"));
        assert_eq!(a, argv("joj crash fs --fs ext4 --fs-canary skip-sync"));
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert_eq!(upgrade(argv("joj crash --from-log=x")).0[2], "fs");
        assert_eq!(upgrade(argv("joj crash --cuts 3")).0[2], "device");
        assert_eq!(upgrade(argv("joj crash --shard 1/2")).0[2], "fs");
        assert_eq!(upgrade(argv("joj crash")).0, argv("joj crash device"));
        for same in [
            "joj crash --help",
            "joj crash merge a",
            "joj crash fs --fs ext4",
        ] {
            assert_eq!(upgrade(argv(same)), (argv(same), vec![]));
        }
    }

    /// Arguments a command needs besides the renamed flag, for it to parse.
    fn besides(r: &Renamed) -> &'static [&'static str] {
        match (r.command, r.old) {
            ("replay", "--same-profile-ok") => &["t.jsonl", "--device-for", "main=emmc5"],
            ("replay", _) => &["t.jsonl"],
            ("device format" | "device inspect", _) => &["image"],
            _ => &[],
        }
    }

    #[test]
    fn every_old_spelling_still_parses_to_the_new_one() {
        use clap::Parser;
        for r in RENAMED {
            let mut old = vec!["joj".to_string()];
            old.extend(r.command.split(' ').map(String::from));
            old.extend(besides(r).iter().map(|s| s.to_string()));
            let new = [old.clone(), vec![r.new.to_string()]].concat();
            old.push(r.old.to_string());
            let value: Vec<String> = r.example.iter().map(|v| v.to_string()).collect();
            let (old, notes) = upgrade(
                [old, value.clone()]
                    .concat()
                    .into_iter()
                    .map(OsString::from)
                    .collect(),
            );
            assert_eq!(notes.len(), 1, "{r:?}: {notes:?}");
            if let Err(e) = crate::Cli::try_parse_from(&old) {
                panic!("{r:?}: {e}");
            }
            if let Err(e) = crate::Cli::try_parse_from([new, value].concat()) {
                panic!("{r:?}, new spelling: {e}");
            }
        }
    }

    #[test]
    fn a_note_is_only_for_an_old_spelling_of_that_command() {
        assert_eq!(upgrade(argv("joj speed -n 5")).1.len(), 1);
        assert_eq!(upgrade(argv("joj speed -n5")).1.len(), 1);
        assert_eq!(upgrade(argv("joj bench --sync=normal")).1.len(), 1);
        assert!(
            upgrade(argv("joj bench -n 5 --synchronous full"))
                .1
                .is_empty()
        );
        assert!(
            upgrade(argv("joj trace -- bench --sync normal"))
                .1
                .is_empty()
        );
        assert!(upgrade(argv("joj device run --opsx")).1.is_empty());
    }
}
