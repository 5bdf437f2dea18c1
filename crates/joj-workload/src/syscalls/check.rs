//! What a recording must hold before a replay may start ([`Recording::check`]): the format's
//! own rules — `seq` order, the call count, paths inside the root, descriptors opened before
//! use, marks in pairs — and the bounds a replay relies on: no read or write longer than one
//! buffer joj keeps, no offset or size a file offset cannot hold, no negative descriptor, only
//! the `whence` values and open flags the player executes, no path longer than the kernel
//! takes, and no call that removes or replaces the root itself (the replay's run directory).
//! A file that breaks one is refused with its line before any filesystem is made.

use std::collections::HashMap;

use joj_trace::input;

use super::error::SyscallsError;
use super::format::{Call, Mark, Op, Recording, closes, inside_root, normal_form};

/// The most bytes one recorded read or write may move: the bound of one replayed block request
/// (`joj_device::replay::MAX_REQUEST_BYTES`). Each replaying thread holds one buffer this
/// large at most.
pub const MAX_IO_BYTES: u64 = 64 << 20;
/// The longest path a recording may name, in bytes: Linux's `PATH_MAX` less its NUL.
pub const MAX_PATH_BYTES: usize = 4095;
/// The largest offset, length or end of a range a call may name: a file offset is a signed
/// 64-bit `off_t`.
pub const MAX_OFFSET: u64 = i64::MAX as u64;
/// `lseek`'s `whence` values, by name, with the value the replay passes.
pub const WHENCES: &[(&str, i32)] = &[
    ("SEEK_SET", libc::SEEK_SET),
    ("SEEK_CUR", libc::SEEK_CUR),
    ("SEEK_END", libc::SEEK_END),
    ("SEEK_DATA", libc::SEEK_DATA),
    ("SEEK_HOLE", libc::SEEK_HOLE),
];
/// The open flags a recording keeps, by name, with the bits the replay passes (the access
/// modes, `O_RDONLY` / `O_WRONLY` / `O_RDWR`, are the open's read and write).
pub const OPEN_FLAGS: &[(&str, i32)] = &[
    ("O_RDONLY", 0),
    ("O_WRONLY", 0),
    ("O_RDWR", 0),
    ("O_CREAT", libc::O_CREAT),
    ("O_EXCL", libc::O_EXCL),
    ("O_TRUNC", libc::O_TRUNC),
    ("O_APPEND", libc::O_APPEND),
    ("O_SYNC", libc::O_SYNC),
    ("O_DSYNC", libc::O_DSYNC),
    ("O_DIRECT", libc::O_DIRECT),
    ("O_DIRECTORY", libc::O_DIRECTORY),
    ("O_NOFOLLOW", libc::O_NOFOLLOW),
    ("O_NOATIME", libc::O_NOATIME),
    ("O_PATH", libc::O_PATH),
];

/// The names of [`OPEN_FLAGS`], for messages.
fn flag_names() -> String {
    OPEN_FLAGS
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `a + b` when it stays a file offset.
fn end_of(off: u64, len: u64) -> Option<u64> {
    off.checked_add(len).filter(|&end| end <= MAX_OFFSET)
}

/// Why `c` cannot be replayed as recorded, if it cannot (the call's own bounds; paths and
/// descriptors are checked against the recording by [`Recording::check`]).
fn out_of_bounds(c: &Call) -> Option<String> {
    let name = c.op.name();
    let io_len = |len: u64| {
        (len > MAX_IO_BYTES).then(|| {
            format!(
                "{name} of {len} bytes, more than joj replays in one call ({MAX_IO_BYTES} bytes, \
                 the bound of a replayed block request)"
            )
        })
    };
    let range = |what: &str, off: u64, len: u64| {
        end_of(off, len).is_none().then(|| {
            format!(
                "{name} {what} {off} + {len} goes past the largest file offset ({MAX_OFFSET}, a \
                 signed 64-bit off_t)"
            )
        })
    };
    match &c.op {
        Op::Read { len, .. } | Op::Write { len, .. } => io_len(*len),
        Op::Pread { off, len, .. } | Op::Pwrite { off, len, .. } => {
            io_len(*len).or_else(|| range("at", *off, *len))
        }
        Op::Ftruncate { len, .. } | Op::Truncate { len, .. } => (*len > MAX_OFFSET).then(|| {
            format!(
                "{name} to {len} bytes, past the largest file offset ({MAX_OFFSET}, a signed \
                 64-bit off_t)"
            )
        }),
        Op::Fallocate { off, len, .. } => range("of", *off, *len),
        Op::Lseek { whence, .. } if !WHENCES.iter().any(|(w, _)| w == whence) => Some(format!(
            "lseek with whence {}, which is not one of SEEK_SET, SEEK_CUR, SEEK_END, SEEK_DATA, \
             SEEK_HOLE",
            input::quoted(whence)
        )),
        Op::Open { flags, fd, .. } => {
            if let Some(bad) = flags
                .iter()
                .find(|f| !OPEN_FLAGS.iter().any(|(n, _)| n == f))
            {
                Some(format!(
                    "open flag {}, which is not one joj replays ({})",
                    input::quoted(bad),
                    flag_names()
                ))
            } else if !c.failed() && *fd < 0 {
                Some(format!(
                    "an open that succeeded returning descriptor {fd}, which no open returns"
                ))
            } else {
                None
            }
        }
        _ => match c.op.fd() {
            Some(fd) if fd < 0 => Some(format!(
                "{name} on descriptor {fd}, which no open returns (descriptors are 0 or more)"
            )),
            _ => None,
        },
    }
}

/// Why the path `p` of `c` cannot be replayed, if it cannot.
fn bad_path(c: &Call, p: &str) -> Option<String> {
    if p.len() > MAX_PATH_BYTES {
        return Some(format!(
            "{} on a path of {} bytes, longer than Linux takes ({MAX_PATH_BYTES}): {}",
            c.op.name(),
            p.len(),
            input::quoted(p)
        ));
    }
    if p.contains('\0') {
        // No system call takes such a path: the replay could only fail, with the wrong fix.
        return Some(format!(
            "{} on a path holding a NUL byte, which no path of Linux holds: {}",
            c.op.name(),
            input::quoted(p)
        ));
    }
    let root = std::path::Path::new(p)
        .components()
        .all(|c| c == std::path::Component::CurDir);
    if root
        && matches!(
            c.op,
            Op::Rmdir { .. } | Op::Unlink { .. } | Op::Rename { .. }
        )
    {
        return Some(format!(
            "{} of the recorded root itself ({}): a replay's root is its run directory, which \
             the replay needs to the end",
            c.op.name(),
            input::quoted(p)
        ));
    }
    // The importer writes `a/b`; `a//b`, `./a`, `a/` name the same file under another
    // spelling, which the replay's table of files would take for a second one.
    (inside_root(p) && !normal_form(p)).then(|| {
        format!(
            "{} on a path not in normal form (an empty or `.` component, or a trailing `/`; \
             the importer writes `a/b`, and the root as `.`): {}",
            c.op.name(),
            input::quoted(p)
        )
    })
}

impl Recording {
    /// Everything a replay relies on; see the module comment.
    pub fn check(&self, what: &str) -> Result<(), SyscallsError> {
        if self.calls.len() as u64 != self.header.calls {
            return Err(SyscallsError::CountMismatch {
                what: what.to_string(),
                header: self.header.calls,
                found: self.calls.len() as u64,
            });
        }
        // Each open descriptor with the recorded end of the open that returned it.
        let mut open: HashMap<i32, u64> = HashMap::new();
        let mut marks = Vec::new();
        for (i, c) in self.calls.iter().enumerate() {
            let line = i as u64 + 2;
            let bounds = |why: String| SyscallsError::OutOfBounds {
                what: what.to_string(),
                line,
                why,
            };
            if c.seq != i as u64 {
                return Err(SyscallsError::Invalid {
                    what: what.to_string(),
                    line,
                    why: format!("seq {} where {} was due", c.seq, i),
                });
            }
            if let Some(why) = out_of_bounds(c) {
                return Err(bounds(why));
            }
            for p in c.op.paths() {
                if let Some(why) = bad_path(c, p) {
                    return Err(bounds(why));
                }
                if !inside_root(p) {
                    return Err(SyscallsError::PathEscapesRoot {
                        what: what.to_string(),
                        line,
                        path: input::quoted(p),
                    });
                }
            }
            if let Some(fd) = c.op.fd()
                && !open.contains_key(&fd)
            {
                return Err(SyscallsError::UnknownFd {
                    what: what.to_string(),
                    line,
                    call: c.op.name(),
                    fd,
                });
            }
            match &c.op {
                Op::Open { fd, .. } if !c.failed() => {
                    open.insert(*fd, c.end_ns());
                }
                Op::Close { fd } if open.get(fd).is_some_and(|&end| closes(end, c)) => {
                    open.remove(fd);
                }
                Op::Mark { name } => marks.push((line, *name)),
                _ => {}
            }
        }
        match marks.as_slice() {
            [] | [(_, Mark::WindowBegin), (_, Mark::WindowEnd)] => Ok(()),
            _ => Err(SyscallsError::Invalid {
                what: what.to_string(),
                line: marks[0].0,
                why: "marks must be one window-begin followed by one window-end".into(),
            }),
        }
    }

    /// The most descriptors the recording holds open at once (the replay holds as many).
    pub fn peak_open_descriptors(&self) -> u64 {
        let mut open: HashMap<i32, u64> = HashMap::new();
        let mut peak = 0;
        for c in &self.calls {
            match &c.op {
                Op::Open { fd, .. } if !c.failed() => {
                    open.insert(*fd, c.end_ns());
                    peak = peak.max(open.len() as u64);
                }
                Op::Close { fd } if open.get(fd).is_some_and(|&end| closes(end, c)) => {
                    open.remove(fd);
                }
                _ => {}
            }
        }
        peak
    }
}
