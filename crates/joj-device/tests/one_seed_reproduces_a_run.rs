//! Determinism: one seed reproduces a run exactly, and storing no data (`OobOnly`) changes no
//! counter and no modeled time.

mod common;

use common::tiny_profile;
use joj_device::{DataMode, IoKind, Pattern, SyncKind, WorkloadSpec, run_workload};

fn spec(seed: u64, data_mode: DataMode) -> WorkloadSpec {
    WorkloadSpec {
        pattern: Pattern::Rand,
        kind: IoKind::Write,
        io_bytes: 1024,
        sync: SyncKind::Flush,
        sync_every: 7,
        precondition_fill: 1.0,
        precondition_random_passes: 1.0,
        ops: 3000,
        seed,
        data_mode,
        issuers: 1,
    }
}

#[test]
fn same_seed_same_counters_different_seed_different_counters() {
    let p = tiny_profile();
    let a = run_workload(&p, &spec(5, DataMode::Full)).unwrap();
    let b = run_workload(&p, &spec(5, DataMode::Full)).unwrap();
    assert_eq!(
        serde_json::to_string(&a.device).unwrap(),
        serde_json::to_string(&b.device).unwrap()
    );
    let c = run_workload(&p, &spec(6, DataMode::Full)).unwrap();
    assert_ne!(a.device.modeled_s, c.device.modeled_s);
    assert!(a.device.gc_copies > 0, "the run exercises GC");
}

#[test]
fn oob_only_mode_models_the_same_device() {
    let p = tiny_profile();
    let full = run_workload(&p, &spec(9, DataMode::Full)).unwrap();
    let oob = run_workload(&p, &spec(9, DataMode::OobOnly)).unwrap();
    assert_eq!(full.device, oob.device);
}
