//! The measured window: what a runner does around exactly the transactions it measures.

use crate::error::WorkloadError;

/// Called by a workload around its measured window, from the main thread, while every worker
/// waits: `begin` after all connections are set up, `end` after the last commit.
pub trait Window: Sync {
    fn begin(&self) -> Result<(), WorkloadError>;
    fn end(&self) -> Result<(), WorkloadError>;
    /// Called by each thread after each transaction; a paced window waits here for the
    /// device model.
    fn after_transaction(&self) -> Result<(), WorkloadError> {
        Ok(())
    }
}

/// A window that measures nothing: for running a workload without tracing or counters.
pub struct Unmeasured;

impl Window for Unmeasured {
    fn begin(&self) -> Result<(), WorkloadError> {
        Ok(())
    }
    fn end(&self) -> Result<(), WorkloadError> {
        Ok(())
    }
}

/// Lock `m`, also after another thread panicked holding it (the data is plain counters and
/// buffers, valid at every instant).
pub use joj_vfs::unpoisoned::lock;
