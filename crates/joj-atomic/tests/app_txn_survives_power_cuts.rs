//! Power cuts at random device commands while application transactions move money between
//! two databases and append to a ledger file (the i-FTL paper's withdraw/deposit), SQLite's
//! journal off: after each cut and recovery the device passes its own consistency check, both
//! databases pass `PRAGMA integrity_check`, and the two databases and the ledger all show the
//! same state — exactly the acknowledged transactions, or those and the one whose commit was
//! under way — never a part of one. Explicit aborts are mixed in. Two canaries must be caught:
//! a device that acknowledges commits before they are durable, and application transactions
//! that write the ledger outside their device transaction.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::bank::{self, Model, State};
use joj_atomic::{FlashFs, XftlVfs};
use joj_device::{Emmc, PowerCut, Profile, image};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const TXNS: u64 = 30;
/// Device commands the whole run takes is about this many: cuts fall anywhere in it.
const MAX_BUDGET: u64 = 290;

/// The transfers' seed (the cuts have their own, one per trial).
const WORK: u64 = 19;

fn aborts(i: u64) -> bool {
    ChaCha8Rng::seed_from_u64(WORK * 7919 + i).random_range(0..6u32) == 0
}

/// `states[j]`: databases and ledger after the first `j` committed transfers.
fn model() -> Vec<State> {
    let mut m = Model::new();
    let mut states = vec![m.state()];
    for i in (0..TXNS).filter(|&i| !aborts(i)) {
        m.apply(i, bank::transfer(WORK, i));
        states.push(m.state());
    }
    states
}

fn base_image(vfs: &XftlVfs, p: &Profile) -> Vec<u8> {
    vfs.attach(common::formatted(p)).unwrap();
    bank::setup(vfs);
    let fs = vfs.detach().unwrap();
    image::encode(&fs.into_device().close().unwrap())
}

/// Run the transfers until one fails; `(acknowledged, commit under way, what failed)`.
fn transfers(vfs: &XftlVfs) -> (usize, bool, String) {
    let (Ok(a), Ok(b)) = (
        bank::open_off(vfs.name(), "a.db"),
        bank::open_off(vfs.name(), "b.db"),
    ) else {
        return (0, false, "open failed".into());
    };
    let mut acked = 0;
    for i in 0..TXNS {
        let mut committing = false;
        let r = (|| {
            let mut tx = vfs.begin_app()?;
            tx.enroll(&a)?;
            tx.enroll(&b)?;
            bank::run(&mut tx, &a, &b, i, bank::transfer(WORK, i))?;
            if aborts(i) {
                return tx.abort().map(|()| false);
            }
            committing = true;
            tx.commit().map(|()| true)
        })();
        match r {
            Ok(true) => acked += 1,
            Ok(false) => {}
            Err(e) => return (acked, committing, format!("transfer {i}: {e}")),
        }
    }
    (acked, false, String::new())
}

/// Where a trial's cut fell: inside a transfer, inside a commit.
type Hit = (bool, bool);

/// One trial: cut after a random number of device commands; an error names what broke.
fn trial(
    vfs: &XftlVfs,
    base: &[u8],
    states: &[State],
    seed: u64,
    canary: bool,
    p: &Profile,
) -> Result<Hit, String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let medium = image::decode(base, p).map_err(|e| e.to_string())?;
    let (mut dev, _) =
        Emmc::recover(PowerCut { medium, at_ns: 0 }, p).map_err(|e| e.to_string())?;
    dev.set_canary_commit_before_durable(canary);
    vfs.attach(FlashFs::mount(dev).map_err(|e| format!("first mount: {e}"))?)
        .map_err(|e| e.to_string())?;
    let budget = rng.random_range(0..MAX_BUDGET);
    vfs.with_fs(|fs| fs.device_mut().cut_power_after(Some(budget)));
    let (acked, in_flight, last) = transfers(vfs);
    let fs = vfs.detach().map_err(|e| e.to_string())?;
    let after = if rng.random_range(0..2u32) == 0 {
        0
    } else {
        rng.random_range(0..3_000_000)
    };
    vfs.attach(common::cut_and_remount(fs, after, seed, p)?)
        .map_err(|e| e.to_string())?;
    let seen = bank::observe(vfs);
    let _ = vfs.detach();
    let seen = seen.map_err(|e| format!("budget {budget}: {e}; {last}"))?;
    let allowed = if in_flight {
        acked..=acked + 1
    } else {
        acked..=acked
    };
    if allowed.clone().any(|j| states[j] == seen) {
        return Ok((!last.is_empty(), in_flight));
    }
    let whole = |f: &dyn Fn(&State) -> bool| states.iter().position(f);
    Err(format!(
        "budget {budget}: {acked} acknowledged (commit under way: {in_flight}); a.db shows state \
         {:?}, b.db {:?}, the ledger {:?} ({} records); {last}",
        whole(&|s| s.a == seen.a),
        whole(&|s| s.b == seen.b),
        whole(&|s| s.ledger == seen.ledger),
        seen.ledger.len() / bank::RECORD_BYTES,
    ))
}

/// The failures of one trial per seed, and how many cuts hit a transfer and a commit.
fn failures(
    vfs: &XftlVfs,
    base: &[u8],
    states: &[State],
    seeds: std::ops::Range<u64>,
    canary: bool,
    p: &Profile,
) -> (Vec<String>, u64, u64) {
    let (mut failed, mut cut, mut in_commit) = (Vec::new(), 0, 0);
    for seed in seeds {
        match trial(vfs, base, states, seed, canary, p) {
            Ok((c, i)) => {
                cut += u64::from(c);
                in_commit += u64::from(i);
            }
            Err(e) => failed.push(format!("seed {seed}: {e}")),
        }
    }
    (failed, cut, in_commit)
}

#[test]
fn every_cut_leaves_each_transfer_whole_in_both_databases_and_the_ledger_or_absent() {
    let vfs = joj_atomic::register("apptxn-cuts").unwrap();
    let p = common::profile(64);
    let base = base_image(&vfs, &p);
    let states = model();
    let (trials, first) = (common::cuts(1500), common::seed(0));
    let started = std::time::Instant::now();
    let (failed, cut, in_commit) = failures(&vfs, &base, &states, first..first + trials, false, &p);
    assert!(
        failed.is_empty(),
        "{} of {trials} cuts broke an application transaction (rerun one with \
         JOJ_SEED=<seed> JOJ_CUTS=1):\n{}",
        failed.len(),
        failed.join("\n")
    );
    eprintln!(
        "{trials} power cuts in {:.1} s; {} transfers per run, {} committed; {cut} cuts hit a \
         transfer, {in_commit} of them inside its commit",
        started.elapsed().as_secs_f64(),
        TXNS,
        states.len() - 1
    );
    assert!(
        cut > trials * 3 / 4 && in_commit > trials / 20,
        "the cuts missed the transfers: {cut} hit one, {in_commit} inside a commit"
    );
}

#[test]
fn a_device_that_acknowledges_before_durable_is_caught() {
    let vfs = joj_atomic::register("apptxn-canary").unwrap();
    let p = common::profile(64);
    let base = base_image(&vfs, &p);
    let states = model();
    let caught = failures(&vfs, &base, &states, 0..150, true, &p).0.len();
    assert!(
        caught > 0,
        "150 cuts could not tell an early acknowledgement"
    );
    eprintln!("canary caught in {caught} of 150 cuts");
}

#[test]
fn a_ledger_written_outside_the_transaction_is_caught() {
    let vfs = joj_atomic::register("apptxn-canary-files").unwrap();
    let p = common::profile(64);
    let base = base_image(&vfs, &p);
    let states = model();
    vfs.set_canary_files_outside_app_txns(true);
    let caught = failures(&vfs, &base, &states, 0..150, false, &p).0.len();
    vfs.set_canary_files_outside_app_txns(false);
    assert!(
        caught > 0,
        "150 cuts could not tell a ledger outside the transaction"
    );
    eprintln!("files-outside canary caught in {caught} of 150 cuts");
}
