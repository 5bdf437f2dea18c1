//! SQLite's contract under other processes, other connections and the C API, through the
//! extension in the distribution's `python3` (SQLite 3.40): each scenario of
//! `tests/py/contract.py` runs on stock `unix` and on joj's `waldio` and `joj`, and every joj
//! VFS must give what stock gives. Each test also pins what stock gives, so the comparison
//! cannot pass by both being wrong. (Issue 31's cases, one test each.)

mod common;

use serde_json::Value;
use std::process::Command;

/// Run `scenario` on `vfs` in a fresh directory; its JSON.
fn run(scenario: &str, vfs: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let out = common::run_ok(
        Command::new(common::python())
            .arg(common::script("contract.py"))
            .arg(scenario)
            .arg(common::lib().with_extension(""))
            .arg(vfs)
            .arg(dir.path()),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("{scenario} on {vfs}: not JSON ({e}): {text}"))
}

/// `scenario` on stock `unix`, checked by `stock_is`, then on each joj VFS: equal to stock.
fn same_as_stock(scenario: &str, stock_is: impl Fn(&Value)) {
    let stock = run(scenario, "unix");
    stock_is(&stock);
    for vfs in ["waldio", "joj"] {
        let got = run(scenario, vfs);
        assert_eq!(
            got, stock,
            "{scenario}: {vfs} differs from stock unix\n{vfs}: {got}\nunix: {stock}"
        );
    }
}

fn locked(v: &Value) -> bool {
    v.as_str() == Some("error: database is locked")
}

#[test]
fn a_second_connection_keeps_the_rollback_lock_and_no_commit_is_lost() {
    same_as_stock("rollback_lock_survives_a_second_connection", |s| {
        assert!(locked(&s["b_begin"]), "{s}");
        assert_eq!(s["a_commit"], serde_json::json!([]), "{s}");
        assert_eq!(s["rows"], serde_json::json!([["A", 200]]), "{s}");
    });
}

#[test]
fn a_second_connection_keeps_the_wal_shared_lock() {
    same_as_stock("wal_shared_lock_survives_a_second_connection", |s| {
        assert!(locked(&s["exclusive_write"]), "{s}");
        assert!(locked(&s["leave_wal"]), "{s}");
    });
}

#[test]
fn a_connection_opens_while_another_holds_an_exclusive_lock() {
    same_as_stock("open_while_another_holds_exclusive", |s| {
        assert_eq!(s["opened"], serde_json::json!([]), "{s}");
        assert!(locked(&s["read_while_locked"]), "{s}");
    });
}

#[test]
fn a_damaged_database_opens_for_examination() {
    same_as_stock("open_a_damaged_database", |s| {
        assert_eq!(s["opened"], serde_json::json!([]), "{s}");
    });
}

#[test]
fn opening_leaves_a_hot_journal_to_the_first_reader() {
    same_as_stock("open_leaves_a_hot_journal_alone", |s| {
        assert_eq!(s["journal_before"], true, "{s}");
        assert_eq!(s["journal_after_open"], true, "{s}");
        assert_eq!(s["rows"][0][1], 64, "{s}");
    });
}

#[test]
fn opening_creates_no_shared_memory_and_reads_no_schema() {
    same_as_stock("open_creates_no_shm", |s| {
        assert_eq!(s["shm_after_open"], false, "{s}");
        assert_eq!(s["shm_in_exclusive"], false, "{s}");
        assert!(
            s["bad_encoding"]
                .as_str()
                .is_some_and(|e| e.contains("unsupported encoding")),
            "{s}"
        );
    });
}

#[test]
fn a_reader_in_another_process_sees_a_wal_started_after_it_opened() {
    same_as_stock("three_process_readers", |s| {
        assert_eq!(s["p3_after"], serde_json::json!([[4, 4800]]), "{s}");
    });
}

#[test]
fn a_rolled_back_spill_never_overwrites_another_process_commits() {
    same_as_stock("rolled_back_spill_is_not_written_later", |s| {
        assert_eq!(s["integrity"], serde_json::json!([["ok"]]), "{s}");
        assert_eq!(
            s["rows"],
            serde_json::json!([["P1", 1], ["P2", 30], ["base", 1]]),
            "{s}"
        );
    });
}

#[test]
fn a_new_wal_database_works_after_sqlite3_shutdown_and_a_reload() {
    same_as_stock("shutdown_and_reload", |s| {
        assert_eq!(s["insert"], serde_json::json!([]), "{s}");
        assert_eq!(s["rows"], serde_json::json!([["after", 1]]), "{s}");
    });
}

#[test]
fn a_database_attached_through_the_vfs_works_in_wal_mode() {
    same_as_stock("attached_database_in_wal_mode", |s| {
        assert_eq!(s["mode"], serde_json::json!([["wal"]]), "{s}");
        assert_eq!(s["rows"], serde_json::json!([["aux", 1]]), "{s}");
    });
}

#[test]
fn loading_the_extension_again_inside_a_statement_is_no_error() {
    same_as_stock("load_twice_inside_a_statement", |s| {
        assert_eq!(s["again"], serde_json::json!([[1]]), "{s}");
    });
}

#[test]
fn a_connection_recovers_after_a_passing_io_error() {
    same_as_stock("passing_io_error", |s| {
        for mode in ["DELETE", "WAL"] {
            assert_eq!(s[mode]["big"], "failed", "{s}");
            assert_eq!(s[mode]["after"], serde_json::json!([]), "{s}");
            assert_eq!(
                s[mode]["read"],
                serde_json::json!([["first"], ["after"]]),
                "{s}"
            );
        }
    });
}

#[test]
fn memory_mapped_io_passes_through_for_temporary_databases() {
    same_as_stock("mmap_on_a_temp_database", |s| {
        assert_eq!(s["mmap"], serde_json::json!([[512000]]), "{s}");
    });
}

#[test]
fn an_open_succeeds_while_another_process_replaces_or_unlinks_the_file() {
    same_as_stock("open_while_the_file_is_replaced", |s| {
        assert_eq!(
            s,
            &serde_json::json!({"rename": {}, "unlink": {}}),
            "stock opens every time"
        );
    });
}
