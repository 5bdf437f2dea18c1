//! The accounting VFS through real SQLite: counts and observer events.
use super::*;
use joj_trace::FileRole;
use rusqlite::{Connection, OpenFlags};
use std::ffi::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};

fn open(path: &Path) -> Connection {
    register().expect("register");
    Connection::open_with_flags_and_vfs(path, OpenFlags::default(), VFS_NAME).expect("open")
}

#[test]
fn wal_insert_counts_wal_bytes_and_one_sync_per_commit() {
    let dir = tempfile::tempdir().unwrap();
    let vfs = register().unwrap();
    let db = open(&dir.path().join("t.db"));
    db.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; CREATE TABLE t(v);")
        .unwrap();
    let before = vfs.counters();
    for _ in 0..10 {
        db.execute("INSERT INTO t VALUES(?1)", ["x".repeat(100)])
            .unwrap();
    }
    let d = vfs.counters().delta(&before);
    // Each commit appends one frame (24-byte header + 4096-byte page) and syncs the WAL.
    // Other tests in this process may run concurrently and add to the shared counters,
    // so the assertions are lower bounds that only this workload can satisfy.
    assert!(d.wal_bytes >= 10 * (24 + 4096), "{d:?}");
    assert!(d.fdatasync + d.fsync >= 10, "{d:?}");
}

struct CountingObserver(AtomicUsize, AtomicUsize);
impl FileObserver for CountingObserver {
    fn file_event(&self, event: FileEvent, path: &Path, role: FileRole, fd: Option<c_int>) {
        if !path.to_string_lossy().contains("observed") {
            return;
        }
        match event {
            FileEvent::AfterSync => {
                assert!(fd.is_some());
                self.0.fetch_add(1, Ordering::SeqCst);
            }
            FileEvent::BeforeDelete => {
                assert_eq!(role, FileRole::RollbackJournal);
                self.1.fetch_add(1, Ordering::SeqCst);
            }
            FileEvent::BeforeTruncate | FileEvent::BeforeSync => {}
        }
    }
}

#[test]
fn delete_mode_reports_journal_deletes_and_syncs_to_the_observer() {
    let dir = tempfile::tempdir().unwrap();
    let vfs = register().unwrap();
    let obs = Arc::new(CountingObserver(AtomicUsize::new(0), AtomicUsize::new(0)));
    vfs.set_observer(Some(obs.clone()));
    let db = open(&dir.path().join("observed.db"));
    db.execute_batch("PRAGMA journal_mode=DELETE; CREATE TABLE t(v);")
        .unwrap();
    for _ in 0..5 {
        db.execute("INSERT INTO t VALUES(1)", []).unwrap();
    }
    vfs.set_observer(None);
    assert!(
        obs.1.load(Ordering::SeqCst) >= 5,
        "journal deleted after each commit"
    );
    assert!(
        obs.0.load(Ordering::SeqCst) >= 10,
        "journal and database synced per commit"
    );
    let n: i64 = db
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 5);
}
