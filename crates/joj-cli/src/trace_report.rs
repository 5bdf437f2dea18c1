//! What `joj trace` (and `joj syscalls replay`) prints: how the command ran and what watching it
//! cost, what the device did, set-up work apart, per database and per commit, one row per
//! file — every figure from the run's document.

use joj_experiment::RunResult;
use joj_experiment::result::CommandReport;
use joj_trace::terminal::escaped;

/// The whole report; `verbose` lists the file data joj could not place, one line each.
pub fn table(r: &RunResult, verbose: bool) -> String {
    let cfg = &r.config;
    let mut s = format!(
        "{} on {} (kernel {}, mount options {})\n",
        escaped(&cfg.op),
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
            "  replayed in {:.3} s on {} thread(s)\n",
            r.elapsed_s, c.tasks
        ));
    } else {
        s.push_str(&how_it_ran(r, c));
    }
    s.push_str(&format!(
        "  syscalls: {} fsync, {} fdatasync ({} of them of directories), {} sync/syncfs; {} writes \
         of {} B to its files\n",
        r.syscalls.fsync,
        r.syscalls.fdatasync,
        r.syscalls.dir_syncs,
        c.whole_fs_syncs,
        r.syscalls.write_calls,
        r.syscalls.write_bytes
    ));
    block_lines(&mut s, r);
    modeled_line(&mut s, r, c);
    setup_lines(&mut s, c);
    database_rows(&mut s, c);
    s.push_str(&crate::output::unplaced_note(
        r,
        if verbose {
            crate::output::UnplacedDetail::Listed
        } else {
            crate::output::UnplacedDetail::VerboseFlag
        },
    ));
    for (what, f) in [("trace", &r.trace_file), ("plot", &r.plot_file)] {
        if let Some(f) = f {
            s.push_str(&format!("  {what}: {f}\n"));
        }
    }
    file_rows(&mut s, c);
    s
}

/// With `--device`: the time measured here next to the time modeled on the profile's device.
fn modeled_line(s: &mut String, r: &RunResult, c: &CommandReport) {
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
}

/// How the command ended and what watching it cost.
fn how_it_ran(r: &RunResult, c: &CommandReport) -> String {
    let ended = match (c.exit_code, c.signal) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => "no exit status".into(),
    };
    let waits = match c.opens_by_bpf {
        Some(_) => "renames, truncates, and unlinks where the filesystem is not ext4",
        None => "opens, unlinks, renames, truncates",
    };
    let mut s = format!(
        "  {ended} in {:.3} s, {} task(s); it waited for joj {} time(s) ({waits}), {:.1} ms in \
         all; {} system call event(s) read without stopping it{}{}\n",
        r.elapsed_s,
        c.tasks,
        c.stops,
        c.stopped_s * 1e3,
        c.syscall_events,
        c.event_reads
            .map(|n| format!(", in {n} read(s)"))
            .unwrap_or_default(),
        c.opens_by_bpf
            .map(|n| format!("; {n} open(s) seen by BPF"))
            .unwrap_or_default()
    );
    // What the BPF observer could not see, each with its field in the JSON.
    for (n, what, field) in [
        (
            c.bpf_records_lost,
            "record(s) lost by joj's BPF observer (opens, unlinks or freed blocks): the figures \
             may miss them",
            "bpf_records_lost",
        ),
        (
            c.unlinks_unseen,
            "unlink(s) of a path joj could not name",
            "unlinks_unseen",
        ),
        (
            c.truncates_unseen,
            "truncate(s) of a descriptor joj could not name",
            "truncates_unseen",
        ),
        (
            c.opens_unseen,
            "open(s) returned a descriptor joj could not name",
            "opens_unseen",
        ),
    ] {
        if n > 0 {
            s.push_str(&format!("  {n} {what} (see `{field}` in the JSON)\n"));
        }
    }
    if let Some(dir) = &c.start_dir {
        let how = match (&c.start_dir_copy, &c.start_dir_not_copied) {
            (Some(copy), _) => format!(
                "copied onto the traced filesystem before the run ({} entries, {} KiB)",
                copy.entries,
                copy.bytes.div_ceil(1024)
            ),
            (None, Some(why)) => format!("through an overlay, not copied: {}", escaped(why)),
            (None, None) => "through an overlay".into(),
        };
        s.push_str(&format!(
            "  ran in {} (the directory joj trace started in, {how}: what it wrote inside it is \
             on the traced filesystem, the directory is as it was)\n",
            escaped(if c.cwd == *dir { dir } else { &c.cwd })
        ));
    }
    s
}

/// The block totals, per transaction, the bios' flags.
fn block_lines(s: &mut String, r: &RunResult) {
    let Some(b) = &r.block else { return };
    let roles = &b.data_by_role;
    s.push_str(&format!(
        "  block: {} requests, {} KiB written: db {} KiB, log {} KiB (WAL {}, rollback journal \
         {}), other files {} KiB, FS metadata {} KiB, FS journal {} KiB; {} flushes, {} FUA\n",
        b.requests,
        b.write_bytes / 1024,
        roles.database / 1024,
        (roles.wal + roles.rollback_journal) / 1024,
        roles.wal / 1024,
        roles.rollback_journal / 1024,
        roles.other / 1024,
        b.metadata_bytes / 1024,
        b.fs_journal_bytes / 1024,
        b.flushes,
        b.fua
    ));
    if let Some(i) = &r.bio_intent {
        s.push_str(&format!(
            "  submitted by the filesystem: {} write bios, {} with FUA, {} with preflush\n",
            i.write_bios, i.fua_writes, i.preflush_writes
        ));
    }
}

/// One-time set-up work, apart from the commits.
fn setup_lines(s: &mut String, c: &CommandReport) {
    let Some(setup) = &c.setup else { return };
    let what: Vec<String> = setup
        .work
        .iter()
        .map(|w| match &w.path {
            Some(p) => format!("{} of {}", w.what, escaped(p)),
            None => w.what.clone(),
        })
        .collect();
    s.push_str(&format!(
        "  set-up (one-time, not in the per-commit figures): {} KiB written (file data {}, FS \
         journal {}), {} flushes, during {}\n",
        setup.block.write_bytes / 1024,
        setup.block.data_bytes / 1024,
        setup.block.fs_journal_bytes / 1024,
        setup.block.flushes,
        what.join(", ")
    ));
}

/// Per database: its commits, how they were counted, and what a commit cost, in the words of
/// `joj compare` (db and log apart, so that they add up).
fn database_rows(s: &mut String, c: &CommandReport) {
    if c.databases.is_empty() {
        return;
    }
    s.push_str(&format!(
        "  {:<28} {:<14} {:>8} | {:>8} {:>8} {:>12} {:>8} | {:>10}\n",
        "database", "journal mode", "commits", "db", "log", "FS journal*", "(JOJ)", "syncs"
    ));
    s.push_str(&format!(
        "  {:<28} {:<14} {:>8} | {:^39} | {:>10}\n",
        "", "", "", "KiB written per commit", "per commit"
    ));
    for d in &c.databases {
        match (&d.per_commit, d.commits) {
            (Some(p), Some(n)) => s.push_str(&format!(
                "  {:<28} {:<14} {:>8} | {:>8.1} {:>8.1} {:>12.1} {:>8.1} | {:>10.2}\n",
                escaped(&d.path),
                d.journal_mode,
                n,
                (p.data_bytes - p.log_data_bytes) / 1024.0,
                p.log_data_bytes / 1024.0,
                p.fs_journal_bytes_in_syncs / 1024.0,
                p.joj_bytes / 1024.0,
                p.syncs
            )),
            _ => s.push_str(&format!(
                "  {:<28} {:<14} {:>8} | commits not counted\n",
                escaped(&d.path),
                d.journal_mode,
                "?"
            )),
        }
    }
    for d in &c.databases {
        s.push_str(&format!(
            "    {}: commits counted from {}\n",
            escaped(&d.path),
            d.commits_counted_by
        ));
        if let Some(other) = &d.other_modes {
            s.push_str(&format!(
                "    {}: besides {}, {other}\n",
                escaped(&d.path),
                d.journal_mode
            ));
        }
    }
    s.push_str(
        "    db: data written to the database file; log: to its WAL or rollback journal; \
         * FS journal written while its files were synced; (JOJ): the part of it written while \
         its log was synced\n",
    );
}

/// One row per file the command touched.
fn file_rows(s: &mut String, c: &CommandReport) {
    s.push_str(&format!(
        "  {:<32} {:<16} {:>12} {:>16} {:>8} {:>6} {:>10} {:>16} {:>7}  {}\n",
        "file",
        "kind",
        "data KiB",
        "FS journal KiB*",
        "writes",
        "fsync",
        "fdatasync",
        "sync_file_range",
        "O_SYNC",
        "deleted"
    ));
    for f in &c.files {
        s.push_str(&format!(
            "  {:<32} {:<16} {:>12.1} {:>16.1} {:>8} {:>6} {:>10} {:>16} {:>7}  {}\n",
            escaped(&f.path),
            f.kind,
            f.data_bytes as f64 / 1024.0,
            f.fs_journal_bytes_in_syncs as f64 / 1024.0,
            f.write_calls,
            f.fsync,
            f.fdatasync,
            f.sync_file_range,
            f.sync_writes,
            if f.deleted { "yes" } else { "" }
        ));
    }
    s.push_str(
        "  * FS journal written while a sync call on the file was under way; writes, fsync, \
         fdatasync, sync_file_range: its calls of each; O_SYNC: its writes that sync themselves \
         (O_SYNC or O_DSYNC descriptor, RWF_SYNC or RWF_DSYNC)\n",
    );
}

/// What the command did that the trace does not show: writes to files outside the traced
/// directory, and syncs submitted through io_uring.
pub fn unseen(c: &CommandReport) -> Vec<String> {
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
    if c.unresolved_syncs > 0 {
        lines.push(format!(
            "{} sync call(s) on descriptors joj did not see opened and could not name (inherited \
             or received over a socket, closed before joj read them): not in any file's counts",
            c.unresolved_syncs
        ));
    }
    if let Some(u) = &c.io_uring {
        lines.push(io_uring_line(c, u));
    }
    lines
}

fn io_uring_line(c: &CommandReport, u: &joj_experiment::result::IoUringReport) -> String {
    let per_file: Vec<String> = c
        .files
        .iter()
        .filter(|f| f.io_uring_syncs > 0)
        .map(|f| format!("{} {}", escaped(&f.path), f.io_uring_syncs))
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
    line
}
