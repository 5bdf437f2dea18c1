//! What `joj crash` cuts.

use joj_device::Profile;
use joj_workload::paper::PaperWorkload;

use joj_workload::config::bounds;

use crate::error::{ExperimentError, StackError};

/// Transactions of one trial.
pub const MAX_TRANSACTIONS: u64 = 100_000;
/// Power cuts of one `joj crash`.
pub const MAX_CUTS: u64 = 1_000_000;

/// What to cut.
#[derive(Debug, Clone)]
pub struct CrashOptions {
    pub workload: PaperWorkload,
    pub profile: Profile,
    /// Transactions each trial runs from the prepared database; the cut comes among their
    /// device commands.
    pub transactions: u64,
    /// Power cuts (trials).
    pub cuts: u64,
    pub page_size: u32,
    pub seed: u64,
    /// One batch commit in this many is made to fail, so SQLite retries it with a rollback
    /// journal (0: none).
    pub fail_batch_one_in: u32,
    /// The device acknowledges commits before they are durable: the trials must catch it.
    pub canary: bool,
    /// Half the cuts come up to this long after the failed command (programs in flight torn).
    pub max_delay_ns: u64,
    /// Age the device first so GC victims hold about this share of valid pages (the paper's
    /// 30/50/70 %), so that cuts also land in garbage collection; `None`: a fresh device.
    pub aging_validity: Option<u32>,
}

impl CrashOptions {
    /// The paper's workload `w` on `profile`, 8 KiB pages, a batch failure in 6, delays up to
    /// 3 ms.
    pub fn new(workload: PaperWorkload, profile: Profile, transactions: u64, cuts: u64) -> Self {
        CrashOptions {
            workload,
            profile,
            transactions,
            cuts,
            page_size: 8192,
            seed: 42,
            fail_batch_one_in: 6,
            canary: false,
            max_delay_ns: 3_000_000,
            aging_validity: None,
        }
    }

    /// Transactions per trial when none are named: 40, or one whole pass of RL Benchmark (its
    /// tests only make sense in order).
    pub fn default_transactions(workload: &PaperWorkload) -> u64 {
        match *workload {
            PaperWorkload::RlBench { divisor } => {
                joj_workload::paper::rlbench::transactions_per_pass(divisor)
            }
            _ => 40,
        }
    }

    pub(super) fn validate(&self) -> Result<(), ExperimentError> {
        self.workload.validate()?;
        if self.transactions == 0 {
            return Err(StackError::Zero {
                what: "transactions per trial (-n)",
            }
            .into());
        }
        if self.cuts == 0 {
            return Err(StackError::Zero { what: "--cuts" }.into());
        }
        bounds::at_most(
            "transactions per trial (-n)",
            self.transactions,
            MAX_TRANSACTIONS,
            "each trial keeps the checked state after every one of them",
        )?;
        bounds::at_most(
            "power cuts (--cuts)",
            self.cuts,
            MAX_CUTS,
            "each cut is a trial on a fresh device",
        )?;
        if let Some(v) = self.aging_validity {
            if !(1..=99).contains(&v) {
                return Err(StackError::AgingPercent(v).into());
            }
        }
        Ok(())
    }
}
