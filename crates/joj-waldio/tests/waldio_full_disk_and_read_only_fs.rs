//! A full disk and a read-only filesystem, on real (tmpfs) mounts made for the test: a clear
//! error (`SQLITE_FULL` naming the preallocation; a read-only refusal), the connection that met
//! the full disk goes on reading, and every commit made before stays intact. Kernel-level: needs root to mount; fails (not skips) without it, unless
//! `JOJ_SKIP_KERNEL_TESTS=1`.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::value_of;
use joj_waldio::{WaldioOptions, open};
use rustix::mount::{MountFlags, UnmountFlags, mount, mount_remount, unmount};
use std::path::{Path, PathBuf};

struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        // Mounting a tmpfs needs root: without it the test fails naming that, unless
        // kernel-level tests are skipped on purpose (`JOJ_SKIP_KERNEL_TESTS=1`).
        if !joj_linux::testgate::root_test() {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let opts = std::ffi::CString::new(format!("size={size},mode=0755")).unwrap();
        mount(
            "joj-waldio-test",
            dir.path(),
            "tmpfs",
            MountFlags::empty(),
            opts.as_c_str(),
        )
        .unwrap();
        Some(Tmpfs { dir })
    }

    fn path(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    fn remount_read_only(&self) {
        mount_remount(self.dir.path(), MountFlags::RDONLY, c"").unwrap();
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = unmount(self.dir.path(), UnmountFlags::DETACH);
    }
}

fn count(db: &Path) -> i64 {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    c.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn full_disk_gives_sqlite_full_and_keeps_every_commit() {
    let Some(fs) = Tmpfs::mount("3m") else { return };
    let db = fs.path().join("full.db");
    let opts = WaldioOptions {
        prealloc_frames: 64,
        extend_frames: 64,
        ..WaldioOptions::default()
    };
    let c = open(&db, &opts).unwrap();
    c.execute_batch(
        "PRAGMA wal_autocheckpoint=0; CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB NOT NULL)",
    )
    .unwrap();
    let mut committed = 0i64;
    let err = loop {
        let k = committed + 1;
        match c.execute("INSERT INTO t VALUES(?1, ?2)", (k, value_of(k as u64))) {
            Ok(_) => committed = k,
            Err(e) => break e,
        }
        assert!(committed < 100_000, "the disk never filled");
    };
    assert_eq!(
        err.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DiskFull),
        "{err}"
    );
    let why = joj_waldio::last_error().unwrap();
    assert!(
        why.contains("disk is full") && why.contains("preallocate"),
        "{why}"
    );
    // The same connection goes on reading, as stock SQLite's does after a full disk.
    let seen: i64 = c
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("a read after the full disk failed: {e}"));
    assert_eq!(seen, committed);
    drop(c);
    assert!(
        committed > 10,
        "only {committed} commits before the disk filled"
    );
    // Every acknowledged commit is there after reopening.
    let n = {
        let c = open(&db, &opts).unwrap();
        c.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))
            .unwrap()
    };
    assert_eq!(n, committed, "{committed} acknowledged, {n} present");
}

#[test]
fn a_preallocation_beyond_the_free_space_is_refused_and_leaves_the_disk_as_it_was() {
    let Some(fs) = Tmpfs::mount("16m") else {
        return;
    };
    let db = fs.path().join("big.db");
    let free_before = rustix::fs::statvfs(fs.dir.path()).unwrap().f_bavail;
    // 65536 frames of 4 KiB: 256 MiB on a 16 MiB filesystem.
    let opts = WaldioOptions {
        prealloc_frames: 65_536,
        ..WaldioOptions::default()
    };
    let c = open(&db, &opts).unwrap();
    let err = c
        .execute_batch("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB NOT NULL)")
        .unwrap_err();
    assert_eq!(
        err.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DiskFull),
        "{err}"
    );
    let why = joj_waldio::last_error().unwrap();
    assert!(
        why.contains("no room to preallocate") && why.contains("waldio_prealloc_frames"),
        "{why}"
    );
    drop(c);
    let wal = std::fs::metadata(joj_waldio::wal_path(&db)).map_or(0, |m| m.len());
    assert!(wal < 1 << 20, "the refused preallocation left {wal} bytes");
    let free_after = rustix::fs::statvfs(fs.dir.path()).unwrap().f_bavail;
    assert!(
        free_before - free_after < 64,
        "{} blocks of the disk were taken",
        free_before - free_after
    );
}

#[test]
fn read_only_filesystem_is_refused_and_the_database_is_untouched() {
    let Some(fs) = Tmpfs::mount("16m") else {
        return;
    };
    let db = fs.path().join("ro.db");
    {
        let c = open(&db, &WaldioOptions::default()).unwrap();
        c.execute_batch("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB NOT NULL)")
            .unwrap();
        for k in 1..=25u64 {
            c.execute("INSERT INTO t VALUES(?1, ?2)", (k as i64, value_of(k)))
                .unwrap();
        }
        // Leave WAL mode so the database stands alone in its file.
        c.query_row("PRAGMA journal_mode=DELETE", [], |r| r.get::<_, String>(0))
            .unwrap();
    }
    std::fs::remove_file(joj_waldio::wal_path(&db)).unwrap();
    let before = std::fs::read(&db).unwrap();
    fs.remount_read_only();
    let err = open(&db, &WaldioOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("readonly") || err.contains("read-only") || err.contains("unable to open"),
        "{err}"
    );
    assert_eq!(std::fs::read(&db).unwrap(), before, "the database changed");
    assert_eq!(count(&db), 25);
}

/// A reader opened through waldio (`SQLITE_OPEN_READONLY`) on a read-only filesystem reads
/// what stock SQLite reads there: a rollback-mode database beside a leftover `-waldio`, and a
/// WAL-mode database whose writer stopped with commits in its log (a crash image: the files
/// copied while the writer had them open). waldio opened its log for writing and failed with
/// `disk I/O error` (`opening the WAL: Read-only file system`), where stock read every row.
#[test]
fn a_reader_on_a_read_only_filesystem_reads_what_stock_sqlite_reads() {
    let Some(fs) = Tmpfs::mount("32m") else {
        return;
    };
    let rows = |c: &rusqlite::Connection| -> i64 {
        c.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap()
    };
    let fill = |c: &rusqlite::Connection| {
        c.execute_batch(
            "PRAGMA wal_autocheckpoint=0; CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB NOT NULL)",
        )
        .unwrap();
        for k in 1..=25u64 {
            c.execute("INSERT INTO t VALUES(?1, ?2)", (k as i64, value_of(k)))
                .unwrap();
        }
    };
    // A database in rollback mode, its `-waldio` left beside it.
    let delete = fs.path().join("delete.db");
    {
        let c = open(&delete, &WaldioOptions::default()).unwrap();
        fill(&c);
        c.query_row("PRAGMA journal_mode=DELETE", [], |r| r.get::<_, String>(0))
            .unwrap();
    }
    // A crash image of a WAL-mode database with its commits in the log (and the -shm).
    let crashed = fs.path().join("crashed.db");
    {
        let src = fs.path().join("live.db");
        let c = open(&src, &WaldioOptions::default()).unwrap();
        fill(&c);
        assert!(joj_waldio::wal_path(&src).exists());
        for (from, to) in [
            (src.clone(), crashed.clone()),
            (joj_waldio::wal_path(&src), joj_waldio::wal_path(&crashed)),
            (
                src.with_extension("db-shm"),
                crashed.with_extension("db-shm"),
            ),
        ] {
            std::fs::copy(from, to).unwrap();
        }
    }
    fs.remount_read_only();
    let vfs = joj_waldio::register().unwrap();
    for db in [&delete, &crashed] {
        let c = rusqlite::Connection::open_with_flags_and_vfs(
            db,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
            vfs.name(),
        )
        .unwrap();
        let read = c.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0));
        assert_eq!(
            read.map_err(|e| format!("{e}; {:?}", joj_waldio::last_error())),
            Ok(25),
            "{}",
            db.display()
        );
        let stock =
            rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .unwrap();
        if db == &delete {
            assert_eq!(rows(&stock), 25, "stock reads the rollback-mode database");
        }
    }
}
