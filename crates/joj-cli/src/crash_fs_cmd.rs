//! `joj crash fs --fs KIND --journal MODE --states N`: crash states of the real kernel stack. The
//! experiment lives in `joj_experiment::kernel_crash_states`.

use std::sync::atomic::Ordering;

use crate::args;
use crate::groups::{DEFAULT_SEED, DEVICE, OUTPUT, Output, STACK, Seed, WORKLOAD};
use crate::output::{CliResult, check_save};
use crate::progress::Progress;
use joj_experiment::kernel_crash_states::error::CrashFsError;
use joj_experiment::kernel_crash_states::from_log::{self, LogIdentity};
use joj_experiment::kernel_crash_states::workload::{Canary, JudgeAs, StockSync, Window};
use joj_experiment::kernel_crash_states::{
    CrashFsOptions, CrashFsReport, FsWorkload, MAX_TRANSACTIONS, Part, Shard, run,
};
use joj_linux::FsKind;

/// `joj crash fs`: what it was given (`None`: not given; a saved log may say it).
#[derive(clap::Args)]
#[command(mut_arg("seed", |a| a.help(
    "Seed of every random choice of the run; the same seed reruns it exactly [default: 42; \
     with --from-log, the log's]"
)))]
pub struct FsCrashArgs {
    /// Crash states to check (all of them when the run has fewer).
    #[arg(long, default_value_t = 2000, help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u64>(1, joj_experiment::kernel_crash_states::MAX_STATES))]
    pub states: u64,
    /// What the recorded run does: SQLite transactions (sqlite) or PostMark-like file
    /// creates, appends and deletes, each made durable with fsync (postmark) [default: sqlite;
    /// with --from-log, what the log says] (`--fs-workload` is its old name).
    #[arg(long, alias = "fs-workload", value_parser = FsWorkload::NAMES, help_heading = WORKLOAD)]
    pub workload: Option<String>,
    /// Transactions of the recorded run [default: 100] (`-n` is its old spelling).
    #[arg(long = "transactions", short_alias = 'n', value_name = "N", help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u64>(1, joj_experiment::device_power_cuts::MAX_TRANSACTIONS))]
    pub transactions: Option<u64>,
    /// A mode broken on purpose, which the check must catch: skip-sync, fallocate-flush-only
    /// (waldio), sync-off (stock modes), per-page-reliable (--emmc-journal: the packed reliable
    /// commit atomic per page only). Two controls, expected to hold: fallocate-only (waldio
    /// on unwritten extents, with its fdatasync) and flush-only (waldio's written
    /// preallocation, each commit a bare device cache flush) (`--fs-canary` is its old name).
    #[arg(long, alias = "fs-canary", value_parser = Canary::NAMES, help_heading = WORKLOAD)]
    pub canary: Option<String>,
    /// Check the states of a saved joj-blocklog instead of recording a run; --fs, --journal,
    /// --synchronous, --workload, --canary and --seed default to what the log says, and
    /// must agree with it.
    #[arg(long, value_name = "LOG", help_heading = WORKLOAD)]
    pub from_log: Option<std::path::PathBuf>,
    /// With --from-log: check only the K-th of N disjoint shares of the states the seed draws
    /// from the log (1 ≤ K ≤ N), and print (--json) or --save a part for `joj crash merge`
    /// (docs/formats/crash-part.md).
    #[arg(long, value_name = "K/N", value_parser = parse_shard, help_heading = WORKLOAD)]
    pub shard: Option<Shard>,
    /// Record the run and save its log in --out, checking no state (then check it with
    /// --from-log, whole or in shares with --shard).
    #[arg(long, help_heading = WORKLOAD)]
    pub record_only: bool,
    /// Judge every state against its mode's window (window) or against full durability
    /// (full: every acknowledged transaction), to see what synchronous=NORMAL or group sync
    /// loses.
    #[arg(long, value_parser = JudgeAs::NAMES, help_heading = WORKLOAD)]
    pub judge_as: Option<String>,
    #[command(flatten)]
    pub seed: Seed,
    /// The scratch filesystem whose crash states are checked (made on a FUSE-backed loop
    /// device that records every block write and flush) [with --from-log, what the log says].
    #[arg(long, value_parser = args::scratch_fs(), help_heading = STACK)]
    pub fs: Option<FsKind>,
    /// The journal mode of the recorded run [default: wal; with --from-log, what the log
    /// says] (`-j` is its old spelling).
    #[arg(long, short_alias = 'j', value_parser = args::journal(), help_heading = STACK)]
    pub journal: Option<joj_workload::JournalMode>,
    /// The recorded connection's PRAGMA synchronous. Stock modes: their durability (extra:
    /// DELETE mode also syncs the directory after unlinking its journal, the commit point;
    /// normal: judged against its window). waldio modes: what the application sets, any of
    /// the four, judged against the waldio option's window, which must not depend on it
    /// [default: full; a waldio mode: its option's]. A stock mode at off is --canary sync-off.
    #[arg(long, value_parser = StockSync::NAMES, help_heading = STACK)]
    pub synchronous: Option<String>,
    /// With ext4: read the run as the eMMC paper's optimized journal issues it — each jbd2
    /// transaction one all-or-nothing packed reliable write, durable without a flush, the
    /// commit's flushes dropped (docs/device-model.md).
    #[arg(long, help_heading = DEVICE)]
    pub emmc_journal: bool,
    /// Save the log and every violating state (with the command that rebuilds it) in this
    /// directory; checked before the run; an earlier run's files are kept (the new ones get the
    /// next free name) unless --force (`--save-dir` is its old name).
    #[arg(long = "out", alias = "save-dir", value_name = "DIR", help_heading = OUTPUT)]
    pub save_dir: Option<std::path::PathBuf>,
    /// Save the recorded run's log in --out even when no state violates (a clean log to keep,
    /// share or edit into a new canary).
    #[arg(long, help_heading = OUTPUT)]
    pub save_log: bool,
    #[command(flatten)]
    pub output: Output,
}

fn parse_shard(s: &str) -> Result<Shard, String> {
    Shard::parse(s).map_err(|e| e.to_string())
}

/// `given`, else what the log says, else `default` (`None`: the log is needed to say it and
/// does not).
fn or_logged<T>(given: Option<T>, logged: Option<T>, default: Option<T>) -> Option<T> {
    given.or(logged).or(default)
}

/// The options of the run: the flags, with what a saved log says where a flag is not given.
/// A flag that disagrees with the log is refused by the run itself (`from_log::check`).
fn options(a: &FsCrashArgs) -> Result<CrashFsOptions, Box<dyn std::error::Error>> {
    if a.fs.is_none() && a.from_log.is_none() {
        return Err(
            "joj crash fs needs --fs KIND (the scratch filesystem to record a run on) or \
                    --from-log LOG (a run recorded before); fix: add --fs ext4"
                .into(),
        );
    }
    let logged = match &a.from_log {
        Some(path) => from_log::identity(path)?,
        None => LogIdentity::default(),
    };
    let unlabelled = |what, flag| CrashFsError::LogUnlabelled {
        log: a.from_log.clone().unwrap_or_default(),
        what,
        flag,
    };
    let recorded = a.from_log.is_none();
    let fs = or_logged(a.fs, logged.fs, None).ok_or_else(|| unlabelled("filesystem", "--fs"))?;
    let mode = or_logged(
        a.journal,
        logged.mode,
        recorded.then_some(joj_workload::JournalMode::Wal),
    )
    .ok_or_else(|| unlabelled("journal mode", "--journal"))?;
    let given_canary = a.canary.as_deref().map(Canary::from_name);
    Ok(CrashFsOptions {
        fs,
        mode,
        workload: or_logged(
            a.workload.as_deref().and_then(FsWorkload::from_name),
            logged.workload,
            Some(FsWorkload::Sqlite),
        )
        .unwrap_or(FsWorkload::Sqlite),
        emmc_journal: a.emmc_journal,
        canary: or_logged(given_canary, logged.canary, Some(None)).flatten(),
        sync: or_logged(
            a.synchronous.as_deref().and_then(StockSync::from_name),
            logged.sync,
            Some(StockSync::default_for(mode)),
        )
        .unwrap_or(StockSync::default_for(mode)),
        transactions: a.transactions.unwrap_or(100).min(MAX_TRANSACTIONS),
        states: a.states,
        seed: or_logged(a.seed.given(), logged.seed, Some(DEFAULT_SEED)).unwrap_or(DEFAULT_SEED),
        from_log: a.from_log.clone(),
        save_dir: a.save_dir.clone(),
        save_log: a.save_log,
        judge_as: a
            .judge_as
            .as_deref()
            .and_then(JudgeAs::from_name)
            .unwrap_or(JudgeAs::Window),
        shard: a.shard,
        record_only: a.record_only,
    })
}

/// `joj crash merge PART…`.
#[derive(clap::Args)]
pub struct MergeArgs {
    /// The parts, one per share (`joj crash fs … --shard K/N --json --save PART`), in any
    /// order.
    #[arg(required = true)]
    pub parts: Vec<std::path::PathBuf>,
    #[command(flatten)]
    pub output: Output,
}

/// `joj crash merge`: the unsharded run's document, its verdict as the exit status.
pub fn merge(a: MergeArgs) -> CliResult {
    if let Some(save) = &a.output.save {
        let inputs: Vec<&std::path::Path> = a.parts.iter().map(|p| p.as_path()).collect();
        crate::output::check_output_file("--save", save, a.output.force, &inputs)?;
    }
    let report = joj_experiment::kernel_crash_states::merge(&a.parts)?;
    let emitted = crate::output::emit(
        &report,
        a.output.save.as_deref(),
        a.output.force,
        a.output.json,
        || summary(&report),
    );
    match verdict(&report) {
        Ok(()) => emitted,
        Err(v) => Err(v.into()),
    }
}

pub fn main(a: FsCrashArgs) -> CliResult {
    check_save(a.output.save.as_deref(), a.output.force, None)?;
    let opts = options(&a)?;
    if opts.record_only {
        return record_only(&opts, &a);
    }
    if opts.shard.is_some() {
        return shard(&opts, &a);
    }
    let progress = Progress::start_counting(a.states, "crash states", "state");
    let json = a.output.json;
    let ran = run(
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
    let (mut report, evidence) = ran?;
    // Saved before printing, so the printed result says where; printed whatever saving did.
    let saved = evidence.save(&opts, a.output.force).map(|s| {
        report.saved = s.violations;
        report.saved_log = s.log;
    });
    let emitted = crate::output::emit(
        &report,
        a.output.save.as_deref(),
        a.output.force,
        json,
        || summary(&report),
    );
    let verdict = verdict(&report);
    match (saved, verdict) {
        (Err(e), Ok(())) => {
            Err(format!("{e} (the result is printed above, so nothing computed is lost)").into())
        }
        (Err(e), Err(v)) => Err(format!(
            "{v}; and {e} (the result is printed above, so nothing computed is lost)"
        )
        .into()),
        (Ok(()), Err(v)) => Err(v.into()),
        (Ok(()), Ok(())) => emitted,
    }
}

/// `--record-only`: the log recorded and saved, its summary printed.
fn record_only(opts: &CrashFsOptions, a: &FsCrashArgs) -> CliResult {
    let (mut recorded, evidence) = joj_experiment::kernel_crash_states::record_only(opts)?;
    let keep = CrashFsOptions {
        save_log: true,
        ..opts.clone()
    };
    recorded.saved_log = evidence.save(&keep, a.output.force)?.log;
    crate::output::emit(
        &recorded,
        a.output.save.as_deref(),
        a.output.force,
        a.output.json,
        || {
            let l = &recorded.log;
            format!(
                "\nrecorded {} on {}: {} transactions, {} writes ({} KiB), {} flushes, {} epochs; \
             tracefs saw {} KiB and {} flushes\n  saved log: {}\n",
                recorded.mode,
                recorded.fs,
                recorded.transactions,
                l.writes,
                l.write_bytes / 1024,
                l.flushes,
                l.epochs,
                l.traced_write_bytes.unwrap_or(0) / 1024,
                l.traced_flushes.unwrap_or(0),
                recorded
                    .saved_log
                    .as_ref()
                    .map_or("-".into(), |p| p.display().to_string())
            )
        },
    )
}

/// `--shard K/N`: one share checked, its part printed or saved; the verdict is the merge's.
fn shard(opts: &CrashFsOptions, a: &FsCrashArgs) -> CliResult {
    let progress = Progress::start_counting(a.states, "crash states", "state");
    let json = a.output.json;
    let ran = joj_experiment::kernel_crash_states::run_shard(
        opts,
        |planned| progress.restart(planned, "crash states of this share"),
        |_, _| {
            progress.counter.fetch_add(1, Ordering::Relaxed);
        },
    );
    drop(progress);
    let part: Part = ran?;
    crate::output::emit(
        &part,
        a.output.save.as_deref(),
        a.output.force,
        json,
        || {
            format!(
                "\nshard {} of the crash states of {} on {}: states {}..{} of {} checked in {:.1} s \
             ({} distinct images); {} of them would violate full durability or fail the \
             checker (the verdict is `joj crash merge`'s, over every part)\n",
                part.shard,
                part.run.mode,
                part.run.fs,
                part.first,
                part.end,
                part.run.states_explored,
                part.check_s,
                part.images.len(),
                part.flagged()
            )
        },
    )
}

/// Exit status 0, or why not.
fn verdict(report: &CrashFsReport) -> Result<(), String> {
    if report.verdict_ok() {
        Ok(())
    } else if report.canary.is_some_and(|c| c.must_break()) {
        Err(format!(
            "none of {} crash states caught the {} canary: the check is too weak for this run; \
             try more --states or --transactions",
            report.states_explored,
            report.canary.map_or("", |c| c.name())
        ))
    } else {
        Err(format!(
            "{} of {} crash states violated {}'s promise{} and {} failed the filesystem check \
             (listed above{})",
            report.violations,
            report.states_explored,
            report.mode,
            match report.judged_as {
                JudgeAs::Window => String::new(),
                JudgeAs::Full => " judged as full durability (--judge-as full)".into(),
            },
            report.fsck_failures,
            report
                .saved
                .as_ref()
                .map_or(String::new(), |p| format!("; saved in {}", p.display()))
        ))
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
    let mut out = format!(
        "\ncrash states of {} (synchronous {}) on {}{}: {} transactions recorded, {} writes ({} KiB), {} flushes, \
         {} epochs{traced}\n  {} states explored{} ({} distinct images checked) in {:.1} s, \
         {:.1} states/s\n",
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
            " (exhaustive: every subset of every epoch, every tear point on a write's prefix and on all writes)"
        } else {
            ""
        },
        r.images_checked,
        r.check_s,
        r.states_per_s,
    );
    out.push_str(&kinds_line(r));
    let window = match r.window {
        Window::Durable => "durable".to_string(),
        Window::Transactions(n) => format!("up to {n} acknowledged transactions"),
    };
    let judged = match (r.judged_as, r.window) {
        (JudgeAs::Full, Window::Transactions(_)) => {
            format!("judged as full durability (the mode's window: {window})")
        }
        _ => format!("window: {window}"),
    };
    out.push_str(&format!(
        "  {judged}; violations {} (lost acknowledged {}, broken {}, unmountable {}); fsck \
         failures {}; largest loss {} transactions\n",
        r.violations, r.lost_acknowledged, r.broken, r.unmountable, r.fsck_failures, r.largest_loss,
    ));
    if r.window != Window::Durable && r.judged_as == JudgeAs::Window {
        out.push_str(&format!(
            "  against full durability: {} of {} states lose acknowledged transactions (see them \
             with --judge-as full)\n",
            r.losing_acknowledged, r.states_explored
        ));
    }
    if let Some(checked) = &r.image_checked_before_mount {
        out.push_str(&format!("  the log's image before any mount: {checked}\n"));
    }
    for (what, path) in [("log", &r.saved_log), ("violating states", &r.saved)] {
        if let Some(p) = path {
            out.push_str(&format!("  saved {what}: {}\n", p.display()));
        }
    }
    out
}

/// The states by kind, and how much of each epoch they cover.
fn kinds_line(r: &CrashFsReport) -> String {
    let k = &r.states_by_kind;
    let mut out = format!(
        "  by kind: {} flush boundaries, {} right after a flush, {} in-order prefixes, {} \
         subsets, {} torn writes ({:.0} % in flight)\n",
        k.flush_boundary,
        k.after_flush,
        k.prefix,
        k.subset,
        k.torn,
        100.0 * k.in_flight() as f64 / k.total().max(1) as f64
    );
    // The split with at least half in flight is the plain reading's; the optimized journal's
    // keeps its own plan (docs/crash-states.md), which the share above would otherwise hide.
    if r.emmc_journal.is_some() && !r.exhaustive {
        out.push_str(&format!(
            "  --emmc-journal's reading plans its boundary states first (all and none of an \
             epoch's writes at each count of complete groups: {} here), then random states; the \
             split with half at least in flight is the plain reading's\n",
            k.flush_boundary + k.after_flush
        ));
    }
    if let Some(c) = &r.coverage {
        out.push_str(&format!(
            "  coverage: of {} epochs with writes, {} have a state checked and {} a subset or \
             torn write; share of an epoch's states checked: median {}, max {}\n",
            c.epochs_with_writes,
            c.epochs_checked,
            c.epochs_with_in_flight_checked,
            share(c.share_median),
            share(c.share_max)
        ));
    }
    out
}

/// A share as a percentage, with the digits a small one needs.
fn share(x: f64) -> String {
    if x == 0.0 {
        "0 %".into()
    } else if x >= 0.01 {
        format!("{:.0} %", 100.0 * x)
    } else {
        format!("{:.1e} %", 100.0 * x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report of `joj crash fs --fs ext4 --emmc-journal --states 200 --transactions 50`
    /// (2026-11-29), with or without its optimized-journal section.
    fn report(emmc_journal: bool) -> CrashFsReport {
        let mut doc = serde_json::json!({
            "fs": "ext4", "mode": "wal", "workload": "sqlite", "canary": null,
            "synchronous": "FULL", "window": {"kind": "durable"}, "transactions": 50, "seed": 42,
            "log": {"writes": 132, "write_bytes": 1449984, "flushes": 86, "epochs": 56,
                    "traced_write_bytes": 1449984, "traced_flushes": 86, "record_s": 0.23},
            "emmc_journal": {"groups": 30, "group_writes": 60, "preflushes_dropped": 30,
                             "post_commit_flushes_dropped": 30, "ordering_flushes": 29,
                             "flushes_kept": 26, "unfinished_journal_writes": 0},
            "states_explored": 200, "exhaustive": false,
            "states_by_kind": {"flush_boundary": 86, "after_flush": 54, "prefix": 2,
                               "subset": 3, "torn": 55},
            "coverage": null, "images_checked": 122, "judged_as": "window", "violations": 0,
            "lost_acknowledged": 0, "broken": 0, "unmountable": 0, "fsck_failures": 0,
            "largest_loss": 0, "losing_acknowledged": 0, "image_checked_before_mount": null,
            "mount": null, "check_s": 1.67, "states_per_s": 119.6, "found": [], "saved": null,
            "saved_log": null
        });
        if !emmc_journal {
            doc["emmc_journal"] = serde_json::Value::Null;
        }
        serde_json::from_value(doc).unwrap()
    }

    #[test]
    fn the_optimized_journals_reading_says_why_fewer_than_half_its_states_are_in_flight() {
        // 58 of 200 states in flight (29 %) under a README that said half at least: this
        // reading plans its 140 boundary states first, then draws the rest at random.
        let said = kinds_line(&report(true));
        assert!(said.contains("(29 % in flight)"), "{said}");
        assert!(
            said.contains(
                "--emmc-journal's reading plans its boundary states first (all and none of an \
                 epoch's writes at each count of complete groups: 140 here), then random states"
            ),
            "{said}"
        );
        let said = kinds_line(&report(false));
        assert!(!said.contains("--emmc-journal"), "{said}");
    }
}
