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

/// Insert rows, one commit each, until one fails; it must fail with `SQLITE_FULL`. Returns
/// how many were committed.
fn commit_until_the_disk_is_full(c: &rusqlite::Connection) -> i64 {
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
    committed
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
    let committed = commit_until_the_disk_is_full(&c);
    let why = joj_waldio::last_error_on_this_thread().unwrap();
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

/// Fill a small filesystem holding `db` and 1 MiB of ballast with commits until one fails,
/// free 256 KiB of ballast, and commit once more on the same connection: what that last commit
/// gave, with how many commits were acknowledged and the rows present after reopening.
fn fill_free_and_commit(
    dir: &Path,
    open_db: &dyn Fn(&Path) -> rusqlite::Connection,
) -> (Result<usize, String>, i64, i64) {
    let db = dir.join("full.db");
    let c = open_db(&db);
    c.execute_batch(
        "PRAGMA wal_autocheckpoint=0; CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB NOT NULL)",
    )
    .unwrap();
    let ballast: Vec<PathBuf> = (0..4).map(|i| dir.join(format!("ballast{i}"))).collect();
    for b in &ballast {
        std::fs::write(b, vec![7u8; 256 << 10]).unwrap();
    }
    let mut committed = commit_until_the_disk_is_full(&c);
    std::fs::remove_file(&ballast[0]).unwrap();
    let k = committed + 1;
    // (waldio's message is read now: the reopen below clears it)
    let again = c
        .execute("INSERT INTO t VALUES(?1, ?2)", (k, value_of(k as u64)))
        .map_err(|e| format!("{e} ({:?})", joj_waldio::last_error_on_this_thread()));
    if again.is_ok() {
        committed = k;
    }
    drop(c);
    let present = open_db(&db)
        .query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))
        .unwrap();
    (again, committed, present)
}

/// A connection that met a full disk commits again once a little room is freed, as stock
/// SQLite's does: waldio used to ask for its whole 1 MiB extension step (and a spare beyond
/// it) and answered `SQLITE_FULL` until more than 1 MiB was free.
#[test]
fn after_a_full_disk_a_commit_needs_only_the_room_stock_sqlite_needs() {
    let stock = {
        let Some(fs) = Tmpfs::mount("8m") else { return };
        fill_free_and_commit(&fs.path(), &|db| {
            let c = rusqlite::Connection::open(db).unwrap();
            c.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0))
                .unwrap();
            c
        })
    };
    assert!(stock.0.is_ok(), "stock SQLite: {:?}", stock.0);
    assert_eq!(stock.1, stock.2, "stock SQLite lost an acknowledged commit");
    // A waldio VFS of this test's own: its counters are not the other tests'.
    let vfs = joj_waldio::register_over("waldio-full-resume", "unix").unwrap();
    let before = vfs.counters().short_extensions;
    let Some(fs) = Tmpfs::mount("8m") else { return };
    let (again, committed, present) = fill_free_and_commit(&fs.path(), &|db| {
        joj_waldio::open_with(vfs, db, &WaldioOptions::default()).unwrap()
    });
    assert!(again.is_ok(), "waldio, after 256 KiB were freed: {again:?}");
    assert_eq!(
        present, committed,
        "{committed} acknowledged, {present} present"
    );
    // The disk takes as many commits through waldio as through stock SQLite (waldio's frames
    // have no 24-byte header of their own; its preallocation leaves room unused only while
    // there is room to spare).
    eprintln!(
        "commits on the 8 MiB filesystem: waldio {committed}, stock {}",
        stock.1
    );
    assert!(
        committed * 10 >= stock.1 * 9,
        "waldio took {committed} commits before and after the full disk, stock SQLite {}",
        stock.1
    );
    assert!(
        vfs.counters().short_extensions > before,
        "no extension was cut to what a write needed"
    );
}

/// A preallocation the options ask for that would fill the disk is cut to what the write
/// needs: the commit succeeds, as stock SQLite's would, and the disk keeps its free space.
#[test]
fn a_preallocation_beyond_the_free_space_takes_only_what_the_write_needs() {
    let Some(fs) = Tmpfs::mount("16m") else {
        return;
    };
    let db = fs.path().join("big.db");
    // A waldio VFS of this test's own: its counters are not the other tests'.
    let vfs = joj_waldio::register_over("waldio-full-cut", "unix").unwrap();
    let cut_before = vfs.counters().short_extensions;
    let free_before = rustix::fs::statvfs(fs.dir.path()).unwrap().f_bavail;
    // 65536 frames of 4 KiB: 256 MiB on a 16 MiB filesystem.
    let opts = WaldioOptions {
        prealloc_frames: 65_536,
        ..WaldioOptions::default()
    };
    let c = joj_waldio::open_with(vfs, &db, &opts).unwrap();
    c.execute_batch("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB NOT NULL)")
        .unwrap_or_else(|e| panic!("{e}: {:?}", joj_waldio::last_error_on_this_thread()));
    assert!(vfs.counters().short_extensions > cut_before);
    let wal = std::fs::metadata(joj_waldio::wal_path(&db)).map_or(0, |m| m.len());
    assert!(wal < 64 << 10, "the cut preallocation left {wal} bytes");
    // The next extension is the options' step (1 MiB), which fits.
    c.execute("INSERT INTO t VALUES(1, ?1)", [value_of(1)])
        .unwrap();
    drop(c);
    let free_after = rustix::fs::statvfs(fs.dir.path()).unwrap().f_bavail;
    let bsize = rustix::fs::statvfs(fs.dir.path()).unwrap().f_bsize;
    assert!(
        (free_before - free_after) * bsize < 2 << 20,
        "{} blocks of the disk were taken",
        free_before - free_after
    );
    let rows: i64 = joj_waldio::open_with(vfs, &db, &opts)
        .unwrap()
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 1);
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
            read.map_err(|e| format!("{e}; {:?}", joj_waldio::last_error_on_this_thread())),
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

/// Bytes still free to root on a fresh 32 MiB ext4 (made as joj makes it, with ext4's 5 %
/// reserve for root) after `open_db`'s connection committed until the disk was full, and
/// that reserve.
fn left_to_root_when_full(open_db: &dyn Fn(&Path) -> rusqlite::Connection) -> (u64, u64) {
    let fs = joj_linux::ScratchFs::create(
        joj_linux::FsKind::Ext4,
        joj_linux::ScratchOptions {
            size_bytes: 32 << 20,
            ..joj_linux::ScratchOptions::default()
        },
    )
    .unwrap();
    let st = rustix::fs::statvfs(fs.mount_path()).unwrap();
    let reserve = (st.f_bfree - st.f_bavail) * st.f_frsize;
    let c = open_db(&fs.mount_path().join("full.db"));
    c.execute_batch(
        "PRAGMA wal_autocheckpoint=0; CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB NOT NULL)",
    )
    .unwrap();
    commit_until_the_disk_is_full(&c);
    let st = rustix::fs::statvfs(fs.mount_path()).unwrap();
    (st.f_bfree * st.f_frsize, reserve)
}

/// ext4 keeps blocks for root (5 % by default, as joj's scratch ext4 has them): root's stock
/// SQLite writes into them, so waldio running as root must too. It judged a full disk by the
/// space other users may take (`f_bavail`) and answered `SQLITE_FULL` with the reserve free.
#[test]
fn as_root_a_full_disk_is_full_when_roots_reserve_is_used_too() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let (stock, reserve) = left_to_root_when_full(&|db| {
        let c = rusqlite::Connection::open(db).unwrap();
        c.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0))
            .unwrap();
        c
    });
    assert!(
        reserve > 1 << 20,
        "no root reserve to test: {reserve} bytes"
    );
    let (waldio, _) = left_to_root_when_full(&|db| open(db, &WaldioOptions::default()).unwrap());
    // Within a 64 KiB of what stock SQLite leaves (ext4 keeps a few blocks from root too).
    assert!(
        waldio <= stock + (64 << 10),
        "waldio answered SQLITE_FULL with {waldio} bytes free to root, stock SQLite with {stock} \
         (the root reserve is {reserve})"
    );
}

/// The result code of `sql` on `db` through `vfs` (`None`: SQLite's default), run on a thread
/// without the capabilities that let root write into any directory.
fn code_in_a_read_only_directory(db: &Path, vfs: Option<&'static str>, sql: &str) -> String {
    let (db, sql) = (db.to_path_buf(), sql.to_string());
    std::thread::spawn(move || {
        use rustix::thread::{CapabilitySet, capabilities, set_capabilities};
        // Capabilities are a thread's own: only this thread loses them.
        let mut caps = capabilities(None).unwrap();
        caps.effective -= CapabilitySet::DAC_OVERRIDE | CapabilitySet::DAC_READ_SEARCH;
        set_capabilities(None, caps).unwrap();
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE;
        let c = match vfs {
            Some(v) => rusqlite::Connection::open_with_flags_and_vfs(&db, flags, v),
            None => rusqlite::Connection::open_with_flags(&db, flags),
        }
        .unwrap();
        match c.execute_batch(&sql) {
            Ok(()) => "ok".to_string(),
            Err(e) => format!("{:?}", e.sqlite_error().map(|f| f.extended_code)),
        }
    })
    .join()
    .unwrap()
}

#[test]
fn a_read_only_directory_gives_the_code_stock_sqlite_gives() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let vfs = joj_waldio::register().unwrap();
    let mut seen = Vec::new();
    for (name, via) in [("stock", None), ("waldio", Some(vfs.name()))] {
        let sub = dir.path().join(name);
        std::fs::create_dir(&sub).unwrap();
        let db = sub.join("x.db");
        {
            let c = match via {
                Some(_) => open(&db, &WaldioOptions::default()).unwrap(),
                None => rusqlite::Connection::open(&db).unwrap(),
            };
            c.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t(i); INSERT INTO t VALUES(1)")
                .unwrap();
        }
        // Closed: stock deleted its `-wal` and `-shm`; waldio's log is preallocated and stays,
        // so it goes the way stock's went, to be made again.
        let _ = std::fs::remove_file(joj_waldio::wal_path(&db));
        std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o555)).unwrap();
        let code = code_in_a_read_only_directory(&db, via, "SELECT count(*) FROM t");
        std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o755)).unwrap();
        seen.push((name, code));
    }
    assert_eq!(
        seen[0].1,
        format!("Some({})", rusqlite::ffi::SQLITE_READONLY_DIRECTORY),
        "stock: {seen:?}"
    );
    assert_eq!(seen[0].1, seen[1].1, "{seen:?}");
}
