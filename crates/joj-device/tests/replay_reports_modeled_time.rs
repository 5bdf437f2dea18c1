//! Replaying a trace: every request reaches the device, flushes and FUA writes cost what they
//! cost, and the report carries the `device` counters.

mod common;

use common::tiny_profile;
use joj_device::{AgingSpec, DataMode, ReplayOptions, Replayer, replay, replay_with};
use joj_trace::{BlockClass, Op, TraceRecord};

fn rec(time_ns: u64, op: Op, sector: u64, sectors: u64, fua: bool, preflush: bool) -> TraceRecord {
    TraceRecord {
        time_ns,
        dev: "7:0".into(),
        op,
        preflush,
        fua,
        sync: true,
        meta: false,
        sector,
        sectors,
        comm: "sqlite".into(),
        class: BlockClass::Unknown,
        file: None,
        complete_ns: None,
    }
}

/// One "insert" the way ext4 ordered + WAL does it: WAL write, journal write, flush, commit
/// block with preflush + FUA.
fn insert_trace(n: u64) -> Vec<TraceRecord> {
    let mut v = Vec::new();
    for i in 0..n {
        let t = i * 10_000_000;
        v.push(rec(t, Op::Write, (i % 10) * 16, 16, false, false));
        v.push(rec(
            t + 10,
            Op::Write,
            200 + (i % 10) * 32,
            32,
            false,
            false,
        ));
        v.push(rec(t + 20, Op::Flush, 0, 0, false, false));
        v.push(rec(t + 30, Op::Write, 600 + (i % 10) * 8, 8, true, true));
    }
    v.push(rec(n * 10_000_000, Op::Read, 0, 16, false, false));
    v
}

#[test]
fn replay_counts_every_request_and_models_time() {
    let p = tiny_profile();
    let r = replay(&insert_trace(100), &p).unwrap();
    assert_eq!(r.records, 401);
    assert_eq!((r.writes, r.reads), (300, 1));
    assert_eq!(r.flushes, 200, "pure flushes plus preflushes");
    assert_eq!(r.device.fua, 100);
    assert_eq!(r.device.host_write_bytes, 100 * (16 + 32 + 8) * 512);
    assert!(r.modeled_s > 0.0 && r.app_wait_s > 0.0 && r.app_wait_s <= r.modeled_s + 1e-12);
    assert!(r.device.waf >= 1.0);
    let json = serde_json::to_value(&r.device).unwrap();
    for key in [
        "host_write_bytes",
        "nand_program_bytes",
        "erases",
        "gc_copies",
        "waf",
        "flushes",
        "fua",
        "modeled_s",
        "modeled_ops_per_sec",
    ] {
        assert!(json.get(key).is_some(), "device counters lack {key}");
    }
}

#[test]
fn honouring_timestamps_adds_the_idle_gaps() {
    let p = tiny_profile();
    let back_to_back = replay(&insert_trace(20), &p).unwrap();
    let timed = replay_with(
        &insert_trace(20),
        &p,
        &ReplayOptions {
            honor_timestamps: true,
            ..ReplayOptions::default()
        },
    )
    .unwrap();
    assert!(timed.modeled_s >= 0.190, "{}", timed.modeled_s);
    assert!(back_to_back.modeled_s < timed.modeled_s);
}

#[test]
fn prefilled_reads_cost_flash_reads_and_nothing_else() {
    let p = tiny_profile();
    let reads: Vec<TraceRecord> = (0..20)
        .map(|i| rec(i * 1000, Op::Read, i * 32, 16, false, false))
        .collect();
    let bare = replay(&reads, &p).unwrap();
    assert_eq!(
        bare.device.nand_reads, 0,
        "unmapped pages are answered without flash"
    );
    let opts = ReplayOptions {
        prefill_reads: true,
        ..ReplayOptions::default()
    };
    let filled = replay_with(&reads, &p, &opts).unwrap();
    assert_eq!(filled.reads, 20);
    assert!(filled.device.nand_reads >= 20, "{:?}", filled.device);
    assert!(filled.modeled_s > bare.modeled_s);
    // The prefill itself is outside the counters: the replay wrote nothing.
    assert_eq!(filled.device.host_write_bytes, 0);
    assert_eq!(filled.device.nand_programs, 0);
    assert_eq!(filled.device.flushes, 0);
}

#[test]
fn a_joj_trace_without_requests_replays_to_zero() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.trace.jsonl");
    let header = joj_trace::format::TraceHeader {
        clock: joj_trace::format::Clock::Mono,
        devices: vec![],
        source: joj_trace::format::TraceSource::Tracefs,
        meta: Default::default(),
    };
    joj_trace::format::write_trace_file(&path, &header, &[]).unwrap();
    let loaded = joj_device::load_trace(&path).unwrap();
    assert!(loaded.records.is_empty());
    let r = replay(&loaded.records, &tiny_profile()).unwrap();
    assert_eq!((r.records, r.modeled_s), (0, 0.0));
}

/// A replay fed one request at a time (what `joj bench --pace` runs alongside the kernel)
/// reaches the same device state, time and counters as the whole-trace replay, aged or not,
/// and its clock only moves forward.
#[test]
fn an_incremental_replay_matches_the_whole_trace_replay() {
    // Room for an aged cold region above the trace's first MiB: 8 MiB raw.
    let mut p = tiny_profile();
    p.geometry.blocks_per_plane = 256;
    let trace = insert_trace(300);
    let top = trace
        .iter()
        .map(|r| (r.sector + r.sectors) * 512)
        .max()
        .unwrap();
    for aging in [
        None,
        Some(AgingSpec {
            validity_percent: 50,
            seed: 7,
        }),
    ] {
        let opts = ReplayOptions {
            aging,
            ..ReplayOptions::default()
        };
        let whole = replay_with(&trace, &p, &opts).unwrap();
        let mut inc = Replayer::new(&p, DataMode::OobOnly, aging, top).unwrap();
        let mut last = 0;
        for (i, r) in trace.iter().enumerate() {
            inc.apply(i, r).unwrap();
            assert!(inc.elapsed_ns() >= last);
            last = inc.elapsed_ns();
        }
        let mut inc = inc.finish();
        inc.dev = whole.dev.clone();
        assert_eq!(inc, whole, "aging {aging:?}");
        assert!(whole.modeled_s > 0.0);
        assert_eq!(whole.aging.is_some(), aging.is_some());
    }
}
