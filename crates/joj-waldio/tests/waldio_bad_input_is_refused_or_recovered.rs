//! Bad input: a corrupted frame in the middle, a truncated WAL, a foreign WAL (stock SQLite's,
//! or garbage), a page-size change, a database without the reserve. Each gives a clear error or
//! SQLite's documented behaviour (recovery stops at the first bad frame), and loses no data
//! that is still recoverable.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::value_of;
use joj_waldio::{WaldioOptions, open, sqlite_wal_path, wal_path};
use rusqlite::Connection;
use std::path::Path;

/// A database with `n` commits whose frames are all still in the WAL (no checkpoint), copied
/// while the writer is open (every commit is on disk: `full`). Returns the copy's path.
fn wal_with_frames(dir: &Path, n: u64) -> std::path::PathBuf {
    let src = dir.join("src.db");
    let c = open(&src, &WaldioOptions::default()).unwrap();
    c.execute_batch(
        "PRAGMA wal_autocheckpoint=0; CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB NOT NULL)",
    )
    .unwrap();
    for k in 1..=n {
        c.execute("INSERT INTO t VALUES(?1, ?2)", (k as i64, value_of(k)))
            .unwrap();
    }
    let dst = dir.join("copy.db");
    std::fs::copy(&src, &dst).unwrap();
    std::fs::copy(wal_path(&src), wal_path(&dst)).unwrap();
    drop(c);
    dst
}

fn rows(c: &Connection) -> Vec<i64> {
    let mut st = c.prepare("SELECT k, v FROM t ORDER BY k").unwrap();
    st.query_map([], |r| {
        let k: i64 = r.get(0)?;
        let v: Vec<u8> = r.get(1)?;
        assert_eq!(v, value_of(k as u64), "row {k} damaged");
        Ok(k)
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

fn integrity(c: &Connection) {
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
}

#[test]
fn corrupted_frame_in_the_middle_stops_recovery_there() {
    let dir = tempfile::tempdir().unwrap();
    let db = wal_with_frames(dir.path(), 60);
    let wal = wal_path(&db);
    let mut bytes = std::fs::read(&wal).unwrap();
    // Physical block 40 is frame 40; flip a byte of its page.
    bytes[40 * 4096 + 100] ^= 0xff;
    std::fs::write(&wal, &bytes).unwrap();
    let c = open(&db, &WaldioOptions::default()).unwrap();
    integrity(&c);
    let r = rows(&c);
    // SQLite's documented behaviour: frames from the damaged one on are not replayed; what is
    // left is an exact prefix of the commits, all intact.
    assert!(!r.is_empty() && r.len() < 60, "{} rows", r.len());
    assert_eq!(r, (1..=r.len() as i64).collect::<Vec<_>>());
}

#[test]
fn truncated_wal_recovers_the_frames_it_still_holds() {
    let dir = tempfile::tempdir().unwrap();
    let db = wal_with_frames(dir.path(), 60);
    let wal = wal_path(&db);
    let f = std::fs::OpenOptions::new().write(true).open(&wal).unwrap();
    f.set_len(30 * 4096).unwrap();
    drop(f);
    let c = open(&db, &WaldioOptions::default()).unwrap();
    integrity(&c);
    let r = rows(&c);
    assert!(!r.is_empty() && r.len() < 30, "{} rows", r.len());
    assert_eq!(r, (1..=r.len() as i64).collect::<Vec<_>>());
}

#[test]
fn stock_wal_is_refused_until_checkpointed_and_nothing_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("stock.db");
    // A database with the reserve, written by stock SQLite in WAL mode.
    let c = Connection::open(&src).unwrap();
    // SAFETY: a live handle and a valid int pointer.
    unsafe {
        let mut n: i32 = 24;
        libsqlite3_sys::sqlite3_file_control(
            c.handle(),
            c"main".as_ptr(),
            libsqlite3_sys::SQLITE_FCNTL_RESERVE_BYTES,
            &mut n as *mut i32 as *mut std::ffi::c_void,
        );
    }
    c.execute_batch("PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0; CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB NOT NULL)")
        .unwrap();
    for k in 1..=20u64 {
        c.execute("INSERT INTO t VALUES(?1, ?2)", (k as i64, value_of(k)))
            .unwrap();
    }
    let db = dir.path().join("copy.db");
    std::fs::copy(&src, &db).unwrap();
    std::fs::copy(sqlite_wal_path(&src), sqlite_wal_path(&db)).unwrap();
    drop(c);
    let err = open(&db, &WaldioOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("stock SQLite WAL") && err.contains("wal_checkpoint"),
        "{err}"
    );
    // The fix the message names: checkpoint with the default VFS.
    let c = Connection::open(&db).unwrap();
    c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    drop(c);
    let c = open(&db, &WaldioOptions::default()).unwrap();
    assert_eq!(rows(&c), (1..=20).collect::<Vec<_>>());
    integrity(&c);
}

#[test]
fn a_waldio_wal_under_sqlites_name_is_moved_to_its_own_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = wal_with_frames(dir.path(), 40);
    // The layout of a joj from before WALs moved: the waldio WAL at `-wal`.
    std::fs::rename(wal_path(&db), sqlite_wal_path(&db)).unwrap();
    let c = open(&db, &WaldioOptions::default()).unwrap();
    assert_eq!(rows(&c), (1..=40).collect::<Vec<_>>());
    integrity(&c);
    assert!(wal_path(&db).exists() && !sqlite_wal_path(&db).exists());
    drop(c);
    // Both names at once: refused, naming both, nothing moved.
    let dir = tempfile::tempdir().unwrap();
    let db = wal_with_frames(dir.path(), 3);
    std::fs::copy(wal_path(&db), sqlite_wal_path(&db)).unwrap();
    let err = open(&db, &WaldioOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("two waldio WALs") && err.contains("-waldio"),
        "{err}"
    );
    assert!(wal_path(&db).exists() && sqlite_wal_path(&db).exists());
}

#[test]
fn garbage_wal_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = wal_with_frames(dir.path(), 5);
    let wal = wal_path(&db);
    let garbage = vec![0x5au8; 3 * 4096];
    std::fs::write(&wal, &garbage).unwrap();
    let err = open(&db, &WaldioOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a waldio WAL"), "{err}");
    assert_eq!(
        std::fs::read(&wal).unwrap(),
        garbage,
        "the foreign file was touched"
    );
}

/// The reason an open was refused is the reason this thread met, whatever other threads' opens
/// meet meanwhile: an open used to clear every thread's last error before it began and read the
/// process's newest after it failed, so two threads opening at once could each get the other's
/// reason, or none (seen in this file's tests, which run on several threads).
#[test]
fn threads_refused_at_once_each_get_their_own_reason() {
    let dirs: Vec<_> = (0..4).map(|_| tempfile::tempdir().unwrap()).collect();
    let dbs: Vec<_> = dirs
        .iter()
        .map(|d| {
            let db = wal_with_frames(d.path(), 2);
            std::fs::write(wal_path(&db), vec![0x5au8; 3 * 4096]).unwrap();
            db
        })
        .collect();
    std::thread::scope(|s| {
        for db in &dbs {
            s.spawn(move || {
                for round in 0..40 {
                    let err = open(db, &WaldioOptions::default()).unwrap_err().to_string();
                    let own = wal_path(db).display().to_string();
                    assert!(
                        err.contains("not a waldio WAL") && err.contains(&own),
                        "round {round}, {own}: {err}"
                    );
                }
            });
        }
    });
}

#[test]
fn database_without_reserve_is_refused_then_converted_without_loss() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("plain.db");
    let c = Connection::open(&db).unwrap();
    c.execute_batch(
        "PRAGMA journal_mode=WAL; CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB NOT NULL)",
    )
    .unwrap();
    for k in 1..=50u64 {
        c.execute("INSERT INTO t VALUES(?1, ?2)", (k as i64, value_of(k)))
            .unwrap();
    }
    drop(c);
    let err = open(&db, &WaldioOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("reserved bytes") && err.contains("joj waldio convert"),
        "{err}"
    );
    // Through the VFS by name too (any SQLite connection): the WAL open is refused.
    joj_waldio::register().unwrap();
    // (The connection's setup already reads the schema, so the refusal may come at open.)
    match Connection::open_with_flags_and_vfs(&db, rusqlite::OpenFlags::default(), "waldio") {
        Err(e) => assert_eq!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::CannotOpen)),
        Ok(raw) => {
            assert!(
                raw.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))
                    .is_err()
            );
        }
    }
    assert!(
        joj_waldio::last_error_on_this_thread()
            .unwrap()
            .contains("reserved bytes")
    );
    let report = joj_waldio::convert(&db).unwrap();
    assert_eq!(report.reserve_before, 0);
    assert!(report.reserve_after >= 24 && report.vacuumed);
    let c = open(&db, &WaldioOptions::default()).unwrap();
    assert_eq!(rows(&c), (1..=50).collect::<Vec<_>>());
    integrity(&c);
}

#[test]
fn page_size_change_relays_the_wal_out() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ps.db");
    let c = open(&db, &WaldioOptions::default()).unwrap();
    c.execute_batch("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB NOT NULL)")
        .unwrap();
    for k in 1..=30u64 {
        c.execute("INSERT INTO t VALUES(?1, ?2)", (k as i64, value_of(k)))
            .unwrap();
    }
    // Leave WAL mode, change the page size (VACUUM), come back: a new WAL of 8 KiB frames.
    c.query_row("PRAGMA journal_mode=DELETE", [], |r| r.get::<_, String>(0))
        .unwrap();
    c.execute_batch("PRAGMA page_size=8192; VACUUM;").unwrap();
    let mode: String = c
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    for k in 31..=60u64 {
        c.execute("INSERT INTO t VALUES(?1, ?2)", (k as i64, value_of(k)))
            .unwrap();
    }
    let hdr = std::fs::read(wal_path(&db)).unwrap();
    assert_eq!(&hdr[..8], b"jojWALDI");
    assert_eq!(
        u32::from_le_bytes([hdr[12], hdr[13], hdr[14], hdr[15]]),
        8192
    );
    drop(c);
    let c = open(&db, &WaldioOptions::default()).unwrap();
    assert_eq!(rows(&c), (1..=60).collect::<Vec<_>>());
    integrity(&c);
}

/// A symlink planted at the WAL's name (by anyone who can write the directory) would have the
/// process write its 4 MiB log through it: refused, the link's target untouched; and a FIFO
/// there is refused without blocking.
#[test]
fn a_symlink_or_a_fifo_at_the_wals_name_is_refused_and_nothing_is_written_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let c = open(&db, &WaldioOptions::default()).unwrap();
    c.execute_batch("PRAGMA wal_autocheckpoint=0; CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)")
        .unwrap();
    c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    drop(c);
    let _ = std::fs::remove_file(wal_path(&db));
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"").unwrap();
    std::os::unix::fs::symlink(&victim, wal_path(&db)).unwrap();
    let refused = open(&db, &WaldioOptions::default())
        .map(|c| c.execute("INSERT INTO t VALUES(1, x'00')", []).map(|_| ()));
    assert!(
        !matches!(refused, Ok(Ok(()))),
        "a commit through a planted link"
    );
    assert_eq!(
        std::fs::metadata(&victim).unwrap().len(),
        0,
        "written through the link"
    );

    std::fs::remove_file(wal_path(&db)).unwrap();
    let c_path = std::ffi::CString::new(wal_path(&db).as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let refused = open(&db, &WaldioOptions::default())
        .map(|c| c.execute("INSERT INTO t VALUES(1, x'00')", []).map(|_| ()));
    assert!(!matches!(refused, Ok(Ok(()))), "a commit into a FIFO");
}

/// `joj waldio convert` of a database whose journal, WAL or shared-memory name holds a FIFO (or
/// a link, or a directory): refused at once, naming it, with nothing changed. SQLite's hot
/// journal check opened the FIFO and waited for a writer for ever.
#[test]
fn convert_refuses_a_fifo_or_a_link_at_a_companion_name_instead_of_waiting_on_it() {
    for suffix in ["-journal", "-wal", "-shm", "-waldio"] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("d.db");
        {
            let c = Connection::open(&db).unwrap();
            c.execute_batch("CREATE TABLE t(k INTEGER PRIMARY KEY); INSERT INTO t VALUES(1)")
                .unwrap();
        }
        let before = std::fs::read(&db).unwrap();
        let companion = dir.path().join(format!("d.db{suffix}"));
        let c_path = std::ffi::CString::new(companion.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let (tx, rx) = std::sync::mpsc::channel();
        let converting = db.clone();
        std::thread::spawn(move || {
            let _ = tx.send(joj_waldio::convert(&converting).map_err(|e| e.to_string()));
        });
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("convert still waits on the FIFO at {suffix} after 20 s"));
        let err = got.expect_err(suffix);
        assert!(
            err.contains(&companion.display().to_string()) && err.contains("not a regular file"),
            "{suffix}: {err}"
        );
        assert_eq!(std::fs::read(&db).unwrap(), before, "{suffix}: changed");
        // A symbolic link there is refused the same way.
        std::fs::remove_file(&companion).unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &companion).unwrap();
        let err = joj_waldio::convert(&db).expect_err(suffix).to_string();
        assert!(err.contains("not a regular file"), "{suffix}: {err}");
    }
}

/// A header block whose checksum matches over a field waldio never writes (a block size of 3
/// bytes, a state of 2) is damage, not a torn write: the database is refused and the log left
/// as it is. (Found by a probe of 2026-11-28: it read as no WAL, and the database opened
/// without the commits its log held — `no such table: t`.)
#[test]
fn a_header_block_with_a_matching_checksum_and_an_impossible_field_is_refused() {
    for (off, value) in [(12usize, 3u32), (16, 2)] {
        let dir = tempfile::tempdir().unwrap();
        let db = wal_with_frames(dir.path(), 5);
        let wal = wal_path(&db);
        let mut bytes = std::fs::read(&wal).unwrap();
        bytes[off..off + 4].copy_from_slice(&value.to_le_bytes());
        let crc = crc32fast::hash(&bytes[..56]);
        bytes[56..60].copy_from_slice(&crc.to_le_bytes());
        std::fs::write(&wal, &bytes).unwrap();
        let err = match open(&db, &WaldioOptions::default()) {
            Ok(c) => match c.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0)) {
                Ok(n) => panic!("field at {off} = {value}: opened, reading {n} rows"),
                Err(e) => e.to_string(),
            },
            Err(e) => e.to_string(),
        };
        assert!(
            err.contains("checksum matches") || err.contains("matching checksum"),
            "field at {off} = {value}: {err}"
        );
        assert_eq!(std::fs::read(&wal).unwrap(), bytes, "the log was touched");
    }
}

/// A directory where waldio keeps a database's WAL (`<db>-waldio`) is refused as stock SQLite
/// refuses one at its `-wal`: the open fails with `SQLITE_CANTOPEN`, and the message names the
/// directory and the fix. It used to fail with `disk I/O error`, naming `<db>-wal`, where
/// nothing was.
#[test]
fn a_directory_at_the_wals_name_is_refused_as_stock_refuses_one_at_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let code = |r: rusqlite::Result<Vec<i64>>| match r {
        Err(rusqlite::Error::SqliteFailure(e, _)) => Some(e.code),
        Err(other) => panic!("not an SQLite error: {other}"),
        Ok(_) => None,
    };
    // Stock SQLite, a directory at its own WAL's name.
    let stock_db = dir.path().join("s.db");
    let c = Connection::open(&stock_db).unwrap();
    c.execute_batch("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB NOT NULL)")
        .unwrap();
    drop(c);
    std::fs::create_dir(sqlite_wal_path(&stock_db)).unwrap();
    let stock = code(Connection::open(&stock_db).and_then(|c| rows_or_err(&c)));
    assert_eq!(stock, Some(rusqlite::ErrorCode::CannotOpen));

    // waldio, a directory at its WAL's name, in WAL mode and after leaving it.
    for journal in ["WAL", "DELETE"] {
        let db = dir.path().join(format!("w-{journal}.db"));
        let c = open(&db, &WaldioOptions::default()).unwrap();
        c.execute_batch("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB NOT NULL)")
            .unwrap();
        c.execute_batch(&format!("PRAGMA journal_mode={journal}"))
            .unwrap();
        drop(c);
        let _ = std::fs::remove_file(wal_path(&db));
        std::fs::create_dir(wal_path(&db)).unwrap();
        let vfs = joj_waldio::register().unwrap();
        let got = code(
            Connection::open_with_flags_and_vfs(&db, rusqlite::OpenFlags::default(), vfs.name())
                .and_then(|c| rows_or_err(&c)),
        );
        assert_eq!(
            got,
            stock,
            "{journal}: {:?}",
            joj_waldio::last_error_on_this_thread()
        );
        let why = joj_waldio::last_error_on_this_thread().unwrap();
        assert!(
            why.contains(&format!("{} is a directory", wal_path(&db).display()))
                && why.contains("fix: move the directory away"),
            "{journal}: {why}"
        );
    }
}

fn rows_or_err(c: &Connection) -> rusqlite::Result<Vec<i64>> {
    let mut st = c.prepare("SELECT k FROM t ORDER BY k")?;
    let rows = st.query_map([], |r| r.get(0))?;
    rows.collect()
}

/// A WAL-mode database whose name is 249 to 251 bytes: SQLite's `-wal` still fits the
/// filesystem's 255 bytes, waldio's `-waldio` does not. The open is refused (as any WAL that
/// cannot be made), and the reason says so and how to mend it, not "does the filesystem support
/// O_DIRECT?" (found by a probe of waldio, 2026-11-28).
#[test]
fn a_name_too_long_for_the_wal_is_said_with_its_fix() {
    let dir = tempfile::tempdir().unwrap();
    let short = dir.path().join("s.db");
    let c = open(&short, &WaldioOptions::default()).unwrap();
    c.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t(a); INSERT INTO t VALUES (1);")
        .unwrap();
    drop(c);
    for suffix in ["-waldio", "-wal", "-shm"] {
        let _ = std::fs::remove_file(dir.path().join(format!("s.db{suffix}")));
    }
    let long = dir.path().join(format!("{}.db", "a".repeat(247)));
    std::fs::rename(&short, &long).unwrap();
    let vfs = joj_waldio::register().unwrap();
    let got =
        Connection::open_with_flags_and_vfs(&long, rusqlite::OpenFlags::default(), vfs.name())
            .and_then(|c| rows_or_err(&c));
    assert!(got.is_err(), "{got:?}");
    let why = joj_waldio::last_error_on_this_thread().unwrap();
    assert!(
        why.contains("3 bytes longer than SQLite's `-wal`")
            && why.contains("fix: give the database a name at least 3 bytes shorter"),
        "{why}"
    );
}
