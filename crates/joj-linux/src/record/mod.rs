//! The recording disk: a scratch filesystem's loop device backed by a file on a FUSE
//! filesystem this process serves, which logs every write (with its data) and every flush the
//! real filesystem issues, in order, with the workload's marks in between
//! (`docs/formats/blocklog.md`).

pub mod log;

pub use log::{BLOCK_BYTES, BlockLog, LogError, LogOp, Mark, SECTOR_BYTES, SparseImage};
