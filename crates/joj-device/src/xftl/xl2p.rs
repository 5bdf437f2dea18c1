//! X-FTL (Kang et al., SIGMOD '13): transactions on the page-mapping FTL.
//!
//! The X-L2P table holds, per logical page written by an active transaction, that
//! transaction's newest copy; `commit(t)` moves `t`'s copies into the L2P table and persists a
//! commit table naming them; `abort(t)` drops them. Format, rules and the crash argument:
//! `docs/formats/xftl.md`.
//!
//! Invariants kept (checked by `Ftl::check_invariants`):
//! - A page programmed for a transaction carries `lpn | TXN_BIT` in its OOB area; an active
//!   entry points at such a page and counts as one valid page of its block.
//! - At most one active transaction per logical page; a plain write or trim of it is refused.
//! - `active.len() + committed.len() ≤ capacity`.
//! - Every committed entry has `commit_seq > checkpoint_seq` of the last checkpoint written;
//!   a checkpoint clears them (`checkpointed`).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::addr::Lpn;
use crate::error::FtlError;
use crate::medium::CommitEntry;

/// Tag of a transaction's page in the OOB logical-page field.
pub const TXN_BIT: u32 = 1 << 31;

/// A device transaction id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Tid(pub u32);

impl std::fmt::Display for Tid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The newest copy of a logical page an active transaction wrote.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Active {
    pub(crate) tid: u32,
    pub(crate) ppn: u32,
    pub(crate) seq: u64,
}

/// An active transaction.
#[derive(Debug, Default)]
pub(crate) struct Txn {
    /// Logical pages in first-write order.
    pub(crate) lpns: Vec<u32>,
    /// Completion of the last program of this transaction's pages (GC copies included).
    pub(crate) durable_ns: u64,
}

/// The X-L2P table in controller RAM.
#[derive(Debug)]
pub(crate) struct XTable {
    pub(crate) capacity: usize,
    pub(crate) active: HashMap<u32, Active>,
    pub(crate) txns: HashMap<u32, Txn>,
    pub(crate) committed: Vec<CommitEntry>,
    pub(crate) next_tid: u32,
    /// Canary for the crash tests: acknowledge a commit before its pages and table are durable.
    pub(crate) canary_commit_before_durable: bool,
}

/// Pages a commit table of `entries` entries occupies.
pub(crate) fn table_pages(entries: usize, page_bytes: u32) -> u64 {
    (entries as u64 * CommitEntry::BYTES)
        .div_ceil(u64::from(page_bytes))
        .max(1)
}

impl XTable {
    pub(crate) fn new(capacity: usize) -> XTable {
        XTable {
            capacity,
            active: HashMap::new(),
            txns: HashMap::new(),
            committed: Vec::new(),
            next_tid: 1,
            canary_commit_before_durable: false,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.active.len() + self.committed.len()
    }

    /// A plain write or trim of `lpn` is allowed only if no transaction holds it.
    pub(crate) fn check_plain(&self, lpn: Lpn) -> Result<(), FtlError> {
        match self.active.get(&lpn.0) {
            Some(a) => Err(FtlError::TxnConflict {
                lpn: lpn.0,
                holder: a.tid,
                by: "a plain write or trim".into(),
            }),
            None => Ok(()),
        }
    }

    pub(crate) fn active_ppn(&self, lpn: u32) -> Option<u32> {
        self.active.get(&lpn).map(|a| a.ppn)
    }

    /// `(lpn, ppn)` of every active entry.
    pub(crate) fn active_pages(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.active.iter().map(|(&l, a)| (l, a.ppn))
    }

    /// A checkpoint now holds every committed transaction's mapping.
    pub(crate) fn checkpointed(&mut self) {
        self.committed.clear();
    }
}
