//! `joj waldio` on what is not a usable database says so, with the fix, and fails: a missing
//! file, a file of random bytes, a WAL that is neither waldio's nor SQLite's, a database
//! another connection holds. Nothing is changed in any of them.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

fn waldio(args: &[&str]) -> (Option<i32>, String, String) {
    let out = common::joj_command()
        .arg("waldio")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_missing_database_is_an_error_for_inspect_and_convert() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("none.db");
    for cmd in ["inspect", "convert"] {
        let (code, _, err) = waldio(&[cmd, db.to_str().unwrap()]);
        assert_eq!(code, Some(1), "{cmd}: {err}");
        assert!(err.contains("none.db does not exist; fix:"), "{cmd}: {err}");
        assert!(!db.exists(), "{cmd} created the database");
    }
}

#[test]
fn random_bytes_are_not_a_database_and_stay_as_they_were() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("noise.db");
    let noise: Vec<u8> = (0..5000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&db, &noise).unwrap();
    for cmd in ["inspect", "convert"] {
        let (code, _, err) = waldio(&[cmd, db.to_str().unwrap()]);
        assert_eq!(code, Some(1), "{cmd}: {err}");
        assert!(
            err.contains("is not a SQLite database") && err.contains("fix:"),
            "{cmd}: {err}"
        );
    }
    assert_eq!(std::fs::read(&db).unwrap(), noise);
}

#[test]
fn a_foreign_wal_is_described_not_named_by_an_enum() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE TABLE t(x)")
        .unwrap();
    let wal = tmp.path().join("t.db-wal");
    std::fs::write(&wal, vec![0x5a; 8192]).unwrap();
    let (code, out, err) = waldio(&["inspect", db.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!out.contains("Foreign"), "{out}");
    assert!(
        out.contains("neither a waldio nor a SQLite WAL") && out.contains("fix:"),
        "{out}"
    );
}

#[test]
fn converting_a_locked_database_names_the_fix_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("busy.db");
    let holder = rusqlite::Connection::open(&db).unwrap();
    // No other descriptor of the file may be opened and closed in this process while the lock
    // is held: closing any descriptor drops the process's POSIX locks on the file.
    holder
        .execute_batch(
            "CREATE TABLE t(x); INSERT INTO t VALUES (1); \
             BEGIN EXCLUSIVE; INSERT INTO t VALUES (2);",
        )
        .unwrap();
    let (code, out, err) = waldio(&["convert", db.to_str().unwrap()]);
    holder.execute_batch("COMMIT").unwrap();
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        err.contains("is locked by another connection") && err.contains("fix: close the programs"),
        "{err}"
    );
    let n: i64 = holder
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 2);
    let delete_mode: i64 = holder
        .query_row("PRAGMA journal_mode", [], |r| r.get::<_, String>(0))
        .map(|m| i64::from(m == "delete"))
        .unwrap();
    assert_eq!(delete_mode, 1, "the journal mode changed");
    drop(holder);
    let header = std::fs::read(&db).unwrap();
    assert_eq!(
        header[20], 0,
        "convert added a reserve to a locked database"
    );
}
