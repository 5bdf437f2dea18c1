//! A packed command of reliable writes on a device whose reliable write is atomic across the
//! command (`ReliableWriteAtomicity::Command`): a power cut at every point inside the command
//! leaves every page of it old or every page new, never a mix; a cut at its completion or later
//! leaves every page new; every page acknowledged before reads back as it may; the FTL's
//! invariants hold after recovery.
//!
//! The canary runs the same trials on the default device (reliable write atomic per page): the
//! check must find a command left half old, half new, so we know it can.
//!
//! Every random choice comes from one seed, `JOJ_SEED` if set (printed on failure).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::{Model, pattern, tiny_profile};
use joj_device::rng::SimRng;
use joj_device::{
    BlockDevice, Emmc, NandMedium, PackedWrite, Profile, ReliableWriteAtomicity, WriteFlags,
};

const DEFAULT_SEED: u64 = 0x7061_636b_6564_3232;
const TRIALS: u64 = 120;

fn seed() -> u64 {
    match std::env::var("JOJ_SEED") {
        Ok(s) => s.trim().parse().expect("JOJ_SEED is a decimal u64"),
        Err(_) => DEFAULT_SEED,
    }
}

fn profile(atomicity: ReliableWriteAtomicity) -> Profile {
    let mut p = tiny_profile();
    p.ftl.reliable_write_atomicity = atomicity;
    p
}

/// One trial: an acknowledged history, a few cached writes, and the packed command.
struct Trial {
    /// `(offset, data, durable)` before the command; a flush follows the durable part.
    history: Vec<(u64, Vec<u8>, bool)>,
    cached_after_flush: Vec<(u64, Vec<u8>)>,
    command: Vec<(u64, Vec<u8>)>,
    /// The command's pages with their content before and after it.
    pages: Vec<(u64, Vec<u8>, Vec<u8>)>,
    /// Every other page and the contents it may hold after a cut.
    others: Vec<(u64, Vec<Vec<u8>>)>,
}

// long: draws the whole trial (history, cached writes, command and their expected contents)
// from one generator, so the draws stay in one order that a seed reproduces.
fn draw_trial(rng: &mut SimRng, logical_pages: u64, page: u64) -> Trial {
    let mut model = Model::new(page as usize, logical_pages);
    let mut id = 1;
    let mut history = Vec::new();
    // Enough page writes over a small range that GC runs, sometimes inside the command.
    let span = 40 + rng.below(logical_pages - 60);
    for _ in 0..(150 + rng.below(250)) {
        let lpn = rng.below(span);
        let n = 1 + rng.below(2);
        let durable = rng.below(4) == 0;
        let data = pattern(id, (n * page) as usize);
        id += 1;
        model.write(lpn * page, &data, durable);
        history.push((lpn * page, data, durable));
    }
    model.flush();
    // The command: 2–8 distinct pages in 1–4 writes of contiguous pages; one write may cover
    // only some sectors of its page.
    let k = 2 + rng.below(7);
    let mut lpns: Vec<u64> = Vec::new();
    while (lpns.len() as u64) < k {
        let l = rng.below(logical_pages - 1);
        if !lpns.contains(&l) {
            lpns.push(l);
        }
    }
    lpns.sort_unstable();
    let mut command = Vec::new();
    let mut i = 0;
    while i < lpns.len() {
        let mut j = i + 1;
        while j < lpns.len() && lpns[j] == lpns[j - 1] + 1 && rng.below(2) == 0 {
            j += 1;
        }
        let (mut off, mut len) = (lpns[i] * page, (j - i) as u64 * page);
        if j == i + 1 && rng.below(3) == 0 {
            // Sectors 1..3 of a 4-sector page: the rest comes from the old page.
            off += 512;
            len = 2 * 512;
        }
        command.push((off, pattern(id, len as usize)));
        id += 1;
        i = j;
    }
    let old: Vec<Vec<u8>> = lpns.iter().map(|&l| model.page(l)).collect();
    let mut after = Model::new(page as usize, logical_pages);
    for &l in &lpns {
        after.current.insert(l, model.page(l));
    }
    for (off, data) in &command {
        after.write(*off, data, true);
    }
    let pages = lpns
        .iter()
        .zip(old)
        .map(|(&l, o)| (l, o, after.page(l)))
        .collect();
    // Cached (unacknowledged-as-durable) writes to pages outside the command.
    let mut cached_after_flush = Vec::new();
    for _ in 0..rng.below(5) {
        let l = rng.below(span);
        if lpns.contains(&l) {
            continue;
        }
        let data = pattern(id, page as usize);
        id += 1;
        model.write(l * page, &data, false);
        cached_after_flush.push((l * page, data));
    }
    let others = (0..logical_pages)
        .filter(|l| !lpns.contains(l))
        .map(|l| {
            let allowed = model
                .allowed
                .get(&l)
                .cloned()
                .unwrap_or_else(|| vec![model.page(l)]);
            (l, allowed)
        })
        .collect();
    Trial {
        history,
        cached_after_flush,
        command,
        pages,
        others,
    }
}

/// Run the trial up to and through its command; returns the device and the command's start
/// and completion.
fn run(trial: &Trial, profile: &Profile) -> (Emmc<NandMedium>, u64, u64) {
    let mut dev = Emmc::new(profile).unwrap();
    for (off, data, durable) in &trial.history {
        let flags = if *durable {
            WriteFlags::RELIABLE
        } else {
            WriteFlags::NONE
        };
        dev.write(*off, data, flags).unwrap();
    }
    dev.flush().unwrap();
    for (off, data) in &trial.cached_after_flush {
        dev.write(*off, data, WriteFlags::NONE).unwrap();
    }
    let writes: Vec<PackedWrite<'_>> = trial
        .command
        .iter()
        .map(|(o, d)| PackedWrite {
            offset_bytes: *o,
            data: d,
        })
        .collect();
    dev.write_packed(&writes, WriteFlags::RELIABLE).unwrap();
    let (start, done) = (dev.command_start_ns(), dev.now_ns());
    (dev, start, done)
}

/// What a cut left of the command's pages.
#[derive(Debug, PartialEq)]
enum Outcome {
    AllOld,
    AllNew,
    Mixed(Vec<char>),
}

/// Cut at `at`, recover, check everything but all-or-nothing; returns what the command left.
fn cut_and_check(trial: &Trial, profile: &Profile, at: u64, cut_seed: u64) -> Outcome {
    let (dev, _, _) = run(trial, profile);
    let (mut dev, _) = Emmc::recover(dev.power_loss_at(at, cut_seed), profile).unwrap();
    dev.ftl().check_invariants();
    let page = profile.geometry.page_bytes as usize;
    let mut buf = vec![0u8; page];
    let mut seen = Vec::new();
    for (lpn, old, new) in &trial.pages {
        dev.read(lpn * page as u64, &mut buf).unwrap();
        seen.push(if &buf == new {
            'N'
        } else if &buf == old {
            'O'
        } else {
            panic!(
                "page {lpn} of the command reads neither its old nor its new content (cut at {at})"
            )
        });
    }
    for (lpn, allowed) in &trial.others {
        dev.read(lpn * page as u64, &mut buf).unwrap();
        assert!(
            allowed.contains(&buf),
            "page {lpn} outside the command lost acknowledged data (cut at {at})"
        );
    }
    if seen.iter().all(|&c| c == 'O') {
        Outcome::AllOld
    } else if seen.iter().all(|&c| c == 'N') {
        Outcome::AllNew
    } else {
        Outcome::Mixed(seen)
    }
}

/// Every instant of the command worth cutting at: its start, each start and end of a NAND
/// operation within it and one nanosecond after, and its completion.
fn cut_points(dev: &Emmc<NandMedium>, start: u64, done: u64) -> Vec<u64> {
    let mut at = vec![start, done];
    for t in dev.ftl().medium().event_times_ns(start) {
        if t <= done {
            at.push(t);
            at.push(t + 1);
        }
    }
    at.sort_unstable();
    at.dedup();
    at
}

/// Statistics over all trials.
#[derive(Default, Debug)]
struct Tally {
    cuts: u64,
    all_old: u64,
    all_new: u64,
    mixed: Vec<(u64, u64, Vec<char>)>,
}

fn run_trials(atomicity: ReliableWriteAtomicity) -> Tally {
    let profile = profile(atomicity);
    let seed = seed();
    let logical = profile.logical_pages();
    let page = u64::from(profile.geometry.page_bytes);
    let mut rng = SimRng::new(seed);
    let mut tally = Tally::default();
    for trial_no in 0..TRIALS {
        let trial = draw_trial(&mut rng, logical, page);
        let (dev, start, done) = run(&trial, &profile);
        for at in cut_points(&dev, start, done) {
            let outcome = cut_and_check(&trial, &profile, at, rng.next_u64());
            tally.cuts += 1;
            match outcome {
                Outcome::AllOld => {
                    assert!(
                        at < done,
                        "seed {seed}, trial {trial_no}: the command completed at {done} but a \
                         cut at {at} lost it"
                    );
                    tally.all_old += 1;
                }
                Outcome::AllNew => tally.all_new += 1,
                Outcome::Mixed(seen) => tally.mixed.push((trial_no, at, seen)),
            }
        }
    }
    eprintln!(
        "seed {seed} (rerun with JOJ_SEED={seed}), {atomicity:?}: {} cuts, {} all old, {} \
         all new, {} mixed",
        tally.cuts,
        tally.all_old,
        tally.all_new,
        tally.mixed.len()
    );
    tally
}

#[test]
fn every_cut_inside_a_packed_reliable_write_leaves_all_old_or_all_new() {
    let tally = run_trials(ReliableWriteAtomicity::Command);
    assert!(
        tally.mixed.is_empty(),
        "seed {}: cuts left a packed reliable write half done: {:?}",
        seed(),
        &tally.mixed[..tally.mixed.len().min(5)]
    );
    assert!(tally.cuts >= 1000, "only {} cuts", tally.cuts);
    assert!(
        tally.all_old > 0 && tally.all_new > 0,
        "cuts must land both before and after the commit point: {tally:?}"
    );
}

#[test]
fn canary_per_page_reliable_write_is_caught_mixing() {
    let tally = run_trials(ReliableWriteAtomicity::Page);
    assert!(tally.cuts >= 1000, "only {} cuts", tally.cuts);
    assert!(
        !tally.mixed.is_empty(),
        "seed {}: the all-or-nothing check never caught per-page reliable writes mixing old and \
         new pages in {} cuts",
        seed(),
        tally.cuts
    );
}

#[test]
fn atomic_reliable_commands_are_counted_and_the_default_is_per_page() {
    for atomicity in [
        ReliableWriteAtomicity::Page,
        ReliableWriteAtomicity::Command,
    ] {
        let profile = profile(atomicity);
        let page = u64::from(profile.geometry.page_bytes);
        let mut dev = Emmc::new(&profile).unwrap();
        let (a, b) = (pattern(1, 2 * page as usize), pattern(2, page as usize));
        let writes = [
            PackedWrite {
                offset_bytes: 0,
                data: &a,
            },
            PackedWrite {
                offset_bytes: 10 * page,
                data: &b,
            },
        ];
        dev.write_packed(&writes, WriteFlags::RELIABLE).unwrap();
        let c = dev.counters();
        let on = atomicity == ReliableWriteAtomicity::Command;
        assert_eq!(c.packed_commands, 1);
        assert_eq!(c.reliable_atomic_commands, u64::from(on));
        assert_eq!(c.reliable_atomic_pages, if on { 3 } else { 0 });
        assert_eq!(c.host_write_requests, 2);
        assert_eq!(c.fua, 2);
        assert_eq!(
            c.commit_table_programs,
            u64::from(on),
            "one commit table page"
        );
    }
    assert_eq!(
        Profile::builtin("emmc5")
            .unwrap()
            .ftl
            .reliable_write_atomicity,
        ReliableWriteAtomicity::Page,
        "the built-in profiles keep per-page reliable writes"
    );
}

/// Two writes of one page in one command are two programs of that page: the command is still
/// all or nothing (the first write alone never shows).
#[test]
fn two_writes_of_one_page_in_one_command_are_all_or_nothing() {
    let profile = profile(ReliableWriteAtomicity::Command);
    let page = u64::from(profile.geometry.page_bytes);
    let old = pattern(1, page as usize);
    let (a, b) = (pattern(2, 512), pattern(3, 512));
    let mut new = old.clone();
    new[..512].copy_from_slice(&a);
    new[1024..1536].copy_from_slice(&b);
    let trial = Trial {
        history: vec![(5 * page, old.clone(), true)],
        cached_after_flush: Vec::new(),
        command: vec![(5 * page, a), (5 * page + 1024, b)],
        pages: vec![(5, old, new)],
        others: (0..profile.logical_pages())
            .filter(|&l| l != 5)
            .map(|l| (l, vec![vec![0u8; page as usize]]))
            .collect(),
    };
    let (dev, start, done) = run(&trial, &profile);
    let points = cut_points(&dev, start, done);
    assert!(points.len() > 4, "cuts inside the command: {points:?}");
    for (i, at) in points.into_iter().enumerate() {
        let outcome = cut_and_check(&trial, &profile, at, i as u64);
        assert!(
            outcome == Outcome::AllNew || (outcome == Outcome::AllOld && at < done),
            "cut at {at} (command {start}..{done}): {outcome:?}"
        );
    }
}
