//! Mobigen-style record and replay of file-system calls (`docs/formats/syscalls.md`): the
//! `joj-syscalls` format ([`format`]), the importer of `strace -f -ttt -T -y` output
//! ([`strace`]) and the player that re-executes a recording under a directory ([`play`]).
//! Measuring a replay (scratch filesystem, block tracing, classification) is
//! `joj-experiment`'s; this module only does the calls. Invariants: a [`Recording`] that was
//! read or imported has passed [`Recording::check`] — every path inside its root, every
//! descriptor opened before use, every length, offset, flag and `whence` within what a replay
//! executes ([`check`]) — so a replay never meets a call it cannot map; every file is read
//! through `joj_trace::input` (a regular file, a size limit, a cap per line).

pub mod check;
pub mod error;
mod fd_tables;
pub mod format;
pub mod play;
pub mod strace;
mod strace_line;

pub use check::{MAX_IO_BYTES, OPEN_FLAGS, WHENCES};
pub use error::SyscallsError;
pub use format::{Call, Header, MAX_RECORDING_BYTES, Mark, Op, Recording};
pub use play::{
    Change, MAX_GAP_NS, Phase, PlayObserver, PlayReport, Player, Synced, Timing,
    allow_open_descriptors, recorded_span_ns,
};
pub use strace::{ImportOptions, STRACE_CALLS, import_strace};
pub use strace_line::BadLine;

#[cfg(test)]
mod bounds_tests;
#[cfg(test)]
mod fd_tables_tests;
#[cfg(test)]
mod observer_tests;
#[cfg(test)]
mod replay_threads_tests;
#[cfg(test)]
mod tests;
