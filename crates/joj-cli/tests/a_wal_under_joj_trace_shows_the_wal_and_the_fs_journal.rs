//! python3's sqlite3 doing WAL-mode inserts under `joj trace`: the WAL file's data bytes and
//! the FS journal its syncs cause are shown, and the command's exit status is reported.

mod common;

const SCRIPT: &str = r#"
import sqlite3
c = sqlite3.connect("wal.db", isolation_level=None)
c.execute("PRAGMA journal_mode=WAL")
c.execute("PRAGMA synchronous=FULL")
c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
for i in range(50):
    c.execute("BEGIN")
    c.execute("INSERT INTO t(v) VALUES (randomblob(100))")
    c.execute("COMMIT")
"#;

#[test]
fn a_wal_under_joj_trace_shows_the_wal_and_the_fs_journal() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let doc = common::joj_trace_json(&["--fs", "ext4"], &["python3", "-c", SCRIPT]);
    assert_eq!(doc["config"]["workload"], "command");
    assert!(
        doc["config"]["op"]
            .as_str()
            .unwrap()
            .starts_with("python3 -c ")
    );
    assert_eq!(doc["command"]["exit_code"], 0);
    let wal = common::traced_file(&doc, "wal.db-wal");
    assert_eq!(wal["kind"], "wal");
    // 50 commits of at least one 4 KiB frame each, synced.
    assert!(wal["data_bytes"].as_u64().unwrap() >= 50 * 4096, "{wal}");
    assert!(wal["fdatasync"].as_u64().unwrap() + wal["fsync"].as_u64().unwrap() >= 50);
    // The WAL grows every commit on ext4: each sync commits the FS journal.
    assert!(
        wal["fs_journal_bytes_in_syncs"].as_u64().unwrap() > 0,
        "{wal}"
    );
    assert!(doc["block"]["fs_journal_bytes"].as_u64().unwrap() > 0);
    assert!(doc["block"]["data_by_role"]["wal_bytes"].as_u64().unwrap() >= 50 * 4096);
    assert!(doc["block"]["flushes"].as_u64().unwrap() >= 50, "{doc}");
}

/// The loadable extension, built by `scripts/setup.sh`.
fn libjoj() -> std::path::PathBuf {
    let lib = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/ext/release/libjoj.so")
        .canonicalize()
        .unwrap_or_else(|e| {
            panic!(
                "target/ext/release/libjoj.so: {e}; build the extension with ./scripts/setup.sh \
                 (or cd crates/joj-ext && cargo build --release)"
            )
        });
    lib.with_extension("")
}

/// The Python program, loading the extension and writing 50 WAL commits through `vfs`; it
/// prints the VFS's own counters.
fn through_the_extension(vfs: &str) -> String {
    format!(
        r#"
import sqlite3
loader = sqlite3.connect(":memory:")
loader.enable_load_extension(True)
loader.load_extension({lib:?})
c = sqlite3.connect("file:x.db?vfs={vfs}", uri=True, isolation_level=None)
c.execute("PRAGMA journal_mode=WAL")
c.execute("PRAGMA synchronous=FULL")
c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
for i in range(50):
    c.execute("INSERT INTO t(v) VALUES (randomblob(100))")
print(c.execute("SELECT joj_counters()").fetchone()[0])
"#,
        lib = libjoj().to_string_lossy()
    )
}

fn traced_python(code: &str) -> serde_json::Value {
    common::joj_trace_json(&["--fs", "ext4"], &["/usr/bin/python3", "-c", code])
}

#[test]
fn python_through_the_extensions_joj_vfs_shows_the_wals_fs_journal() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let doc = traced_python(&through_the_extension("joj"));
    let wal = common::traced_file(&doc, "x.db-wal");
    assert_eq!(wal["kind"], "wal");
    assert!(wal["data_bytes"].as_u64().unwrap() >= 50 * 4096, "{wal}");
    assert!(
        wal["fdatasync"].as_u64().unwrap() >= 50,
        "the joj VFS syncs: {wal}"
    );
    assert!(
        wal["fs_journal_bytes_in_syncs"].as_u64().unwrap() > 0,
        "the JOJ of a growing WAL: {wal}"
    );
}

#[test]
fn python_through_the_extensions_waldio_journals_only_its_preallocation() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let waldio = traced_python(&through_the_extension("waldio"));
    let joj = traced_python(&through_the_extension("joj"));
    let w = common::traced_file(&waldio, "x.db-waldio");
    assert_eq!(w["kind"], "wal");
    assert!(w["data_bytes"].as_u64().unwrap() >= 50 * 4096, "{w}");
    let waldio_fsj = w["fs_journal_bytes_in_syncs"].as_u64().unwrap();
    let stock_fsj = common::traced_file(&joj, "x.db-wal")["fs_journal_bytes_in_syncs"]
        .as_u64()
        .unwrap();
    assert!(
        waldio_fsj * 4 < stock_fsj,
        "waldio's WAL syncs journal (its one preallocation) far less than a growing stock WAL's: \
         {waldio_fsj} B against {stock_fsj} B"
    );
}
