//! Power cuts at random device commands while two application transactions are open at once
//! and their statements interleave (the paper's Fig. 3): lane X updates `a.db` and appends to
//! `x.log`, lane Y updates `b.db` and appends to `y.log`, each step opening one transaction per
//! lane. After each cut and recovery each lane shows exactly its acknowledged transactions (or
//! those and the one whose commit was under way), its database and its log agreeing, and both
//! databases pass `PRAGMA integrity_check`.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::bank;
use joj_atomic::{AppTxn, AppTxnError, FlashFs, XDevice, XftlVfs};
use joj_device::{Emmc, PowerCut, Profile, image};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rusqlite::Connection;

const STEPS: u64 = 15;
const MAX_BUDGET: u64 = 220;
const LANES: [(&str, &str); 2] = [("a.db", "x.log"), ("b.db", "y.log")];

/// Lane `l`'s change at step `i`: account, amount, whether it aborts.
fn change(l: usize, i: u64) -> (i64, i64, bool) {
    let mut r = ChaCha8Rng::seed_from_u64(i * 2 + l as u64);
    (
        r.random_range(1..=bank::ACCOUNTS),
        r.random_range(1..=900),
        r.random_range(0..5u32) == 0,
    )
}

fn record(l: usize, i: u64) -> Vec<u8> {
    let (id, amount, _) = change(l, i);
    format!("{l}:{i:03}:{id:03}:{amount:04}\n").into_bytes()
}

/// Per lane, `states[j]`: (database digest, log) after its first `j` committed changes.
/// A lane's database digest and log.
type LaneState = ((i64, i64), Vec<u8>);

fn model() -> Vec<Vec<LaneState>> {
    (0..LANES.len())
        .map(|l| {
            let c = Connection::open_in_memory().unwrap();
            bank::schema(&c, true).unwrap();
            let mut log = Vec::new();
            let mut states = vec![(bank::digest(&c).unwrap(), log.clone())];
            for i in 0..STEPS {
                let (id, amount, aborts) = change(l, i);
                if aborts {
                    continue;
                }
                c.execute(
                    "UPDATE account SET balance = balance + ?2 WHERE id = ?1",
                    [id, amount],
                )
                .unwrap();
                log.extend(record(l, i));
                states.push((bank::digest(&c).unwrap(), log.clone()));
            }
            states
        })
        .collect()
}

fn base_image(vfs: &XftlVfs, p: &Profile) -> Vec<u8> {
    vfs.attach(common::formatted(p)).unwrap();
    bank::setup(vfs);
    vfs.create_file("x.log").unwrap();
    vfs.create_file("y.log").unwrap();
    let fs = vfs.detach().unwrap();
    image::encode(&fs.into_device().close().unwrap())
}

/// Per lane: (acknowledged, commit under way); and what failed.
type Outcome = ([(usize, bool); 2], String);

fn step(
    vfs: &XftlVfs,
    conns: &[Connection; 2],
    i: u64,
    lanes: &mut [(usize, bool); 2],
) -> Result<(), AppTxnError> {
    let mut txs: Vec<AppTxn<XDevice>> = Vec::new();
    for c in conns {
        let mut tx = vfs.begin_app()?;
        tx.enroll(c)?;
        txs.push(tx);
    }
    // Statements of the two transactions interleave.
    for (l, tx) in txs.iter_mut().enumerate() {
        let (id, amount, _) = change(l, i);
        tx.execute(
            &conns[l],
            "UPDATE account SET balance = balance + ?2 WHERE id = ?1",
            [id, amount],
        )?;
    }
    for (l, tx) in txs.iter_mut().enumerate() {
        tx.append(LANES[l].1, &record(l, i))?;
    }
    for (l, tx) in txs.into_iter().enumerate() {
        if change(l, i).2 {
            tx.abort()?;
        } else {
            lanes[l].1 = true;
            tx.commit()?;
            lanes[l] = (lanes[l].0 + 1, false);
        }
    }
    Ok(())
}

fn run(vfs: &XftlVfs) -> Outcome {
    let mut lanes = [(0, false); 2];
    let conns = [
        bank::open_off(vfs.name(), LANES[0].0),
        bank::open_off(vfs.name(), LANES[1].0),
    ];
    let [Ok(x), Ok(y)] = conns else {
        return (lanes, "open failed".into());
    };
    let conns = [x, y];
    for i in 0..STEPS {
        if let Err(e) = step(vfs, &conns, i, &mut lanes) {
            return (lanes, format!("step {i}: {e}"));
        }
    }
    (lanes, String::new())
}

fn lane_state(vfs: &XftlVfs, l: usize) -> Result<LaneState, String> {
    let (db, log) = LANES[l];
    let c = bank::open(vfs.name(), db).map_err(|e| e.to_string())?;
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .map_err(|e| e.to_string())?;
    if ok != "ok" {
        return Err(format!("{db}: integrity_check: {ok}"));
    }
    let d = bank::digest(&c).map_err(|e| e.to_string())?;
    let log = vfs
        .with_fs(|fs| {
            let id = fs.lookup(log)?;
            let mut buf = vec![0u8; fs.size(id) as usize];
            fs.read(id, 0, &mut buf).ok()?;
            Some(buf)
        })
        .flatten()
        .ok_or("the log is unreadable")?;
    Ok((d, log))
}

fn trial(
    vfs: &XftlVfs,
    base: &[u8],
    states: &[Vec<LaneState>],
    seed: u64,
    p: &Profile,
) -> Result<bool, String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let medium = image::decode(base, p).map_err(|e| e.to_string())?;
    let (dev, _) = Emmc::recover(PowerCut { medium, at_ns: 0 }, p).map_err(|e| e.to_string())?;
    vfs.attach(FlashFs::mount(dev).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    let budget = rng.random_range(0..MAX_BUDGET);
    vfs.with_fs(|fs| fs.device_mut().cut_power_after(Some(budget)));
    let (lanes, last) = run(vfs);
    let fs = vfs.detach().map_err(|e| e.to_string())?;
    let after = rng.random_range(0..2_000_000);
    vfs.attach(common::cut_and_remount(fs, after, seed, p)?)
        .map_err(|e| e.to_string())?;
    let seen: Vec<_> = (0..LANES.len()).map(|l| lane_state(vfs, l)).collect();
    let _ = vfs.detach();
    for (l, seen) in seen.into_iter().enumerate() {
        let seen = seen.map_err(|e| format!("budget {budget}: lane {l}: {e}; {last}"))?;
        let (acked, under_way) = lanes[l];
        let ok = (acked..=acked + usize::from(under_way)).any(|j| states[l][j] == seen);
        if !ok {
            let db = states[l].iter().position(|s| s.0 == seen.0);
            let log = states[l].iter().position(|s| s.1 == seen.1);
            return Err(format!(
                "budget {budget}: lane {l}: {acked} acknowledged (commit under way: \
                 {under_way}); its database shows state {db:?}, its log {log:?}; {last}"
            ));
        }
    }
    Ok(!last.is_empty())
}

#[test]
fn interleaved_transactions_are_each_whole_or_absent_after_every_cut() {
    let vfs = joj_atomic::register("apptxn-interleaved").unwrap();
    let p = common::profile(64);
    let base = base_image(&vfs, &p);
    let states = model();
    let trials = common::cuts(600);
    let (mut failed, mut hit) = (Vec::new(), 0u64);
    for seed in 0..trials {
        match trial(&vfs, &base, &states, seed, &p) {
            Ok(h) => hit += u64::from(h),
            Err(e) => failed.push(format!("seed {seed}: {e}")),
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {trials} cuts broke an interleaved transaction:\n{}",
        failed.len(),
        failed.join("\n")
    );
    eprintln!("{trials} cuts, {hit} inside the run");
    assert!(
        hit > trials * 3 / 4,
        "the cuts missed the run: {hit} of {trials} hit it"
    );
}
