//! The recording disk: a scratch filesystem's loop device backed by a file on a FUSE
//! filesystem this process serves, which logs every write (with its data) and every flush the
//! real filesystem issues, in order, with the workload's marks in between
//! (`docs/formats/blocklog.md`).
//!
//! [`RecordingDisk`] mounts and owns the FUSE filesystem ([`disk`]); the filesystem itself,
//! files held in memory as sparse images, is [`fusefs`]; the log and its file format are
//! [`log`].

pub mod disk;
mod fusefs;
pub mod log;

pub use disk::{HeldBytes, RecordError, RecordOptions, RecordingDisk};
pub use log::{
    BLOCK_BYTES, BlockLog, Labels, LogError, LogOp, MAX_DEVICE_BYTES, MAX_LABEL_BYTES,
    MAX_LOG_BYTES, MAX_RECORDS, Mark, SECTOR_BYTES, SparseImage,
};
