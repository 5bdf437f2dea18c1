//! waldio, the accounting VFS `joj`, and a pass-through VFS stacked over each, against stock
//! `unix`: seeded schedules of transactions, journal-mode and locking-mode switches, busy
//! timeouts, checkpoints, closes, ATTACH, passing I/O errors and `sqlite3_shutdown` over three
//! processes of two connections each (`contract/mod.rs`); every statement's result and the
//! final database must be the same as stock's. A failure names the seed (rerun with
//! `JOJ_SEED=<seed>`) and prints the schedule up to the first difference.
//!
//! CI runs `JOJ_CONTRACT_SCHEDULES` schedules (default 6) of 200 steps; the soak in
//! docs/formats/waldio.md runs hundreds.

mod contract;

#[test]
#[ignore = "a worker process of the test below, not a test"]
fn contract_worker() {
    contract::worker_main();
}

#[test]
fn every_vfs_gives_what_stock_sqlite_gives_on_a_seeded_schedule() {
    let exe = std::env::current_exe().unwrap();
    let schedules: u64 = std::env::var("JOJ_CONTRACT_SCHEDULES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    let steps: usize = std::env::var("JOJ_CONTRACT_STEPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    match std::env::var("JOJ_SEED").ok().and_then(|v| v.parse().ok()) {
        Some(seed) => contract::check(&exe, "contract_worker", std::iter::once(seed), steps),
        None => contract::check(&exe, "contract_worker", 1..=schedules, steps),
    }
}
