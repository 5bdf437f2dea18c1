//! The supervisor sees the same calls on every filesystem: under `joj trace` on xfs and btrfs,
//! a DELETE-mode rollback journal's bytes are attributed to it after it was deleted, as on ext4
//! (`a_deleted_rollback_journal_keeps_its_bytes_under_joj_trace`).

mod common;

const SCRIPT: &str = r#"
import sqlite3
c = sqlite3.connect("app.db", isolation_level=None)
c.execute("PRAGMA journal_mode=DELETE")
c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
for i in range(20):
    c.execute("BEGIN")
    c.execute("INSERT INTO t(v) VALUES (randomblob(100))")
    c.execute("COMMIT")
"#;

#[test]
fn a_deleted_rollback_journal_is_attributed_on_xfs_and_btrfs() {
    use joj_linux::FsKind;
    if !joj_linux::testgate::kernel_test(&[FsKind::Xfs, FsKind::Btrfs]) {
        return;
    }
    for fs in ["xfs", "btrfs"] {
        let doc = common::joj_trace_json(&["--fs", fs], &["python3", "-c", SCRIPT]);
        let journal = common::traced_file(&doc, "app.db-journal");
        assert_eq!(journal["deleted"], true, "{fs}: {journal}");
        assert!(
            journal["removals"].as_u64().unwrap() >= 20,
            "{fs}: {journal}"
        );
        // 20 commits, each journal at least a header block and one page; btrfs may keep a
        // small tail inline (reported as unplaced), so at least one 4 KiB block per commit.
        let bytes = journal["data_bytes"].as_u64().unwrap();
        assert!(
            bytes >= 20 * 4096,
            "{fs}: journal data {bytes} B: {journal}"
        );
    }
}
