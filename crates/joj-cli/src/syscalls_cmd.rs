//! `joj syscalls`: Mobigen-style record and replay of file-system calls
//! (`docs/formats/syscalls.md`). `record` runs a command under strace and imports its output,
//! `import-strace` imports strace output made elsewhere, `replay` re-executes a recording on a
//! scratch filesystem, traced and classified like `joj trace -- COMMAND`.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use clap::{Args, Subcommand, ValueEnum};
use joj_experiment::run::{SyscallReplayOptions, replay_syscalls};
use joj_linux::FsKind;
use joj_trace::TraceError;
use joj_trace::output::{Existing, write_atomically};
use joj_workload::syscalls::{ImportOptions, Recording, STRACE_CALLS, Timing, import_strace};

use crate::args;
use crate::output::{CliError, CliResult, check_output_file, check_outputs_differ};
use crate::progress::Progress;

#[derive(Args)]
pub struct SyscallsArgs {
    #[command(subcommand)]
    command: SyscallsCommand,
}

/// Where the recorded root is and whether the recording has a `joj bench` window.
#[derive(Args, Clone)]
#[group(required = true, multiple = true)]
struct RootArgs {
    /// The directory the program worked in: calls on paths and descriptors outside it are
    /// dropped (and counted).
    #[arg(long, help_heading = crate::groups::WORKLOAD)]
    root: Option<PathBuf>,
    /// The recording is of `joj bench --trace` on a scratch filesystem: its window's two
    /// `syncfs` calls become the measured window, and without --root the root is their
    /// directory.
    #[arg(long, help_heading = crate::groups::WORKLOAD)]
    bench_window: bool,
}

#[derive(Subcommand)]
enum SyscallsCommand {
    /// Run COMMAND under strace and write its file-system calls as a recording.
    Record {
        #[command(flatten)]
        root: RootArgs,
        /// What a replay divides its totals by (the command's own transactions).
        #[arg(long, value_name = "N", default_value_t = 1, help_heading = crate::groups::WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u64>(1, u64::MAX >> 1))]
        transactions: u64,
        /// The recording to write (an existing file only with --force).
        #[arg(short, long, help_heading = crate::groups::OUTPUT)]
        output: PathBuf,
        /// Also keep strace's own output here.
        #[arg(long, help_heading = crate::groups::OUTPUT)]
        keep_strace: Option<PathBuf>,
        /// Replace an existing output file.
        #[arg(long, help_heading = crate::groups::OUTPUT)]
        force: bool,
        /// The program to record and its arguments, after `--`.
        #[arg(last = true, value_name = "COMMAND", required = true)]
        argv: Vec<OsString>,
    },
    /// Convert `strace -f -ttt -T -y -o FILE` output into a recording.
    ImportStrace {
        strace: PathBuf,
        #[command(flatten)]
        root: RootArgs,
        /// What a replay divides its totals by.
        #[arg(long, value_name = "N", default_value_t = 1, help_heading = crate::groups::WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u64>(1, u64::MAX >> 1))]
        transactions: u64,
        /// The recording to write (never the input; an existing file only with --force).
        #[arg(short, long, help_heading = crate::groups::OUTPUT)]
        output: PathBuf,
        /// Replace an existing output file.
        #[arg(long, help_heading = crate::groups::OUTPUT)]
        force: bool,
    },
    /// Re-execute a recording on a scratch filesystem, traced and classified.
    Replay(Box<ReplayArgs>),
}

#[derive(Args)]
struct ReplayArgs {
    recording: PathBuf,
    /// `recorded`: each call at its recorded time (think times kept); `fast`: as soon as the
    /// calls recorded before it have started.
    #[arg(long, value_enum, default_value_t = TimingArg::Recorded, help_heading = crate::groups::WORKLOAD)]
    timing: TimingArg,
    /// Divide the totals by this many transactions (default: the recording's own).
    #[arg(long, value_name = "N", help_heading = crate::groups::WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u64>(1, u64::MAX >> 1))]
    transactions: Option<u64>,
    /// Scratch filesystem joj makes on a loop device for the replay (needs root).
    #[arg(long, value_parser = args::traced_fs(), default_value = "ext4", help_heading = crate::groups::STACK)]
    fs: FsKind,
    /// Size of the scratch filesystem image in MiB.
    #[arg(long = "image-mib", default_value_t = 1024, help_heading = crate::groups::STACK, allow_negative_numbers = true, value_parser = args::within::<u64>(1, 1 << 24))]
    image_mib: u64,
    #[arg(long, value_name = "PROFILE", help_heading = crate::groups::DEVICE, help = crate::groups::profile_help("Also replay the replay's block trace through this emulated device profile", ". Adds a `device` section, as `joj bench --device`."))]
    device: Option<String>,
    #[command(flatten)]
    out: crate::groups::OutDir,
    /// Print one JSON document on stdout and nothing else.
    #[arg(long, help_heading = crate::groups::OUTPUT)]
    json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TimingArg {
    Recorded,
    Fast,
}

pub fn main(a: SyscallsArgs) -> CliResult {
    match a.command {
        SyscallsCommand::Record {
            output,
            root,
            transactions,
            keep_strace,
            force,
            argv,
        } => record(
            &output,
            &root,
            transactions,
            keep_strace.as_deref(),
            force,
            &argv,
        ),
        SyscallsCommand::ImportStrace {
            strace,
            output,
            root,
            transactions,
            force,
        } => {
            check_output_file("-o/--output", &output, force, &[&strace])?;
            let text = read_strace(&strace)?;
            let opts = import_options(&root, transactions, None);
            let rec = import_strace(
                &String::from_utf8_lossy(&text),
                &format!("strace output {}", strace.display()),
                &opts,
            )?;
            write_recording(&output, &rec, force)
        }
        SyscallsCommand::Replay(r) => replay(*r),
    }
}

fn import_options(root: &RootArgs, transactions: u64, command: Option<String>) -> ImportOptions {
    ImportOptions {
        // The recording's paths are absolute: a root given relative (`--root .`) is taken
        // from joj's working directory, as the shell would.
        root: root
            .root
            .as_ref()
            .map(|r| std::path::absolute(r).unwrap_or_else(|_| r.clone())),
        bench_window: root.bench_window,
        transactions,
        command,
    }
}

fn write_recording(output: &Path, rec: &Recording, force: bool) -> CliResult {
    write_atomically(output, Existing::replace_if(force), |w| {
        rec.write(&mut *w).map_err(TraceError::from)
    })?;
    eprintln!(
        "recorded {} calls of {} thread(s) under {} into {} ({} outside the root dropped{})",
        rec.header.calls,
        rec.header.threads,
        rec.header.root,
        output.display(),
        rec.header.dropped_outside_root,
        if rec.has_window() {
            "; with a joj bench window"
        } else {
            ""
        }
    );
    if rec.header.dropped_inherited > 0 {
        eprintln!("joj: {}", inherited_note(&rec.header));
    }
    Ok(())
}

/// What the import left out on descriptors the program did not open itself.
fn inherited_note(h: &joj_workload::syscalls::Header) -> String {
    let mut fds: Vec<String> = h.inherited_fds.iter().map(ToString::to_string).collect();
    if fds.len() >= joj_workload::syscalls::format::MAX_INHERITED_FDS_LISTED {
        fds.push("…".into());
    }
    format!(
        "{} call(s) inside the root on descriptor(s) {}, which the program did not open inside \
         the recording, left out: descriptors it inherited (its standard input and output, one \
         its parent passed) or copies of them; a replay has no file behind them, so what was \
         read or written through them is not replayed (a program that strace attached to while \
         running: record it from its start instead; strace output made elsewhere: with the \
         calls of joj syscalls record's -e trace= list, which follow copies)",
        h.dropped_inherited,
        fds.join(", ")
    )
}

fn record(
    output: &Path,
    root: &RootArgs,
    transactions: u64,
    keep_strace: Option<&Path>,
    force: bool,
    argv: &[OsString],
) -> CliResult {
    check_output_file("-o/--output", output, force, &[])?;
    if let Some(k) = keep_strace {
        check_outputs_differ(("--keep-strace", k), ("-o/--output", output))?;
        check_output_file("--keep-strace", k, force, &[output])?;
    }
    let strace = joj_linux::prereq::find_tool("strace")?;
    // strace's output goes into a directory of joj's own (mode 0700, a name nobody can guess
    // before it exists): strace -o follows a symlink, and a fixed name in a shared $TMPDIR is
    // one anybody can plant (joj runs as root). Removed with everything in it when dropped.
    let parent = std::env::temp_dir();
    let dir = tempfile::Builder::new()
        .prefix("joj-strace-")
        .tempdir_in(&parent)
        .map_err(|source| CliError::StraceDir { parent, source })?;
    let tmp = dir.path().join("strace.txt");
    let status = std::process::Command::new(&strace)
        .args(["-f", "-ttt", "-T", "-y", "-q", "-e", "signal=none"])
        .arg(format!("-etrace={STRACE_CALLS}"))
        .arg("-o")
        .arg(&tmp)
        .arg("--")
        .args(argv)
        .status()
        .map_err(|source| CliError::Open {
            path: strace.clone(),
            source,
        })?;
    let text = read_strace(&tmp);
    drop(dir);
    let text = text?;
    if let Some(k) = keep_strace {
        write_atomically(k, Existing::replace_if(force), |w| {
            w.write_all(&text).map_err(TraceError::from)
        })?;
    }
    if !status.success() {
        return Err(CliError::RecordedCommandFailed {
            status: status.to_string(),
        }
        .into());
    }
    let line = joj_experiment::run::command_line(argv);
    let opts = import_options(root, transactions, Some(line));
    let rec = import_strace(
        &String::from_utf8_lossy(&text),
        "the strace output of the command",
        &opts,
    )?;
    write_recording(output, &rec, force)
}

/// The largest strace output imported: it is held in memory whole, with every call taken
/// apart (a traced `joj bench` of 300 transactions writes 1 MiB of it).
const MAX_STRACE_BYTES: u64 = 1 << 30;

/// strace's output in `path`: a regular file of at most [`MAX_STRACE_BYTES`].
fn read_strace(path: &Path) -> Result<Vec<u8>, joj_trace::InputError> {
    joj_trace::input::read_all(path, MAX_STRACE_BYTES, "strace output")
}

/// A replay at the recorded times waiting longer than this is announced before it starts.
const LONG_REPLAY_NS: u64 = 10_000_000_000;

/// What to say before a replay at the recorded times that will wait `span_ns` at least, when
/// that is long: the recording decides how long the scratch filesystem is held.
fn long_replay_note(span_ns: u64) -> Option<String> {
    (span_ns > LONG_REPLAY_NS).then(|| {
        let s = span_ns / 1_000_000_000;
        let took = match s {
            0..3600 => format!("{} min {} s", s / 60, s % 60),
            _ => format!("{} h {} min", s / 3600, s % 3600 / 60),
        };
        format!(
            "joj: replaying at the recorded times takes at least {took} (the calls' recorded \
             span, gaps longer than {} s shortened to it); --timing fast replays each call as \
             soon as it may",
            joj_workload::syscalls::MAX_GAP_NS / 1_000_000_000
        )
    })
}

fn replay(a: ReplayArgs) -> CliResult {
    let rec = Recording::read_file(&a.recording)?;
    let device = match &a.device {
        Some(name) => Some(joj_experiment::stack::DevicePlan::new(
            joj_device::Profile::load(name)?,
        )),
        None => None,
    };
    crate::output::check_output_folder("--out", &a.out.out)?;
    // Each phase (before the window, the window) is replayed on its own.
    let (before, window) = rec.phases();
    let span = joj_workload::syscalls::recorded_span_ns(before)
        .saturating_add(joj_workload::syscalls::recorded_span_ns(window));
    if let (TimingArg::Recorded, Some(note)) = (&a.timing, long_replay_note(span)) {
        eprintln!("{note}");
    }
    let progress = Progress::start_counting(rec.header.calls, "replay", "calls");
    let opts = SyscallReplayOptions {
        fs: a.fs,
        image_size_bytes: a.image_mib << 20,
        trace_buffer_kb: joj_experiment::RunOptions::default().trace_buffer_kb,
        out_dir: Some(a.out.out.clone()),
        timing: match a.timing {
            TimingArg::Recorded => Timing::Recorded,
            TimingArg::Fast => Timing::Fast,
        },
        transactions: a.transactions,
        name: a.recording.display().to_string(),
        progress: Some(progress.counter.clone()),
        device,
    };
    let (result, played) = replay_syscalls(&rec, &opts)?;
    progress.counter.store(rec.header.calls, Ordering::Relaxed);
    drop(progress);
    let capped = played.before_window.capped_gaps + played.window.capped_gaps;
    if capped > 0 {
        eprintln!(
            "joj: {capped} recorded gap(s) between calls longer than {} s were shortened to it \
             ({:.1} s of recorded idle time not replayed)",
            joj_workload::syscalls::MAX_GAP_NS / 1_000_000_000,
            (played.before_window.cut_ns + played.window.cut_ns) as f64 / 1e9
        );
    }
    if a.json {
        outln!("{}", crate::output::json_for_terminal(&result)?)?;
    } else {
        outln!(
            "replayed {} ({} calls, {} thread(s)): {} before the window unmeasured, {} measured; {} call(s) that failed when recorded succeeded here",
            a.recording.display(),
            rec.header.calls,
            rec.header.threads,
            played.before_window.calls,
            played.window.calls,
            played.before_window.unexpected_successes + played.window.unexpected_successes
        )?;
        out!("{}", crate::trace_report::table(&result, false))?;
        if let Some(d) = &result.device {
            outln!(
                "  device {} (trace replayed): {:.1} transactions/s modeled ({:.4} s), WAF {:.2}, {} flushes, {} FUA, {} GC copies",
                d.profile,
                d.modeled_ops_per_sec,
                d.modeled_s,
                d.waf,
                d.flushes,
                d.fua,
                d.gc_copies
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_replay_is_announced_with_its_length() {
        let s = 1_000_000_000;
        assert_eq!(long_replay_note(10 * s), None);
        let minute = long_replay_note(60 * s).unwrap();
        assert!(minute.contains("at least 1 min 0 s"), "{minute}");
        assert!(minute.contains("--timing fast"), "{minute}");
        // 9,500 gaps of a minute each: what a 1 MiB recording can hold.
        let days = long_replay_note(9_500 * 60 * s).unwrap();
        assert!(days.contains("at least 158 h 20 min"), "{days}");
    }
}
