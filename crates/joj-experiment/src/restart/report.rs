//! The restart document: every power cut and restart of every mode.

use serde::{Deserialize, Serialize};

/// One power cut and restart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestartRun {
    /// The transaction the cut interrupted (1-based).
    pub crash_in_txn: u64,
    /// Commits acknowledged before the cut.
    pub acknowledged: u64,
    /// Transactions the restarted database holds (`acknowledged`, or one more).
    pub recovered: u64,
    /// Size of SQLite's log in the crashed image: the hot rollback journal or the WAL (ext4),
    /// 0 for xftl.
    pub log_bytes: u64,
    /// WAL only: frames the recovered WAL held (the checkpoint's `log` count; the file itself
    /// keeps its largest size across checkpoints).
    pub wal_frames: Option<u64>,
    /// X-FTL commit-table entries the device recovery applied (xftl), or i-FTL dataFTL
    /// entries restored from the logFTL (iftl).
    pub xl2p_entries_applied: u64,
    /// The restart as the paper counts it: `first_access_ms` + `checkpoint_ms` +
    /// `xl2p_load_ms` (`logftl_recovery_ms` for iftl).
    pub restart_ms: f64,
    /// Opening the database and its first statement (a hot journal's rollback, the WAL index's
    /// rebuild), modeled.
    pub first_access_ms: f64,
    /// WAL only: the checkpoint that copies the log into the database, modeled.
    pub checkpoint_ms: Option<f64>,
    /// xftl only: loading the commit table during device recovery, modeled.
    pub xl2p_load_ms: Option<f64>,
    /// iftl only: the paper's Algorithm 1 over the logFTL in NVM during device recovery,
    /// modeled: i-FTL's counterpart of `xl2p_load_ms`.
    #[serde(default)]
    pub logftl_recovery_ms: Option<f64>,
    /// Device requests in the counted windows.
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    /// Reported, not counted (as in the paper): the filesystem's mount (ext4's journal
    /// replay), or for xftl the FTL's own recovery and the file layer's mount.
    pub not_counted_ms: NotCounted,
}

/// The parts of a restart every mode pays alike, which the paper leaves out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NotCounted {
    /// ext4: the mount of the crashed image, with its journal replay, modeled.
    pub fs_mount_ms: Option<f64>,
    /// xftl: the device's whole recovery (mapping checkpoint, scan, and the commit table's
    /// load, which `xl2p_load_ms` counts); iftl: Algorithm 1 (which `logftl_recovery_ms`
    /// counts) and the read of `dataFTL` that rebuilds the block table.
    pub device_recovery_ms: Option<f64>,
    /// xftl and iftl: the file layer's mount (superblock and inode pages).
    pub file_layer_mount_ms: Option<f64>,
}

/// Every run of one mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestartRow {
    pub mode: String,
    pub mean_restart_ms: f64,
    pub runs: Vec<RestartRun>,
}

/// The document `joj restart --json` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestartReport {
    /// The profile's name (`profile`) and where it came from (`profile_source`).
    #[serde(flatten)]
    pub profile: joj_device::ProfileRef,
    pub workload: String,
    pub pages_per_txn: Option<u32>,
    pub transactions: u64,
    pub page_size: u32,
    pub seed: u64,
    pub fs: String,
    pub rows: Vec<RestartRow>,
}
