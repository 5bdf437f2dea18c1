//! The paper's workloads as plain data: which one, at what size, and the sizes joj accepts.

use super::rltest::{MAX_DIVISOR, transactions_per_pass};
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The synthetic table's size in the paper (§6.3.1).
pub const PAPER_ROWS: u64 = 60_000;
/// The largest synthetic table joj loads.
pub const MAX_ROWS: u64 = 10_000_000;
/// The most rows a synthetic transaction updates.
pub const MAX_PAGES_PER_TXN: u32 = 1000;
/// The most TPC-C warehouses joj loads.
pub const MAX_WAREHOUSES: u32 = 100;

/// One of the paper's workloads, with its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "kebab-case")]
pub enum PaperWorkload {
    /// §6.3.1: `rows` rows of ~220 bytes (the paper: 60,000); each transaction reads and
    /// updates `pages_per_txn` random rows (the paper: 1..=20; Table 1 uses 5).
    XftlSynthetic { rows: u64, pages_per_txn: u32 },
    /// §6.3.3: TPC-C with `warehouses` warehouses at reduced cardinalities ([`tpcc`]).
    Tpcc { mix: TpccMix, warehouses: u32 },
    /// §6.3.2: the RL Benchmark's tests with every row and statement count divided by
    /// `divisor` (1 = the benchmark's own sizes: ≈51,000 inserts, 5,200 selects).
    RlBench { divisor: u32 },
}

/// The four TPC-C mixes of the paper's Table 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TpccMix {
    /// Delivery 4 %, Order-Status 4 %, Payment 43 %, Stock-Level 4 %, New-Order 45 %.
    WriteIntensive,
    /// Order-Status 50 %, Stock-Level 45 %, New-Order 5 %.
    ReadIntensive,
    /// Order-Status 100 %.
    SelectionOnly,
    /// Stock-Level 100 % (a join of `order_line` and `stock`).
    JoinOnly,
}

impl PaperWorkload {
    /// The names `--workload` accepts.
    pub const NAMES: [&'static str; 6] = [
        "xftl-synthetic",
        "tpcc-write",
        "tpcc-read",
        "tpcc-select",
        "tpcc-join",
        "rl-bench",
    ];

    /// The synthetic workload at the paper's size (60,000 rows).
    pub fn synthetic(pages_per_txn: u32) -> PaperWorkload {
        PaperWorkload::XftlSynthetic {
            rows: PAPER_ROWS,
            pages_per_txn,
        }
    }

    /// The workload called `name` (one of [`Self::NAMES`]) with the given sizes.
    pub fn from_name(
        name: &str,
        pages_per_txn: u32,
        warehouses: u32,
        rl_divisor: u32,
    ) -> Result<PaperWorkload, ConfigError> {
        let tpcc = |mix| PaperWorkload::Tpcc { mix, warehouses };
        let w = match name.to_ascii_lowercase().as_str() {
            "xftl-synthetic" | "synthetic" => PaperWorkload::synthetic(pages_per_txn),
            "tpcc-write" => tpcc(TpccMix::WriteIntensive),
            "tpcc-read" => tpcc(TpccMix::ReadIntensive),
            "tpcc-select" => tpcc(TpccMix::SelectionOnly),
            "tpcc-join" => tpcc(TpccMix::JoinOnly),
            "rl-bench" | "rlbench" => PaperWorkload::RlBench {
                divisor: rl_divisor,
            },
            _ => {
                return Err(ConfigError::Unknown {
                    what: "paper workload",
                    given: name.to_string(),
                    choices: "one of xftl-synthetic, tpcc-write, tpcc-read, tpcc-select, tpcc-join, rl-bench",
                });
            }
        };
        w.validate()?;
        Ok(w)
    }

    pub fn name(&self) -> &'static str {
        match self {
            PaperWorkload::XftlSynthetic { .. } => "xftl-synthetic",
            PaperWorkload::Tpcc { mix, .. } => match mix {
                TpccMix::WriteIntensive => "tpcc-write",
                TpccMix::ReadIntensive => "tpcc-read",
                TpccMix::SelectionOnly => "tpcc-select",
                TpccMix::JoinOnly => "tpcc-join",
            },
            PaperWorkload::RlBench { .. } => "rl-bench",
        }
    }

    /// Check the sizes before anything is created; the error names the fix.
    pub fn validate(&self) -> Result<(), ConfigError> {
        match *self {
            PaperWorkload::XftlSynthetic {
                rows,
                pages_per_txn,
            } => {
                if pages_per_txn == 0 || pages_per_txn > MAX_PAGES_PER_TXN {
                    return Err(ConfigError::PagesPerTxn {
                        given: pages_per_txn,
                        max: MAX_PAGES_PER_TXN,
                    });
                }
                if rows < u64::from(pages_per_txn) || rows > MAX_ROWS {
                    return Err(ConfigError::SyntheticRows {
                        rows,
                        pages_per_txn,
                        max: MAX_ROWS,
                    });
                }
            }
            PaperWorkload::Tpcc { warehouses, .. } => {
                if warehouses == 0 || warehouses > MAX_WAREHOUSES {
                    return Err(ConfigError::Warehouses {
                        given: warehouses,
                        max: MAX_WAREHOUSES,
                    });
                }
            }
            PaperWorkload::RlBench { divisor } => {
                if divisor == 0 || divisor > MAX_DIVISOR {
                    return Err(ConfigError::RlDivisor {
                        given: divisor,
                        max: MAX_DIVISOR,
                    });
                }
            }
        }
        Ok(())
    }

    /// Transactions of a run when the caller names none: the paper's 1,000 for the synthetic
    /// workload and TPC-C, one complete pass of the benchmark for RL Benchmark.
    pub fn default_transactions(&self) -> u64 {
        match *self {
            PaperWorkload::RlBench { divisor } => transactions_per_pass(divisor),
            _ => 1000,
        }
    }
}

impl fmt::Display for PaperWorkload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PaperWorkload::XftlSynthetic {
                rows,
                pages_per_txn,
            } => write!(f, "xftl-synthetic ({rows} rows, {pages_per_txn} per txn)"),
            PaperWorkload::Tpcc { warehouses, .. } => {
                let s = if *warehouses == 1 { "" } else { "s" };
                write!(f, "{} ({warehouses} warehouse{s})", self.name())
            }
            PaperWorkload::RlBench { divisor } => write!(f, "rl-bench (sizes / {divisor})"),
        }
    }
}
