//! Two X-FTL transactions of two threads commit at the same time through the command queue
//! (`docs/device-model.md`, "Command queue"): a power cut at every instant from the second
//! commit's start on leaves each transaction all old or all new, and all new once its commit
//! completed. The first transaction writes many pages and the second one page first, so the
//! second commit's table could be programmed before the first's; map-area writes taking effect
//! in issue order is what keeps the second, acknowledged, commit.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::{pattern, tiny_profile};
use joj_device::{BlockDevice, Emmc, NandMedium, Profile, TransactionalDevice, WriteFlags};

const FIRST_PAGES: u64 = 4;
const SECOND_PAGE: u64 = 30;
/// Pages written and flushed before. Their number decides where the map log stands: with 22,
/// the second commit's table lands on a unit free before the first's, and without the
/// in-order rule it completes first (checked by removing the rule: the test then fails).
const BEFORE: u64 = 22;

fn profile() -> Profile {
    let mut p = tiny_profile();
    p.timing.queue_depth = 8;
    p
}

fn page_bytes() -> usize {
    profile().geometry.page_bytes as usize
}

/// The run up to both commits; returns the device and when each commit completed.
fn run() -> (Emmc<NandMedium>, u64, u64) {
    let p = profile();
    let page = page_bytes();
    let mut dev = Emmc::new(&p).unwrap();
    for lpn in 0..BEFORE {
        dev.write(lpn * page as u64, &pattern(lpn, page), WriteFlags::NONE)
            .unwrap();
    }
    dev.flush().unwrap();
    dev.set_issuer(2);
    let second = dev.begin_txn().unwrap();
    dev.write_txn(second, SECOND_PAGE * page as u64, &pattern(1000, page))
        .unwrap();
    dev.set_issuer(1);
    let first = dev.begin_txn().unwrap();
    for lpn in 0..FIRST_PAGES {
        dev.write_txn(first, lpn * page as u64, &pattern(500 + lpn, page))
            .unwrap();
    }
    dev.commit_txn(first).unwrap();
    let first_done = dev.last_command().done_ns;
    dev.set_issuer(2);
    dev.commit_txn(second).unwrap();
    let second_done = dev.last_command().done_ns;
    (dev, first_done, second_done)
}

fn read(dev: &mut Emmc<NandMedium>, lpn: u64) -> Vec<u8> {
    let page = page_bytes();
    let mut buf = vec![0; page];
    dev.read(lpn * page as u64, &mut buf).unwrap();
    buf
}

/// Whether `lpns` read all `old(lpn)` or all `new(lpn)`: `Some(true)` all new, `Some(false)`
/// all old, `None` a mix.
fn whole(
    dev: &mut Emmc<NandMedium>,
    lpns: &[u64],
    old: impl Fn(u64) -> Vec<u8>,
    new: impl Fn(u64) -> Vec<u8>,
) -> Option<bool> {
    let got: Vec<Vec<u8>> = lpns.iter().map(|&l| read(dev, l)).collect();
    let all = |f: &dyn Fn(u64) -> Vec<u8>| lpns.iter().zip(&got).all(|(&l, g)| *g == f(l));
    if all(&new) {
        Some(true)
    } else if all(&old) {
        Some(false)
    } else {
        None
    }
}

#[test]
fn a_cut_anywhere_leaves_each_commit_whole_and_keeps_the_acknowledged_ones() {
    let (dev, first_done, second_done) = run();
    let from = dev.command_start_ns();
    assert!(
        from < first_done,
        "the second commit started while the first was in flight"
    );

    let instants = dev.ftl().medium().event_times_ns(from);
    drop(dev);
    let first_lpns: Vec<u64> = (0..FIRST_PAGES).collect();
    let mut cuts = 0;
    for t in instants.iter().flat_map(|&t| [t, t + 1]) {
        let (dev, _, _) = run();
        let (mut dev, _) = Emmc::recover(dev.power_loss_at(t, t), &profile()).unwrap();
        dev.ftl().check_invariants();
        let page = page_bytes();
        let first = whole(
            &mut dev,
            &first_lpns,
            |l| pattern(l, page),
            |l| pattern(500 + l, page),
        );
        let second = whole(
            &mut dev,
            &[SECOND_PAGE],
            |_| vec![0; page],
            |_| pattern(1000, page),
        );
        assert!(
            first.is_some(),
            "cut at {t}: the first transaction is mixed"
        );
        assert!(
            second.is_some(),
            "cut at {t}: the second transaction is mixed"
        );
        if t >= first_done {
            assert_eq!(first, Some(true), "cut at {t}: the first commit completed");
        }
        if t >= second_done {
            assert_eq!(
                second,
                Some(true),
                "cut at {t}: the second commit completed at {second_done}"
            );
        }
        cuts += 1;
    }
    assert!(cuts > 4, "{cuts} cuts");
}
