//! `joj`: the command line. Thin by design: it parses arguments (joj's long options and
//! Mobibench's short flags), shows progress on stderr, and prints tables or one JSON document
//! on stdout. Everything it runs lives in the library crates.

#[macro_use]
mod output;
mod apptxn_cmd;
mod args;
mod bench;
mod cleanup_cmd;
#[cfg(test)]
mod cli_doc;
mod compare;
mod completion_args;
mod crash_cmd;
mod crash_fs_cmd;
mod device_cmd;
mod groups;
mod meaning;
mod modeled_text;
mod paper_figures_doc;
mod progress;
mod renamed;
mod replay_cmd;
mod replay_devices_cmd;
mod report_cmd;
mod report_doc;
mod report_page;
mod report_papers;
mod report_parts;
mod restart_cmd;
mod speed_cmd;
mod syscalls_cmd;
mod trace_cmd;
mod trace_report;
mod trace_run;
mod version;
mod waldio_cmd;

use clap::{CommandFactory, Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "joj",
    about = "Measure and remove the journaling of journal (JOJ) of SQLite on flash",
    disable_version_flag = true
)]
struct Cli {
    /// Print joj's and SQLite's versions and the SQLite compile options joj depends on.
    #[arg(short = 'V', long = "version")]
    version: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run one SQLite or file workload (Mobibench-compatible) and report it.
    Bench(Box<bench::BenchArgs>),
    /// Run one operation in every journal mode on one filesystem, traced, and compare the JOJ.
    Compare(Box<compare::CompareArgs>),
    /// Transactions per second of journal modes against stock WAL: interleaved rounds, medians.
    Speed(Box<speed_cmd::SpeedArgs>),
    /// Run a command on a scratch filesystem and classify its block I/O (`joj trace [--fs KIND]
    /// [--dir D] -- COMMAND [ARGS…]`), or work with block traces: import blkparse text,
    /// summarise, plot.
    Trace(trace_cmd::TraceArgs),
    /// Record a program's file-system calls (strace) and replay them on a scratch filesystem,
    /// traced and classified (Mobigen-style).
    Syscalls(syscalls_cmd::SyscallsArgs),
    /// Replay a block trace (joj-trace or blkparse text) through an emulated eMMC profile.
    Replay(Box<replay_cmd::ReplayArgs>),
    /// Restart time after a power cut, per journal mode, on one device profile (X-FTL Table 5).
    Restart(Box<restart_cmd::RestartArgs>),
    /// Crash tests: power cuts inside the emulated device while a paper workload runs on X-FTL
    /// (`crash device`), or crash states of SQLite on a real kernel filesystem, recorded block
    /// by block and checked (`crash fs`).
    Crash(Box<crash_cmd::CrashArgs>),
    /// One self-contained HTML page from saved results (bench, compare, trace, crash, replay
    /// JSON): tables, plots, the runs' facts and what they mean.
    Report(report_cmd::ReportArgs),
    /// Emulated eMMC: format / inspect an image file, run fio-like synthetic workloads.
    Device(device_cmd::DeviceArgs),
    /// The i-FTL paper's withdraw/deposit: application transactions over two databases and a
    /// file, on X-FTL's eMMC or the i-FTL device.
    Apptxn(Box<apptxn_cmd::ApptxnArgs>),
    /// WALDIO: convert a database for the waldio VFS, inspect its WAL.
    Waldio(waldio_cmd::WaldioArgs),
    /// Remove what dead joj runs left behind (tracefs instances, mounts, loop devices, images,
    /// temporary directories); every run also does this first.
    Cleanup(cleanup_cmd::CleanupArgs),
}

/// The commands, as clap knows them, comma-separated.
fn command_names() -> String {
    Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|name| name != "help")
        .collect::<Vec<_>>()
        .join(", ")
}

fn main() -> ExitCode {
    let (argv, notes) = renamed::upgrade(std::env::args_os().collect());
    for note in notes {
        eprintln!("joj: {note}");
    }
    let cli = Cli::parse_from(argv);
    if cli.version {
        return match out!("{}", version::long_version()) {
            Err(e) if !output::is_closed_pipe(&e) => {
                eprintln!("joj: error: {e}");
                ExitCode::FAILURE
            }
            _ => ExitCode::SUCCESS,
        };
    }
    // Every emulated device is checked against what this process may allocate before it is
    // made (a failed allocation would abort part-way); unknown limits leave it unchecked.
    if let Ok(bytes) = joj_linux::memory::model_limit_bytes() {
        joj_device::memory_budget::set_limit_bytes(bytes);
    }
    let result = match cli.command {
        Some(Command::Bench(a)) => bench::main(*a),
        Some(Command::Compare(a)) => compare::main(*a),
        Some(Command::Speed(a)) => speed_cmd::main(*a),
        Some(Command::Trace(a)) => trace_cmd::main(a),
        Some(Command::Syscalls(a)) => syscalls_cmd::main(a),
        Some(Command::Replay(a)) => replay_cmd::main(*a),
        Some(Command::Restart(a)) => restart_cmd::main(*a),
        Some(Command::Crash(a)) => crash_cmd::main(*a),
        Some(Command::Report(a)) => report_cmd::main(a),
        Some(Command::Device(a)) => device_cmd::main(a),
        Some(Command::Apptxn(a)) => apptxn_cmd::main(*a),
        Some(Command::Waldio(a)) => waldio_cmd::main(a),
        Some(Command::Cleanup(a)) => cleanup_cmd::main(a),
        None => {
            eprintln!("joj: give a command ({}) or --help", command_names());
            return ExitCode::from(2);
        }
    };
    // After SIGINT/SIGTERM the cleanup ends the process with 128 + signal once it has released
    // everything: what the run returned then (often the error its vanishing filesystem gave
    // the workload) is the signal's doing, and is neither said nor allowed to exit first.
    joj_linux::cleanup::wait_if_cleaning();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if output::is_closed_pipe(e.as_ref()) => ExitCode::SUCCESS,
        Err(e) => {
            for line in output::error_lines(e.as_ref()) {
                eprintln!("{line}");
            }
            ExitCode::FAILURE
        }
    }
}
