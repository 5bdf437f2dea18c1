//! What `joj restart` measures.

use joj_device::Profile;
use joj_linux::FsKind;
use joj_workload::JournalMode;
use joj_workload::paper::PaperWorkload;

/// What to measure.
#[derive(Debug, Clone)]
pub struct RestartOptions {
    /// The workload the cut interrupts; the synthetic one (the paper's Table 5 setup).
    pub workload: PaperWorkload,
    pub modes: Vec<JournalMode>,
    pub profile: Profile,
    /// The run the cut interrupts: the cut comes in a transaction drawn from `1..=transactions`.
    pub transactions: u64,
    /// Power cuts per mode (the paper averaged five).
    pub runs: u32,
    pub page_size: u32,
    pub seed: u64,
    /// Filesystem of the non-xftl modes.
    pub fs: FsKind,
    pub image_size_bytes: u64,
    pub trace_buffer_kb: u32,
}
