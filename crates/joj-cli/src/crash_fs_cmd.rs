//! `joj crash --fs KIND --journal MODE --states N`: crash states of the real kernel stack. The
//! experiment lives in `joj_experiment::crash_states`.

use std::sync::atomic::Ordering;

use crate::output::{CliResult, check_save};
use crate::progress::Progress;
use joj_experiment::crash_states::workload::{Canary, StockSync};
use joj_experiment::crash_states::{
    CrashFsOptions, CrashFsReport, FsWorkload, MAX_TRANSACTIONS, run,
};
use joj_linux::FsKind;

/// What `joj crash --fs` was given.
pub struct FsCrashArgs {
    pub fs: FsKind,
    pub journal: joj_workload::JournalMode,
    pub states: u64,
    pub canary: Option<String>,
    pub synchronous: Option<String>,
    pub workload: String,
    pub emmc_journal: bool,
    pub from_log: Option<std::path::PathBuf>,
    pub save_dir: Option<std::path::PathBuf>,
    pub transactions: Option<u64>,
    pub seed: u64,
    pub json: bool,
    pub save: Option<std::path::PathBuf>,
    pub force: bool,
}

pub fn main(a: FsCrashArgs) -> CliResult {
    let fs = a.fs;
    check_save(a.save.as_deref(), a.force, None)?;
    let transactions = a.transactions.unwrap_or(100).min(MAX_TRANSACTIONS);
    let opts = CrashFsOptions {
        fs,
        mode: a.journal,
        workload: FsWorkload::from_name(&a.workload).unwrap_or(FsWorkload::Sqlite),
        emmc_journal: a.emmc_journal,
        canary: a.canary.as_deref().and_then(Canary::from_name),
        sync: a
            .synchronous
            .as_deref()
            .and_then(StockSync::from_name)
            .unwrap_or(StockSync::Full),
        transactions,
        states: a.states,
        seed: a.seed,
        from_log: a.from_log.clone(),
        save_dir: a.save_dir.clone(),
    };
    let progress = Progress::start_counting(a.states, "crash states", "state");
    let json = a.json;
    let report = run(
        &opts,
        |planned| progress.restart(planned, "crash states"),
        |_, found| {
            progress.counter.fetch_add(1, Ordering::Relaxed);
            if let (Some(f), false) = (found, json) {
                let what = f
                    .violation
                    .as_ref()
                    .map(|v| serde_json::to_string(v).unwrap_or_default())
                    .or_else(|| f.fsck.clone())
                    .unwrap_or_default();
                progress.println(&format!(
                    "state {} ({} acknowledged): {what}\n  {}\n",
                    f.index, f.acknowledged, f.description
                ));
            }
        },
    );
    drop(progress);
    let report = report?;
    let emitted = crate::output::emit(&report, a.save.as_deref(), a.force, json, || {
        summary(&report)
    });
    if report.verdict_ok() {
        emitted
    } else if report.canary.is_some_and(|c| c.must_break()) {
        Err(format!(
            "none of {} crash states caught the {} canary: the check is too weak for this run; \
             try more --states or -n",
            report.states_explored,
            report.canary.map_or("", |c| c.name())
        )
        .into())
    } else {
        Err(format!(
            "{} of {} crash states violated {}'s promise and {} failed the filesystem check \
             (listed above{})",
            report.violations,
            report.states_explored,
            report.mode,
            report.fsck_failures,
            report
                .saved
                .as_ref()
                .map_or(String::new(), |p| format!("; saved in {}", p.display()))
        )
        .into())
    }
}

fn summary(r: &CrashFsReport) -> String {
    let mut out = states_summary(r);
    if let Some(c) = &r.emmc_journal {
        out.push_str(&format!(
            "  read as the optimized journal: {} jbd2 transactions as packed reliable writes \
             ({} writes); flushes dropped: {} preflushes, {} after commits; {} ordering flushes \
             added, {} kept; {} journal writes of an unfinished transaction left plain\n",
            c.groups,
            c.group_writes,
            c.preflushes_dropped,
            c.post_commit_flushes_dropped,
            c.ordering_flushes,
            c.flushes_kept,
            c.unfinished_journal_writes
        ));
    }
    if let Some(m) = &r.mount {
        out.push_str(&format!(
            "  mount (journal replay, modeled on {}): {} of {} states replay; per state mean \
             {:.1} transactions, {:.1} journal blocks read, {:.1} home blocks written, {:.2} ms \
             (max {} / {} / {} / {:.2} ms)\n",
            m.profile,
            m.images_replaying,
            m.images,
            m.mean_transactions,
            m.mean_journal_blocks,
            m.mean_home_blocks,
            m.mean_ms,
            m.max_transactions,
            m.max_journal_blocks,
            m.max_home_blocks,
            m.max_ms
        ));
    }
    out
}

fn states_summary(r: &CrashFsReport) -> String {
    let l = &r.log;
    let traced = match (l.traced_write_bytes, l.traced_flushes) {
        (Some(b), Some(f)) => format!(
            "; tracefs saw {} KiB written and {f} flushes{}",
            b / 1024,
            if b == l.write_bytes && f == l.flushes {
                " (the same)"
            } else {
                " (DIFFERENT)"
            }
        ),
        _ => String::new(),
    };
    format!(
        "\ncrash states of {} (synchronous {}) on {}{}: {} transactions recorded, {} writes ({} KiB), {} flushes, \
         {} epochs{traced}\n  {} states explored{} ({} distinct images checked) in {:.1} s, \
         {:.1} states/s\n  window: {}; violations {} (lost acknowledged {}, broken {}, \
         unmountable {}); fsck failures {}; largest loss {} transactions\n",
        r.mode,
        r.synchronous,
        r.fs,
        r.canary
            .map_or(String::new(), |c| format!(" (canary {})", c.name())),
        r.transactions,
        l.writes,
        l.write_bytes / 1024,
        l.flushes,
        l.epochs,
        r.states_explored,
        if r.exhaustive {
            ", every one there is"
        } else {
            ""
        },
        r.images_checked,
        r.check_s,
        r.states_per_s,
        match r.window {
            joj_experiment::crash_states::workload::Window::Durable => "durable".to_string(),
            joj_experiment::crash_states::workload::Window::Transactions(n) =>
                format!("up to {n} acknowledged transactions"),
        },
        r.violations,
        r.lost_acknowledged,
        r.broken,
        r.unmountable,
        r.fsck_failures,
        r.largest_loss,
    )
}
