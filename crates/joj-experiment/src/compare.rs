//! `joj compare`: one operation, every journal mode, one filesystem, each run traced; one row
//! per mode with the run's full result, and a text table of the JOJ per transaction.

use crate::error::{ExperimentError, StackError};
use crate::result::RunResult;
use crate::run::run_on;
use crate::stack::{FsChoice, RunOptions, Stack, Workload};
use joj_workload::{DbWorkload, JournalMode, Synchronous};
use serde::{Deserialize, Serialize};

/// One mode's row: its name, what an acknowledged commit survives, and the fields of its
/// `joj bench` document.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompareRow {
    pub mode: String,
    /// What a commit survives once it returned, in [`durability`]'s words (absent in documents
    /// written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durability: Option<String>,
    #[serde(flatten)]
    pub result: RunResult,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Comparison {
    pub rows: Vec<CompareRow>,
    /// The modes side by side ([`joj_trace::plot::render_compare_svg`]), when the rows were
    /// traced into a folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plot_file: Option<String>,
}

/// What `compare` says as it goes.
#[derive(Debug, Clone, Copy)]
pub enum CompareEvent<'a> {
    /// Mode `index` (from 1) of `of` starts.
    Starting {
        mode: JournalMode,
        index: usize,
        of: usize,
    },
    /// A row is done.
    Done(&'a CompareRow),
}

/// What an acknowledged commit of `mode` survives when the workload asked SQLite for
/// `synchronous` (waldio sets SQLite's level itself: its rows say both). The words are
/// explained by [`durability_key`].
pub fn durability(mode: JournalMode, synchronous: Synchronous) -> String {
    match mode {
        JournalMode::Off | JournalMode::Memory => "none (no journal)".into(),
        JournalMode::Xftl | JournalMode::Iftl => "full (device txn)".into(),
        JournalMode::Waldio(m) => {
            let o = m.options();
            let sqlite = o.sqlite_synchronous().to_lowercase();
            match (o.sync, o.group) {
                (_, Some(g)) => format!("group ≤ {} ms (SQLite {sqlite})", g.interval_ms),
                (joj_waldio::SyncOption::Normal, None) => {
                    format!("normal (SQLite {sqlite})")
                }
                (_, None) => format!("full (SQLite {sqlite})"),
            }
        }
        _ => match synchronous {
            Synchronous::Full => "full".into(),
            Synchronous::Normal if mode == JournalMode::Wal => "normal".into(),
            Synchronous::Normal => "full (normal)".into(),
            Synchronous::Off => "none (synchronous=off)".into(),
        },
    }
}

/// The key to [`durability`]'s words: one line for each kind of label in `labels` (the rows'
/// durability), in a fixed order, none for a kind no row has. Empty when no row has one.
pub fn durability_key<'a>(labels: impl IntoIterator<Item = &'a str>) -> String {
    /// Whether a label is of a kind, and what the kind means.
    type Kind = (fn(&str) -> bool, &'static str);
    const KINDS: [Kind; 7] = [
        (
            |l| l == "full",
            "full = every commit is durable when it returns",
        ),
        (
            |l| l.starts_with("full (SQLite "),
            "full (SQLite …) = waldio makes every commit durable when it returns, whatever \
             SQLite's synchronous (the level waldio runs SQLite at, in brackets)",
        ),
        (
            |l| l == "full (device txn)",
            "full (device txn) = every commit is durable when it returns: the device commits it \
             as one transaction (X-FTL, i-FTL)",
        ),
        (
            |l| l.starts_with("group ≤ "),
            "group ≤ N ms = commits are written and synced in groups: a commit is durable at \
             most N ms after it returns (waldio's group sync; SQLite runs at synchronous=normal, \
             waldio syncs)",
        ),
        (
            |l| l == "full (normal)",
            "full (normal) = a rollback journal at synchronous=normal: commits are durable, \
             with a small risk to the database on some filesystems",
        ),
        (
            |l| l.starts_with("normal"),
            "normal = the last commits before a power cut may roll back (durable at the next \
             sync or checkpoint)",
        ),
        (
            |l| l.starts_with("none"),
            "none = a crash may lose commits or corrupt the database",
        ),
    ];
    let labels: Vec<&str> = labels.into_iter().collect();
    let lines: Vec<&str> = KINDS
        .iter()
        .filter(|(is, _)| labels.iter().any(|l| is(l)))
        .map(|(_, says)| *says)
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    format!("durability: {}", lines.join(";\n  "))
}

/// The rows `joj compare` runs when none are named: SQLite's own modes beside joj's answer to
/// their journaling of journal — WALDIO, without and with group sync — and, when a device is
/// given, X-FTL on it.
pub fn default_modes(device: bool) -> Vec<JournalMode> {
    let mut modes = JournalMode::SQLITE.to_vec();
    modes.push(JournalMode::waldio(joj_waldio::SyncOption::Full, false));
    modes.push(JournalMode::waldio(joj_waldio::SyncOption::Full, true));
    if device {
        modes.push(JournalMode::Xftl);
    }
    modes
}

/// Run `base` once per mode in `modes` (journal mode replaced), every kernel-side row traced,
/// on a scratch filesystem; with a device every traced row is also replayed through it. Every
/// row's stack is resolved before the first runs, so options a mode cannot take fail at once.
/// `each` is called after every row (for progress output).
pub fn compare(
    base: &DbWorkload,
    modes: &[JournalMode],
    opts: &RunOptions,
    mut each: impl FnMut(CompareEvent<'_>),
) -> Result<Comparison, ExperimentError> {
    if modes.is_empty() {
        return Err(StackError::NoModes.into());
    }
    if !matches!(opts.fs, FsChoice::Scratch(_)) {
        return Err(StackError::CompareNeedsScratch.into());
    }
    base.validate()?;
    let mut planned = Vec::new();
    for &mode in modes {
        let w = Workload::Db(DbWorkload {
            journal: mode,
            ..base.clone()
        });
        let o = RunOptions {
            trace: true,
            label: Some(format!("compare-{}-{}-{mode}", opts.fs.name(), base.name())),
            ..opts.clone()
        };
        planned.push((mode, Stack::resolve(&w, &o)?, w));
    }
    let mut rows = Vec::new();
    let of = planned.len();
    for (i, (mode, stack, w)) in planned.into_iter().enumerate() {
        each(CompareEvent::Starting {
            mode,
            index: i + 1,
            of,
        });
        let result = run_on(&stack, &w, opts.progress.clone())?;
        let row = CompareRow {
            mode: mode.to_string(),
            durability: Some(durability(mode, base.synchronous)),
            result,
        };
        each(CompareEvent::Done(&row));
        rows.push(row);
    }
    Ok(Comparison {
        rows,
        plot_file: None,
    })
}

/// The table `joj compare` prints: per mode, its durability, transactions/s, then KiB written per
/// transaction — `db` (database data), `log` (WAL or rollback journal data), `FS metadata`,
/// `FS journal` and `(JOJ)`, the part of it written while SQLite synced its log, `total` — and
/// `flushes` per transaction: the words `joj bench` and `joj trace` use too (docs/cli.md). When the rows were replayed through a device model
/// (`joj compare --device`), the last columns give the modeled transactions per second (host
/// and device) and the host's and the device's shares of the modeled time.
pub fn table(c: &Comparison) -> String {
    let mut s = String::new();
    let device = c.rows.iter().any(|r| r.result.device.is_some());
    let (dev_head, dev_unit) = if device {
        (
            format!(" | {:>9} {:>5} {:>6}", "txn/s", "host", "device"),
            format!(" | {:>9} {:>12}", "modeled", "share of time"),
        )
    } else {
        (String::new(), String::new())
    };
    s.push_str(&format!(
        "{:<14} {:<28} {:>9} | {:>8} {:>8} {:>12} {:>11} {:>8} {:>8} | {:>7}{dev_head}\n",
        "mode",
        "durability",
        "txn/s",
        "db",
        "log",
        "FS metadata",
        "FS journal",
        "(JOJ)",
        "total",
        "flushes"
    ));
    s.push_str(&format!(
        "{:<14} {:<28} {:>9} | {:^60} | {:>7}{dev_unit}\n",
        "", "", "", "KiB written per transaction", "per txn"
    ));
    for r in &c.rows {
        let dev_col = match (modeled_figure(r), device) {
            (Some((ops, Some(host))), _) => format!(
                " | {ops:>9.1} {:>4.0}% {:>5.0}%",
                host * 100.0,
                (1.0 - host) * 100.0
            ),
            // A run on the device itself (xftl, iftl): the device's time only, marked, and
            // said under the table (its figure is not comparable with host + device rows).
            (Some((ops, None)), _) => format!(" | {ops:>8.1}* {:>5} {:>6}", "-", "100%"),
            (None, true) => format!(" | {:>9}", "-"),
            (None, false) => String::new(),
        };
        let res = &r.result;
        let durability = r.durability.as_deref().unwrap_or("?");
        match &res.block_per_txn {
            Some(b) => {
                let n = res.transactions.max(1) as f64;
                let joj = res
                    .fs_journal_by_synced_file
                    .map(|f| (f.wal + f.rollback_journal) as f64 / n)
                    .unwrap_or(0.0);
                let log = b.data_by_role.wal + b.data_by_role.rollback_journal;
                s.push_str(&format!(
                    "{:<14} {:<28} {:>9.1} | {:>8.1} {:>8.1} {:>12.1} {:>11.1} {:>8.1} {:>8.1} | {:>7.2}{dev_col}\n",
                    r.mode,
                    durability,
                    res.ops_per_sec,
                    b.data_by_role.database / 1024.0,
                    log / 1024.0,
                    b.metadata_bytes / 1024.0,
                    b.fs_journal_bytes / 1024.0,
                    joj / 1024.0,
                    b.write_bytes / 1024.0,
                    b.flushes
                ));
            }
            None => s.push_str(&format!(
                "{:<14} {:<28} {:>9.1} | {:<60} | {:>7}{dev_col}\n",
                r.mode, durability, res.ops_per_sec, "(not traced)", "-"
            )),
        }
    }
    if c.rows.iter().any(device_time_only) {
        s.push_str(DEVICE_TIME_ONLY);
    }
    s
}

/// Under the table when a row's modeled figure is its device's time alone.
pub const DEVICE_TIME_ONLY: &str = "* device time only: the rows run on the device model itself \
     (xftl, iftl) have no host time modeled yet, so their figure is not comparable with the host \
     + device rows above it; compare them with each other, or the device-only figures \
     (`--json`: device.modeled_ops_per_sec of every row)\n";

/// A row whose modeled figure is the device's time alone (run on the device model itself).
pub fn device_time_only(r: &CompareRow) -> bool {
    matches!(modeled_figure(r), Some((_, None)))
}

/// A row's modeled transactions per second and the host's share of its modeled time; the share
/// is `None` for a row modeled on its device's time alone ([`device_time_only`]).
pub fn modeled_figure(r: &CompareRow) -> Option<(f64, Option<f64>)> {
    match (&r.result.modeled, &r.result.device) {
        (Some(m), _) => Some((m.time.modeled_ops_per_sec, Some(m.time.host_share))),
        (None, Some(d)) => Some((d.modeled_ops_per_sec, None)),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_durability_key_explains_every_label_shown_and_no_other() {
        let modes = default_modes(true);
        let labels: Vec<String> = modes
            .iter()
            .map(|&m| durability(m, Synchronous::Full))
            .collect();
        let key = durability_key(labels.iter().map(String::as_str));
        for label in [
            "full",
            "full (SQLite …)",
            "full (device txn)",
            "group ≤ N ms",
            "none",
        ] {
            assert!(key.contains(&format!("{label} = ")), "{label}: {key}");
        }
        assert!(!key.contains("full (normal) ="), "no row is: {key}");
        assert!(!key.contains("\n  normal ="), "no row is: {key}");
        let normal = [
            durability(JournalMode::Delete, Synchronous::Normal),
            durability(JournalMode::Wal, Synchronous::Normal),
        ];
        let key = durability_key(normal.iter().map(String::as_str));
        assert_eq!(key.lines().count(), 2, "{key}");
        assert!(key.starts_with("durability: full (normal) = "), "{key}");
        assert!(key.contains("\n  normal = "), "{key}");
        assert_eq!(durability_key([]), "");
    }
}
