//! `joj trace [--fs KIND] [--dir D] -- COMMAND [ARGS…]`: any program as a traced workload on a
//! scratch filesystem, reported as a bench document with a per-file table.

use crate::args;
use crate::groups::{DEVICE, OUTPUT, OutDir, STACK, WORKLOAD};
use crate::output::{CliError, CliResult};
use clap::Args;
use joj_experiment::run::{CommandOptions, check_command, run_command};
use joj_linux::FsKind;
use std::ffi::OsString;
use std::path::PathBuf;

#[derive(Args)]
pub struct TraceRunArgs {
    /// Run the command in an empty directory of the scratch filesystem instead of the
    /// directory joj trace was started from.
    #[arg(long, help_heading = WORKLOAD)]
    empty: bool,
    /// Show the command the directory joj trace was started from through an overlay even when
    /// it is small enough to be copied onto the scratch filesystem (at most 4096 entries and
    /// 64 MiB of files, nothing but files, directories and links), which is the default: an
    /// overlay adds its own work to every create, unlink and write.
    #[arg(long, help_heading = WORKLOAD, conflicts_with = "empty")]
    overlay: bool,
    /// The command's own number of transactions: `block_per_txn` divides the totals by it
    /// [default: the commits counted in its databases, or 1 when none were].
    #[arg(long, value_name = "N", help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u64>(1, u64::MAX >> 1))]
    transactions: Option<u64>,
    /// Run in this directory (relative to where joj trace was started; created if missing).
    #[arg(long, help_heading = STACK)]
    dir: Option<PathBuf>,
    /// Scratch filesystem joj makes on a loop device for the command (needs root).
    #[arg(long, value_parser = args::traced_fs(), default_value = "ext4", help_heading = STACK)]
    fs: FsKind,
    /// Size of the scratch filesystem image in MiB.
    #[arg(long = "image-mib", default_value_t = 1024, help_heading = STACK, allow_negative_numbers = true, value_parser = args::within::<u64>(1, 1 << 24))]
    image_mib: u64,
    /// Per-CPU size of the kernel's buffer for the command's block events, in KiB (that much
    /// memory per CPU while it runs). A command that syncs hundreds of thousands of times can
    /// fill the default; joj then stops, saying how many events were lost [default: 65536].
    #[arg(long = "buffer-kib", value_name = "KIB", help_heading = STACK, allow_negative_numbers = true, value_parser = args::within::<u32>(1024, 1 << 20))]
    buffer_kib: Option<u32>,
    #[arg(long, value_name = "PROFILE", help_heading = DEVICE, help = crate::groups::profile_help("Replay the command's block trace through this device profile and give its modeled time there, host included (the profile's `host` section scales this machine's host time), next to the time measured here", "."))]
    device: Option<String>,
    #[command(flatten)]
    out: OutDir,
    /// Print one JSON document on stdout and nothing else (the command's stdout goes to
    /// stderr).
    #[arg(long, help_heading = OUTPUT)]
    json: bool,
    /// Also list what the summary says in one line (file data joj could not place on the
    /// device at some snapshot).
    #[arg(long, short, help_heading = OUTPUT)]
    verbose: bool,
    /// Also write the HTML report page (`joj report`) beside the trace in --out.
    #[arg(long, help_heading = OUTPUT)]
    report: bool,
    /// The program to run and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    argv: Vec<OsString>,
}

pub fn main(a: TraceRunArgs) -> CliResult {
    if a.argv.is_empty() {
        return Err(CliError::NoTraceCommand.into());
    }
    let start_dir = if a.empty {
        None
    } else {
        Some(std::env::current_dir().map_err(|source| CliError::StartDir { source })?)
    };
    let opts = CommandOptions {
        argv: a.argv,
        fs: a.fs,
        start_dir,
        overlay: a.overlay,
        dir: a.dir,
        image_size_bytes: a.image_mib << 20,
        trace_buffer_kb: a
            .buffer_kib
            .unwrap_or(joj_experiment::RunOptions::default().trace_buffer_kb),
        out_dir: Some(a.out.out.clone()),
        transactions: a.transactions,
        stdout_to_stderr: a.json,
        device: a
            .device
            .as_deref()
            .map(joj_device::Profile::load)
            .transpose()?
            .map(joj_experiment::stack::DevicePlan::new),
    };
    check_command(&opts)?;
    crate::output::check_output_folder("--out", &a.out.out)?;
    let result = run_command(&opts)?;
    if let Some(c) = result.command.as_ref().filter(|c| !c.succeeded()) {
        // Said first, apart from any report: there is none for a failed command.
        eprintln!(
            "joj: the command failed with {}: {} (run in {})",
            exit_of(c),
            joj_trace::terminal::escaped(&result.config.op),
            joj_trace::terminal::escaped(&c.cwd)
        );
        if !c.stderr_tail.is_empty() {
            eprintln!(
                "joj: the last {} line(s) of its standard error:",
                c.stderr_tail.len()
            );
            for l in &c.stderr_tail {
                eprintln!("  | {l}");
            }
        }
        return Err(failure(c, &result.config.op, a.image_mib, a.empty).into());
    }
    if a.json {
        outln!("{}", crate::output::json_for_terminal(&result)?)?;
    } else {
        out!("{}", crate::trace_report::table(&result, a.verbose))?;
        out!("{}", crate::meaning::of_trace(&result))?;
    }
    if let Some(c) = &result.command {
        for w in crate::trace_report::unseen(c) {
            eprintln!("joj: warning: {}", joj_trace::terminal::escaped(&w));
        }
    }
    if a.report {
        let plot = result.plot_file.clone();
        let kind = crate::report_doc::Kind::Run(Box::new(result));
        let page = crate::report_cmd::beside(kind, plot.as_deref(), &a.out.out)?;
        eprintln!("report: {}", page.display());
    }
    Ok(())
}

/// The error of a failed command, with the fix its end points to.
fn failure(
    c: &joj_experiment::result::CommandReport,
    command_line: &str,
    image_mib: u64,
    empty: bool,
) -> CliError {
    let exit = exit_of(c);
    let said = |needle: &str| c.stderr_tail.iter().any(|l| l.contains(needle));
    if c.filesystem_full {
        return CliError::CommandFailedFull { exit, image_mib };
    }
    let fix = if said("enable_load_extension") && said("AttributeError") {
        "this Python was built without loadable SQLite extensions (e.g. a pyenv build without \
         --enable-loadable-sqlite-extensions), so it cannot load libjoj; run the distribution's \
         interpreter instead: joj trace -- /usr/bin/python3 …"
            .to_string()
    } else if said("No space left on device") {
        // Full during the run, room again by its end (a failed overlay copy-up gives back what
        // it took): the scratch filesystem, not the command's own disk, ran out.
        format!(
            "the command ran out of space (ENOSPC) on the scratch filesystem joj gave it ({image_mib} \
             MiB; it was not full by the end: what failed gave its space back, e.g. an overlay \
             copying up a file it writes — the whole file, a sparse one made dense); give it a \
             larger one (--image-mib), or check that the command runs on its own"
        )
    } else if empty && said("No such file or directory") {
        "drop --empty: without it the command runs in the directory joj trace was started from, \
         where its files are"
            .to_string()
    } else if c.stderr_tail.is_empty() {
        format!(
            "the command printed no error; joj trace ran it in the directory it was started from \
             ({}), with its files and environment, so it fails the same way without joj — fix \
             the command (try `{command_line}` there); to trace a command that exits non-zero on \
             purpose, wrap it: joj trace -- sh -c 'COMMAND; true'",
            c.start_dir.as_deref().unwrap_or(&c.cwd),
        )
    } else {
        format!(
            "the lines above are the command's own error: joj trace ran it in the directory it \
             was started from ({}), with its files and environment, so it fails the same way \
             without joj — fix the command (try `{command_line}` there); to trace a command that \
             exits non-zero on purpose, wrap it: joj trace -- sh -c 'COMMAND; true'",
            c.start_dir.as_deref().unwrap_or(&c.cwd),
        )
    };
    CliError::CommandFailed { exit, fix }
}

fn exit_of(c: &joj_experiment::result::CommandReport) -> String {
    match (c.exit_code, c.signal) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => "no exit status".into(),
    }
}
