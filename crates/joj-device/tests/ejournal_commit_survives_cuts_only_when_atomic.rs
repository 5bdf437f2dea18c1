//! The optimized journal's commit (`ejournal`): a journal transaction of a synthetic ext4 trace,
//! transformed into its packed command of reliable writes to the journal region, issued on a
//! device whose region holds an older transaction. A power cut at every instant inside the
//! command must leave the region's pages all old or all new when reliable write is atomic per
//! command; the canary runs the same cuts on per-page reliable write and must catch a partly
//! written transaction (a mix of old and new journal blocks), so we know the check can fail.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::{pattern, tiny_profile};
use joj_device::ejournal::{Region, Step, transform};
use joj_device::{
    BlockDevice, Emmc, NandMedium, PackedWrite, Profile, ReliableWriteAtomicity, WriteFlags,
};
use joj_trace::{BlockClass, Op, TraceRecord};

fn profile(atomicity: ReliableWriteAtomicity) -> Profile {
    let mut p = tiny_profile();
    p.ftl.reliable_write_atomicity = atomicity;
    p
}

/// An ordered-mode transaction as a loop device traces it: data, descriptor + metadata
/// blocks, flush, commit block, flush.
fn trace() -> Vec<TraceRecord> {
    let w = |sector, sectors, class| {
        let mut r = TraceRecord::new(0, "7:0", Op::Write, sector, sectors);
        r.class = class;
        r
    };
    let f = || TraceRecord::new(0, "7:0", Op::Flush, 0, 0);
    vec![
        w(8, 4, BlockClass::Data),
        w(64, 20, BlockClass::FsJournal),
        f(),
        w(84, 4, BlockClass::FsJournal),
        f(),
    ]
}

/// The region's extents of the one packed command the transformation makes.
fn packed_extents(page: u64) -> Vec<(u64, u64)> {
    let region = Region {
        start_bytes: 40 * page,
        bytes: 20 * page,
    };
    let (steps, stats) = transform(&trace(), page, region).unwrap();
    assert_eq!(stats.packed_commands, 1);
    let packed: Vec<Vec<(u64, u64)>> = steps
        .into_iter()
        .filter_map(|s| match s {
            Step::Packed { extents, .. } => Some(extents),
            _ => None,
        })
        .collect();
    assert_eq!(packed.len(), 1);
    packed.into_iter().next().unwrap()
}

/// Issue the command over an older transaction; returns the device, the command's start and
/// completion, and its pages with their old and new contents.
#[allow(clippy::type_complexity)]
fn run(profile: &Profile) -> (Emmc<NandMedium>, u64, u64, Vec<(u64, Vec<u8>, Vec<u8>)>) {
    let page = u64::from(profile.geometry.page_bytes);
    let extents = packed_extents(page);
    let mut dev = Emmc::new(profile).unwrap();
    let mut pages = Vec::new();
    let mut new_data = Vec::new();
    for (k, &(offset, bytes)) in extents.iter().enumerate() {
        let old = pattern(100 + k as u64, bytes as usize);
        dev.write(offset, &old, WriteFlags::RELIABLE).unwrap();
        let new = pattern(200 + k as u64, bytes as usize);
        for p in 0..bytes / page {
            let r = (p * page) as usize..((p + 1) * page) as usize;
            pages.push((offset / page + p, old[r.clone()].to_vec(), new[r].to_vec()));
        }
        new_data.push((offset, new));
    }
    dev.flush().unwrap();
    let writes: Vec<PackedWrite<'_>> = new_data
        .iter()
        .map(|(o, d)| PackedWrite {
            offset_bytes: *o,
            data: d,
        })
        .collect();
    dev.write_packed(&writes, WriteFlags::RELIABLE).unwrap();
    let (start, done) = (dev.command_start_ns(), dev.now_ns());
    (dev, start, done, pages)
}

/// Cut at every NAND event inside the command; returns (cuts, cuts that left a mix, cuts that
/// left it all old).
fn cuts(atomicity: ReliableWriteAtomicity) -> (u64, u64, u64) {
    let profile = profile(atomicity);
    let page = profile.geometry.page_bytes as usize;
    let (dev, start, done, pages) = run(&profile);
    assert!(pages.len() >= 3, "the transaction spans several pages");
    let mut at: Vec<u64> = vec![start, done];
    for t in dev.ftl().medium().event_times_ns(start) {
        if t <= done {
            at.extend([t, t + 1]);
        }
    }
    at.sort_unstable();
    at.dedup();
    let (mut n, mut mixed, mut old) = (0, 0, 0);
    for (k, &t) in at.iter().enumerate() {
        let (dev, _, _, _) = run(&profile);
        let (mut dev, _) = Emmc::recover(dev.power_loss_at(t, k as u64), &profile).unwrap();
        let mut buf = vec![0u8; page];
        let mut seen = Vec::new();
        for (lpn, old, new) in &pages {
            dev.read(lpn * page as u64, &mut buf).unwrap();
            seen.push(if &buf == new {
                'N'
            } else if &buf == old {
                'O'
            } else {
                panic!("journal page {lpn} reads neither old nor new after a cut at {t}")
            });
        }
        if t >= done {
            assert!(
                seen.iter().all(|&c| c == 'N'),
                "completed commit lost at {t}"
            );
        }
        n += 1;
        mixed += u64::from(seen.contains(&'O') && seen.contains(&'N'));
        old += u64::from(seen.iter().all(|&c| c == 'O'));
    }
    (n, mixed, old)
}

#[test]
fn a_cut_inside_the_commit_leaves_the_whole_transaction_or_none_with_command_atomicity() {
    let (n, mixed, old) = cuts(ReliableWriteAtomicity::Command);
    assert!(n >= 6, "only {n} cut points");
    assert!(old > 0, "no cut landed before the commit point ({n} cuts)");
    assert_eq!(
        mixed, 0,
        "{mixed} of {n} cuts left a partly written transaction"
    );
}

#[test]
fn canary_per_page_reliable_write_leaves_a_partly_written_transaction() {
    let (n, mixed, _) = cuts(ReliableWriteAtomicity::Page);
    assert!(
        mixed > 0,
        "none of {n} cuts inside the commit left a mix of old and new journal blocks on a \
         device with per-page reliable write: the check cannot catch a torn transaction"
    );
}
