//! The `config` section of a result: what ran, on what, to rerun it and to know which SQLite
//! and kernel produced it.

use crate::result::RunConfig;
use crate::stack::{Stack, Workload};

/// The kernel release, e.g. `6.18.44`.
pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".to_string())
}

/// What every run's config says of the software and the filesystem; the workload's fields are
/// left unset (a run, or a traced command, fills in its own).
pub(super) fn unspecified(fs: String, mount_options: Option<String>) -> RunConfig {
    RunConfig {
        joj_version: env!("CARGO_PKG_VERSION").to_string(),
        sqlite_version: rusqlite::version().to_string(),
        kernel: kernel_release(),
        fs,
        mount_options,
        workload: String::new(),
        op: String::new(),
        journal_mode: None,
        synchronous: None,
        sync_call: None,
        page_size: None,
        start: None,
        threads: None,
        statements_per_txn: None,
        tables: None,
        attached_dbs: None,
        record_bytes: 0,
        interval_ms: None,
        keys: None,
        file_sync: None,
        file_size_bytes: None,
        seed: 0,
        trace: false,
        cpus_awake: false,
        paper: None,
    }
}

pub(super) fn run_config(
    stack: &Stack,
    workload: &Workload,
    mount_options: Option<String>,
) -> RunConfig {
    let base = RunConfig {
        trace: stack.capture.is_some(),
        cpus_awake: stack.cpus_awake,
        ..unspecified(stack.fs_name(), mount_options)
    };
    match workload {
        Workload::Db(w) => RunConfig {
            workload: "db".into(),
            op: w.name(),
            paper: w.paper,
            journal_mode: Some(w.journal.to_string()),
            // The level SQLite runs with (WALDIO's option sets it: see the stack).
            synchronous: Some(
                stack
                    .sqlite
                    .as_ref()
                    .map_or(w.synchronous, |s| s.synchronous)
                    .to_string(),
            ),
            sync_call: Some(w.sync_call.name().to_string()),
            page_size: Some(w.page_size),
            start: Some(format!("{:?}", w.start).to_lowercase()),
            threads: Some(w.threads),
            statements_per_txn: Some(w.statements_per_txn),
            tables: Some(w.tables),
            attached_dbs: Some(w.attached_dbs),
            record_bytes: w.record_bytes as u64,
            interval_ms: Some(w.interval_ms),
            keys: Some(format!("{:?}", w.keys).to_lowercase()),
            seed: w.seed,
            ..base
        },
        Workload::File(w) => RunConfig {
            workload: "file".into(),
            op: w.access.to_string(),
            threads: Some(w.threads),
            record_bytes: w.record_bytes,
            file_sync: Some(w.sync.to_string()),
            file_size_bytes: Some(w.file_size_bytes),
            seed: w.seed,
            ..base
        },
    }
}
