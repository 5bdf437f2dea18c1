//! `joj bench`: one workload, with joj's long options and Mobibench's short flags.
//!
//! Mobibench flags keep the meanings and units of the current public Mobibench shell: `-p`
//! path, `-f` file size (KiB), `-r` record size (KiB), `-a` access mode, `-y` sync mode, `-t`
//! threads, `-d` DB mode, `-n` transactions, `-j` journal mode (0–5), `-s` synchronous (0–2),
//! `-i` interval between transactions (milliseconds), `-T` tables (each transaction writes one
//! row in every table), `-D` databases (the main one and `D-1` attached), `-R` random keys.
//! With none of `-d/-a/-y/-f/-r` and no file `--op`, joj runs its own default: the papers'
//! SQLite insert. `--workload` runs one of the X-FTL paper's workloads instead. Which stack a
//! run needs, and which options go together, is the library's to say
//! (`joj_experiment::Stack`); this file only reads arguments and prints.

use crate::args::{self, Fs, Op};
use crate::groups::{
    CpusAwakeArg, DeviceGroup, MOBIBENCH, OUTPUT, OutDir, Output, STACK, Seed, WORKLOAD,
};
use crate::output::{CliResult, check_save};
use crate::progress::Progress;
use clap::Args;
use joj_experiment::{FsChoice, RunOptions, RunResult, Workload, run};
use joj_vfs::SyncCall;
use joj_workload::config::bounds;
use joj_workload::paper::PaperWorkload;
use joj_workload::{
    DbOp, DbWorkload, FileAccess, FileSync, FileWorkload, JournalMode, KeyOrder, StartState,
    Synchronous,
};
use std::path::PathBuf;

/// Options `bench` and `compare` share, in the order `--help` shows their headings
/// (workload, stack, device, output, Mobibench compatibility).
#[derive(Args, Clone)]
pub struct CommonArgs {
    /// A workload of the X-FTL paper instead of Mobibench's. One connection; the load is not
    /// measured and each of the -n transactions is one of the workload's.
    #[arg(long, value_parser = args::paper_workload(), help_heading = WORKLOAD)]
    pub workload: Option<String>,
    /// Transactions per thread [default: 1000; for --workload rl-bench one complete pass of
    /// the benchmark].
    #[arg(long = "transactions", value_name = "N", help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u64>(1, bounds::MAX_TRANSACTIONS))]
    pub transactions: Option<u64>,
    /// xftl-synthetic: rows (≈ pages) read and updated per transaction (the paper: 1 to 20).
    #[arg(long = "pages-per-txn", default_value_t = 5, help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub pages_per_txn: u32,
    /// tpcc-*: warehouses, each with 10 districts, 3,000 customers and 10,000 stock rows.
    #[arg(long, default_value_t = 1, help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub warehouses: u32,
    /// rl-bench: divide the benchmark's row and statement counts by this (1 = its own sizes).
    #[arg(long = "rl-divisor", default_value_t = 1, help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub rl_divisor: u32,
    /// fresh: new database, WAL/journal grows in the run (the papers' setup). steady: the same
    /// transactions run first, then a WAL checkpoint, so the WAL file already has its size.
    #[arg(long, value_parser = args::start(), default_value = "fresh", help_heading = WORKLOAD)]
    pub start: StartState,
    #[command(flatten)]
    pub seed: Seed,
    /// `PRAGMA synchronous` (Mobibench -s 0/1/2; `--sync` is its old name).
    #[arg(short = 's', long = "synchronous", alias = "sync", value_name = "SYNCHRONOUS", value_parser = args::synchronous(), default_value = "full", help_heading = STACK)]
    pub sync: Synchronous,
    /// System call joj's VFS issues when SQLite syncs: fdatasync (SQLite's default) or fsync.
    #[arg(long = "sync-call", value_parser = args::sync_call(), default_value = "fdatasync", help_heading = STACK)]
    pub sync_call: SyncCall,
    /// SQLite page size in bytes (the X-FTL paper used 8192 in every mode: its flash page).
    #[arg(long = "page-size", default_value_t = 4096, help_heading = STACK, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub page_size: u32,
    /// Size of the scratch filesystem image in MiB.
    #[arg(long = "image-mib", default_value_t = 1024, help_heading = STACK, allow_negative_numbers = true, value_parser = args::within::<u64>(1, 1 << 24))]
    pub image_mib: u64,
    /// Put the scratch filesystem's images in this directory (on a disk, to measure that disk)
    /// instead of memory under /run/joj.
    #[arg(long = "image-dir", help_heading = STACK)]
    pub image_dir: Option<PathBuf>,
    /// Attach the scratch loop devices with direct I/O (losetup --direct-io=on), so that the
    /// disk under --image-dir serves them and not the host's page cache; the images are then
    /// written whole after mkfs (zeros over their holes), so that no first write makes the
    /// disk's filesystem journal a new extent of the image at the next flush.
    #[arg(long = "loop-direct-io", requires = "image_dir", help_heading = STACK)]
    pub loop_direct_io: bool,
    #[command(flatten)]
    pub awake: CpusAwakeArg,
    #[command(flatten)]
    pub device: DeviceGroup,
    /// Capture and classify the block requests of the run (needs a scratch --fs and root).
    #[arg(long, help_heading = OUTPUT)]
    pub trace: bool,
    #[command(flatten)]
    pub output: Output,
    #[command(flatten)]
    pub out: OutDir,
    /// Mobibench -n: transactions in all, divided among the threads.
    #[arg(short = 'n', value_name = "N", conflicts_with = "transactions", help_heading = MOBIBENCH, allow_negative_numbers = true, value_parser = args::within::<u64>(1, bounds::MAX_TRANSACTIONS * bounds::MAX_THREADS as u64))]
    pub transactions_in_all: Option<u64>,
}

impl CommonArgs {
    /// The paper workload of `--workload`, if any.
    pub fn paper(&self) -> Result<Option<PaperWorkload>, joj_workload::ConfigError> {
        self.workload
            .as_deref()
            .map(|name| {
                PaperWorkload::from_name(name, self.pages_per_txn, self.warehouses, self.rl_divisor)
            })
            .transpose()
    }

    /// Transactions per thread: `--transactions`, Mobibench's `-n` shared by `threads` (as
    /// Mobibench divides it), or the default for the workload.
    pub fn transactions(&self, paper: Option<&PaperWorkload>, threads: u32) -> u64 {
        match (self.transactions, self.transactions_in_all) {
            (Some(n), _) => n,
            (None, Some(n)) => n / u64::from(threads.max(1)),
            (None, None) => paper.map_or(1000, PaperWorkload::default_transactions),
        }
    }

    /// Check before the run where it will write: `--save` (with `--force`), and `--out` when the
    /// run writes into it (traced, or replayed through a device).
    pub fn check_outputs(&self) -> Result<(), crate::output::CliError> {
        let o = &self.output;
        check_save(o.save.as_deref(), o.force, self.device.device.as_deref())?;
        if self.trace || self.device.device.is_some() {
            crate::output::check_output_folder("--out", &self.out.out)?;
        }
        Ok(())
    }

    /// The run's options on `fs` (the device profile loaded here, so a bad name fails at once).
    pub fn run_options(&self, fs: FsChoice) -> Result<RunOptions, Box<dyn std::error::Error>> {
        Ok(RunOptions {
            fs,
            trace: self.trace,
            out_dir: Some(self.out.out.clone()),
            image_size_bytes: self.image_mib << 20,
            device: self.device.plan()?,
            image_dir: self.image_dir.clone(),
            loop_direct_io: self.loop_direct_io,
            cpus_awake: self.awake.cpus_awake,
            ..RunOptions::default()
        })
    }
}

#[derive(Args)]
pub struct BenchArgs {
    /// Operation: a SQLite one, or a file access (a file workload).
    #[arg(long, value_parser = args::op(), conflicts_with_all = ["db_mode", "workload"], help_heading = WORKLOAD)]
    pub op: Option<Op>,
    /// Filesystem: `host` (a directory; no root needed) or a scratch filesystem made on a loop
    /// device for the run.
    #[arg(long, value_parser = args::fs(), default_value = "host", help_heading = STACK)]
    pub fs: Fs,
    /// Journal mode, by name or Mobibench's number (0=DELETE 1=TRUNCATE 2=PERSIST 3=WAL
    /// 4=MEMORY 5=OFF).
    #[arg(short = 'j', long = "journal", value_parser = args::journal(), default_value = "wal", help_heading = STACK)]
    pub journal: JournalMode,
    #[command(flatten)]
    pub common: CommonArgs,
    /// Threads, each with its own database or file.
    #[arg(short = 't', long = "threads", default_value_t = 1, help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u32>(1, bounds::MAX_THREADS.into()))]
    pub threads: u32,
    /// Tables per database; each transaction writes (reads) one row in every table (Mobibench
    /// -T, whose own default is 3).
    #[arg(short = 'T', long = "tables", default_value_t = 1, help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u32>(1, bounds::MAX_TABLES.into()))]
    pub tables: u32,
    /// Databases attached to each connection besides the main one (-D minus one).
    #[arg(long = "attached", default_value_t = 0, help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub attached: u32,
    /// Statements on every table in each transaction.
    #[arg(long = "statements", default_value_t = 1, help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u32>(1, bounds::MAX_STATEMENTS.into()))]
    pub statements: u32,
    /// Bytes per record in SQLite workloads.
    #[arg(long = "record-bytes", default_value_t = 100, help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::count::<usize>())]
    pub record_bytes: usize,
    /// Key order.
    #[arg(long, value_parser = args::keys(), default_value = "sequential", help_heading = WORKLOAD)]
    pub keys: KeyOrder,
    /// Pre-fill each table with at least this many KiB (default 0 for insert, 40 otherwise).
    #[arg(long = "prefill-kib", help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u64>(0, bounds::MAX_PREFILL_KIB))]
    pub prefill_kib: Option<u64>,
    /// Keys as `id INTEGER PRIMARY KEY AUTOINCREMENT` (Mobibench's schema before 2017; it
    /// also updates `sqlite_sequence` in every insert).
    #[arg(long, help_heading = WORKLOAD)]
    pub autoincrement: bool,
    /// Interval between transactions in milliseconds (Mobibench -i, milliseconds since 2017).
    #[arg(short = 'i', long = "interval-ms", help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u64>(0, bounds::MAX_INTERVAL_MS))]
    pub interval_ms: Option<u64>,
    /// File size per thread in KiB (file workloads).
    #[arg(long = "file-kib", conflicts_with = "workload", help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u64>(1, bounds::MAX_FILE_BYTES >> 10))]
    pub file_kib: Option<u64>,
    /// Record size in KiB (file workloads; Mobibench -r).
    #[arg(short = 'r', long = "record-kib", conflicts_with = "workload", help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u64>(1, bounds::MAX_FILE_RECORD_BYTES >> 10))]
    pub record_kib: Option<u64>,
    /// File durability (file workloads).
    #[arg(long = "file-sync", value_parser = args::file_sync(), conflicts_with = "workload", help_heading = WORKLOAD)]
    pub file_sync: Option<FileSync>,
    /// Run in this directory of the host filesystem (Mobibench -p, its path).
    #[arg(short = 'p', long = "dir", help_heading = STACK)]
    pub dir: Option<PathBuf>,
    /// Mobibench DB mode.
    #[arg(short = 'd', value_parser = args::mobibench_db(), conflicts_with = "workload", help_heading = MOBIBENCH)]
    pub db_mode: Option<DbOp>,
    /// Mobibench access mode.
    #[arg(short = 'a', value_parser = args::mobibench_access(), conflicts_with = "workload", help_heading = MOBIBENCH)]
    pub access: Option<FileAccess>,
    /// Mobibench sync mode.
    #[arg(short = 'y', value_parser = args::mobibench_file_sync(), conflicts_with_all = ["file_sync", "workload"], help_heading = MOBIBENCH)]
    pub file_sync_mode: Option<FileSync>,
    /// Mobibench -f: file size in KiB in all, divided among the threads (file workloads).
    #[arg(short = 'f', value_name = "KIB", conflicts_with_all = ["file_kib", "workload"], help_heading = MOBIBENCH, allow_negative_numbers = true, value_parser = args::within::<u64>(1, (bounds::MAX_FILE_BYTES >> 10) * u64::from(bounds::MAX_THREADS)))]
    pub file_kib_in_all: Option<u64>,
    /// Mobibench -D: databases in all, the main one and D-1 attached to its connection; each
    /// transaction writes in every one.
    #[arg(short = 'D', conflicts_with = "attached", help_heading = MOBIBENCH, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub databases: Option<u32>,
    /// Mobibench -R: random keys (its argument is ignored, as Mobibench ignores it). Same as
    /// --keys random.
    #[arg(short = 'R', value_name = "ANY", conflicts_with = "keys", help_heading = MOBIBENCH)]
    pub random_keys: Option<String>,
}

impl BenchArgs {
    /// A file workload: a file `--op`, or Mobibench's file flags without `-d`.
    fn file_mode(&self) -> bool {
        matches!(self.op, Some(Op::File(_)))
            || (self.db_mode.is_none()
                && self.op.is_none()
                && (self.access.is_some()
                    || self.file_sync_mode.is_some()
                    || self.file_kib.is_some()
                    || self.file_kib_in_all.is_some()
                    || self.record_kib.is_some()))
    }

    fn file_workload(&self) -> FileWorkload {
        FileWorkload {
            access: match self.op {
                Some(Op::File(access)) => access,
                _ => self.access.unwrap_or(FileAccess::Write),
            },
            sync: self
                .file_sync
                .or(self.file_sync_mode)
                .unwrap_or(FileSync::Buffered),
            file_size_bytes: match (self.file_kib, self.file_kib_in_all) {
                (Some(kib), _) => kib,
                (None, Some(all)) => all / u64::from(self.threads.max(1)),
                (None, None) => 1024,
            }
            .saturating_mul(1024),
            record_bytes: self.record_kib.unwrap_or(4).saturating_mul(1024),
            threads: self.threads,
            seed: self.common.seed.get(),
        }
    }

    fn db_workload(&self) -> Result<DbWorkload, joj_workload::ConfigError> {
        let c = &self.common;
        let paper = c.paper()?;
        Ok(DbWorkload {
            op: match self.op {
                Some(Op::Db(op)) => op,
                _ => self.db_mode.unwrap_or(DbOp::Insert),
            },
            transactions: c.transactions(paper.as_ref(), self.threads),
            statements_per_txn: self.statements,
            tables: self.tables,
            attached_dbs: match self.databases {
                Some(0) => return Err(joj_workload::ConfigError::Zero { what: "-D" }),
                Some(d) => d - 1,
                None => self.attached,
            },
            threads: self.threads,
            interval_ms: self.interval_ms.unwrap_or(0),
            record_bytes: self.record_bytes,
            page_size: c.page_size,
            journal: self.journal,
            synchronous: c.sync,
            sync_call: c.sync_call,
            keys: if self.random_keys.is_some() {
                KeyOrder::Random
            } else {
                self.keys
            },
            prefill_kib: self.prefill_kib,
            autoincrement: self.autoincrement,
            start: c.start,
            seed: c.seed.get(),
            paper,
        })
    }

    fn workload(&self) -> Result<Workload, joj_workload::ConfigError> {
        let count = match (self.common.transactions, self.common.transactions_in_all) {
            (Some(_), _) => Some("--transactions"),
            (None, Some(_)) => Some("-n"),
            (None, None) => None,
        };
        if let (true, Some(flag)) = (self.file_mode(), count) {
            return Err(joj_workload::ConfigError::CountOfAFileWorkload { flag });
        }
        Ok(if self.file_mode() {
            Workload::File(self.file_workload())
        } else {
            Workload::Db(self.db_workload()?)
        })
    }
}

pub fn main(a: BenchArgs) -> CliResult {
    let o = &a.common.output;
    a.common.check_outputs()?;
    let w = a.workload()?;
    let fs = FsChoice::new(a.fs.scratch(), a.dir.clone())?;
    let mut opts = a.common.run_options(fs)?;
    let progress = Progress::start(w.transactions(), "bench");
    opts.progress = Some(progress.counter.clone());
    let result = run(&w, &opts);
    drop(progress);
    let result = result?;
    crate::output::emit(&result, o.save.as_deref(), o.force, o.json, || {
        summary(&result)
    })
}

/// What the host spent per transaction here, in the parts the host model uses.
pub fn host_line(h: &joj_experiment::HostMeasured, transactions: u64) -> String {
    let per = |x: f64| x / transactions.max(1) as f64 * 1e6;
    format!(
        "  host here: {:.1} µs per transaction ({:.1} CPU in the workload, {:.1} in the journal \
         thread, {:.1} waits; {:.2} sync calls of {:.1} µs); left out: {:.1} µs run-queue \
         delay, {:.1} µs joj's measuring, {:.1} µs pacing\n",
        per(h.host_s),
        per(h.cpu_s),
        per(h.journal_thread_cpu_s),
        per(h.wait_s),
        h.sync_calls as f64 / transactions.max(1) as f64,
        if h.sync_calls > 0 {
            h.sync_s / h.sync_calls as f64 * 1e6
        } else {
            0.0
        },
        per(h.run_delay_taken_out_s()),
        per(h.overhead_s),
        per(h.paced_sleep_s)
    )
}

/// The images' disk: its write requests against the loop devices', and its own per transaction.
pub fn backing_line(b: &joj_experiment::backing::BackingDisk, transactions: u64) -> String {
    let per = |x: u64| x as f64 / transactions.max(1) as f64;
    let flushes = match b.disk_flush_ios {
        Some(f) => format!(" and {:.2} flushes", per(f)),
        None => String::new(),
    };
    let own = match (b.direct_io, b.own_write_bytes) {
        (true, Some(o)) => format!(
            "{:.1} KiB per transaction of its own (the image files' metadata, which no block \
             device writes, and any other writer's of that disk: docs/measurement.md, \"Known \
             limits\")",
            per(o) / 1024.0
        ),
        _ => "the loop devices write through the page cache, so the disk's writes are merged \
              writeback and none are told apart as its own"
            .to_string(),
    };
    format!(
        "  image disk {}: {:.2} writes{flushes} per transaction, the loop devices {:.2} writes \
         and {:.2} flushes; {own}\n",
        b.disk,
        per(b.disk_write_ios),
        per(b.loop_write_ios),
        per(b.loop_flush_ios)
    )
}

/// A human-readable summary of one run.
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
    if c.cpus_awake {
        s.push_str(", CPUs held awake");
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
    if let Some(l) = &r.latency_us {
        s.push_str(&format!(
            "  latency µs: p50 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}\n",
            l.p50, l.p99, l.p999, l.max
        ));
    }
    s.push_str(&format!(
        "  syscalls: {} fsync, {} fdatasync ({} of them of directories), {} writes of {} B\n",
        r.syscalls.fsync,
        r.syscalls.fdatasync,
        r.syscalls.dir_syncs,
        r.syscalls.write_calls,
        r.syscalls.write_bytes
    ));
    s.push_str(&format!(
        "  bytes written: database {}  WAL {}  rollback journal {}  other {}\n",
        r.files.database, r.files.wal, r.files.rollback_journal, r.files.other
    ));
    s.push_str(&paper_lines(r));
    s.push_str(&waldio_and_block_lines(r));
    s.push_str(&checks_and_threads_lines(r));
    s.push_str(&device_lines(r));
    if let Some(h) = &r.host {
        s.push_str(&host_line(h, r.transactions));
    }
    if let Some(b) = &r.backing {
        s.push_str(&backing_line(b, r.transactions));
    }
    if let Some(e) = &r.backing_error {
        s.push_str(&format!("  image disk: not counted: {e}\n"));
    }
    if let Some(m) = &r.modeled {
        s.push_str(&crate::modeled_text::modeled_line(m));
    }
    if let Some(t) = &r.trace_file {
        s.push_str(&format!("  trace: {t}\n"));
    }
    if let Some(p) = &r.plot_file {
        s.push_str(&format!("  plot: {p}\n"));
    }
    s
}

/// The paper workload's transactions by kind and the database after the run.
fn paper_lines(r: &RunResult) -> String {
    let mut s = String::new();
    let c = &r.config;
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
    s
}

/// WALDIO's commits and the block layer's requests, in all and per transaction.
fn waldio_and_block_lines(r: &RunResult) -> String {
    let mut s = String::new();
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
        // In the words of `joj compare`'s columns; other files only when the run wrote some.
        let (roles, per) = (&b.data_by_role, &p.data_by_role);
        let other = |kib: String| {
            if roles.other > 0 {
                format!(", other files {kib}")
            } else {
                String::new()
            }
        };
        s.push_str(&format!(
            "  block: {} requests, {} KiB written: db {} KiB, log {} KiB{}, FS metadata {} KiB, FS journal {} KiB; {} flushes\n",
            b.requests,
            b.write_bytes / 1024,
            roles.database / 1024,
            (roles.wal + roles.rollback_journal) / 1024,
            other(format!("{} KiB", roles.other / 1024)),
            b.metadata_bytes / 1024,
            b.fs_journal_bytes / 1024,
            b.flushes
        ));
        s.push_str(&format!(
            "  per transaction: {:.1} KiB written (db {:.1}, log {:.1}{}, FS metadata {:.1}, FS journal {:.1}), {:.2} flushes\n",
            p.write_bytes / 1024.0,
            per.database / 1024.0,
            (per.wal + per.rollback_journal) / 1024.0,
            other(format!("{:.1}", per.other / 1024.0)),
            p.metadata_bytes / 1024.0,
            p.fs_journal_bytes / 1024.0,
            p.flushes
        ));
    }
    s
}

/// Data the classifier could not place, the cross-checks, and the threads' costs.
fn checks_and_threads_lines(r: &RunResult) -> String {
    let mut s = String::new();
    s.push_str(&crate::output::unplaced_note(
        r,
        crate::output::UnplacedDetail::JsonOnly,
    ));
    for check in &r.checks {
        s.push_str(&format!(
            "  check {}: {} ({})\n",
            check.name,
            if check.ok { "ok" } else { "FAILED" },
            check.detail
        ));
    }
    if !r.threads.is_empty() {
        let ops = r.transactions.max(1) as f64;
        let sum = |f: fn(&joj_workload::ThreadUsage) -> u64| -> f64 {
            r.threads.iter().map(f).sum::<u64>() as f64
        };
        s.push_str(&format!(
            "  {} threads: {:.2} voluntary + {:.2} involuntary context switches and {:.1} µs CPU per operation\n",
            r.threads.len(),
            sum(|t| t.voluntary_switches) / ops,
            sum(|t| t.involuntary_switches) / ops,
            sum(|t| t.cpu_ns) / ops / 1e3
        ));
    }
    s
}

/// The device section: the replay or the run on the device, its completion model, i-FTL's
/// own counts and the optimized journal.
fn device_lines(r: &RunResult) -> String {
    let mut s = String::new();
    if let Some(d) = &r.device {
        s.push_str(&format!(
            "  device {} ({}): {:.1} transactions/s of device time alone ({:.4} s), WAF {:.2}, {} flushes, {} FUA, {} GC copies, {}\n",
            d.profile,
            if r.xftl.is_some() {
                "ran the workload"
            } else {
                "trace replayed"
            }, d.modeled_ops_per_sec, d.modeled_s, d.waf, d.flushes, d.fua, d.gc_copies,
            crate::output::erases_phrase(d.erases, d.map_erases)
        ));
        if let Some(h) = &d.completion {
            s.push_str(&crate::completion_args::completion_line(h, "transaction"));
        }
        if let Some(i) = r.xftl.as_ref().and_then(|x| x.iftl.as_ref()) {
            s.push_str(&format!(
                "  i-FTL: {} B of data to flash, {} B of metadata to NVM, {} flash pages \
                 programmed for mapping, {} lazy-GC copies\n",
                i.data_bytes_to_flash,
                i.metadata_bytes_to_nvm,
                i.mapping_flash_programs,
                i.lazy_gc_copies
            ));
        }
        if let Some(e) = &d.emmc_journal {
            s.push_str(&crate::replay_cmd::ejournal_text(e));
        }
    }
    s
}
