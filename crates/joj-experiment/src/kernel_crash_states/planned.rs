//! The crash states of one recorded run, as the plain log reads it ([`states`]: epochs at the
//! device's flushes) or as the optimized journal issues it ([`coalition`]: jbd2 transactions as
//! groups, commit flushes dropped), behind one interface for the checker's loop.

use joj_linux::record::{BlockLog, SparseImage};
use serde::{Deserialize, Serialize};

use super::check::Checker;
use super::coalition::{self, Coalesced, CoalitionStats, CutState};
use super::jbd2::{Jbd2Error, Journal};
use super::states::{self, CrashState, KindCounts, Plan};
use crate::error::ExperimentError;

/// A state as its reading describes it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FoundState {
    Epoch(CrashState),
    Cut(CutState),
}

/// The states to check.
pub enum Planned {
    Epochs {
        epochs: Vec<states::Epoch>,
        plan: Plan,
    },
    Coalesced {
        c: Coalesced,
        states: Vec<CutState>,
    },
}

impl Planned {
    /// Plans `budget` states of `log` from `seed`; with `emmc_journal` (the image's journal, as
    /// located) read as the optimized journal issues it (with the per-page canary's partial
    /// commits if `per_page`). A log of more than [`states::MAX_EPOCHS`] epochs is refused
    /// before any is built.
    pub fn new(
        log: &BlockLog,
        emmc_journal: Option<&Result<Journal, Jbd2Error>>,
        budget: usize,
        seed: u64,
        per_page: bool,
    ) -> Result<Planned, ExperimentError> {
        states::count_epochs(&log.ops)?;
        let Some(journal) = emmc_journal else {
            let epochs = states::epochs(&log.ops);
            let plan = states::plan(&epochs, budget, seed);
            return Ok(Planned::Epochs { epochs, plan });
        };
        let journal = journal.as_ref().map_err(|e| {
            ExperimentError::CrashStates(format!("the recorded image's journal: {e}"))
        })?;
        let c = coalition::coalesce(&log.ops, journal);
        let states = coalition::plan(&log.ops, &c.epochs, budget, seed, per_page);
        Ok(Planned::Coalesced { c, states })
    }

    pub fn len(&self) -> usize {
        match self {
            Planned::Epochs { plan, .. } => plan.states.len(),
            Planned::Coalesced { states, .. } => states.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn epochs(&self) -> usize {
        match self {
            Planned::Epochs { epochs, .. } => epochs.len(),
            Planned::Coalesced { c, .. } => c.epochs.len(),
        }
    }

    pub fn exhaustive(&self) -> bool {
        matches!(self, Planned::Epochs { plan, .. } if plan.exhaustive)
    }

    /// The states by kind. A state of the optimized journal's reading is a boundary when
    /// every write that may land did, after-flush when none did, a prefix when the first ones
    /// did in order, torn when one is torn (also inside a partial group), a subset otherwise.
    pub fn kinds(&self) -> KindCounts {
        let mut k = KindCounts::default();
        match self {
            Planned::Epochs { plan, .. } => plan.states.iter().for_each(|s| k.add(s.kind)),
            Planned::Coalesced { c, states } => {
                states.iter().for_each(|s| k.add(s.kind(&c.epochs)))
            }
        }
        k
    }

    /// The share of each epoch's states checked (the plain reading only).
    pub fn coverage(&self) -> Option<Vec<states::EpochCoverage>> {
        match self {
            Planned::Epochs { epochs, plan } => Some(states::coverage(epochs, plan)),
            Planned::Coalesced { .. } => None,
        }
    }

    pub fn coalition(&self) -> Option<CoalitionStats> {
        match self {
            Planned::Epochs { .. } => None,
            Planned::Coalesced { c, .. } => Some(c.stats),
        }
    }

    /// The plain reading's epochs, which the checker builds its images from (none for the
    /// optimized journal, whose images [`Builder`] makes).
    pub fn plain_epochs(&self) -> &[states::Epoch] {
        match self {
            Planned::Epochs { epochs, .. } => epochs,
            Planned::Coalesced { .. } => &[],
        }
    }

    /// Acknowledged and begun transactions state `i` is judged against.
    pub fn bounds(&self, i: usize) -> (u64, u64) {
        match self {
            Planned::Epochs { epochs, plan } => plan.state(i, epochs).bounds(epochs),
            Planned::Coalesced { c, states } => states[i].bounds(&c.epochs),
        }
    }

    pub fn describe(&self, i: usize) -> String {
        match self {
            Planned::Epochs { epochs, plan } => plan.state(i, epochs).describe(epochs),
            Planned::Coalesced { c, states } => states[i].describe(&c.epochs),
        }
    }

    pub fn state(&self, i: usize) -> FoundState {
        match self {
            Planned::Epochs { epochs, plan } => FoundState::Epoch(plan.state(i, epochs)),
            Planned::Coalesced { states, .. } => FoundState::Cut(states[i].clone()),
        }
    }

    /// A worker's image builder.
    pub fn builder<'a>(&'a self, log: &'a BlockLog) -> Builder<'a> {
        match self {
            Planned::Epochs { .. } => Builder::Plain,
            Planned::Coalesced { c, .. } => {
                Builder::Coalesced(coalition::Images::new(&log.base, &log.ops, &c.epochs))
            }
        }
    }

    /// State `i`'s image (states of one builder come in index order).
    pub fn image(&self, b: &mut Builder<'_>, checker: &mut Checker<'_>, i: usize) -> SparseImage {
        match (self, b) {
            (Planned::Epochs { epochs, plan }, _) => checker.image(&plan.state(i, epochs)),
            (Planned::Coalesced { states, .. }, Builder::Coalesced(images)) => {
                images.image(&states[i])
            }
            (Planned::Coalesced { .. }, Builder::Plain) => {
                unreachable!("a coalesced plan gets a coalesced builder")
            }
        }
    }
}

/// Builds a worker's images.
pub enum Builder<'a> {
    /// The checker builds them from the plain epochs.
    Plain,
    Coalesced(coalition::Images<'a>),
}
