//! Model test of the seam: the same random transactions, rollbacks, savepoints, journal-mode
//! changes, reopens and vacuums run through an in-memory VFS written on the seam and through
//! SQLite's default VFS; after every step both databases hold the same rows, and at the end the
//! same bytes. Every choice comes from one seed (`JOJ_SEED`, printed on failure).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::MemVfs;
use rand::{Rng, RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

const STEPS: usize = 400;
const MODES: [&str; 5] = ["DELETE", "TRUNCATE", "PERSIST", "MEMORY", "WAL"];

/// Both sides of the comparison: the seam's in-memory VFS and the default VFS on disk.
struct Pair {
    mem: Connection,
    disk: Connection,
}

fn open_pair(vfs: &str, disk: &Path, mode: &str) -> Pair {
    let setup = |c: &Connection| {
        // The in-memory VFS has no shared memory: WAL needs exclusive locking (so both get it).
        let locking = if mode == "WAL" { "EXCLUSIVE" } else { "NORMAL" };
        let sql = format!(
            "PRAGMA locking_mode={locking}; PRAGMA journal_mode={mode}; PRAGMA synchronous=FULL;"
        );
        if let Err(e) = c.execute_batch(&sql) {
            panic!("{sql} on {:?}: {e}", c.path());
        }
    };
    let mem =
        Connection::open_with_flags_and_vfs("/mem/model.db", OpenFlags::default(), vfs).unwrap();
    let disk = Connection::open(disk).unwrap();
    setup(&mem);
    setup(&disk);
    Pair { mem, disk }
}

impl Pair {
    /// Run `sql` on both; both must succeed or both fail.
    fn run(&self, sql: &str, seed: u64) {
        let a = self.mem.execute_batch(sql);
        let b = self.disk.execute_batch(sql);
        assert_eq!(
            a.is_ok(),
            b.is_ok(),
            "seed {seed}: {sql}: memvfs {a:?}, default VFS {b:?}"
        );
    }

    fn rows(c: &Connection) -> rusqlite::Result<Vec<(i64, Vec<u8>)>> {
        let mut st = c.prepare("SELECT k, CAST(v AS BLOB) FROM t ORDER BY k")?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect()
    }

    fn check(&self, step: usize, sql: &str, seed: u64) {
        let read = |c: &Connection, side: &str| {
            Self::rows(c)
                .unwrap_or_else(|e| panic!("seed {seed}, step {step} ({sql}): {side}: {e}"))
        };
        let (a, b) = (read(&self.mem, "memvfs"), read(&self.disk, "default VFS"));
        assert!(
            a == b,
            "seed {seed}, step {step} ({sql}): memvfs has {} rows, the default VFS {}",
            a.len(),
            b.len()
        );
    }
}

/// A blob of `len` bytes from the seed, as an SQL literal (the same on both sides).
fn blob(rng: &mut impl Rng, len: usize) -> String {
    let mut s = String::with_capacity(2 * len + 3);
    s.push_str("X'");
    for _ in 0..len {
        s.push_str(&format!("{:02X}", rng.random::<u8>()));
    }
    s.push('\'');
    s
}

/// One random step as SQL (`None`: reopen both connections).
fn step_sql(rng: &mut impl Rng) -> Option<String> {
    let k = rng.random_range(0..2000i64);
    let n = rng.random_range(1..40i64);
    let len = [10, 300, 3000, 9000][rng.random_range(0..4usize)];
    let v = blob(rng, len);
    Some(match rng.random_range(0..100u32) {
        0..=34 => format!(
            "BEGIN; WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < {n}) \
             INSERT OR REPLACE INTO t SELECT {k} + i * 7, {v} || i FROM s; COMMIT;"
        ),
        35..=49 => {
            format!("UPDATE t SET v = zeroblob({len}) WHERE k BETWEEN {k} AND {k} + {n} * 5;")
        }
        50..=59 => format!("DELETE FROM t WHERE k BETWEEN {k} AND {k} + {n} * 3;"),
        60..=69 => format!(
            "BEGIN; INSERT OR REPLACE INTO t VALUES({k}, {v}); DELETE FROM t WHERE k < {n}; ROLLBACK;"
        ),
        70..=79 => format!(
            "BEGIN; SAVEPOINT a; DELETE FROM t WHERE k % 3 = {}; ROLLBACK TO a; \
             UPDATE t SET v = x'00' WHERE k = {k}; RELEASE a; COMMIT;",
            n % 3
        ),
        80..=84 => "CREATE TABLE IF NOT EXISTS u(x); INSERT INTO u VALUES(1); DROP TABLE u;".into(),
        85..=86 => "VACUUM;".into(),
        _ => return None,
    })
}

#[test]
fn memvfs_matches_the_default_vfs() {
    let seed: u64 = std::env::var("JOJ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let name = common::unique_name("model");
    let reg = joj_vfs::register_vfs(&name, |_| MemVfs::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let disk = dir.path().join("model.db");
    let mut mode = "DELETE";
    let mut pair = open_pair(&name, &disk, mode);
    pair.run(
        "PRAGMA page_size=4096; CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB);",
        seed,
    );
    for step in 0..STEPS {
        match step_sql(&mut rng) {
            Some(sql) => {
                pair.run(&sql, seed);
                pair.check(step, &sql, seed);
            }
            None => {
                // Without shared memory a WAL database opens only in exclusive mode: leave WAL
                // mode before closing, as an application of such a VFS must.
                if mode == "WAL" {
                    pair.run("PRAGMA journal_mode=DELETE;", seed);
                }
                drop(pair);
                mode = MODES[rng.random_range(0..MODES.len())];
                pair = open_pair(&name, &disk, mode);
                pair.check(step, &format!("reopen in {mode}"), seed);
            }
        }
    }
    for c in [&pair.mem, &pair.disk] {
        let ok: String = c
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok", "seed {seed}");
    }
    // Leave WAL mode (a checkpoint) so the database files stand alone, then compare them.
    pair.run("PRAGMA journal_mode=DELETE;", seed);
    drop(pair);
    let mem = reg.vfs().contents(Path::new("/mem/model.db")).unwrap();
    let on_disk = std::fs::read(&disk).unwrap();
    assert!(
        mem == on_disk,
        "seed {seed}: the database files differ (last mode {mode})"
    );
}
