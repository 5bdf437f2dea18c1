//! Speed of the model: simulated 4 KiB random host writes per wall-clock second on a
//! preconditioned device with GC running, and the model's memory per logical page.
//!
//! `cargo run -p joj-device --release --example device_bench -- [profile] [raw_gib] [ops]`
//! (defaults: emmc5, 4 GiB raw, 4,000,000 ops). Prints a human line and a JSON line.

use std::time::Instant;

use joj_device::{
    BlockDevice, DataMode, Emmc, Profile, WriteFlags, rng::SimRng, workload::precondition,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args.first().map_or("emmc5", |s| s.as_str());
    let raw_gib: u64 = args.get(1).map_or(Ok(4), |s| s.parse())?;
    let ops: u64 = args.get(2).map_or(Ok(4_000_000), |s| s.parse())?;
    let base = Profile::load(name)?;
    let g = &base.geometry;
    let block_bytes = u64::from(g.pages_per_block) * u64::from(g.page_bytes) * u64::from(g.units());
    let bpp = ((raw_gib << 30) / block_bytes) as u32;
    let profile = base
        .clone()
        .with_blocks_per_plane(bpp)
        .with_data_mode(DataMode::OobOnly);
    let mut dev = Emmc::new(&profile)?;
    let capacity = dev.geometry().capacity_bytes;

    let t0 = Instant::now();
    precondition(&mut dev, 1.0, 2.0, 1)?;
    let precondition_s = t0.elapsed().as_secs_f64();

    let mut rng = SimRng::new(42);
    let slots = capacity / 4096;
    let buf = vec![0u8; 4096];
    let t1 = Instant::now();
    for _ in 0..ops {
        dev.write(rng.below(slots) * 4096, &buf, WriteFlags::NONE)?;
    }
    let wall_s = t1.elapsed().as_secs_f64();
    let c = dev.counters();
    let per_s = ops as f64 / wall_s;
    println!(
        "profile {name}, {raw_gib} GiB raw ({:.2} GiB logical), preconditioned full + 2 random passes in {precondition_s:.1} s wall",
        capacity as f64 / (1u64 << 30) as f64
    );
    println!(
        "{ops} random 4 KiB writes in {wall_s:.2} s wall: {per_s:.0} simulated writes/s on one core; \
         GC copies {} ({:.2} per write), erases {}, FTL WAF {:.2}, WAF {:.2}; modeled {:.0} IOPS",
        c.gc_copies,
        c.gc_copies as f64 / ops as f64,
        c.erases,
        c.ftl_waf,
        c.waf,
        c.modeled_ops_per_sec
    );
    println!(
        "model memory: {:.1} bytes per logical page (page data not stored)",
        dev.bytes_per_logical_page()
    );
    let bytes_per_page = dev.bytes_per_logical_page();
    let t2 = Instant::now();
    let cut = dev.power_loss(0, 9);
    let (_dev, rec) = Emmc::recover(cut, &profile)?;
    println!(
        "power cut in steady state: recovery modeled {:.1} ms (checkpoint seq {}, {} OOB reads, \
         {} map pages read, {} written, {} pages mapped from the scan, {} torn), {:.2} s wall",
        rec.modeled_ns as f64 / 1e6,
        rec.checkpoint_seq,
        rec.oob_reads,
        rec.map_page_reads,
        rec.map_page_writes,
        rec.mapped_from_scan,
        rec.torn_pages,
        t2.elapsed().as_secs_f64()
    );
    println!(
        "{}",
        serde_json::json!({
            "bench": "device_randwrite_4k",
            "profile": name,
            "raw_gib": raw_gib,
            "ops": ops,
            "wall_s": wall_s,
            "simulated_writes_per_wall_s": per_s,
            "bytes_per_logical_page": bytes_per_page,
            "recovery_modeled_ms": rec.modeled_ns as f64 / 1e6,
            "device": c,
        })
    );
    Ok(())
}
