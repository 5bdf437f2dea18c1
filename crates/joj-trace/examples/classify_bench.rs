//! Classifier throughput: 1e6 requests against a layout of ~1e4 file extents (1,000 FIEMAP
//! snapshots of 10 extents each, files reusing each other's sectors over time), printed as
//! figures and JSON. Run with `cargo run --release -p joj-trace --example classify_bench`.
//! An optional argument sets the seed.

use std::time::Instant;

use joj_trace::classify::{DevExtent, FileSnapshot, Layout, classify};
use joj_trace::{BlockClass, FileRole, Op, TraceRecord};

/// xorshift64*: enough randomness for a benchmark, and no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn main() {
    let seed = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_u64);
    let mut rng = Rng(seed | 1);
    const DEVICE_SECTORS: u64 = 8 << 20; // 4 GiB
    const SNAPSHOTS: u64 = 1_000;
    const EXTENTS_PER_SNAPSHOT: u64 = 10;
    const RECORDS: u64 = 1_000_000;
    const RUN_NS: u64 = 60_000_000_000;
    let roles = [
        FileRole::Database,
        FileRole::Wal,
        FileRole::RollbackJournal,
        FileRole::Other,
    ];

    let files = (0..SNAPSHOTS)
        .map(|i| FileSnapshot {
            role: roles[(i % 4) as usize],
            path: format!("/mnt/f{}", i % 40),
            time_ns: i * (RUN_NS / SNAPSHOTS),
            released: false,
            extents: (0..EXTENTS_PER_SNAPSHOT)
                .map(|_| DevExtent {
                    dev: "7:0".into(),
                    sector: rng.below(DEVICE_SECTORS),
                    sectors: 8 * (1 + rng.below(64)),
                })
                .collect(),
        })
        .collect();
    let layout = Layout {
        journal_devs: vec!["7:1".into()],
        journal_extents: vec![DevExtent {
            dev: "7:0".into(),
            sector: 4 << 20,
            sectors: 256 << 10,
        }],
        files,
    };

    let mut records: Vec<TraceRecord> = (0..RECORDS)
        .map(|i| {
            let op = match rng.below(10) {
                0 => Op::Read,
                1 => Op::Flush,
                _ => Op::Write,
            };
            TraceRecord {
                time_ns: i * (RUN_NS / RECORDS),
                dev: if rng.below(20) == 0 { "7:1" } else { "7:0" }.into(),
                op,
                preflush: false,
                fua: false,
                sync: true,
                meta: false,
                sector: if op == Op::Flush {
                    0
                } else {
                    rng.below(DEVICE_SECTORS)
                },
                sectors: if op == Op::Flush {
                    0
                } else {
                    8 * (1 + rng.below(32))
                },
                comm: "bench".into(),
                class: BlockClass::Unknown,
                file: None,
                complete_ns: None,
            }
        })
        .collect();

    let start = Instant::now();
    let totals = classify(&layout, &mut records);
    let elapsed = start.elapsed();
    let extents = SNAPSHOTS * EXTENTS_PER_SNAPSHOT;
    println!(
        "classified {RECORDS} records against {extents} extents in {:.3} s ({:.0} ns/record), seed {seed}",
        elapsed.as_secs_f64(),
        elapsed.as_nanos() as f64 / RECORDS as f64
    );
    println!(
        "{}",
        serde_json::json!({
            "records": RECORDS,
            "extents": extents,
            "seconds": elapsed.as_secs_f64(),
            "seed": seed,
            "totals": totals,
        })
    );
}
