//! Write amplification of uniform random page writes under greedy (and cost-benefit) GC across
//! over-provisioning levels, next to the published analytic model.
//!
//! Model: for uniform random writes and greedy victim choice, Xiang & Kurkoski, "An improved
//! analytical expression for write amplification in NAND flash", ICNC 2012 (arXiv:1110.4245):
//! with `α = physical/logical = 1 + ρ`, the valid share `u` of a victim solves
//! `u = exp(-α (1 - u))`, i.e. `A = 1/(1-u) = α / (α + W(-α e^{-α}))` (Lambert W). The same
//! expression is Desnoyers' model for LRU cleaning ("Analytic modeling of SSD write
//! performance", SYSTOR 2012), to which greedy converges for large blocks. Also printed: the
//! older closed form `A = (1+ρ)/(2ρ)` of Agarwal & Marrow (GLOBECOM 2010).
//!
//! `cargo run -p joj-device --release --example waf_vs_op -- [passes]` (default 4 measured
//! device-capacities of writes after 2 of preconditioning).

use joj_device::rng::SimRng;
use joj_device::workload::precondition;
use joj_device::{
    BlockDevice, CacheConfig, DataMode, Emmc, FtlConfig, GcPolicy, Geometry, Profile, Timing,
    WriteFlags,
};

/// Solve `u = exp(-α(1-u))` for the root in (0, 1) by bisection.
fn model_waf(alpha: f64) -> f64 {
    let f = |u: f64| u - (-alpha * (1.0 - u)).exp();
    // f(0) < 0, and just below 1, f(1-ε) ≈ (α-1)ε > 0: the non-trivial root is in between.
    let (mut lo, mut hi) = (0.0f64, 1.0f64 - 1e-6);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) < 0.0 { lo = mid } else { hi = mid }
    }
    1.0 / (1.0 - 0.5 * (lo + hi))
}

fn profile(op_percent: f64, policy: GcPolicy) -> Profile {
    Profile {
        name: format!("waf-{op_percent}"),
        description: "one unit, 4 KiB pages, no cache: host writes are page programs".into(),
        sources: vec!["waf_vs_op example".into()],
        geometry: Geometry {
            page_bytes: 4096,
            pages_per_block: 128,
            blocks_per_plane: 2048,
            planes_per_die: 1,
            dies_per_channel: 1,
            channels: 1,
            sector_bytes: 512,
        },
        timing: Timing::default(),
        cache: CacheConfig {
            capacity_bytes: 0,
            destage_watermark_percent: 0,
            idle_destage_after_ns: 0,
            partial_page_write_through: false,
        },
        ftl: FtlConfig {
            over_provisioning_percent: op_percent,
            gc_policy: policy,
            gc_free_blocks: 2,
            checkpoint_interval_programs: 1 << 40,
            ..FtlConfig::default()
        },
        data_mode: DataMode::OobOnly,
        iftl: None,
        host: None,
        calibration: None,
        source: Default::default(),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let passes: f64 = std::env::args().nth(1).map_or(Ok(4.0), |s| s.parse())?;
    println!(
        "uniform random 4 KiB page writes, 2048 blocks x 128 pages, one frontier, {passes} measured passes"
    );
    println!(
        "{:>6} {:>12} {:>12} {:>14} {:>16} {:>12}",
        "OP %", "greedy", "cost-benefit", "model (X&K)", "model (A&M)", "greedy/X&K"
    );
    for op in [7.0, 14.0, 28.0] {
        let mut measured = Vec::new();
        for policy in [GcPolicy::Greedy, GcPolicy::CostBenefit] {
            let p = profile(op, policy);
            let mut dev = Emmc::new(&p)?;
            precondition(&mut dev, 1.0, 2.0, 3)?;
            let pages = dev.geometry().capacity_bytes / 4096;
            let mut rng = SimRng::new(11);
            let buf = vec![0u8; 4096];
            for _ in 0..(passes * pages as f64) as u64 {
                dev.write(rng.below(pages) * 4096, &buf, WriteFlags::NONE)?;
            }
            let c = dev.counters();
            measured
                .push((c.host_page_programs + c.gc_copies) as f64 / c.host_page_programs as f64);
        }
        let rho = op / 100.0;
        let xk = model_waf(1.0 + rho);
        let am = (1.0 + rho) / (2.0 * rho);
        println!(
            "{:>6.0} {:>12.3} {:>12.3} {:>14.3} {:>16.3} {:>12.3}",
            op,
            measured[0],
            measured[1],
            xk,
            am,
            measured[0] / xk
        );
    }
    Ok(())
}
