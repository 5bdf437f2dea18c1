//! X-FTL (Kang, Lee, Moon, Oh, Min: "X-FTL: Transactional FTL for SQLite Databases",
//! SIGMOD '13): transactions in the page-mapping FTL, so SQLite can run with its journal off.
//!
//! The page-mapping `Ftl` and the `Emmc` stay the plain device; what X-FTL adds to them lives
//! here:
//! - `xl2p`: the X-L2P table (per logical page, the newest copy of an active transaction) and
//!   the transaction id `Tid`;
//! - `txn`: the FTL's `begin`, `write(t, p)`, `read(t, p)`, `commit(t)`, `abort(t)`;
//! - `recover`: the FTL's power-on, which loads X-FTL's commit table with the mapping
//!   checkpoint and lets a committed transaction's pages compete by their commit's sequence;
//! - `emmc_txn`: the eMMC side, `TransactionalDevice` on `Emmc` with its command timing.
//!
//! Format, rules and the crash argument: `docs/formats/xftl.md`. i-FTL, the other transactional
//! FTL, is `iftl`; both keep their blocks in `block_table::BlockTable`.

mod emmc_txn;
mod recover;
mod txn;
pub(crate) mod xl2p;

pub use xl2p::{TXN_BIT, Tid};
