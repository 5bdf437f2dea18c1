//! A program that creates and deletes a rollback journal every transaction (python3's sqlite3
//! in journal_mode=DELETE) under `joj trace`: the journal's bytes are attributed to the
//! `-journal` file although it no longer exists when the trace is classified.

mod common;

const SCRIPT: &str = r#"
import sqlite3
c = sqlite3.connect("app.sqlite", isolation_level=None)
c.execute("PRAGMA journal_mode=DELETE")
c.execute("PRAGMA synchronous=FULL")
c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
for i in range(50):
    c.execute("BEGIN")
    c.execute("INSERT INTO t(v) VALUES (randomblob(100))")
    c.execute("COMMIT")
c.close()
"#;

#[test]
fn a_deleted_rollback_journal_keeps_its_bytes_under_joj_trace() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let doc = common::joj_trace_json(
        &["--fs", "ext4", "--transactions", "50"],
        &["python3", "-c", SCRIPT],
    );
    let journal = common::traced_file(&doc, "app.sqlite-journal");
    assert_eq!(journal["kind"], "rollback_journal");
    assert_eq!(journal["deleted"], true, "{journal}");
    // Each commit writes at least the journal header and one page: 50 transactions, ≥ 8 KiB
    // each, all of it synced to the device before the journal is deleted.
    let bytes = journal["data_bytes"].as_u64().unwrap();
    assert!(bytes >= 50 * 8192, "journal data {bytes} B: {journal}");
    assert!(journal["fsync"].as_u64().unwrap() + journal["fdatasync"].as_u64().unwrap() >= 50);
    assert_eq!(
        doc["block"]["data_by_role"]["rollback_journal_bytes"].as_u64(),
        Some(bytes),
        "the role total is the file's"
    );
    // The database is known by its header, whatever its name.
    let db = common::traced_file(&doc, "app.sqlite");
    assert_eq!(db["kind"], "database", "{db}");
    assert!(
        doc["trace_file"].is_string() && doc["plot_file"].is_string(),
        "{doc}"
    );
}
