//! The `joj-syscalls` file (`docs/formats/syscalls.md`): a header line, then one JSON line per
//! call in recorded start order. Reading checks everything a replay relies on — format name,
//! version, `seq` order, the call count, paths inside the root, descriptors opened before use,
//! marks in pairs — so a replay never starts on a file it would stop in the middle of.
//!
//! Layout (UTF-8, one JSON object per `\n`-ended line):
//!
//! ```text
//! line 1      {"format":"joj-syscalls","version":1,"source":…,"root":…,"transactions":…,
//!              "threads":…,"calls":N,"dropped_outside_root":…[,"dropped_after_window":…]
//!              [,"dropped_inherited":…][,"inherited_fds":[…]]}
//! lines 2…N+1 {"seq":i,"tid":…,"start_ns":…,"dur_ns":…,"ret":…[,"errno":"E…"],
//!              "call":"<name>", <the call's own fields>}     in start order, seq = i
//! ```

use std::io::{BufRead, Write};
use std::path::{Component, Path};

use joj_trace::input;

use serde::{Deserialize, Serialize};

use super::error::SyscallsError;

/// The format's name, in every header.
pub const FORMAT: &str = "joj-syscalls";
/// The version this joj reads and writes.
pub const VERSION: u32 = 1;
/// The largest recording read: its calls are held in memory whole (a recorded `joj bench` of
/// 300 transactions is 160 KiB; a GiB holds some ten million calls).
pub const MAX_RECORDING_BYTES: u64 = 1 << 30;

/// The first line of a recording.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub version: u32,
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    pub root: String,
    pub transactions: u64,
    pub threads: u64,
    pub calls: u64,
    pub dropped_outside_root: u64,
    /// Calls after a `joj bench` window's end, not kept (`--bench-window`).
    #[serde(default)]
    pub dropped_after_window: u64,
    /// Calls inside the root on a descriptor no open of the recording returned — one the
    /// program inherited (its standard input and output, a descriptor its parent passed) or
    /// copied (`dup`, `fcntl`, which are not recorded) — not kept: a replay has no file
    /// behind that number.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped_inherited: u64,
    /// The smallest [`MAX_INHERITED_FDS_LISTED`] numbers of those descriptors, in order
    /// (informative).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inherited_fds: Vec<i32>,
}

/// The most descriptor numbers a header lists in `inherited_fds`.
pub const MAX_INHERITED_FDS_LISTED: usize = 16;

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One recorded call: when, on which thread, what it returned, and what it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Call {
    pub seq: u64,
    pub tid: u64,
    pub start_ns: u64,
    pub dur_ns: u64,
    pub ret: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errno: Option<String>,
    #[serde(flatten)]
    pub op: Op,
}

impl Call {
    pub fn failed(&self) -> bool {
        self.errno.is_some()
    }

    /// When the call returned, in the recording.
    pub fn end_ns(&self) -> u64 {
        self.start_ns.saturating_add(self.dur_ns)
    }
}

/// Whether `close` closes the descriptor an open that returned at `opened_end_ns` gave. A
/// descriptor number is reused at once: an open on another thread that was still running when
/// the close began can return the number the close frees, and then it is that newer
/// descriptor which stays open — though the open *started* first, so it comes first in the
/// recording. Only a descriptor whose open had returned before the close began is closed.
pub fn closes(opened_end_ns: u64, close: &Call) -> bool {
    opened_end_ns <= close.start_ns
}

/// Where a recording's measured window begins or ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mark {
    WindowBegin,
    WindowEnd,
}

/// The calls a recording holds (`call` names which).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "call", rename_all = "snake_case")]
pub enum Op {
    Open {
        path: String,
        flags: Vec<String>,
        mode: u32,
        /// The descriptor the recorded call returned (`-1` when it failed).
        fd: i32,
    },
    Close {
        fd: i32,
    },
    Read {
        fd: i32,
        len: u64,
    },
    Write {
        fd: i32,
        len: u64,
    },
    Pread {
        fd: i32,
        off: u64,
        len: u64,
    },
    Pwrite {
        fd: i32,
        off: u64,
        len: u64,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        sqlite_header: bool,
    },
    Lseek {
        fd: i32,
        off: i64,
        whence: String,
    },
    Fsync {
        fd: i32,
    },
    Fdatasync {
        fd: i32,
    },
    Ftruncate {
        fd: i32,
        len: u64,
    },
    Truncate {
        path: String,
        len: u64,
    },
    Fallocate {
        fd: i32,
        mode: i32,
        off: u64,
        len: u64,
    },
    Unlink {
        path: String,
    },
    Rmdir {
        path: String,
    },
    Rename {
        from: String,
        to: String,
    },
    Mkdir {
        path: String,
        mode: u32,
    },
    Syncfs {
        fd: i32,
    },
    /// `stat`, `lstat`, `newfstatat` / `statx` of a path.
    Stat {
        path: String,
    },
    /// `fstat`, `newfstatat` / `statx` of a descriptor (`AT_EMPTY_PATH`).
    Fstat {
        fd: i32,
    },
    /// `fchown` (SQLite, as root, gives every journal it opens its database's owner; on xfs the
    /// inode change makes the next `fdatasync` force the log).
    Fchown {
        fd: i32,
        uid: u32,
        gid: u32,
    },
    /// `chown`, `lchown`, `fchownat` of a path.
    Chown {
        path: String,
        uid: u32,
        gid: u32,
    },
    Fchmod {
        fd: i32,
        mode: u32,
    },
    /// `chmod`, `fchmodat` of a path.
    Chmod {
        path: String,
        mode: u32,
    },
    Mark {
        name: Mark,
    },
}

/// `Some(expr)` of the descriptor field `$fd` of every call on a descriptor, `None` for the
/// others: the one list of such calls, for [`Op::fd`] and [`Op::fd_mut`].
macro_rules! on_descriptor {
    ($op:expr, $fd:ident => $e:expr) => {
        match $op {
            Op::Close { fd: $fd }
            | Op::Read { fd: $fd, .. }
            | Op::Write { fd: $fd, .. }
            | Op::Pread { fd: $fd, .. }
            | Op::Pwrite { fd: $fd, .. }
            | Op::Lseek { fd: $fd, .. }
            | Op::Fsync { fd: $fd }
            | Op::Fdatasync { fd: $fd }
            | Op::Ftruncate { fd: $fd, .. }
            | Op::Fallocate { fd: $fd, .. }
            | Op::Syncfs { fd: $fd }
            | Op::Fstat { fd: $fd }
            | Op::Fchown { fd: $fd, .. }
            | Op::Fchmod { fd: $fd, .. } => Some($e),
            _ => None,
        }
    };
}

impl Op {
    /// The descriptor the call uses (not the one an `open` returns).
    pub fn fd(&self) -> Option<i32> {
        on_descriptor!(self, fd => *fd)
    }

    /// The descriptor the call is on, to be renamed (the importer writes a file description's
    /// one number for each of its copies).
    pub(super) fn fd_mut(&mut self) -> Option<&mut i32> {
        on_descriptor!(self, fd => fd)
    }

    /// The paths the call names.
    pub fn paths(&self) -> Vec<&str> {
        match self {
            Op::Open { path, .. }
            | Op::Truncate { path, .. }
            | Op::Unlink { path }
            | Op::Rmdir { path }
            | Op::Stat { path }
            | Op::Chown { path, .. }
            | Op::Chmod { path, .. }
            | Op::Mkdir { path, .. } => vec![path],
            Op::Rename { from, to } => vec![from, to],
            _ => vec![],
        }
    }

    /// The call's name in the file.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Open { .. } => "open",
            Op::Close { .. } => "close",
            Op::Read { .. } => "read",
            Op::Write { .. } => "write",
            Op::Pread { .. } => "pread",
            Op::Pwrite { .. } => "pwrite",
            Op::Lseek { .. } => "lseek",
            Op::Fsync { .. } => "fsync",
            Op::Fdatasync { .. } => "fdatasync",
            Op::Ftruncate { .. } => "ftruncate",
            Op::Truncate { .. } => "truncate",
            Op::Fallocate { .. } => "fallocate",
            Op::Unlink { .. } => "unlink",
            Op::Rmdir { .. } => "rmdir",
            Op::Rename { .. } => "rename",
            Op::Mkdir { .. } => "mkdir",
            Op::Syncfs { .. } => "syncfs",
            Op::Stat { .. } => "stat",
            Op::Fstat { .. } => "fstat",
            Op::Fchown { .. } => "fchown",
            Op::Chown { .. } => "chown",
            Op::Fchmod { .. } => "fchmod",
            Op::Chmod { .. } => "chmod",
            Op::Mark { .. } => "mark",
        }
    }
}

/// A whole recording, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recording {
    pub header: Header,
    pub calls: Vec<Call>,
}

/// Whether `path` is a relative path that stays inside the root (`.` is the root itself).
pub fn inside_root(path: &str) -> bool {
    !path.is_empty()
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// Whether `path` is in the form the importer writes (docs/formats/syscalls.md): `.` for the
/// root, else non-empty components joined by single `/`s, none of them `.` or `..`, no leading
/// or trailing `/`.
pub fn normal_form(path: &str) -> bool {
    path == "."
        || (!path.is_empty()
            && path
                .split('/')
                .all(|s| !s.is_empty() && s != "." && s != ".."))
}

impl Recording {
    /// Write the recording as JSON Lines.
    pub fn write(&self, mut w: impl Write) -> std::io::Result<()> {
        serde_json::to_writer(&mut w, &self.header)?;
        w.write_all(b"\n")?;
        for c in &self.calls {
            serde_json::to_writer(&mut w, c)?;
            w.write_all(b"\n")?;
        }
        w.flush()
    }

    /// Read and check a recording (`what` names it in errors). No line longer than
    /// [`input::MAX_LINE_BYTES`] is held: a longer one is refused as it is read.
    pub fn read(mut r: impl BufRead, what: &str) -> Result<Recording, SyscallsError> {
        let mut buf = Vec::new();
        let next = |r: &mut dyn BufRead, buf: &mut Vec<u8>, line: u64| {
            let got = input::read_line(r, buf, input::MAX_LINE_BYTES).map_err(|source| {
                SyscallsError::Read {
                    what: what.to_string(),
                    source,
                }
            })?;
            match got {
                input::Line::End => Ok(false),
                input::Line::Read => Ok(true),
                input::Line::TooLong => Err(SyscallsError::LineTooLong {
                    what: what.to_string(),
                    line,
                    limit_bytes: input::MAX_LINE_BYTES,
                }),
            }
        };
        next(&mut r, &mut buf, 1)?;
        let header = parse_header(&String::from_utf8_lossy(&buf), what)?;
        let mut calls = Vec::new();
        let mut line = 1;
        while next(&mut r, &mut buf, line + 1)? {
            line += 1;
            let text = String::from_utf8_lossy(&buf);
            if text.trim().is_empty() {
                continue;
            }
            let call: Call = serde_json::from_str(&text).map_err(|e| SyscallsError::Corrupt {
                what: what.to_string(),
                line,
                why: input::quoted(&e.to_string()),
            })?;
            calls.push(call);
        }
        let rec = Recording { header, calls };
        rec.check(what)?;
        Ok(rec)
    }

    /// Read and check the recording in the file `path`: a regular file of at most
    /// [`MAX_RECORDING_BYTES`].
    pub fn read_file(path: &Path) -> Result<Recording, SyscallsError> {
        let input = input::open(path, MAX_RECORDING_BYTES, "a joj-syscalls recording")?;
        let mut reader = input.reader();
        let what = path.display().to_string();
        Recording::read(&mut reader, &what).map_err(|e| match e {
            SyscallsError::Read { source, .. } => SyscallsError::Input(reader.input_error(source)),
            e => e,
        })
    }

    /// The calls of each phase: before the window (unmeasured), the window, after it (not
    /// replayed). Without marks, everything is the window.
    pub fn phases(&self) -> (&[Call], &[Call]) {
        let pos = |m: Mark| {
            self.calls
                .iter()
                .position(|c| matches!(c.op, Op::Mark { name } if name == m))
        };
        match (pos(Mark::WindowBegin), pos(Mark::WindowEnd)) {
            (Some(b), Some(e)) if b < e => (&self.calls[..b], &self.calls[b + 1..e]),
            _ => (&[], &self.calls[..]),
        }
    }

    /// Whether the recording carries a measured window.
    pub fn has_window(&self) -> bool {
        self.calls.iter().any(|c| matches!(c.op, Op::Mark { .. }))
    }
}

fn parse_header(first: &str, what: &str) -> Result<Header, SyscallsError> {
    let foreign = || SyscallsError::Foreign {
        what: what.to_string(),
    };
    let v: serde_json::Value = serde_json::from_str(first).map_err(|_| foreign())?;
    if v.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
        return Err(foreign());
    }
    let version = v.get("version").and_then(|x| x.as_u64()).unwrap_or(0);
    if version != u64::from(VERSION) {
        return Err(SyscallsError::Version {
            what: what.to_string(),
            found: version,
        });
    }
    serde_json::from_value(v).map_err(|e| SyscallsError::Corrupt {
        what: what.to_string(),
        line: 1,
        why: e.to_string(),
    })
}
