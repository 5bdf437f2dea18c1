//! "What this means": the few lines at the end of `joj trace` and `joj compare` that turn the
//! run's own numbers into what an application developer can act on — the share of each commit
//! that is the journaling of journal (the FS journal written while SQLite synced its log), the
//! syncs per commit, and which journal mode would cut what. Every figure comes from the
//! document; what the run did not measure is not said.

use joj_experiment::RunResult;
use joj_experiment::compare::{Comparison, device_time_only};
use joj_experiment::run::DatabaseReport;

fn kib(bytes: f64) -> String {
    format!("{:.1} KiB", bytes / 1024.0)
}

/// `part` as a percentage of `whole`; none when `whole` is no amount a run writes (0,
/// subnormal, infinite or not a number: a document made by hand), where the share would read
/// `inf %` or `NaN %`.
fn percent(part: f64, whole: f64) -> Option<f64> {
    let share = 100.0 * part / whole;
    (whole.is_normal() && whole > 0.0 && share.is_finite()).then_some(share)
}

/// A share for the text: `12 %`, or that it cannot be given.
fn share(part: f64, whole: f64) -> String {
    percent(part, whole).map_or_else(
        || "share not computable".to_string(),
        |p| format!("{p:.0} %"),
    )
}

/// How many more or fewer bytes `diff` is of `whole`: `12 % fewer bytes`.
fn fewer_or_more(diff: f64, whole: f64) -> String {
    match percent(diff, whole) {
        Some(p) => format!(
            "{:.0} % {} bytes",
            p.abs(),
            if p >= 0.0 { "fewer" } else { "more" }
        ),
        None => "fewer or more bytes (share not computable)".to_string(),
    }
}

/// Times, with the right plural.
fn times(n: f64) -> String {
    if (n - 1.0).abs() < 0.005 {
        "once".to_string()
    } else {
        format!("{n:.2} times")
    }
}

/// The lines for a traced command.
pub fn of_trace(r: &RunResult) -> String {
    let Some(c) = &r.command else {
        return String::new();
    };
    let mut s = String::from("what this means:\n");
    if c.databases.is_empty() {
        s.push_str("  no SQLite database was seen: the figures above are the whole command's\n");
    }
    for d in &c.databases {
        s.push_str(&database_meaning(d, &r.config.fs));
    }
    if let Some(setup) = &c.setup {
        s.push_str(&format!(
            "  one-time set-up wrote {} ({}); it is not in the per-commit figures\n",
            kib(setup.block.write_bytes as f64),
            setup
                .work
                .iter()
                .map(|w| w.what.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    s
}

fn database_meaning(d: &DatabaseReport, fs: &str) -> String {
    let Some(p) = &d.per_commit else {
        return format!(
            "  {} ({}): its commits could not be counted, so no per-commit figure is given: {}\n",
            d.path, d.journal_mode, d.commits_counted_by
        );
    };
    let written = p.data_bytes + p.fs_journal_bytes_in_syncs + p.metadata_bytes_in_syncs;
    let mut s = format!(
        "  {} ({}): each commit syncs {} and writes {} (its files' data, and the filesystem's \
         writes during its syncs); {} of it is FS journal written while its log was synced — \
         the journaling of journal, {}\n",
        d.path,
        d.journal_mode,
        times(p.syncs),
        kib(written),
        kib(p.joj_bytes),
        share(p.joj_bytes, written)
    );
    // btrfs journals a synced file's change in its fsync log tree, which is metadata: the same
    // cost under another class, said so that a 0 % JOJ does not read as none.
    if p.metadata_bytes_in_syncs > 0.1 * written {
        s.push_str(&format!(
            "    {} of it ({}) is filesystem metadata written during its syncs{}\n",
            kib(p.metadata_bytes_in_syncs),
            share(p.metadata_bytes_in_syncs, written),
            if fs == "btrfs" {
                ": btrfs's fsync log tree, its way of journaling the synced file"
            } else {
                " (it may hold file data joj could not place: see the note above)"
            }
        ));
    }
    let rollback = ["delete", "truncate", "persist", "rollback"]
        .iter()
        .any(|m| d.journal_mode.split('+').any(|x| x == *m));
    let compare = format!("`joj compare --fs {fs}` measures each mode on this filesystem");
    if rollback && !d.journal_mode.contains("wal") {
        s.push_str(&format!(
            "    WAL would sync about once per commit (synchronous=FULL) instead of {}, and \
             waldio (the joj extension's vfs=waldio) also takes the FS journal out of the log's \
             commits; {compare}\n",
            times(p.syncs)
        ));
    } else if d.journal_mode.split('+').any(|m| m == "wal") {
        s.push_str(&format!(
            "    waldio (the joj extension's vfs=waldio) writes the WAL with direct I/O into a \
             preallocated file, journaling nothing per commit; {compare}\n"
        ));
    }
    s
}

/// A row's figures per commit: total bytes written, FS journal while the log was synced
/// (the JOJ), sync calls.
struct RowFigures {
    mode: String,
    written: f64,
    joj: f64,
    syncs: f64,
}

fn row_figures(mode: &str, r: &RunResult) -> Option<RowFigures> {
    let p = r.block_per_txn.as_ref()?;
    let n = r.transactions.max(1) as f64;
    let joj = r
        .fs_journal_by_synced_file
        .map_or(0.0, |f| (f.wal + f.rollback_journal) as f64 / n);
    let waldio_syncs = r.waldio.as_ref().map_or(0, |w| w.wal_syncs);
    let syncs = (r.syscalls.fsync + r.syscalls.fdatasync + waldio_syncs) as f64 / n;
    Some(RowFigures {
        mode: mode.to_string(),
        written: p.write_bytes,
        joj,
        syncs,
    })
}

/// The lines under `joj compare`'s table.
pub fn of_compare(c: &Comparison, fs: &str) -> String {
    let rows: Vec<RowFigures> = c
        .rows
        .iter()
        .filter_map(|r| row_figures(&r.mode, &r.result))
        .collect();
    let find = |m: &str| rows.iter().find(|r| r.mode == m);
    let mut s = String::from("what this means:\n");
    for r in rows.iter().filter(|r| r.joj > 0.0) {
        s.push_str(&format!(
            "  {}: {} of the {} each commit writes is FS journal written while SQLite synced its \
             log — the journaling of journal ({})\n",
            r.mode,
            kib(r.joj),
            kib(r.written),
            share(r.joj, r.written)
        ));
    }
    if let Some(wal) = find("wal") {
        for m in ["delete", "truncate", "persist"] {
            let Some(r) = find(m) else { continue };
            s.push_str(&format!(
                "  {} syncs {} per commit; WAL would sync {} and write {} on {fs} ({} against \
                 {})\n",
                m.to_uppercase(),
                times(r.syncs),
                times(wal.syncs),
                fewer_or_more(r.written - wal.written, r.written),
                kib(wal.written),
                kib(r.written)
            ));
        }
        for r in rows.iter().filter(|r| r.mode.starts_with("waldio")) {
            s.push_str(&format!(
                "  {} writes {} than WAL per commit ({} against {}) and syncs {}, with {} of FS \
                 journal during its log's syncs\n",
                r.mode,
                fewer_or_more(wal.written - r.written, wal.written),
                kib(r.written),
                kib(wal.written),
                times(r.syncs),
                kib(r.joj)
            ));
        }
    }
    s.push_str(&device_only_lines(c));
    if s.lines().count() == 1 {
        return String::new();
    }
    s
}

/// For each row run on the device model itself (xftl, iftl), whose modeled figure is its
/// device's time alone: that figure against each traced row's device time alone, the ratio
/// the papers give. The table's modeled column adds host time to the traced rows, so its
/// figures do not divide to these.
fn device_only_lines(c: &Comparison) -> String {
    let traced: Vec<(&str, f64)> = c
        .rows
        .iter()
        .filter(|r| !device_time_only(r))
        .filter_map(|r| {
            Some((
                r.mode.as_str(),
                r.result.device.as_ref()?.modeled_ops_per_sec,
            ))
        })
        .filter(|(_, per_sec)| per_sec.is_normal() && *per_sec > 0.0)
        .collect();
    let mut s = String::new();
    if traced.is_empty() {
        return s;
    }
    for r in c.rows.iter().filter(|r| device_time_only(r)) {
        let Some(d) = &r.result.device else { continue };
        let against = traced
            .iter()
            .map(|(mode, per_sec)| {
                format!(
                    "{:.2}× {mode}'s {per_sec:.1}",
                    d.modeled_ops_per_sec / per_sec
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        s.push_str(&format!(
            "  {}: {:.1} transactions/s of device time alone, {against} (their device time \
             alone; the modeled column adds host time to theirs, so it does not divide to this)\n",
            r.mode, d.modeled_ops_per_sec
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use joj_experiment::result::PerCommit;

    fn db(metadata: f64) -> DatabaseReport {
        DatabaseReport {
            path: "app.db".into(),
            journal_mode: "wal".into(),
            other_modes: None,
            commits: Some(100),
            commits_counted_by: "syncs".into(),
            files: vec![],
            data_bytes: 0,
            log_data_bytes: 0,
            fs_journal_bytes_in_syncs: 0,
            metadata_bytes_in_syncs: 0,
            joj_bytes: 0,
            syncs: 100,
            per_commit: Some(PerCommit {
                data_bytes: 5.5 * 1024.0,
                log_data_bytes: 4.5 * 1024.0,
                fs_journal_bytes_in_syncs: 0.0,
                metadata_bytes_in_syncs: metadata,
                joj_bytes: 0.0,
                syncs: 1.0,
            }),
        }
    }

    #[test]
    fn metadata_written_during_the_syncs_counts_and_is_named_on_btrfs() {
        // btrfs: 5.5 KiB of data and 98.5 KiB of its log tree per commit, no FS journal.
        let said = database_meaning(&db(98.5 * 1024.0), "btrfs");
        assert!(said.contains("writes 104.0 KiB"), "{said}");
        assert!(
            said.contains("98.5 KiB of it (95 %) is filesystem metadata written during its syncs: btrfs's fsync log tree"),
            "{said}"
        );
        // None of it: no such line.
        let said = database_meaning(&db(0.0), "ext4");
        assert!(
            said.contains("writes 5.5 KiB") && !said.contains("metadata"),
            "{said}"
        );
    }

    #[test]
    fn a_share_of_figures_no_run_makes_is_said_not_computable() {
        // A saved comparison whose rows write 5e-324 bytes a commit (`joj report` reads any
        // document): the journaling of journal's share read `inf %`.
        let mut doc: serde_json::Value =
            serde_json::from_str(include_str!("../tests/fixtures/report/compare.json")).unwrap();
        for (i, row) in doc["rows"].as_array_mut().unwrap().iter_mut().enumerate() {
            row["block_per_txn"]["write_bytes"] = [5e-324, 0.0, 1e-310][i % 3].into();
        }
        let c: Comparison = serde_json::from_value(doc).unwrap();
        let said = of_compare(&c, "ext4");
        assert!(
            said.contains("the journaling of journal (share not computable)"),
            "{said}"
        );
        assert!(!said.contains("inf") && !said.contains("NaN"), "{said}");
        // A traced database whose commits write 5e-324 bytes.
        let mut d = db(0.0);
        if let Some(p) = d.per_commit.as_mut() {
            (p.data_bytes, p.joj_bytes) = (5e-324, 1024.0);
        }
        let said = database_meaning(&d, "ext4");
        assert!(
            said.contains("the journaling of journal, share not computable"),
            "{said}"
        );
        assert!(!said.contains("inf") && !said.contains("NaN"), "{said}");
    }

    /// A `device` section with `per_sec` transactions per second of device time alone.
    fn device(per_sec: f64) -> serde_json::Value {
        serde_json::json!({
            "profile": "galaxy-s5", "host_write_bytes": 0, "nand_program_bytes": 0,
            "erases": 0, "gc_copies": 0, "waf": 1.0, "flushes": 0, "fua": 0,
            "modeled_s": 1000.0 / per_sec, "modeled_ops_per_sec": per_sec, "ops": 1000,
            "ops_basis": "transactions", "app_wait_s": 0.0
        })
    }

    /// A `modeled` section: host and device time, `per_sec` transactions per second in all.
    fn modeled(per_sec: f64) -> serde_json::Value {
        serde_json::json!({
            "profile": "galaxy-s5", "host": "Galaxy S5", "cpu_factor": 2.32, "host_here_s": 0.3,
            "host_s": 0.7, "device_s": 1000.0 / per_sec - 0.7, "modeled_s": 1000.0 / per_sec,
            "ops": 1000, "modeled_ops_per_sec": per_sec, "host_share": 0.25,
            "paced": true, "pacing": "paced"
        })
    }

    #[test]
    fn an_xftl_row_is_set_against_each_traced_rows_device_time_alone() {
        // X-FTL's 1298.6 device-only against WAL's 337.2 host + device read 3.85×; the paper's
        // ratio, and the README's, is against WAL's device time alone: 452.5, 2.87×.
        let mut doc: serde_json::Value =
            serde_json::from_str(include_str!("../tests/fixtures/report/compare.json")).unwrap();
        let rows = doc["rows"].as_array_mut().unwrap();
        let mut xftl = rows[1].clone();
        for (i, device_per_sec, modeled_per_sec) in [(0, 452.5, 337.2), (1, 257.3, 173.7)] {
            rows[i]["device"] = device(device_per_sec);
            rows[i]["modeled"] = modeled(modeled_per_sec);
        }
        xftl["mode"] = "xftl".into();
        xftl["block_per_txn"] = serde_json::Value::Null;
        xftl["device"] = device(1298.6);
        rows.push(xftl);
        let c: Comparison = serde_json::from_value(doc).unwrap();
        let said = of_compare(&c, "ext4");
        assert!(
            said.contains(
                "  xftl: 1298.6 transactions/s of device time alone, 2.87× wal's 452.5, 5.05× \
                 delete's 257.3 (their device time alone;"
            ),
            "{said}"
        );
        assert_eq!(said.matches("device time alone,").count(), 1, "{said}");
    }
}
