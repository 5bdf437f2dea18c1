//! What a workload does, as plain data: [`DbWorkload`] (SQLite) and [`FileWorkload`] (files),
//! and the journal modes a database workload asks for ([`JournalMode`]).

pub mod bounds;
mod db;
mod file;
mod mode;

pub use db::{DbOp, DbWorkload, KeyOrder, StartState, check_page_size};
pub use file::{FileAccess, FileSync, FileWorkload};
pub use mode::{JournalMode, SqliteJournal, Synchronous, WaldioMode};
