//! `joj trace [--fs KIND] [--dir D] -- COMMAND [ARGS…]`: any program as a traced workload on a
//! scratch filesystem, reported as a bench document with a per-file table.

use crate::args;
use crate::output::{CliError, CliResult};
use clap::Args;
use joj_experiment::RunResult;
use joj_experiment::run::{CommandOptions, check_command, run_command};
use joj_linux::FsKind;
use std::ffi::OsString;
use std::path::PathBuf;

#[derive(Args)]
pub struct TraceRunArgs {
    /// Scratch filesystem joj makes on a loop device for the command (needs root).
    #[arg(long, value_parser = args::traced_fs(), default_value = "ext4")]
    fs: FsKind,
    /// Run in this directory inside the scratch filesystem (relative; created), instead of its
    /// top directory.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Directory for the trace file and SVG plot (created if missing); a taken name gets `-2`,
    /// `-3`, …
    #[arg(long, default_value = "joj-out")]
    out: PathBuf,
    /// Print one JSON document on stdout and nothing else (the command's stdout goes to
    /// stderr).
    #[arg(long)]
    json: bool,
    /// Size of the scratch filesystem image in MiB.
    #[arg(long = "image-mib", default_value_t = 1024, allow_negative_numbers = true, value_parser = args::within::<u64>(1, 1 << 24))]
    image_mib: u64,
    /// The command's own number of transactions: `block_per_txn` divides the totals by it
    /// (default 1: the whole command).
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = args::within::<u64>(1, u64::MAX >> 1))]
    transactions: u64,
    /// Replay the command's block trace through this device profile and give its modeled time
    /// there, host included (the profile's `host` section scales this machine's host time),
    /// next to the time measured here.
    #[arg(long)]
    device: Option<String>,
    /// The program to run and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    argv: Vec<OsString>,
}

pub fn main(a: TraceRunArgs) -> CliResult {
    if a.argv.is_empty() {
        return Err(CliError::NoTraceCommand.into());
    }
    let opts = CommandOptions {
        argv: a.argv,
        fs: a.fs,
        dir: a.dir,
        image_size_bytes: a.image_mib << 20,
        trace_buffer_kb: joj_experiment::RunOptions::default().trace_buffer_kb,
        out_dir: Some(a.out.clone()),
        transactions: a.transactions,
        stdout_to_stderr: a.json,
        device: a
            .device
            .as_deref()
            .map(joj_device::Profile::load)
            .transpose()?
            .map(|profile| joj_experiment::stack::DevicePlan {
                profile,
                aging_validity: None,
                completion: None,
                journal_profile: None,
                emmc_journal_mib: None,
            }),
    };
    check_command(&opts)?;
    crate::output::check_output_folder("--out", &a.out)?;
    let result = run_command(&opts)?;
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&result)?)?;
    } else {
        out!("{}", table(&result))?;
    }
    if let Some(c) = &result.command {
        for w in unseen(c) {
            eprintln!("joj: warning: {w}");
        }
    }
    match &result.command {
        Some(c) if !c.succeeded() && c.filesystem_full => Err(CliError::CommandFailedFull {
            exit: exit_of(c),
            image_mib: a.image_mib,
        }
        .into()),
        Some(c) if !c.succeeded() => Err(CliError::CommandFailed {
            exit: exit_of(c),
            cwd: c.cwd.clone(),
        }
        .into()),
        _ => Ok(()),
    }
}

fn exit_of(c: &joj_experiment::result::CommandReport) -> String {
    match (c.exit_code, c.signal) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => "no exit status".into(),
    }
}

/// What the command did that the trace does not show: writes to files outside the scratch
/// filesystem, and syncs submitted through io_uring.
pub fn unseen(c: &joj_experiment::result::CommandReport) -> Vec<String> {
    let mut lines = Vec::new();
    if c.outside_writes_total > 0 {
        let more = c.outside_writes_total - c.outside_writes.len() as u64;
        lines.push(format!(
            "the command opened {} file(s) outside the scratch filesystem for writing; their \
             writes are not in the trace: {}{}",
            c.outside_writes_total,
            c.outside_writes.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    if let Some(u) = &c.io_uring {
        let per_file: Vec<String> = c
            .files
            .iter()
            .filter(|f| f.io_uring_syncs > 0)
            .map(|f| format!("{} {}", f.path, f.io_uring_syncs))
            .collect();
        let mut line = format!(
            "the command used io_uring ({} ring(s), {} io_uring_enter call(s), {} submission(s)): \
             syncs submitted through it are not in the fsync/fdatasync counts above, and the FS \
             journal they caused is not attributed to them; read from its queue: {} sync(s)",
            u.rings, u.enters, u.submissions, u.syncs
        );
        if !per_file.is_empty() {
            line.push_str(&format!(" (by file: {})", per_file.join(", ")));
        }
        if u.syncs_of_unknown_files > 0 {
            line.push_str(&format!(
                ", {} on files joj could not name (registered files)",
                u.syncs_of_unknown_files
            ));
        }
        if u.unreadable_enters > 0 {
            line.push_str(&format!(
                "; {} io_uring_enter call(s) whose submissions joj could not read (a kernel-polled \
                 ring or one in the command's own memory): syncs among them are unseen",
                u.unreadable_enters
            ));
        }
        if u.opens > 0 {
            line.push_str(&format!(
                "; {} open(s) through the ring, whose files are not checked",
                u.opens
            ));
        }
        lines.push(line);
    }
    lines
}

/// What the command did to the device, then one row per file it touched.
pub fn table(r: &RunResult) -> String {
    let cfg = &r.config;
    let mut s = format!(
        "{} on {} (kernel {}, mount options {})\n",
        cfg.op,
        cfg.fs,
        cfg.kernel,
        cfg.mount_options
            .as_deref()
            .filter(|m| !m.is_empty())
            .unwrap_or("default")
    );
    let Some(c) = &r.command else { return s };
    if cfg.workload == "syscalls-replay" {
        s.push_str(&format!(
            "  replayed in {:.3} s on {} thread(s); {} sync/syncfs and {} directory sync call(s)\n",
            r.elapsed_s, c.tasks, c.whole_fs_syncs, c.dir_syncs
        ));
    } else {
        s.push_str(&command_line_summary(r, c));
    }
    block_lines(&mut s, r);
    if let (Some(d), Some(m), Some(h)) = (&r.device, &r.modeled, &r.host) {
        s.push_str(&format!(
            "  measured here: {:.3} s ({:.3} s of it the supervisor's); modeled on {}: {:.3} s = host {:.3} s ({}, CPU ×{:.2}; here {:.3} s CPU + journal thread, {:.3} s waits) + device {:.3} s ({} flushes, WAF {:.2}); {}\n",
            r.elapsed_s,
            c.stopped_s,
            m.profile,
            m.time.modeled_s,
            m.time.host_s,
            m.time.host,
            m.time.cpu_factor,
            h.cpu_s + h.journal_thread_cpu_s,
            h.wait_s,
            m.time.device_s,
            d.flushes,
            d.waf,
            m.pacing
        ));
    }
    file_rows(&mut s, c);
    s
}

/// How the command ended and what the supervisor did.
fn command_line_summary(r: &RunResult, c: &joj_experiment::result::CommandReport) -> String {
    format!(
        "  {} in {:.3} s; {} task(s); the supervisor stopped it {} time(s), holding it {:.3} s; {} sync/syncfs and {} directory sync call(s)\n",
        match (c.exit_code, c.signal) {
            (Some(code), _) => format!("exit status {code}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            _ => "no exit status".into(),
        },
        r.elapsed_s,
        c.tasks,
        c.stops,
        c.stopped_s,
        c.whole_fs_syncs,
        c.dir_syncs
    )
}

/// The block totals, per transaction, the bios' flags, unplaced data, the output files.
fn block_lines(s: &mut String, r: &RunResult) {
    if let (Some(b), Some(p)) = (&r.block, &r.block_per_txn) {
        s.push_str(&format!(
            "  block: {} requests, {} KiB written: data {} KiB (database {}, WAL {}, rollback journal {}, other {}), metadata {} KiB, FS journal {} KiB; {} flushes, {} FUA\n",
            b.requests,
            b.write_bytes / 1024,
            b.data_bytes / 1024,
            b.data_by_role.database / 1024,
            b.data_by_role.wal / 1024,
            b.data_by_role.rollback_journal / 1024,
            b.data_by_role.other / 1024,
            b.metadata_bytes / 1024,
            b.fs_journal_bytes / 1024,
            b.flushes,
            b.fua
        ));
        if r.transactions > 1 {
            s.push_str(&format!(
                "  per transaction ({}): {:.1} KiB written (data {:.1}, metadata {:.1}, FS journal {:.1}), {:.2} flushes\n",
                r.transactions,
                p.write_bytes / 1024.0,
                p.data_bytes / 1024.0,
                p.metadata_bytes / 1024.0,
                p.fs_journal_bytes / 1024.0,
                p.flushes
            ));
        }
    }
    if let Some(i) = &r.bio_intent {
        s.push_str(&format!(
            "  submitted by the filesystem: {} write bios, {} with FUA, {} with preflush\n",
            i.write_bios, i.fua_writes, i.preflush_writes
        ));
    }
    for u in &r.unplaced_data {
        s.push_str(&format!(
            "  unplaced: {}: up to {} B had no place on the device at {} snapshot(s): {}\n",
            u.path, u.max_bytes, u.snapshots, u.reason
        ));
    }
    for (what, f) in [("trace", &r.trace_file), ("plot", &r.plot_file)] {
        if let Some(f) = f {
            s.push_str(&format!("  {what}: {f}\n"));
        }
    }
}

/// One row per file the command touched.
fn file_rows(s: &mut String, c: &joj_experiment::result::CommandReport) {
    s.push_str(&format!(
        "  {:<32} {:<16} {:>12} {:>14} {:>6} {:>10} {:>6} {:>7}  {}\n",
        "file",
        "kind",
        "data KiB",
        "FS jrnl KiB*",
        "fsync",
        "fdatasync",
        "sfr",
        "O_SYNC",
        "deleted"
    ));
    for f in &c.files {
        s.push_str(&format!(
            "  {:<32} {:<16} {:>12.1} {:>14.1} {:>6} {:>10} {:>6} {:>7}  {}\n",
            f.path,
            f.kind,
            f.data_bytes as f64 / 1024.0,
            f.fs_journal_bytes_in_syncs as f64 / 1024.0,
            f.fsync,
            f.fdatasync,
            f.sync_file_range,
            f.sync_writes,
            if f.deleted { "yes" } else { "" }
        ));
    }
    s.push_str("  * FS journal written while a sync call on the file was under way\n");
}
