//! The i-FTL paper's application transactions on the i-FTL device (`IftlDevice`: mapping tables
//! and the file layer's metadata in NVM, lazy GC): transfers move money between two databases
//! and append to a ledger, SQLite's journal off, each transfer one device transaction. The run is
//! recorded with the device's clock (when each commit began and returned) on a device whose
//! space is used up, so GC (and lazy GC) runs inside the transfers; then power is cut at
//! instants drawn from the seed — at NAND and NVM events of the run, so inside writes, commits
//! and GC; a third of the time inside a GC run that met the open transfer's old pages — and,
//! half of the time, again at an NVM event inside the recovery that followed.
//! Every transfer also rewrites a few pages of a 384 KiB plain file, so old pages of open
//! transactions sit in blocks GC chooses and must be kept (lazy GC).
//! After each, the device passes its invariants, both databases `PRAGMA integrity_check`, and the
//! databases and the ledger show exactly the transfers acknowledged before the cut, plus at most
//! the one whose commit was under way, whole. `JOJ_CUTS` (default 600) sets the number
//! of cuts; `JOJ_SEED` the first seed.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::bank::{self, Model, State};
use joj_atomic::{FlashFs, FsOptions, XftlVfs};
use joj_device::{IftlCanary, IftlDevice, IftlStats, NandMedium, Profile};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

type Dev = IftlDevice<NandMedium>;

const TXNS: u64 = 24;
const WORK: u64 = 23;

/// A small i-FTL device with small blocks, so GC (lazy GC included) runs inside the transfers:
/// galaxy-s5's NAND with 16 pages per block, 64 blocks per plane, 15 % spare (i-FTL reserves
/// 16 blocks), the default NVM.
fn profile() -> Profile {
    let mut p = common::profile(64);
    p.geometry.pages_per_block = 16;
    p.ftl.over_provisioning_percent = 15.0;
    p.iftl = Some(Default::default());
    p.with_data_mode(joj_device::DataMode::Full)
}

/// Bytes of the device the file layer owns.
const FS_BYTES: u64 = 4 << 20;

/// A device whose every logical page is written once, the file layer's included (made once,
/// cloned per trial): no block is free of live pages but the spare ones, so GC runs inside the
/// transfers and its victims are blocks the file layer wrote, where the old pages of the open
/// transfer are (lazy GC must keep them).
fn aged(p: &Profile) -> Dev {
    use joj_device::{BlockDevice, WriteFlags};
    let mut dev = IftlDevice::new(p).unwrap();
    let page = u64::from(dev.page_bytes());
    let data = vec![0x5au8; page as usize];
    for lpn in 0..dev.logical_pages() {
        BlockDevice::write(&mut dev, lpn * page, &data, WriteFlags::NONE).unwrap();
    }
    dev
}

/// A plain file of which every transfer rewrites a few pages inside its transaction, so its pages
/// spread over blocks with the databases' and an open transaction's old pages sit where GC looks
/// (lazy GC must keep them). Page `k` of the file holds one value in all its bytes.
const BLOB: &str = "blob.bin";
const BLOB_PAGE: usize = 8192;
const BLOB_PAGES: usize = 48;

/// The pages transfer `i` rewrites, and the value it writes.
fn blob_pages(i: u64) -> (Vec<usize>, u8) {
    let mut rng = ChaCha8Rng::seed_from_u64(WORK * 31 + i);
    let mut pages: Vec<usize> = (0..8).map(|_| rng.random_range(0..BLOB_PAGES)).collect();
    pages.sort_unstable();
    pages.dedup();
    (pages, (i + 1) as u8)
}

fn aborts(i: u64) -> bool {
    ChaCha8Rng::seed_from_u64(WORK * 7919 + i).random_range(0..6u32) == 0
}

/// The databases and the ledger, and the blob's page values.
type Shown = (State, Vec<u8>);

/// `states[j]`: what the files show after `j` committed transfers.
fn model() -> Vec<Shown> {
    let mut m = Model::new();
    let mut blob = vec![0u8; BLOB_PAGES];
    let mut states = vec![(m.state(), blob.clone())];
    for i in (0..TXNS).filter(|&i| !aborts(i)) {
        m.apply(i, bank::transfer(WORK, i));
        let (pages, v) = blob_pages(i);
        for p in pages {
            blob[p] = v;
        }
        states.push((m.state(), blob.clone()));
    }
    states
}

/// The blob's page values, if every page holds one value in all its bytes.
fn read_blob(vfs: &XftlVfs<Dev>) -> Result<Vec<u8>, String> {
    let bytes = vfs
        .with_fs(|fs| {
            let id = fs.lookup(BLOB).ok_or("no blob file")?;
            let mut buf = vec![0u8; fs.size(id) as usize];
            fs.read(id, 0, &mut buf).map_err(|e| e.to_string())?;
            Ok::<_, String>(buf)
        })
        .ok_or("no file layer")??;
    if bytes.len() != BLOB_PAGE * BLOB_PAGES {
        return Err(format!("the blob has {} bytes", bytes.len()));
    }
    bytes
        .chunks(BLOB_PAGE)
        .enumerate()
        .map(|(k, page)| match page.iter().all(|&b| b == page[0]) {
            true => Ok(page[0]),
            false => Err(format!("blob page {k} is torn")),
        })
        .collect()
}

/// When one committed transfer's commit began and returned, on the device's clock.
#[derive(Debug, Clone, Copy)]
struct Commit {
    began_ns: u64,
    returned_ns: u64,
}

fn now(vfs: &XftlVfs<Dev>) -> u64 {
    vfs.with_fs(|fs| fs.device().now_ns()).unwrap()
}

/// The whole run on a fresh device: the device after it, when the setup ended and its counters
/// then, and each committed transfer's commit times.
fn run(vfs: &XftlVfs<Dev>, base: &Dev, canary: IftlCanary) -> (Dev, (u64, IftlStats), Vec<Commit>) {
    let mut dev = base.clone();
    dev.ftl_mut().set_canary(canary);
    // The cut is drawn after the run, anywhere in it.
    dev.keep_cut_history();
    let fs = FlashFs::format(
        dev,
        FsOptions {
            fs_bytes: FS_BYTES,
            slots: 8,
        },
    )
    .unwrap();
    vfs.attach(fs).unwrap();
    bank::setup(vfs);
    vfs.create_file(BLOB).unwrap();
    let mut tx = vfs.begin_app().unwrap();
    tx.write_file(BLOB, 0, &vec![0u8; BLOB_PAGE * BLOB_PAGES])
        .unwrap();
    tx.commit().unwrap();
    let setup = (
        now(vfs),
        vfs.with_fs(|fs| fs.device().stats().clone()).unwrap(),
    );
    let a = bank::open_off(vfs.name(), "a.db").unwrap();
    let b = bank::open_off(vfs.name(), "b.db").unwrap();
    let mut commits = Vec::new();
    for i in 0..TXNS {
        let mut tx = vfs.begin_app().unwrap();
        tx.enroll(&a).unwrap();
        tx.enroll(&b).unwrap();
        bank::run(&mut tx, &a, &b, i, bank::transfer(WORK, i)).unwrap();
        let (pages, v) = blob_pages(i);
        for p in pages {
            tx.write_file(BLOB, (p * BLOB_PAGE) as u64, &[v; BLOB_PAGE])
                .unwrap();
        }
        if aborts(i) {
            tx.abort().unwrap();
            continue;
        }
        let began_ns = now(vfs);
        tx.commit().unwrap();
        commits.push(Commit {
            began_ns,
            returned_ns: now(vfs),
        });
    }
    drop((a, b));
    (vfs.detach().unwrap().into_device(), setup, commits)
}

/// Where the cuts fell.
#[derive(Debug, Default)]
struct Counts {
    cuts: u64,
    in_commit: u64,
    /// Trials whose (first) cut was aimed inside a GC run that met old pages of the open
    /// transfer (lazy GC).
    in_lazy_gc: u64,
    in_recovery: u64,
    /// GC runs and lazy-GC copies inside the transfers, over all trials.
    gc_runs: u64,
    lazy_gc_copies: u64,
}

/// One trial: run, cut at an event drawn from `seed`, recover (and maybe cut that recovery and
/// recover again), check.
fn trial(
    vfs: &XftlVfs<Dev>,
    (p, base, canary): (&Profile, &Dev, IftlCanary),
    states: &[Shown],
    seed: u64,
    counts: &mut Counts,
) -> Result<(), String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (dev, (setup_ns, at_setup), commits) = run(vfs, base, canary);
    let transfers = dev.stats().since(&at_setup);
    counts.gc_runs += transfers.gc_runs;
    counts.lazy_gc_copies += transfers.lazy_gc_copies;
    let mut events = dev.ftl().medium().event_times_ns(setup_ns);
    events.extend(dev.ftl().nvm().event_times_ns(setup_ns));
    events.retain(|&t| t >= setup_ns);
    if events.is_empty() {
        return Err("the run left no event to cut at".into());
    }
    // A third of the time, inside a GC run that met the open transfer's old pages.
    let lazy: Vec<(u64, u64)> = dev
        .ftl()
        .retained_gc_spans()
        .filter(|&(from, _)| from >= setup_ns)
        .collect();
    let inside_lazy: Vec<u64> = match lazy.is_empty() || rng.random_range(0..3u32) != 0 {
        true => Vec::new(),
        false => {
            let (from, to) = lazy[rng.random_range(0..lazy.len())];
            events
                .iter()
                .copied()
                .filter(|&t| from <= t && t < to)
                .collect()
        }
    };
    counts.in_lazy_gc += u64::from(!inside_lazy.is_empty());
    let pool = match inside_lazy.is_empty() {
        true => &events,
        false => &inside_lazy,
    };
    let at = pool[rng.random_range(0..pool.len())] + rng.random_range(0..2u64);
    let acked = commits.iter().filter(|c| c.returned_ns <= at).count();
    let in_flight = commits
        .iter()
        .any(|c| c.began_ns <= at && at < c.returned_ns);
    counts.cuts += 1;
    counts.in_commit += u64::from(in_flight);
    let (mut dev, _) = IftlDevice::recover(dev.power_cut(at, seed), p)
        .map_err(|e| format!("recovery after a cut at {at} ns: {e}"))?;
    dev.ftl_mut().set_canary(canary);
    if rng.random_range(0..2u32) == 0 {
        let inside = dev.ftl().nvm().event_times_ns(at);
        if !inside.is_empty() {
            let at2 = inside[rng.random_range(0..inside.len())] + rng.random_range(0..2u64);
            counts.cuts += 1;
            counts.in_recovery += 1;
            dev = IftlDevice::recover(dev.power_cut(at2, seed + 1), p)
                .map_err(|e| format!("recovery after a cut inside recovery at {at2} ns: {e}"))?
                .0;
            dev.ftl_mut().set_canary(canary);
        }
    }
    if canary == IftlCanary::None {
        dev.ftl().check_invariants();
    }
    vfs.attach(FlashFs::mount(dev).map_err(|e| format!("mount: {e}"))?)
        .map_err(|e| e.to_string())?;
    let seen = bank::observe(vfs).and_then(|s| Ok((s, read_blob(vfs)?)));
    let _ = vfs.detach();
    let seen = seen.map_err(|e| format!("cut at {at} ns: {e}"))?;
    let allowed = if in_flight {
        acked..=acked + 1
    } else {
        acked..=acked
    };
    if allowed.clone().any(|j| states[j] == seen) {
        return Ok(());
    }
    let shows = |f: &dyn Fn(&Shown) -> bool| states.iter().position(f);
    Err(format!(
        "cut at {at} ns: {acked} acknowledged (commit under way: {in_flight}); a.db shows state \
         {:?}, b.db {:?}, the ledger {:?}, the blob {:?} ({:?})",
        shows(&|s| s.0.a == seen.0.a),
        shows(&|s| s.0.b == seen.0.b),
        shows(&|s| s.0.ledger == seen.0.ledger),
        shows(&|s| s.1 == seen.1),
        seen.1,
    ))
}

#[test]
fn every_cut_leaves_each_transfer_whole_or_absent_on_the_iftl_device() {
    let vfs = joj_atomic::register_with::<Dev>("apptxn-iftl-cuts").unwrap();
    let p = profile();
    let base = aged(&p);
    let states = model();
    let (want, first) = (common::cuts(600), common::seed(0));
    let started = std::time::Instant::now();
    let mut counts = Counts::default();
    let mut seed = first;
    while counts.cuts < want {
        if let Err(e) = trial(
            &vfs,
            (&p, &base, IftlCanary::None),
            &states,
            seed,
            &mut counts,
        ) {
            panic!("seed {seed} (rerun with JOJ_SEED={seed} JOJ_CUTS=1): {e}");
        }
        seed += 1;
    }
    eprintln!(
        "{} power cuts ({} trials from seed {first}) in {:.1} s: {counts:?}; {} transfers per \
         run, {} committed",
        counts.cuts,
        seed - first,
        started.elapsed().as_secs_f64(),
        TXNS,
        states.len() - 1
    );
    assert!(
        counts.in_commit > 0,
        "no cut fell inside a commit: {counts:?}"
    );
    assert!(
        counts.in_recovery > 0,
        "no cut fell inside recovery: {counts:?}"
    );
    assert!(
        counts.lazy_gc_copies > 0 && counts.in_lazy_gc > 0,
        "no cut fell inside lazy GC: {counts:?}"
    );
}

/// Of `n` trials on a device with `canary`: how many the application check caught, and how
/// many of those had their cut aimed inside a GC run that met an open transfer's old pages.
fn caught(canary: IftlCanary, name: &str, n: u64) -> (usize, usize, Counts) {
    let vfs = joj_atomic::register_with::<Dev>(name).unwrap();
    let p = profile();
    let base = aged(&p);
    let states = model();
    let mut counts = Counts::default();
    let (mut caught, mut caught_aimed) = (0, 0);
    for seed in 0..n {
        let aimed_before = counts.in_lazy_gc;
        let t = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            trial(&vfs, (&p, &base, canary), &states, seed, &mut counts)
        }));
        let _ = vfs.detach();
        if !matches!(t, Ok(Ok(()))) {
            caught += 1;
            caught_aimed += usize::from(counts.in_lazy_gc > aimed_before);
        }
    }
    eprintln!(
        "{canary:?} canary caught in {caught} of {n} trials ({caught_aimed} with the cut aimed \
         inside lazy GC): {counts:?}"
    );
    (caught, caught_aimed, counts)
}

/// The canary: an i-FTL that drops the old page of an uncommitted write (no logFTL) must be
/// caught by the same check.
#[test]
fn a_device_without_its_logftl_is_caught_by_the_application_check() {
    let (caught, _, _) = caught(IftlCanary::NoLogFtl, "apptxn-iftl-canary", 150);
    assert!(
        caught > 0,
        "150 trials could not tell a device without its logFTL"
    );
}

/// The canary: a GC that erases the old pages of the open transfer (traditional, not lazy)
/// must be caught by the same check, with cuts aimed inside those GC runs.
#[test]
fn a_gc_that_is_not_lazy_is_caught_by_the_application_check() {
    let (caught, aimed, counts) = caught(IftlCanary::EagerGc, "apptxn-iftl-eager-gc", 150);
    assert!(
        aimed > 0,
        "no trial with its cut inside a GC run that dropped an open transfer's old pages was \
         caught ({caught} caught of 150): {counts:?}"
    );
}
