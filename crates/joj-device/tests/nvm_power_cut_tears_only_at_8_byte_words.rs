//! The NVM's power-loss semantics (`docs/formats/iftl.md` §3), checked by cutting at every
//! nanosecond of a sequence of stores of every size: a store complete by the cut stands, one
//! not started never happened, and the one under way leaves each aligned 8-byte word it
//! touches wholly old or wholly new — an aligned 8-byte (or smaller) store is atomic, a larger
//! one tears only at word boundaries. And tears really occur: a large store cut midway leaves
//! a mix.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_device::{Nvm, NvmTiming};

const SIZE: u64 = 8192;

/// Stores at aligned offsets of 4, 8, 16, 64 and 4096 bytes, overlapping earlier ones.
fn stores() -> Vec<(u64, Vec<u8>)> {
    vec![
        (0, vec![0x11; 4096]),
        (8, vec![0x22; 8]),
        (4, vec![0x33; 4]),
        (64, vec![0x44; 64]),
        (16, vec![0x55; 16]),
        (4096, vec![0x66; 4096]),
        (120, vec![0x77; 4096]),
    ]
}

/// `(start, end)` of each store, and the memory before any of them.
fn run(n: &mut Nvm) -> Vec<(u64, u64)> {
    let mut t = 0;
    let mut spans = Vec::new();
    for (off, data) in stores() {
        let start = t.max(n.free_ns());
        t = n.store(off, &data, t).unwrap();
        spans.push((start, t));
    }
    spans
}

fn image(upto: usize, initial: &[u8]) -> Vec<u8> {
    let mut m = initial.to_vec();
    for (off, data) in stores().into_iter().take(upto) {
        m[off as usize..off as usize + data.len()].copy_from_slice(&data);
    }
    m
}

#[test]
fn a_cut_leaves_only_word_granular_tears_of_the_store_under_way() {
    let initial: Vec<u8> = (0..SIZE).map(|i| (i * 7 % 251) as u8).collect();
    let mut probe = Nvm::new(SIZE, NvmTiming::default());
    probe.store(0, &initial, 0).unwrap();
    let t0 = probe.free_ns();
    let spans = run(&mut probe);
    let end = spans.last().unwrap().1;
    let mut mixed_tears = 0;
    let mut seed = 0;
    for at in t0..=end + 1 {
        seed += 1;
        let mut n = Nvm::new(SIZE, NvmTiming::default());
        n.store(0, &initial, 0).unwrap();
        n.retire(t0);
        run(&mut n);
        n.power_loss(at, seed);
        let got = n.peek(0, SIZE).unwrap().to_vec();
        let done = spans.iter().filter(|&&(_, e)| e <= at).count();
        let before = image(done, &initial);
        let under_way = spans.get(done).filter(|&&(s, _)| s < at);
        let Some(_) = under_way else {
            assert_eq!(got, before, "cut at {at}: exactly the {done} stores done");
            continue;
        };
        let after = image(done + 1, &initial);
        let mut new_words = 0;
        let mut old_words = 0;
        for w in (0..SIZE as usize).step_by(8) {
            let g = &got[w..w + 8];
            if g == &after[w..w + 8] && g != &before[w..w + 8] {
                new_words += 1;
            } else if g == &before[w..w + 8] && g != &after[w..w + 8] {
                old_words += 1;
            } else {
                assert!(
                    g == &before[w..w + 8] && g == &after[w..w + 8],
                    "cut at {at}: word {w} is neither old nor new: {g:?}"
                );
            }
        }
        let (off, data) = &stores()[done];
        if data.len() <= 8 && off % 8 + data.len() as u64 <= 8 {
            assert!(
                new_words + old_words <= 1,
                "cut at {at}: a store inside one word is atomic"
            );
        }
        if new_words > 0 && old_words > 0 {
            mixed_tears += 1;
        }
    }
    assert!(mixed_tears > 0, "large stores cut midway tear");
}
