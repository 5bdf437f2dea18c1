//! `joj bench`: one workload, with joj's long options and Mobibench's short flags.
//!
//! Mobibench flags keep Mobibench's meanings and units: `-p` path, `-f` file size (KiB), `-r`
//! record size (KiB), `-a` access mode, `-y` sync mode, `-t` threads, `-d` DB mode, `-n`
//! transactions, `-j` journal mode (0–5), `-s` synchronous (0–2), `-i` interval between
//! transactions (seconds). `-T` tables, `-D` attached databases and `-R` statements per
//! transaction are not in the public Mobibench 1.0.x source; joj gives them these meanings.
//! With none of `-d/-a/-y/-f/-r` and no file `--op`, joj runs its own default: the papers'
//! SQLite insert. `--workload` runs one of the X-FTL paper's workloads instead
//! (`joj_workload::paper`).

use crate::CliResult;
use crate::progress::Progress;
use clap::Args;
use joj_vfs::SyncCall;
use joj_workload::paper::PaperWorkload;
use joj_workload::{
    DbOp, DbWorkload, FileAccess, FileSync, FileWorkload, FsChoice, JournalMode, KeyOrder,
    RunOptions, RunResult, StartState, Synchronous, Workload, run,
};
use std::path::PathBuf;

#[derive(Args, Clone)]
pub struct CommonArgs {
    /// Filesystem: `host` (a directory; no root needed) or a scratch filesystem made on a loop
    /// device for the run: ext4, ext4-writeback, ext4-datajournal, ext4-extjournal, xfs, btrfs.
    #[arg(long, default_value = "host")]
    pub fs: String,
    /// Capture and classify the block requests of the run (needs a scratch --fs and root).
    #[arg(long)]
    pub trace: bool,
    /// Print one JSON document on stdout and nothing else.
    #[arg(long)]
    pub json: bool,
    /// Directory for trace files and SVG plots.
    #[arg(long, default_value = "joj-out")]
    pub out: PathBuf,
    /// `PRAGMA synchronous` (off, normal, full; Mobibench -s 0/1/2).
    #[arg(short = 's', long = "sync", default_value = "full")]
    pub sync: String,
    /// System call joj's VFS issues when SQLite syncs: fdatasync (SQLite's default) or fsync.
    #[arg(long = "sync-call", default_value = "fdatasync")]
    pub sync_call: String,
    /// fresh: new database, WAL/journal grows in the run (the papers' setup). steady: the same
    /// transactions run first, then a WAL checkpoint, so the WAL file already has its size.
    #[arg(long, default_value = "fresh")]
    pub start: String,
    /// Number of transactions (per thread) [default: 1000; for --workload rl-bench one
    /// complete pass of the benchmark].
    #[arg(short = 'n', long = "transactions")]
    pub transactions: Option<u64>,
    /// SQLite page size in bytes (the X-FTL paper used 8192 in every mode: its flash page).
    #[arg(long = "page-size", default_value_t = 4096)]
    pub page_size: u32,
    /// A workload of the X-FTL paper instead of Mobibench's: xftl-synthetic, tpcc-write,
    /// tpcc-read, tpcc-select, tpcc-join or rl-bench. One connection; the load is not measured
    /// and each of the -n transactions is one of the workload's.
    #[arg(long)]
    pub workload: Option<String>,
    /// xftl-synthetic: rows (≈ pages) read and updated per transaction (the paper: 1 to 20).
    #[arg(long = "pages-per-txn", default_value_t = 5)]
    pub pages_per_txn: u32,
    /// tpcc-*: warehouses, each with 10 districts, 3,000 customers and 10,000 stock rows.
    #[arg(long, default_value_t = 1)]
    pub warehouses: u32,
    /// rl-bench: divide the benchmark's row and statement counts by this (1 = its own sizes).
    #[arg(long = "rl-divisor", default_value_t = 1)]
    pub rl_divisor: u32,
    /// Size of the scratch filesystem image in MiB.
    #[arg(long = "image-mib", default_value_t = 1024)]
    pub image_mib: u64,
    /// Seed of every random choice (keys, offsets).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Replay the run's block trace through this emulated eMMC profile (a built-in name such as
    /// emmc5 or galaxy-s5, or a profile JSON file) and add a `device` section; implies --trace.
    #[arg(long)]
    pub device: Option<String>,
    /// Age the device before the run so GC victims hold about this share of valid pages, in
    /// percent (X-FTL's 30, 50, 70); needs --device.
    #[arg(long = "gc-validity")]
    pub gc_validity: Option<u32>,
    /// Run the host at the device's speed: after each transaction wait until a model of
    /// --device, fed live from the kernel, has finished the requests so far. The kernel's clock
    /// (file timestamps, jbd2's commit timer) then runs as on the device. Needs --device; the
    /// run takes about the modeled time.
    #[arg(long)]
    pub pace: bool,
}

impl CommonArgs {
    /// The paper workload of `--workload`, if any.
    pub fn paper(&self) -> Result<Option<PaperWorkload>, String> {
        self.workload
            .as_deref()
            .map(|name| {
                PaperWorkload::from_name(name, self.pages_per_txn, self.warehouses, self.rl_divisor)
            })
            .transpose()
    }

    /// `-n`, or the default for the workload.
    pub fn transactions(&self, paper: Option<&PaperWorkload>) -> u64 {
        self.transactions
            .unwrap_or_else(|| paper.map_or(1000, PaperWorkload::default_transactions))
    }
}

/// The device profile of `--device`, loaded before the run so a bad name fails at once; turns
/// tracing on.
pub fn device_profile(
    c: &mut CommonArgs,
    only_xftl: bool,
) -> Result<Option<joj_device::Profile>, String> {
    let Some(name) = &c.device else {
        if c.gc_validity.is_some() {
            return Err("--gc-validity ages the emulated device: add --device <profile>".into());
        }
        if c.pace {
            return Err(
                "--pace runs the host at an emulated device's speed: add --device <profile>".into(),
            );
        }
        if only_xftl {
            return Err(
                "--journal xftl runs SQLite on the emulated transactional eMMC: add --device \
                 <profile> (galaxy-s5, emmc5 or a profile JSON file)"
                    .into(),
            );
        }
        return Ok(None);
    };
    if only_xftl {
        // Nothing to trace: the device counts its own commands.
        return joj_device::Profile::load(name)
            .map(Some)
            .map_err(|e| e.to_string());
    }
    if c.fs == "host" {
        return Err(
            "--device replays the run's block trace, which needs a scratch filesystem: \
                    add --fs ext4 (or ext4-writeback, xfs, btrfs, ...)"
                .into(),
        );
    }
    let profile = joj_device::Profile::load(name).map_err(|e| e.to_string())?;
    c.trace = true;
    Ok(Some(profile))
}

#[derive(Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Operation: insert, update, delete, select (SQLite) or write, randwrite, append, read,
    /// randread (file).
    #[arg(long)]
    pub op: Option<String>,
    /// Journal mode: delete, truncate, persist, wal, memory, off (or Mobibench's 0–5).
    #[arg(short = 'j', long = "journal", default_value = "wal")]
    pub journal: String,
    /// Mobibench DB mode: 0=insert 1=update 2=delete (joj: 3=select).
    #[arg(short = 'd')]
    pub db_mode: Option<u32>,
    /// Mobibench path (`-p`): run in this directory of the host filesystem.
    #[arg(short = 'p', long = "dir")]
    pub dir: Option<PathBuf>,
    /// Mobibench file size in KiB (file workloads).
    #[arg(short = 'f', long = "file-kib")]
    pub file_kib: Option<u64>,
    /// Mobibench record size in KiB (file workloads).
    #[arg(short = 'r', long = "record-kib")]
    pub record_kib: Option<u64>,
    /// Mobibench access mode: 0=write 1=random write 2=read 3=random read (joj: 4=append).
    #[arg(short = 'a')]
    pub access: Option<u32>,
    /// Mobibench sync mode: 0=normal 1=O_SYNC 2=fsync 3=O_DIRECT 4=O_DIRECT+O_DSYNC 8=fdatasync.
    #[arg(short = 'y')]
    pub file_sync_mode: Option<u32>,
    /// File durability: buffered, osync, fsync, fdatasync, direct, direct-dsync.
    #[arg(long = "file-sync")]
    pub file_sync: Option<String>,
    /// Threads, each with its own database or file.
    #[arg(short = 't', long = "threads", default_value_t = 1)]
    pub threads: u32,
    /// Tables per database.
    #[arg(short = 'T', long = "tables", default_value_t = 1)]
    pub tables: u32,
    /// Attached databases per connection (statements are spread over main and attached).
    #[arg(short = 'D', long = "attached", default_value_t = 0)]
    pub attached: u32,
    /// Statements per transaction.
    #[arg(short = 'R', long = "statements", default_value_t = 1)]
    pub statements: u32,
    /// Mobibench interval between transactions, in seconds.
    #[arg(short = 'i')]
    pub interval_s: Option<u64>,
    /// Interval between transactions in milliseconds.
    #[arg(long = "interval-ms")]
    pub interval_ms: Option<u64>,
    /// Bytes per record in SQLite workloads.
    #[arg(long = "record-bytes", default_value_t = 100)]
    pub record_bytes: usize,
    /// Key order: sequential or random.
    #[arg(long, default_value = "sequential")]
    pub keys: String,
    /// Pre-fill each table with at least this many KiB (default 0 for insert, 40 otherwise).
    #[arg(long = "prefill-kib")]
    pub prefill_kib: Option<u64>,
    /// Mobibench's exact schema: `id INTEGER PRIMARY KEY AUTOINCREMENT`.
    #[arg(long)]
    pub autoincrement: bool,
}

const FILE_OPS: [&str; 5] = ["write", "randwrite", "append", "read", "randread"];

fn parse_journal(s: &str) -> Result<JournalMode, String> {
    match s.parse::<u32>() {
        Ok(n) => JournalMode::from_mobibench(n),
        Err(_) => s.parse(),
    }
}

pub fn run_options(c: &CommonArgs, fs: FsChoice, label: &str) -> RunOptions {
    RunOptions {
        fs,
        trace: c.trace,
        out_dir: c.trace.then(|| c.out.clone()),
        label: label.to_string(),
        image_size_bytes: c.image_mib << 20,
        aging_validity: c.gc_validity,
        pace: c.pace,
        ..RunOptions::default()
    }
}

fn workload(a: &BenchArgs) -> Result<Workload, String> {
    let c = &a.common;
    let file_op =
        a.op.as_deref()
            .is_some_and(|o| FILE_OPS.contains(&o.to_ascii_lowercase().as_str()));
    let file_mode = file_op
        || (a.db_mode.is_none()
            && a.op.is_none()
            && (a.access.is_some()
                || a.file_sync_mode.is_some()
                || a.file_kib.is_some()
                || a.record_kib.is_some()));
    let paper = c.paper()?;
    if paper.is_some() && (file_mode || a.op.is_some() || a.db_mode.is_some()) {
        return Err(
            "--workload names the whole SQLite workload: leave out --op, -d and the file options"
                .into(),
        );
    }
    if file_mode {
        let access = match (&a.op, a.access) {
            (Some(op), _) => op.parse::<FileAccess>()?,
            (None, Some(n)) => FileAccess::from_mobibench(n)?,
            (None, None) => FileAccess::Write,
        };
        let sync = match (&a.file_sync, a.file_sync_mode) {
            (Some(s), _) => s.parse::<FileSync>()?,
            (None, Some(n)) => FileSync::from_mobibench(n)?,
            (None, None) => FileSync::Buffered,
        };
        return Ok(Workload::File(FileWorkload {
            access,
            sync,
            file_size_bytes: a.file_kib.unwrap_or(1024) * 1024,
            record_bytes: a.record_kib.unwrap_or(4) * 1024,
            threads: a.threads,
            seed: c.seed,
        }));
    }
    let op = match (&a.op, a.db_mode) {
        (Some(op), _) => op.parse::<DbOp>()?,
        (None, Some(n)) => DbOp::from_mobibench(n)?,
        (None, None) => DbOp::Insert,
    };
    Ok(Workload::Db(DbWorkload {
        op,
        transactions: c.transactions(paper.as_ref()),
        statements_per_txn: a.statements,
        tables: a.tables,
        attached_dbs: a.attached,
        threads: a.threads,
        interval_ms: a
            .interval_ms
            .or(a.interval_s.map(|s| s * 1000))
            .unwrap_or(0),
        record_bytes: a.record_bytes,
        page_size: c.page_size,
        journal: parse_journal(&a.journal)?,
        synchronous: c.sync.parse::<Synchronous>()?,
        sync_call: c.sync_call.parse::<SyncCall>().map_err(|e| e.to_string())?,
        keys: a.keys.parse::<KeyOrder>()?,
        prefill_kib: a.prefill_kib,
        autoincrement: a.autoincrement,
        start: c.start.parse::<StartState>()?,
        seed: c.seed,
        paper,
    }))
}

pub fn fs_choice(fs: &str, dir: Option<PathBuf>) -> Result<FsChoice, String> {
    let choice: FsChoice = fs.parse()?;
    match (choice, dir) {
        (FsChoice::Host(_), dir) => Ok(FsChoice::Host(dir)),
        (scratch, None) => Ok(scratch),
        (_, Some(_)) => {
            Err("-p/--dir names a host directory; it cannot be combined with a scratch --fs".into())
        }
    }
}

pub fn main(mut a: BenchArgs) -> CliResult {
    let w = workload(&a)?;
    let xftl = matches!(
        &w,
        Workload::Db(d) if d.journal == joj_workload::JournalMode::Xftl
    );
    let device = device_profile(&mut a.common, xftl)?;
    let fs = fs_choice(&a.common.fs, a.dir.clone())?;
    let label = match &w {
        Workload::Db(d) => format!("bench-{}-{}-{}", fs.name(), d.journal, d.name()),
        Workload::File(f) => format!("bench-{}-{}-{}", fs.name(), f.access, f.sync),
    };
    let mut opts = run_options(&a.common, fs, &label);
    opts.device = device.clone();
    let progress = Progress::start(w.transactions(), "bench");
    opts.progress = Some(progress.counter.clone());
    let result = run(&w, &opts);
    drop(progress);
    let mut result = result?;
    if let Some(profile) = &device {
        joj_workload::device::attach(&mut result, profile, a.common.gc_validity)?;
    }
    if a.common.json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        print!("{}", summary(&result));
    }
    Ok(())
}

/// A human-readable summary of one run.
/// "N erases", plus the map-area blocks when the profile erases them (`erase_map_blocks`).
pub fn erases_phrase(data_blocks: u64, map_blocks: u64) -> String {
    if map_blocks == 0 {
        format!("{data_blocks} erases")
    } else {
        format!("{data_blocks} erases (+{map_blocks} map blocks)")
    }
}

pub fn summary(r: &RunResult) -> String {
    let c = &r.config;
    let mut s = format!(
        "{} {} on {} (kernel {}, SQLite {})",
        c.workload, c.op, c.fs, c.kernel, c.sqlite_version
    );
    if let (Some(j), Some(sy), Some(sc)) = (&c.journal_mode, &c.synchronous, &c.sync_call) {
        s.push_str(&format!(", journal={j} synchronous={sy} sync-call={sc}"));
    }
    if let Some(fsync) = &c.file_sync {
        s.push_str(&format!(", {fsync}"));
    }
    s.push('\n');
    s.push_str(&format!(
        "  {} transactions in {:.3} s: {:.1} per second\n",
        r.transactions, r.elapsed_s, r.ops_per_sec
    ));
    if let Some(p) = &r.pace {
        s.push_str(&format!(
            "  paced by the {} model: {:.3} s modeled; the run waited {:.3} s for it (summed over threads)\n",
            p.profile, p.modeled_s, p.waited_s
        ));
    }
    s.push_str(&format!(
        "  latency µs: p50 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}\n",
        r.latency_us.p50, r.latency_us.p99, r.latency_us.p999, r.latency_us.max
    ));
    s.push_str(&format!(
        "  syscalls: {} fsync, {} fdatasync, {} writes of {} B\n",
        r.syscalls.fsync, r.syscalls.fdatasync, r.syscalls.write_calls, r.syscalls.write_bytes
    ));
    s.push_str(&format!(
        "  bytes written: database {}  WAL {}  rollback journal {}  other {}\n",
        r.files.database, r.files.wal, r.files.rollback_journal, r.files.other
    ));
    if let (Some(w), Some(p)) = (&c.paper, &r.paper) {
        let kinds: Vec<String> = p
            .transactions_by_kind
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        s.push_str(&format!("  {w}: {}\n", kinds.join(", ")));
        if let (Some(n), Some(tpmc)) = (p.new_orders, p.tpmc) {
            s.push_str(&format!(
                "  {n} New-Orders committed: {tpmc:.0} tpmC (wall time)\n"
            ));
        }
        s.push_str(&format!("  database after the run: {}\n", p.summary));
    }
    if let Some(w) = &r.waldio {
        s.push_str(&format!(
            "  waldio: {} commits in {} direct writes of {} KiB ({} with RWF_DSYNC, {} group writes), {} WAL fdatasync; preallocated {} KiB with {} fdatasync\n",
            w.commits,
            w.direct_writes,
            w.direct_write_bytes / 1024,
            w.dsync_writes,
            w.group_writes,
            w.wal_syncs,
            w.prealloc_bytes / 1024,
            w.prealloc_syncs
        ));
    }
    if let (Some(b), Some(p)) = (&r.block, &r.block_per_txn) {
        s.push_str(&format!(
            "  block: {} requests, {} KiB written: data {} KiB, metadata {} KiB, FS journal {} KiB; {} flushes\n",
            b.requests,
            b.write_bytes / 1024,
            b.data_bytes / 1024,
            b.metadata_bytes / 1024,
            b.fs_journal_bytes / 1024,
            b.flushes
        ));
        s.push_str(&format!(
            "  per transaction: {:.1} KiB written (data {:.1}, metadata {:.1}, FS journal {:.1}), {:.2} flushes\n",
            p.write_bytes / 1024.0,
            p.data_bytes / 1024.0,
            p.metadata_bytes / 1024.0,
            p.fs_journal_bytes / 1024.0,
            p.flushes
        ));
    }
    for check in &r.checks {
        s.push_str(&format!(
            "  check {}: {} ({})\n",
            check.name,
            if check.ok { "ok" } else { "FAILED" },
            check.detail
        ));
    }
    if let Some(d) = &r.device {
        s.push_str(&format!(
            "  device {} ({}): {:.1} transactions/s modeled ({:.4} s), WAF {:.2}, {} flushes, {} FUA, {} GC copies, {}\n",
            d.profile,
            if r.xftl.is_some() {
                "ran the workload"
            } else {
                "trace replayed"
            }, d.modeled_ops_per_sec, d.modeled_s, d.waf, d.flushes, d.fua, d.gc_copies,
            erases_phrase(d.erases, d.map_erases)
        ));
    }
    if let Some(t) = &r.trace_file {
        s.push_str(&format!("  trace: {t}\n"));
    }
    if let Some(p) = &r.plot_file {
        s.push_str(&format!("  plot: {p}\n"));
    }
    s
}
