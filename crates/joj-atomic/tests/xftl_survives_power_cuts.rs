//! Power cuts at random device commands while SQLite commits on the `xftl` VFS: after each cut
//! and recovery the device passes its own consistency check, `PRAGMA integrity_check` passes,
//! and the database is exactly the state after its acknowledged commits (or, when a commit was
//! under way, after that one too). Explicit `ROLLBACK`s and commits that fail over to SQLite's
//! rollback journal (injected batch failures) are mixed in. A device that acknowledges commits
//! before they are durable must be caught.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use joj_atomic::{FlashFs, XftlVfs};
use joj_device::{BlockDevice, Emmc, PowerCut, Profile, image};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rusqlite::{Connection, OpenFlags};

const ROWS: i64 = 1500;
const TXNS: u64 = 40;

fn profile() -> Profile {
    common::profile(64)
}

fn open(vfs: &str, name: &str) -> rusqlite::Result<Connection> {
    Connection::open_with_flags_and_vfs(
        name,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        vfs,
    )
}

/// What transaction `i` does: (row, new value) updates, whether it inserts a row, whether the
/// application rolls it back, whether its batch commit is made to fail (journal path).
struct Txn {
    updates: Vec<(i64, i64)>,
    insert: Option<(i64, String)>,
    rollback: bool,
    fail_batch: bool,
}

fn txn(i: u64) -> Txn {
    let mut r = ChaCha8Rng::seed_from_u64(1000 + i);
    let k = r.random_range(1..=6);
    Txn {
        updates: (0..k)
            .map(|_| (r.random_range(1..=ROWS), r.random_range(0..1_000_000i64)))
            .collect(),
        insert: (r.random_range(0..3u32) == 0).then(|| {
            (
                ROWS + 1 + i as i64,
                "x".repeat(r.random_range(100..3000usize)),
            )
        }),
        rollback: r.random_range(0..8u32) == 0,
        fail_batch: r.random_range(0..6u32) == 0,
    }
}

fn apply(c: &Connection, t: &Txn) -> rusqlite::Result<()> {
    for &(k, v) in &t.updates {
        c.execute("UPDATE t SET v = ?2 WHERE k = ?1", [k, v])?;
    }
    if let Some((k, pad)) = &t.insert {
        c.execute(
            "INSERT INTO t(k, v, pad) VALUES (?1, 7, ?2)",
            rusqlite::params![k, pad],
        )?;
    }
    Ok(())
}

fn digest(c: &Connection) -> rusqlite::Result<(i64, i64)> {
    c.query_row(
        "SELECT count(*), coalesce(sum((k * 1000003 + v + length(pad)) % 1000000007), 0) FROM t",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

fn schema(c: &Connection) {
    c.execute_batch(
        "PRAGMA page_size=8192; PRAGMA journal_mode=DELETE;
         CREATE TABLE t(k INTEGER PRIMARY KEY, v INTEGER, pad TEXT);",
    )
    .unwrap();
    let tx = c.unchecked_transaction().unwrap();
    for k in 1..=ROWS {
        tx.execute("INSERT INTO t VALUES (?1, ?1, 'p')", [k])
            .unwrap();
    }
    tx.commit().unwrap();
}

/// `states[j]`: the digest after the first `j` committed (not rolled back) transactions, and
/// for each transaction the number of committed ones before it.
fn model() -> Vec<(i64, i64)> {
    let c = Connection::open_in_memory().unwrap();
    schema(&c);
    let mut states = vec![digest(&c).unwrap()];
    for i in 0..TXNS {
        let t = txn(i);
        if t.rollback {
            continue;
        }
        apply(&c, &t).unwrap();
        states.push(digest(&c).unwrap());
    }
    states
}

/// The prepared device as an image: the file layer, the database with its rows, cleanly shut.
fn base_image(vfs: &XftlVfs, p: &Profile) -> Vec<u8> {
    let fs = common::formatted(p);
    vfs.attach(fs).unwrap();
    schema(&open(vfs.name(), "cut.db").unwrap());
    let fs = vfs.detach().unwrap();
    image::encode(&fs.into_device().close().unwrap())
}

/// One trial: cut after `budget` device commands; returns an error naming what broke.
fn trial(
    vfs: &XftlVfs,
    base: &[u8],
    states: &[(i64, i64)],
    seed: u64,
    canary: bool,
    p: &Profile,
) -> Result<(), String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let medium = image::decode(base, p).map_err(|e| e.to_string())?;
    let (mut dev, _) =
        Emmc::recover(PowerCut { medium, at_ns: 0 }, p).map_err(|e| e.to_string())?;
    dev.set_canary_commit_before_durable(canary);
    vfs.attach(FlashFs::mount(dev).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    let budget = rng.random_range(0..450);
    vfs.with_fs(|fs| fs.device_mut().cut_power_after(Some(budget)));
    let mut acked = 0usize;
    let mut in_flight = false;
    let mut last = String::new();
    if let Ok(c) = open(vfs.name(), "cut.db") {
        for i in 0..TXNS {
            let t = txn(i);
            let r = (|| {
                c.execute_batch("BEGIN")?;
                apply(&c, &t)?;
                if t.rollback {
                    return c.execute_batch("ROLLBACK");
                }
                if t.fail_batch {
                    vfs.fail_next_commits(1);
                }
                c.execute_batch("COMMIT")
            })();
            vfs.fail_next_commits(0);
            match r {
                Ok(()) if t.rollback => {}
                Ok(()) => acked += 1,
                Err(e) => {
                    last = format!(
                        "txn {i} (rollback {}, journal path {}, insert {}) failed: {e}",
                        t.rollback,
                        t.fail_batch,
                        t.insert.is_some()
                    );
                    in_flight = !t.rollback;
                    let _ = c.execute_batch("ROLLBACK");
                    break;
                }
            }
        }
    }
    let fs = vfs.detach().map_err(|e| e.to_string())?;
    // Power goes right at the last command (what was in flight is torn or lost) or a little
    // later, up to 3 ms.
    let after = if rng.random_range(0..2u32) == 0 {
        0
    } else {
        rng.random_range(0..3_000_000)
    };
    vfs.attach(common::cut_and_remount(fs, after, seed, p)?)
        .map_err(|e| e.to_string())?;
    let result = (|| {
        let c = open(vfs.name(), "cut.db").map_err(|e| format!("reopen: {e}"))?;
        let ok: String = c
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .map_err(|e| format!("integrity_check: {e}; budget {budget}; {last}"))?;
        if ok != "ok" {
            return Err(format!("integrity_check: {ok}; budget {budget}; {last}"));
        }
        let d = digest(&c).map_err(|e| e.to_string())?;
        let allowed = if in_flight {
            acked..=acked + 1
        } else {
            acked..=acked
        };
        if !allowed.clone().any(|j| states[j] == d) {
            let found = states.iter().position(|s| *s == d);
            return Err(format!(
                "{acked} commits acknowledged (one under way: {in_flight}), database shows \
                 state {found:?}"
            ));
        }
        Ok(())
    })();
    let _ = vfs.detach();
    result
}

/// One trial per seed; fails naming every seed whose cut broke durability.
fn cuts_keep_every_acknowledged_commit(
    vfs: &XftlVfs,
    base: &[u8],
    states: &[(i64, i64)],
    seeds: std::ops::Range<u64>,
    p: &Profile,
) {
    let trials = seeds.end - seeds.start;
    let failures: Vec<String> = seeds
        .filter_map(|seed| {
            trial(vfs, base, states, seed, false, p)
                .err()
                .map(|e| format!("seed {seed}: {e}"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {trials} cuts broke durability:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_power_cut_keeps_acknowledged_commits_and_nothing_else() {
    let vfs = joj_atomic::register("xftl-cuts").unwrap();
    let p = profile();
    let base = base_image(&vfs, &p);
    let states = model();
    let (trials, first) = (common::cuts(1200), common::seed(0));
    cuts_keep_every_acknowledged_commit(&vfs, &base, &states, first..first + trials, &p);
    let c = vfs.counters();
    eprintln!("{trials} power cuts; paths: {c:?}");
    assert!(c.batch_commits > 1000, "the batch path barely ran: {c:?}");
    assert!(
        c.journal_opens > 50 && c.db_syncs > 50,
        "the journal path barely ran: {c:?}"
    );
    assert!(c.batch_rollbacks > 0);
}

#[test]
fn a_device_that_acknowledges_before_durable_is_caught() {
    let vfs = joj_atomic::register("xftl-canary").unwrap();
    let p = profile();
    let base = base_image(&vfs, &p);
    let states = model();
    canary_is_caught(&vfs, &base, &states, 150, &p);
}

/// The canary device (commits acknowledged before durable) fails at least one of `trials` cuts.
fn canary_is_caught(vfs: &XftlVfs, base: &[u8], states: &[(i64, i64)], trials: u64, p: &Profile) {
    let caught = (0..trials)
        .filter(|&seed| trial(vfs, base, states, seed, true, p).is_err())
        .count();
    assert!(
        caught > 0,
        "{trials} power cuts on {} could not tell an early acknowledgement",
        p.name
    );
    eprintln!("canary caught in {caught} of {trials} cuts on {}", p.name);
}

#[test]
fn base_image_device_is_consistent() {
    let vfs = joj_atomic::register("xftl-base").unwrap();
    let p = profile();
    let base = base_image(&vfs, &p);
    let medium = image::decode(&base, &p).unwrap();
    let (dev, _) = Emmc::recover(PowerCut { medium, at_ns: 0 }, &p).unwrap();
    assert!(dev.counters().host_write_bytes == 0);
}

/// The same cuts on the `openssd` profile (the X-FTL paper's board): every write programmed as
/// it arrives, 16 units, 128-page blocks, and every commit programs 20 metadata pages, so the
/// window between a commit's issue and its durability is long.
#[test]
fn power_cuts_on_the_openssd_profile_keep_acknowledged_commits() {
    let vfs = joj_atomic::register("xftl-cuts-openssd").unwrap();
    let p = Profile::builtin("openssd")
        .unwrap()
        .with_blocks_per_plane(32);
    let base = base_image(&vfs, &p);
    let states = model();
    cuts_keep_every_acknowledged_commit(&vfs, &base, &states, 0..300, &p);
    let c = vfs.counters();
    assert!(c.batch_commits > 200, "the batch path barely ran: {c:?}");
    canary_is_caught(&vfs, &base, &states, 100, &p);
}
