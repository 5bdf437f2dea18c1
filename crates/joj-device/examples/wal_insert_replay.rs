//! A synthetic stand-in for the ext4 WAL-insert trace: per insert, the request sequence
//! measured on this project's machine kind for a 100-byte insert in WAL mode, `synchronous=FULL`,
//! ext4 ordered (docs/sources.md#wal-insert-on-ext4, not published; WALDIO Table 1's WAL row):
//! an 8 KiB WAL write, a 16 KiB jbd2 journal write, a flush, a 4 KiB journal commit block, a
//! flush (28 KiB per insert). Replayed through a profile, it prints modeled inserts/s next to
//! WALDIO Table 2 (Galaxy S5, WAL: 587 inserts/s).
//!
//! `cargo run -p joj-device --release --example wal_insert_replay -- [profile] [inserts]`

use joj_device::{Profile, replay};
use joj_trace::{Op, TraceRecord};

fn rec(op: Op, sector: u64, sectors: u64) -> TraceRecord {
    TraceRecord {
        comm: "synthetic".into(),
        ..TraceRecord::new(0, "7:0", op, sector, sectors)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args.first().map_or("galaxy-s5", |s| s.as_str());
    let inserts: u64 = args.get(1).map_or(Ok(1000), |s| s.parse())?;
    let profile = Profile::load(name)?;
    let wal_start = 1 << 20; // sector of the WAL file's first block
    let journal_start = 8 << 20; // sector of the jbd2 journal
    let journal_sectors = 128 << 11; // a 128 MiB journal, used circularly
    let mut trace = Vec::new();
    for i in 0..inserts {
        trace.push(rec(Op::Write, wal_start + (i % 1000) * 16, 16));
        let j = journal_start + (i * 40) % journal_sectors;
        trace.push(rec(Op::Write, j, 32));
        trace.push(rec(Op::Flush, 0, 0));
        trace.push(rec(Op::Write, j + 32, 8));
        trace.push(rec(Op::Flush, 0, 0));
    }
    let r = replay(&trace, &profile)?;
    let per_s = inserts as f64 / r.modeled_s;
    println!(
        "{name}: {inserts} inserts, {:.1} KiB written per insert, modeled {:.3} s -> {per_s:.0} inserts/s \
         (WALDIO Table 2, Galaxy S5, WAL: 587; ratio {:.2}); WAF {:.2}, mean flush {:.0} us, mean write {:.0} us",
        r.device.host_write_bytes as f64 / inserts as f64 / 1024.0,
        r.modeled_s,
        per_s / 587.0,
        r.device.waf,
        r.device.latency.flush.mean_us,
        r.device.latency.write.mean_us
    );
    Ok(())
}
