//! Several i-FTL transactions open at once, their writes interleaved (paper Fig. 3), data and
//! metadata pages mixed, each committed or aborted: after every step every reader sees what a
//! `HashMap` model says — a transaction its own writes, everyone else the committed version —
//! and the device's invariants hold, while GC (lazy GC included) runs underneath.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

#[path = "common/iftl.rs"]
mod common;

use common::{Model, PAGE_BYTES, device, kind_of, page, tag_of};
use joj_device::{FtlError, Lpn, Tid, rng::SimRng};

#[test]
fn interleaved_transactions_match_the_model() {
    for seed in 0..12u64 {
        run(seed);
    }
}

fn run(seed: u64) {
    let mut f = device();
    let logical = f.logical_pages() as u32;
    let mut rng = SimRng::new(seed);
    let mut model = Model::default();
    let mut tids: Vec<Tid> = Vec::new();
    let mut now = 0u64;
    let mut next_tag = 1u64;
    let mut buf = vec![0u8; PAGE_BYTES];
    let mut outgrown = 0;
    for step in 0..4000u32 {
        let r = rng.below(100);
        if (tids.len() < 4 && r < 5) || tids.is_empty() {
            let (t, done) = f.begin(now).expect("begin");
            now = done;
            model.open.insert(t.0, Default::default());
            tids.push(t);
        } else if r < 7 {
            let t = tids.swap_remove(rng.below(tids.len() as u64) as usize);
            if rng.below(4) == 0 {
                now = f.abort(t, now).expect("abort");
                model.abort(t.0);
            } else {
                now = f.commit(t, now).expect("commit");
                model.commit(t.0);
            }
        } else {
            let t = tids[rng.below(tids.len() as u64) as usize];
            // Mostly a small hot set so transactions conflict and pages are overwritten.
            let lpn = if rng.below(4) == 0 {
                rng.below(u64::from(logical)) as u32
            } else {
                rng.below(40) as u32
            };
            let tag = next_tag;
            next_tag += 1;
            match f.write(Some(t), Lpn(lpn), kind_of(lpn), &page(tag), now) {
                Ok(done) => {
                    now = done;
                    model.open.get_mut(&t.0).unwrap().insert(lpn, tag);
                }
                Err(FtlError::TxnConflict { holder, .. }) => {
                    assert_eq!(model.holder(lpn), Some(holder), "seed {seed} step {step}");
                }
                Err(FtlError::LogBlocksFull { .. }) => {
                    // The transaction outgrew the reserved log blocks: it stays abortable.
                    outgrown += 1;
                    tids.retain(|&u| u != t);
                    now = f.abort(t, now).expect("abort after LogBlocksFull");
                    model.abort(t.0);
                }
                Err(e) => panic!("seed {seed} step {step}: {e}"),
            }
        }
        if step % 97 == 0 {
            f.check_invariants();
            for lpn in 0..logical {
                f.read(None, Lpn(lpn), &mut buf, now).unwrap();
                assert_eq!(
                    tag_of(&buf).unwrap(),
                    model.expected(lpn),
                    "seed {seed} step {step}: plain read of {lpn}"
                );
            }
            for t in &tids {
                for (&lpn, &tag) in &model.open[&t.0] {
                    f.read(Some(*t), Lpn(lpn), &mut buf, now).unwrap();
                    assert_eq!(
                        tag_of(&buf).unwrap(),
                        tag,
                        "seed {seed}: {t} reads its {lpn}"
                    );
                }
            }
        }
        f.retire(now);
    }
    let s = f.stats().clone();
    assert!(
        s.gc_runs > 0 && s.lazy_gc_copies > 0,
        "seed {seed}: GC ran lazily: {s:?}"
    );
    assert!(s.commits > 0 && s.aborts > 0);
    eprintln!("seed {seed}: {s:?}, {outgrown} transactions outgrew the log blocks");
}
