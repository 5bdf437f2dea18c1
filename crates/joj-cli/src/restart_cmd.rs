//! `joj restart`: restart time after a power cut, per journal mode, on one device profile (the
//! X-FTL paper's Table 5). The measurement lives in `joj_experiment::restart`.

use std::sync::atomic::Ordering;

use crate::args;
use crate::groups::{DEVICE, Output, STACK, Seed, WORKLOAD};
use crate::output::{CliResult, check_save};
use crate::progress::Progress;
use clap::Args;
use joj_experiment::restart::{RestartOptions, RestartReport, RestartRun, measure};
use joj_linux::FsKind;
use joj_workload::JournalMode;
use joj_workload::paper::PaperWorkload;

#[derive(Args)]
pub struct RestartArgs {
    /// The workload the power cut interrupts (only xftl-synthetic, the paper's setup).
    #[arg(long, value_parser = args::paper_workload(), default_value = "xftl-synthetic", help_heading = WORKLOAD)]
    pub workload: String,
    /// Rows read and updated per transaction.
    #[arg(long = "pages-per-txn", default_value_t = 5, help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub pages_per_txn: u32,
    /// The run the cut interrupts: the cut comes in a transaction drawn from 1..=N (`-n` is
    /// its old spelling).
    #[arg(long = "transactions", short_alias = 'n', value_name = "N", default_value_t = 1000, help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u64>(1, joj_experiment::restart::MAX_TRANSACTIONS))]
    pub transactions: u64,
    /// Power cuts per mode (the paper averaged five).
    #[arg(long, default_value_t = 5, help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u32>(1, joj_experiment::restart::MAX_RUNS))]
    pub runs: u32,
    #[command(flatten)]
    pub seed: Seed,
    /// Comma-separated modes (delete, truncate, persist, wal, xftl and iftl can be restarted).
    #[arg(long, value_parser = args::mode(), default_value = "delete,wal,xftl", value_delimiter = ',', help_heading = STACK)]
    pub modes: Vec<JournalMode>,
    /// Filesystem of the rollback and WAL modes (a scratch filesystem on a loop device).
    #[arg(long, value_parser = args::scratch_fs(), default_value = "ext4", help_heading = STACK)]
    pub fs: FsKind,
    /// SQLite page size in bytes (the paper's: 8192).
    #[arg(long = "page-size", default_value_t = 8192, help_heading = STACK, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub page_size: u32,
    /// Size of the scratch filesystem image in MiB.
    #[arg(long = "image-mib", default_value_t = 1024, help_heading = STACK, allow_negative_numbers = true, value_parser = args::within::<u64>(1, 1 << 24))]
    pub image_mib: u64,
    #[arg(long, value_name = "PROFILE", default_value = "galaxy-s5", help_heading = DEVICE, help = crate::groups::profile_help("Emulated device profile every mode is timed on", "."))]
    pub device: String,
    #[command(flatten)]
    pub output: Output,
}

pub fn main(a: RestartArgs) -> CliResult {
    check_save(a.output.save.as_deref(), a.output.force, Some(&a.device))?;
    let opts = RestartOptions {
        workload: PaperWorkload::from_name(&a.workload, a.pages_per_txn, 1, 1)?,
        modes: a.modes.clone(),
        profile: joj_device::Profile::load(&a.device)?,
        transactions: a.transactions,
        runs: a.runs,
        page_size: a.page_size,
        seed: a.seed.get(),
        fs: a.fs,
        image_size_bytes: a.image_mib << 20,
        trace_buffer_kb: joj_linux::DEFAULT_BUFFER_KB,
    };
    let progress = Progress::start_counting(
        u64::from(a.runs) * opts.modes.len() as u64,
        "restart",
        "cut",
    );
    let json = a.output.json;
    let report = measure(&opts, |mode, run| {
        progress.counter.fetch_add(1, Ordering::Relaxed);
        if !json {
            progress.println(&format!(
                "{mode:>8}: cut in txn {:>4}, log {:>8} B{}, restart {:>7.2} ms modeled \
                 ({} reads, {} writes, {} flushes), holds {} txns\n",
                run.crash_in_txn,
                run.log_bytes,
                run.wal_frames
                    .map_or(String::new(), |f| format!(" ({f} frames)")),
                run.restart_ms,
                run.reads,
                run.writes,
                run.flushes,
                run.recovered
            ));
        }
    });
    drop(progress);
    let report = report?;
    crate::output::emit(
        &report,
        a.output.save.as_deref(),
        a.output.force,
        json,
        || table(&report),
    )
}

fn table(r: &RestartReport) -> String {
    // The filesystem only where a mode ran on one: xftl and iftl run on the device alone.
    let on_device = |m: &str| m == "xftl" || m == "iftl";
    let stack = match r.rows.iter().all(|row| on_device(&row.mode)) {
        true => format!("the device {}", r.profile),
        false => format!("{} on {}", r.fs, r.profile),
    };
    let mut out = format!(
        "\nrestart after a power cut, {} ({} pages per txn), {stack}, modeled ms (mean of {} \
         cuts):\n{:>8} {:>10} {:>12} {:>10} {:>12} {:>18}\n",
        r.workload,
        r.pages_per_txn.unwrap_or(0),
        r.rows.first().map_or(0, |row| row.runs.len()),
        "mode",
        "restart",
        "first access",
        "checkpoint",
        "X-L2P/logFTL",
        "not counted"
    );
    for row in &r.rows {
        let n = row.runs.len() as f64;
        let mean = |f: &dyn Fn(&RestartRun) -> Option<f64>| {
            let v: Vec<f64> = row.runs.iter().filter_map(f).collect();
            if v.is_empty() {
                "-".to_string()
            } else {
                format!("{:.3}", v.iter().sum::<f64>() / n)
            }
        };
        let not_counted = mean(&|x| {
            let c = &x.not_counted_ms;
            Some(
                c.fs_mount_ms.unwrap_or(0.0)
                    + c.device_recovery_ms.unwrap_or(0.0)
                    + c.file_layer_mount_ms.unwrap_or(0.0),
            )
        });
        out.push_str(&format!(
            "{:>8} {:>10.3} {:>12} {:>10} {:>12} {:>18}\n",
            row.mode,
            row.mean_restart_ms,
            mean(&|x| Some(x.first_access_ms)),
            mean(&|x| x.checkpoint_ms),
            mean(&|x| x.xl2p_load_ms.or(x.logftl_recovery_ms)),
            not_counted
        ));
    }
    out
}
