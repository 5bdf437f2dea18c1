//! Group sync keeps acknowledged commits in a buffer of the process that opened the WAL, and
//! only that process may use the WAL meanwhile. A child `fork`ed while such a connection is
//! open inherits a copy of that buffer. The child is another process, and waldio treats it as
//! one: its own connection is refused, as any other process's is, the connection it inherited
//! can neither read nor commit through the copy, and the copy is never written.
//!
//! Found by a probe of fork (2026-11-29, docs/robustness.md H147 and H148), with Python's
//! `multiprocessing` and `os.fork`; stock SQLite kept every commit in each case:
//! - the child's own connection took the parent's WAL state from the process's registry: the
//!   child read "file is not a database", or both committed into two buffers and the database
//!   lost 338 of 444 acknowledged commits or was malformed;
//! - a commit through the inherited connection went into the child's copy of the buffer, which
//!   nothing writes;
//! - the child's exit closed the inherited connection, which wrote the copy over frames the
//!   parent wrote later: 231 of 260 rows and a corrupt tree (H147).
//!
//! Each case runs in a child test process of its own (one thread but the group timer when it
//! forks, so the forked child inherits no lock another test holds).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_waldio::{GroupSync, WaldioOptions};
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Group sync whose buffer holds the commits made before the fork: no timer write for a second
/// and a buffer of `kib`.
fn group(kib: usize) -> WaldioOptions {
    WaldioOptions {
        group: Some(GroupSync {
            frame_buffer_bytes: kib * 1024,
            interval_ms: 1000,
        }),
        ..WaldioOptions::default()
    }
}

fn insert(c: &Connection, id: i64) -> rusqlite::Result<usize> {
    c.execute("INSERT INTO t VALUES(?1, randomblob(1500))", [id])
}

fn count(c: &Connection) -> rusqlite::Result<i64> {
    c.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
}

/// Fork; the child runs `child` and writes what it returns to `outcome`, then leaves with
/// `_exit` (no finaliser of this process runs in it). Returns the child's pid.
fn fork_child(outcome: &Path, child: impl FnOnce() -> String) -> libc::pid_t {
    // SAFETY: the test process has one test thread (`--test-threads=1`) and the group timer,
    // which holds no lock the child takes while it sleeps (a tick is half a second); the child
    // ends in `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
    if pid == 0 {
        let said = child();
        let _ = std::fs::write(outcome, said);
        // SAFETY: leaves the child without running the parent's destructors or atexit work.
        unsafe { libc::_exit(0) };
    }
    pid
}

fn wait(pid: libc::pid_t, outcome: &Path) -> String {
    let mut status = 0;
    // SAFETY: waits for the child this process forked.
    let r = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(r, pid, "waitpid: {}", std::io::Error::last_os_error());
    std::fs::read_to_string(outcome).unwrap_or_else(|e| format!("no outcome ({e})"))
}

fn wait_for_file(path: &Path) {
    let start = Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "waited for {path:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The database after the parent closed it, read by a fresh connection: (rows, integrity).
fn afterwards(db: &Path) -> (i64, String) {
    let c = joj_waldio::open(db, &WaldioOptions::default()).unwrap();
    let n = count(&c).unwrap();
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    (n, ok)
}

/// The parent writes its buffer, starts the log again and commits 200 rows: with a 64 KiB
/// buffer most of those frames are on disk before the child acts on its copy. Returns the rows.
fn restart_the_log_and_commit(p: &Connection) -> i64 {
    p.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    for id in 100..300 {
        insert(p, id).unwrap();
    }
    200
}

fn the_case(db: &Path, case: &str) {
    let dir = db.parent().unwrap();
    let outcome = dir.join("outcome");
    let p = joj_waldio::open(db, &group(64)).unwrap();
    p.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
        .unwrap();
    // Acknowledged, and still in the parent's buffer when it forks.
    for id in 1..=10 {
        insert(&p, id).unwrap();
    }
    let mut expected = 10;
    match case {
        "own" => {
            let child_db = db.to_path_buf();
            let pid = fork_child(&outcome, move || {
                match joj_waldio::open(&child_db, &group(64)) {
                    Err(e) => format!("refused: {e}"),
                    Ok(c) => match count(&c) {
                        Ok(n) => format!("read {n} rows"),
                        Err(e) => format!("refused: {e} ({:?})", joj_waldio::last_error()),
                    },
                }
            });
            let said = wait(pid, &outcome);
            assert!(
                said.starts_with("refused") && said.contains("group sync"),
                "the child's own connection must be refused while the parent buffers: {said}"
            );
        }
        "inherited" => {
            let pid = fork_child(&outcome, || match insert(&p, 1000) {
                Ok(_) => "acknowledged".into(),
                Err(e) => format!("refused: {e} ({:?})", joj_waldio::last_error()),
            });
            let said = wait(pid, &outcome);
            if said == "acknowledged" {
                expected += 1; // then it must be there
            }
            assert!(
                said == "acknowledged" || said.contains("fork"),
                "the inherited connection's commit: {said}"
            );
        }
        "close" => {
            let go = dir.join("go");
            let go_child = go.clone();
            // SAFETY: the handle is only used by the child, to close its copy of the connection.
            let handle = unsafe { p.handle() } as usize;
            let pid = fork_child(&outcome, move || {
                wait_for_file(&go_child);
                // The inherited connection closes as a finaliser at a normal exit does.
                // SAFETY: the child's copy of the parent's open connection, closed once.
                let rc =
                    unsafe { rusqlite::ffi::sqlite3_close(handle as *mut rusqlite::ffi::sqlite3) };
                format!("closed: {rc}")
            });
            expected += restart_the_log_and_commit(&p);
            std::fs::write(&go, b"").unwrap();
            let said = wait(pid, &outcome);
            println!("child: {said}");
        }
        "checkpoint" => {
            let go = dir.join("go");
            let go_child = go.clone();
            let pid = fork_child(&outcome, || {
                wait_for_file(&go_child);
                // At synchronous=OFF SQLite asks no sync of the WAL before the checkpoint's
                // start, which the database's file hears: the inherited connection must be
                // refused there too, before the copy of the buffer is written.
                match p.execute_batch("PRAGMA synchronous=OFF; PRAGMA wal_checkpoint;") {
                    Ok(()) => "checkpointed".into(),
                    Err(e) => format!("refused: {e} ({:?})", joj_waldio::last_error()),
                }
            });
            expected += restart_the_log_and_commit(&p);
            std::fs::write(&go, b"").unwrap();
            let said = wait(pid, &outcome);
            assert!(
                said.contains("fork"),
                "the inherited connection's checkpoint: {said}"
            );
        }
        other => panic!("no case {other}"),
    }
    // The parent goes on after the child, and closes.
    for id in 2000..2010 {
        insert(&p, id).unwrap();
    }
    expected += 10;
    assert_eq!(count(&p).unwrap(), expected);
    drop(p);
    let (n, ok) = afterwards(db);
    assert_eq!(ok, "ok", "{case}: integrity after the parent closed");
    assert_eq!(
        n, expected,
        "{case}: acknowledged rows after the parent closed"
    );
}

/// Without group sync: a child with the connection it inherited and one of its own. The
/// inherited connection rolls back a transaction that spilled frames into the WAL; the child's
/// own connection then commits frames where those were; the inherited connection reads after.
/// Stock SQLite reads every row; waldio kept the rolled-back frames in the inherited state (the
/// end of the transaction dropped the own connection's instead) and read them back: 217 of 402
/// acknowledged rows lost, "Rowid out of order" (review of 2026-11-29).
fn the_rollback_case(db: &Path) {
    let dir = db.parent().unwrap();
    let outcome = dir.join("outcome");
    let p = joj_waldio::open(db, &WaldioOptions::default()).unwrap();
    p.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
        .unwrap();
    insert(&p, 1).unwrap();
    let child_db = db.to_path_buf();
    let pid = fork_child(&outcome, || {
        let own = joj_waldio::open(&child_db, &WaldioOptions::default()).unwrap();
        assert_eq!(count(&own).unwrap(), 1);
        p.execute_batch("PRAGMA cache_size=5; BEGIN").unwrap();
        for id in 100_000..100_400 {
            insert(&p, id).unwrap();
        }
        p.execute_batch("ROLLBACK").unwrap();
        for batch in 0..20 {
            own.execute_batch("BEGIN").unwrap();
            for i in 0..20 {
                insert(&own, 1000 + batch * 20 + i).unwrap();
            }
            own.execute_batch("COMMIT").unwrap();
        }
        let n = count(&p).map_err(|e| e.to_string());
        let ok: Result<String, String> = p
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .map_err(|e| e.to_string());
        format!("inherited reads {n:?} {ok:?}")
    });
    let said = wait(pid, &outcome);
    assert_eq!(said, r#"inherited reads Ok(401) Ok("ok")"#);
    drop(p);
    assert_eq!(afterwards(db), (401, "ok".into()));
}

/// A worker forked while the parent has a group-sync connection open, which never touches the
/// database and outlives that connection: the parent opens the database again and commits, and
/// so may another process, while the worker still runs. The worker's copy of the WAL's
/// descriptor kept group sync's lock (the lock is the open file description's): "database is
/// locked" for everyone until the worker exited (review of 2026-11-29, H152).
fn the_idle_worker_case(db: &Path) {
    let dir = db.parent().unwrap();
    let (outcome, go) = (dir.join("outcome"), dir.join("go"));
    let p = joj_waldio::open(db, &group(64)).unwrap();
    p.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
        .unwrap();
    insert(&p, 1).unwrap();
    let go_child = go.clone();
    let pid = fork_child(&outcome, move || {
        wait_for_file(&go_child);
        "worked".into()
    });
    drop(p);
    let reopened = joj_waldio::open(db, &group(64))
        .map_err(|e| e.to_string())
        .and_then(|c| match insert(&c, 2) {
            Ok(_) => Ok(c),
            Err(e) => Err(format!("{e} ({:?})", joj_waldio::last_error())),
        });
    std::fs::write(&go, b"").unwrap();
    wait(pid, &outcome);
    let c = reopened.unwrap_or_else(|e| panic!("the parent's reopen while the worker runs: {e}"));
    assert_eq!(count(&c).unwrap(), 2);
}

/// A daemon-style child (python-daemon's `close_all_open_files`, after its forks) closes every
/// descriptor it inherited, opens its log file, which takes the number the group-sync WAL had,
/// and forks a worker that writes to the log. The atfork handler pointed the worker's log
/// descriptor at `/dev/null` (the child kept the parent's table of group-sync descriptors):
/// every line the worker wrote "succeeded" and vanished (review of H152's fix, 2026-11-29,
/// `review/fork_fd_reuse.py`).
fn the_daemon_case(db: &Path) {
    let dir = db.parent().unwrap();
    let (outcome, log) = (dir.join("outcome"), dir.join("daemon.log"));
    let p = joj_waldio::open(db, &group(64)).unwrap();
    p.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
        .unwrap();
    insert(&p, 1).unwrap();
    let mut wal = db.as_os_str().to_owned();
    wal.push("-waldio");
    let wal = std::fs::canonicalize(&wal).unwrap();
    let wal_fd: i32 = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let fd = e.file_name().to_str()?.parse().ok()?;
            (std::fs::read_link(e.path()).ok()? == wal).then_some(fd)
        })
        .max()
        .expect("the WAL's descriptor");
    let log_child = log.clone();
    let pid = fork_child(&outcome, move || {
        use std::os::unix::ffi::OsStrExt;
        // SAFETY: closes this child's copies of the inherited descriptors (it never uses
        // them, and ends in `_exit`).
        unsafe {
            for fd in 3..1024 {
                libc::close(fd);
            }
        }
        let name = std::ffi::CString::new(log_child.as_os_str().as_bytes()).unwrap();
        let mut fillers = Vec::new();
        let log_fd = loop {
            // SAFETY: opens a file; the descriptor is closed below or by `_exit`.
            let fd = unsafe {
                libc::open(
                    name.as_ptr(),
                    libc::O_WRONLY | libc::O_CREAT | libc::O_APPEND,
                    0o644,
                )
            };
            if fd < 0 || fd >= wal_fd {
                break fd;
            }
            fillers.push(fd);
        };
        for f in fillers {
            // SAFETY: a descriptor opened above.
            unsafe { libc::close(f) };
        }
        // SAFETY: the worker writes a line and leaves with `_exit`.
        let worker = unsafe { libc::fork() };
        if worker == 0 {
            let line = b"worker line\n";
            // SAFETY: writes to the log descriptor, then ends the worker.
            unsafe {
                libc::write(log_fd, line.as_ptr().cast(), line.len());
                libc::_exit(0);
            }
        }
        let mut status = 0;
        // SAFETY: waits for the worker forked above.
        unsafe { libc::waitpid(worker, &mut status, 0) };
        format!("log fd {log_fd}, WAL fd {wal_fd}")
    });
    let said = wait(pid, &outcome);
    drop(p);
    let written = std::fs::read(&log).unwrap_or_default();
    assert_eq!(written, b"worker line\n", "the worker's log line ({said})");
}

/// One case, in a test process of its own (run by the tests below).
#[test]
fn fork_case_child() {
    let (Ok(db), Ok(case)) = (
        std::env::var("WALDIO_FORK_DB"),
        std::env::var("WALDIO_FORK_CASE"),
    ) else {
        return;
    };
    if case == "rollback" {
        the_rollback_case(Path::new(&db));
    } else if case == "idle" {
        the_idle_worker_case(Path::new(&db));
    } else if case == "daemon" {
        the_daemon_case(Path::new(&db));
    } else {
        the_case(Path::new(&db), &case);
    }
    println!("done");
}

fn run(case: &str) {
    if std::env::var("WALDIO_FORK_DB").is_ok() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db: PathBuf = dir.path().join("gs.db");
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "fork_case_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("WALDIO_FORK_DB", &db)
        .env("WALDIO_FORK_CASE", case)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && text.contains("done"),
        "{case}: {text}\n{err}"
    );
}

#[test]
fn a_forked_childs_own_connection_is_refused_while_the_parent_buffers_commits() {
    run("own");
}

#[test]
fn a_connection_carried_across_fork_cannot_commit_into_the_parents_buffer() {
    run("inherited");
}

#[test]
fn a_forked_child_closing_its_copy_of_the_connection_keeps_the_parents_commits() {
    run("close");
}

#[test]
fn a_forked_childs_checkpoint_on_its_copy_of_the_connection_keeps_the_parents_commits() {
    run("checkpoint");
}

#[test]
fn a_forked_child_rolling_back_on_its_inherited_connection_keeps_its_own_connections_commits() {
    run("rollback");
}

#[test]
fn a_forked_worker_that_outlives_the_parents_connection_does_not_lock_the_database() {
    run("idle");
}

#[test]
fn a_forked_daemon_that_closes_what_it_inherited_keeps_the_files_it_opens_at_its_own_forks() {
    run("daemon");
}
