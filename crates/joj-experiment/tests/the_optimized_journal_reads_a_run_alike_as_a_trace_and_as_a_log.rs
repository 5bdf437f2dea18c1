//! The eMMC paper's optimized-journal rules are written once (`joj_device::ejournal::rules`)
//! and read through two adapters: the replay mode's, over a classified block trace
//! (`ejournal::transform`), and the crash states', over a recorded block log
//! (`kernel_crash_states::coalition::coalesce`). The same recorded run, given to both — as the
//! log the recording disk keeps and as the trace a block tracer would have classified — must give
//! the same groups, the same ordering flushes before them, the same flushes kept and the same
//! post-commit flushes dropped.
//!
//! The runs are drawn from a seed (`JOJ_SEED` reruns one): ext4 ordered-mode fsyncs on a
//! device without FUA (data, journal blocks, flush, commit block, flush), fdatasyncs that
//! flush inside a transaction under way, journal superblock updates, marks, and a transaction
//! left unfinished at the end.

use joj_device::ejournal::{Region, Step, transform};
use joj_device::rng::SimRng;
use joj_experiment::kernel_crash_states::coalition::{Ending, ItemKind, coalesce};
use joj_experiment::kernel_crash_states::jbd2::{
    JBD2_COMMIT, JBD2_DESCRIPTOR, JBD2_MAGIC, Journal, Run,
};
use joj_linux::record::{BLOCK_BYTES, LogOp, Mark};
use joj_trace::{BlockClass, Op, TraceRecord};

/// The journal: 256 blocks from block 1000.
const J: u64 = 1000;

fn journal() -> Journal {
    Journal {
        runs: vec![Run {
            logical: 0,
            physical: J,
            blocks: 256,
        }],
    }
}

fn jblock(kind: u32) -> Vec<u8> {
    let mut b = vec![0u8; BLOCK_BYTES as usize];
    b[0..4].copy_from_slice(&JBD2_MAGIC.to_be_bytes());
    b[4..8].copy_from_slice(&kind.to_be_bytes());
    b
}

fn write(block: u64, data: Vec<u8>) -> LogOp {
    LogOp::Write {
        offset_bytes: block * BLOCK_BYTES,
        data,
    }
}

/// A recorded run drawn from `seed`.
fn run(seed: u64) -> Vec<LogOp> {
    let mut rng = SimRng::new(seed);
    let mut ops = Vec::new();
    let mut next_journal = 1;
    let mut txn = 0;
    for _ in 0..4 + rng.below(12) {
        let data = 10 + rng.below(100);
        match rng.below(5) {
            // An fdatasync that needs no commit: its data, its own flush.
            0 => ops.extend([write(data, vec![1; 4096]), LogOp::Flush]),
            // jbd2 updates the journal superblock (an ordinary metadata write).
            1 => ops.push(write(J, vec![2; 4096])),
            // An fsync that commits a transaction.
            _ => {
                txn += 1;
                ops.push(LogOp::Mark(Mark::Begun(txn)));
                if rng.below(3) > 0 {
                    ops.push(write(data, vec![3; 4096]));
                }
                let mut desc = jblock(JBD2_DESCRIPTOR);
                desc.extend(vec![7u8; BLOCK_BYTES as usize * rng.below(3) as usize]);
                let blocks = desc.len() as u64 / BLOCK_BYTES;
                ops.push(write(J + next_journal, desc));
                next_journal += blocks;
                if rng.below(3) == 0 {
                    // Another file's fdatasync while the transaction is under way.
                    ops.extend([write(data + 200, vec![4; 4096]), LogOp::Flush]);
                }
                ops.extend([
                    LogOp::Flush,
                    write(J + next_journal, jblock(JBD2_COMMIT)),
                    LogOp::Flush,
                    LogOp::Mark(Mark::Acknowledged(txn)),
                ]);
                next_journal += 1;
            }
        }
    }
    if rng.below(2) == 0 {
        ops.push(write(J + next_journal, jblock(JBD2_DESCRIPTOR)));
    }
    ops
}

/// The run as a classified block trace, and the op of each record.
fn as_trace(ops: &[LogOp], journal: &Journal) -> (Vec<TraceRecord>, Vec<usize>) {
    let mut records = Vec::new();
    let mut op_of = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let record = match op {
            LogOp::Write { offset_bytes, data } => {
                let mut r = TraceRecord::new(
                    i as u64,
                    "7:0",
                    Op::Write,
                    offset_bytes / 512,
                    data.len() as u64 / 512,
                );
                let in_journal = journal.block_at(*offset_bytes).is_some_and(|b| b != 0);
                r.class = if in_journal {
                    BlockClass::FsJournal
                } else {
                    BlockClass::Data
                };
                r
            }
            LogOp::Flush => TraceRecord::new(i as u64, "7:0", Op::Flush, 0, 0),
            LogOp::Mark(_) => continue,
        };
        records.push(record);
        op_of.push(i);
    }
    (records, op_of)
}

/// What both adapters must agree on, in op indices.
#[derive(Debug, PartialEq, Eq)]
struct Reading {
    groups: Vec<Vec<usize>>,
    /// The commits an ordering flush is put before.
    ordered: Vec<usize>,
    flushes_kept: Vec<usize>,
    postflushes_dropped: u64,
}

fn as_the_replay_reads_it(ops: &[LogOp], journal: &Journal) -> Reading {
    let (records, op_of) = as_trace(ops, journal);
    let region = Region {
        start_bytes: 1 << 30,
        bytes: 1 << 30,
    };
    let (steps, stats) = transform(&records, BLOCK_BYTES, region).expect("transform");
    let mut r = Reading {
        groups: Vec::new(),
        ordered: Vec::new(),
        flushes_kept: Vec::new(),
        postflushes_dropped: stats.postflushes_dropped,
    };
    let mut ordering = false;
    for s in &steps {
        match s {
            Step::OrderingFlush => ordering = true,
            Step::Packed { from, .. } => {
                let group: Vec<usize> = from.iter().map(|&i| op_of[i]).collect();
                if std::mem::take(&mut ordering) {
                    r.ordered.push(*group.last().expect("a group has a commit"));
                }
                r.groups.push(group);
            }
            Step::Keep(i) if records[*i].op == Op::Flush => r.flushes_kept.push(op_of[*i]),
            _ => {}
        }
    }
    r
}

fn as_the_crash_states_read_it(ops: &[LogOp], journal: &Journal) -> Reading {
    let c = coalesce(ops, journal);
    let mut r = Reading {
        groups: Vec::new(),
        ordered: Vec::new(),
        flushes_kept: Vec::new(),
        postflushes_dropped: c.stats.post_commit_flushes_dropped,
    };
    for e in &c.epochs {
        match e.ends_with {
            Ending::Flush(op) => r.flushes_kept.push(op),
            Ending::OrderingFlush(op) => r.ordered.push(op),
            Ending::LogEnd => {}
        }
        for it in &e.items {
            if let ItemKind::Group(ops) = &it.kind {
                r.groups.push(ops.clone());
            }
        }
    }
    r
}

#[test]
fn the_same_run_gives_the_same_groups_and_flushes_through_both_adapters() {
    let seeds: Vec<u64> = match std::env::var("JOJ_SEED") {
        Ok(s) => vec![s.parse().expect("JOJ_SEED is a number")],
        Err(_) => (0..300).collect(),
    };
    let journal = journal();
    let (mut groups, mut ordered, mut kept_in_txn) = (0, 0, 0);
    for seed in seeds {
        let ops = run(seed);
        let replay = as_the_replay_reads_it(&ops, &journal);
        let crash = as_the_crash_states_read_it(&ops, &journal);
        assert_eq!(replay, crash, "seed {seed} (rerun: JOJ_SEED={seed})");
        groups += replay.groups.len();
        ordered += replay.ordered.len();
        kept_in_txn += usize::from(ops.windows(2).any(|w| {
            matches!(&w[0], LogOp::Write { data, .. } if data[0] == 4)
                && matches!(w[1], LogOp::Flush)
        }));
    }
    // The runs exercise every rule.
    assert!(groups > 0 && ordered > 0 && kept_in_txn > 0);
}
