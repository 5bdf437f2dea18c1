//! `joj trace` sees writes and syncs through the kernel's syscall tracepoints, without stopping
//! the command, and opens and (on ext4) unlinks through its BPF observer: a SQLite commit
//! stops the command nowhere, in WAL, DELETE or TRUNCATE mode — the journal's and the
//! directory's opens run free, the directory's sync is still a directory sync, and the
//! journal's unlink runs free too while the blocks it gives up are read as ext4 frees them,
//! so the journal's bytes are still the journal's, as they are when TRUNCATE mode cuts it
//! (`ftruncate`). The counts stay exact: every commit's fdatasync of the WAL (or of the
//! journal and the database) is on its file, every directory sync counted.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

/// One traced run at a time: the tests' runs side by side on a 2-core machine can hold a task
/// between an open's two probes longer than joj waits for the open's BPF record (it is then
/// counted in `opens_unseen`, which these tests hold at 0).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The distribution's python3, `n` single-row transactions in journal mode `mode`.
fn commits(mode: &str, n: u32) -> serde_json::Value {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let code = format!(
        "import sqlite3
db = sqlite3.connect('app.db', isolation_level=None)
db.execute('PRAGMA journal_mode={mode}')
db.execute('PRAGMA synchronous=FULL')
db.execute('CREATE TABLE t(i INTEGER PRIMARY KEY, v TEXT)')
for i in range({n}):
    db.execute('INSERT INTO t(v) VALUES(?)', ('x' * 100,))
db.close()"
    );
    common::joj_trace_json(&[], &["/usr/bin/python3", "-c", &code])
}

fn stops(doc: &serde_json::Value) -> u64 {
    doc["command"]["stops"].as_u64().unwrap()
}

fn count(doc: &serde_json::Value, path: &str, key: &str) -> u64 {
    common::traced_file(doc, path)[key].as_u64().unwrap()
}

#[test]
fn a_wal_commit_stops_nowhere_and_each_is_counted_on_the_wal() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let (few, many) = (commits("wal", 50), commits("wal", 250));
    assert_eq!(
        stops(&many),
        stops(&few),
        "200 more WAL commits must not stop the command once more"
    );
    // One fdatasync of the WAL per commit, whatever else (checkpoint, header) there is.
    assert_eq!(
        count(&many, "app.db-wal", "fdatasync") - count(&few, "app.db-wal", "fdatasync"),
        200
    );
    assert!(many["command"]["syscall_events"].as_u64().unwrap() > 200 * 4);
}

#[test]
fn a_delete_commit_stops_nowhere_and_its_journal_keeps_its_bytes() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let (few, many) = (commits("delete", 50), commits("delete", 250));
    assert_eq!(
        stops(&many),
        stops(&few),
        "200 more DELETE commits, no stop more"
    );
    // Each commit's journal: its pages, then its header, in blocks of their own.
    let journal = |d: &serde_json::Value| {
        common::traced_file(d, "app.db-journal")["data_bytes"]
            .as_u64()
            .unwrap()
    };
    assert!(
        journal(&many) - journal(&few) >= 200 * 2 * 4096,
        "the journals' bytes are the journal's: {} then {}",
        journal(&few),
        journal(&many)
    );
    let by_bpf = |d: &serde_json::Value| d["command"]["opens_by_bpf"].as_u64().unwrap();
    // The journal's and the directory's, each commit.
    assert_eq!(by_bpf(&many) - by_bpf(&few), 2 * 200);
    assert_eq!(many["command"]["opens_unseen"].as_u64(), Some(0));
    // Where each open led is looked up once per name and read of the events, not once per
    // open: 250 commits, 250 creations of the journal under one name, a few reads (the
    // journal's name, the directory's, the database's; the last read at the end is not in
    // `event_reads`).
    let lookups = many["command"]["open_lookups"].as_u64().unwrap();
    let reads = many["command"]["event_reads"].as_u64().unwrap();
    assert!(
        lookups <= 3 * (reads + 1),
        "{lookups} lookups in {reads} reads for 250 commits"
    );
    assert!(
        lookups < 250 || reads >= 80,
        "{lookups} lookups in {reads} reads: one per open"
    );
    assert_eq!(
        count(&many, "app.db-journal", "removals") - count(&few, "app.db-journal", "removals"),
        200
    );
    // The journal twice (pages, then the header), the database once, per commit.
    assert_eq!(
        count(&many, "app.db-journal", "fdatasync") - count(&few, "app.db-journal", "fdatasync"),
        400
    );
    assert_eq!(
        count(&many, "app.db", "fdatasync") - count(&few, "app.db", "fdatasync"),
        200
    );
    assert_eq!(
        many["syscalls"]["dir_syncs"].as_u64().unwrap()
            - few["syscalls"]["dir_syncs"].as_u64().unwrap(),
        200
    );
}

/// TRUNCATE mode cuts its journal to nothing at every commit (`ftruncate`): that runs free
/// on ext4 too, and the blocks it gives up are the journal's, as an unlink's are.
#[test]
fn a_truncate_commit_stops_nowhere_and_its_journal_keeps_its_bytes() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let (few, many) = (commits("truncate", 50), commits("truncate", 250));
    assert_eq!(
        stops(&many),
        stops(&few),
        "200 more TRUNCATE commits, no stop more"
    );
    assert_eq!(
        count(&many, "app.db-journal", "truncates") - count(&few, "app.db-journal", "truncates"),
        200
    );
    assert_eq!(many["command"]["truncates_unseen"].as_u64(), Some(0));
    // Each commit's journal: its pages, then its header, in blocks of their own.
    let journal = |d: &serde_json::Value| count(d, "app.db-journal", "data_bytes");
    assert!(
        journal(&many) - journal(&few) >= 200 * 2 * 4096,
        "the journals' bytes are the journal's: {} then {}",
        journal(&few),
        journal(&many)
    );
    // The journal's pages and header, then the journal again after it is cut (SQLite 3.54),
    // and the database, per commit.
    assert_eq!(
        count(&many, "app.db-journal", "fdatasync") - count(&few, "app.db-journal", "fdatasync"),
        600
    );
    assert_eq!(
        count(&many, "app.db", "fdatasync") - count(&few, "app.db", "fdatasync"),
        200
    );
}
