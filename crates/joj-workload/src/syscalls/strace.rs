//! strace output → a [`Recording`]: the importer. Lines are parsed by [`super::strace_line`]
//! and `<unfinished ...>` halves joined with their `resumed>` halves per thread; each call is
//! kept when its path, or its descriptor's `-y` path, is inside the root, with paths made
//! relative to it. `--bench-window` turns the two `syncfs` calls a traced `joj bench` run makes
//! on its directory into the window's marks. A call on a descriptor no kept open returned (one
//! the program inherited, such as its standard input and output) is left out and counted
//! (`dropped_inherited`): a replay has no file behind it. Copies of a descriptor (`dup`,
//! `fcntl(F_DUPFD)`, a child's table) are followed by [`super::fd_tables`] and written as calls
//! on the one number of their open file description.

use std::collections::{BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};

use joj_trace::input;

use super::check::{MAX_IO_BYTES, OPEN_FLAGS};
use super::error::SyscallsError;
use super::fd_tables::{Ended, FdTables, MAX_TABLE_WORK};
use super::format::{
    Call, FORMAT, Header, MAX_INHERITED_FDS_LISTED, Mark, Op, Recording, VERSION, closes,
};
use super::strace_line::{BadLine, Line, RawCall, parse_call, parse_line, split_fd_path, unquote};

/// The system calls `joj syscalls record` asks strace for. `?` lets strace skip a call the
/// architecture does not have (aarch64 has no `open`, `unlink`, …); `%stat`, `%lstat` and
/// `%fstat` are strace's classes of every stat variant (`fstat`, `newfstatat`, `statx`, …).
/// The calls from `dup` on are not written to a recording: they change which file a
/// descriptor names ([`super::fd_tables`]).
pub const STRACE_CALLS: &str = "?open,openat,?creat,close,read,write,pread64,pwrite64,lseek,fsync,fdatasync,ftruncate,truncate,fallocate,?unlink,unlinkat,?rmdir,?rename,renameat,renameat2,?mkdir,mkdirat,syncfs,%stat,%lstat,%fstat,?chown,fchown,?lchown,fchownat,?chmod,fchmod,fchmodat,dup,?dup2,dup3,fcntl,ioctl,?close_range,clone,?clone3,?fork,?vfork,execve,execveat";

/// How to import.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// The recorded root; `None` only with `bench_window` (the first `syncfs`'s directory).
    pub root: Option<PathBuf>,
    /// The recording is of a traced `joj bench` run: its two `syncfs` on the root are the
    /// window's marks.
    pub bench_window: bool,
    pub transactions: u64,
    pub command: Option<String>,
}

/// What the importer walks: whole calls and thread exits.
enum Step {
    Call(RawCall),
    Exit { tid: u64, time_ns: u64 },
}

impl Step {
    fn time_ns(&self) -> u64 {
        match self {
            Step::Call(c) => c.time_ns,
            Step::Exit { time_ns, .. } => *time_ns,
        }
    }
}

/// Join the halves of interrupted calls: every whole call, each with the start time of its
/// first half, and every thread exit, in the order they began, each with the number of the
/// line that finished it.
fn whole_calls(text: &str, what: &str) -> Result<Vec<(u64, Step)>, SyscallsError> {
    // By the thread whose `resumed>` line finishes it: start, name, arguments so far and the
    // thread that began it.
    let mut pending: HashMap<u64, (u64, String, String, u64)> = HashMap::new();
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let bad = |why: BadLine| SyscallsError::StraceLine {
            what: what.to_string(),
            line: i as u64 + 1,
            why,
            text: input::quoted(line),
        };
        let call = match parse_line(line).map_err(bad)? {
            Line::Other => continue,
            Line::Exited { tid, time_ns } => {
                out.push((i as u64 + 1, Step::Exit { tid, time_ns }));
                continue;
            }
            Line::Call(c) => c,
            Line::Unfinished {
                tid,
                time_ns,
                name,
                args_head,
                resumed_by,
            } => {
                pending.insert(resumed_by, (time_ns, name, args_head, tid));
                continue;
            }
            Line::Resumed { tid, name, tail } => {
                let Some((time_ns, first_name, head, began_by)) = pending.remove(&tid) else {
                    return Err(bad(BadLine::ResumedWithoutStart));
                };
                if first_name != name {
                    return Err(bad(BadLine::ResumedOtherCall));
                }
                let after = format!("{head}{tail}");
                let mut call = parse_call(began_by, time_ns, &name, &after).map_err(bad)?;
                if began_by != tid {
                    call.became = Some(tid);
                }
                call
            }
        };
        out.push((i as u64 + 1, Step::Call(call)));
    }
    // Calls start-ordered, as the recording keeps them (a resumed call finished later).
    out.sort_by_key(|(_, s)| s.time_ns());
    Ok(out)
}

/// `p` without `.` and `..` components (lexically; strace shows paths as the program gave
/// them).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The state the importer keeps while walking the calls.
struct Importer {
    root: PathBuf,
    /// The working directory strace last showed (`AT_FDCWD</d>`), for paths of non-`at` calls.
    cwd: Option<PathBuf>,
    calls: Vec<Call>,
    /// The strace line of each call in `calls` (the line of the step that wrote it), for the
    /// errors of the recording's check.
    lines: Vec<u64>,
    /// The strace line of the step being imported.
    line: u64,
    tids: BTreeSet<u64>,
    dropped: u64,
    t0: Option<u64>,
    syncfs_on_root: u64,
    bench_window: bool,
    dropped_after_window: u64,
    /// The descriptors open in the calls kept, each with the end of the open that returned it:
    /// the table [`Recording::check`] keeps, so every call kept passes it.
    open: HashMap<i32, u64>,
    /// Calls on a descriptor not in `open`, and the smallest such numbers.
    dropped_inherited: u64,
    inherited_fds: BTreeSet<i32>,
    /// Each process's descriptors: which open file description a recorded number names.
    fds: FdTables,
}

impl Importer {
    /// `path` relative to the root, or `None` when outside it.
    fn rel(&self, path: &Path) -> Option<String> {
        let abs = normalize(&if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.cwd
                .clone()
                .unwrap_or_else(|| self.root.clone())
                .join(path)
        });
        let rel = abs.strip_prefix(&self.root).ok()?;
        let s = rel.to_string_lossy().into_owned();
        Some(if s.is_empty() { ".".into() } else { s })
    }

    /// A path argument: a string, relative to `dirfd` (an `AT_FDCWD</d>` or `5</d>` argument).
    fn path_arg(&mut self, dirfd: Option<&str>, arg: &str) -> Option<Result<String, ()>> {
        let raw = unquote(arg)?;
        let p = PathBuf::from(String::from_utf8_lossy(&raw).into_owned());
        let base = dirfd.and_then(|d| split_fd_path(d).1).map(PathBuf::from);
        if let Some(b) = &base
            && dirfd.is_some_and(|d| d.starts_with("AT_FDCWD"))
        {
            self.cwd = Some(b.clone());
        }
        let abs = match (&base, p.is_absolute()) {
            (Some(b), false) => b.join(&p),
            _ => p,
        };
        Some(self.rel(&abs).ok_or(()))
    }

    /// A descriptor argument inside the root: its number.
    fn fd_arg(&self, arg: &str) -> Option<Result<i32, ()>> {
        let (n, path) = split_fd_path(arg);
        let n: i32 = n.parse().ok()?;
        // `-y` shows a file as its absolute path; pipes, sockets and the like as `pipe:[123]`.
        let inside = path.is_some_and(|p| p.starts_with('/') && self.rel(Path::new(&p)).is_some());
        Some(if inside { Ok(n) } else { Err(()) })
    }
}

fn num<T: std::str::FromStr>(s: Option<&String>) -> Option<T> {
    let s = s?;
    let s = s.split_once('<').map_or(s.as_str(), |x| x.0);
    s.parse().ok()
}

/// Why a numeric argument (an offset, a length) cannot go into a recording.
#[derive(Debug, thiserror::Error)]
enum BadCount {
    #[error("no {0} argument")]
    Missing(&'static str),
    #[error(
        "{what} {n} is negative (the kernel refuses it; a recording keeps {what}s of 0 or more)"
    )]
    Negative { what: &'static str, n: i64 },
    #[error("{what} {text} is not a number")]
    NotANumber { what: &'static str, text: String },
}

/// A numeric argument that must be there and be a number of 0 or more.
fn count_arg(s: Option<&String>, what: &'static str) -> Result<u64, BadCount> {
    let Some(text) = s else {
        return Err(BadCount::Missing(what));
    };
    match num::<i64>(Some(text)) {
        Some(n) if n >= 0 => Ok(n as u64),
        Some(n) => Err(BadCount::Negative { what, n }),
        None => num::<u64>(Some(text)).ok_or_else(|| BadCount::NotANumber {
            what,
            text: input::quoted(text),
        }),
    }
}

fn octal(s: Option<&String>) -> u32 {
    s.and_then(|m| u32::from_str_radix(m.trim_start_matches("0o"), 8).ok())
        .unwrap_or(0o644)
}

fn flags(s: Option<&String>) -> Vec<String> {
    s.map(|f| {
        f.split('|')
            .filter(|x| OPEN_FLAGS.iter().any(|(n, _)| n == x))
            .map(str::to_string)
            .collect()
    })
    .unwrap_or_default()
}

/// Outcome of converting one call: kept, outside the root, or not a call joj replays.
enum Conv {
    Keep(Op),
    Outside,
    Skip,
}

/// Why a call cannot go into a recording.
enum Refused {
    /// A rename with one side outside the root (`from`, `to`, the outside shown as such).
    AcrossRoot(String, String),
    /// A call no kernel makes as shown, or past a recording's bounds.
    Call(String),
}

fn keep_path(r: Option<Result<String, ()>>, op: impl FnOnce(String) -> Op) -> Conv {
    match r {
        Some(Ok(p)) => Conv::Keep(op(p)),
        Some(Err(())) => Conv::Outside,
        None => Conv::Skip,
    }
}

fn keep_fd(r: Option<Result<i32, ()>>, op: impl FnOnce(i32) -> Op) -> Conv {
    match r {
        Some(Ok(fd)) => Conv::Keep(op(fd)),
        Some(Err(())) => Conv::Outside,
        None => Conv::Skip,
    }
}

impl Importer {
    fn convert(&mut self, c: &RawCall) -> Result<Conv, Refused> {
        // long: one arm per system call strace names, each a few lines; split, it would only
        // scatter the table of what each call becomes.
        let a = &c.args;
        let ret = c.ret.unwrap_or(-1);
        // The bytes a read or write moved: what it returned, which is at most what it asked
        // for; a failed call keeps what it asked for.
        let len_of = |count: Option<&String>| -> Result<u64, Refused> {
            let asked = count_arg(count, "count").map_err(|e| Refused::Call(e.to_string()))?;
            let len = if ret >= 0 { ret as u64 } else { asked };
            if len > asked {
                return Err(Refused::Call(format!(
                    "returned {len} bytes for a count of {asked} (a call moves at most the bytes \
                     it asks for)"
                )));
            }
            if len > MAX_IO_BYTES {
                return Err(Refused::Call(format!(
                    "moves {len} bytes, more than joj replays in one call ({MAX_IO_BYTES} bytes)"
                )));
            }
            Ok(len)
        };
        let offset = |arg: Option<&String>| {
            count_arg(arg, "offset").map_err(|e| Refused::Call(e.to_string()))
        };
        let ret_fd = || i32::try_from(ret).unwrap_or(-1);
        Ok(match c.name.as_str() {
            "open" | "openat" | "creat" => {
                let (dirfd, path, fl, mode) = match c.name.as_str() {
                    "openat" => (a.first(), a.get(1), a.get(2), a.get(3)),
                    "open" => (None, a.first(), a.get(1), a.get(2)),
                    _ => (None, a.first(), None, a.get(1)),
                };
                let mut fl = flags(fl);
                if c.name == "creat" {
                    fl = vec!["O_WRONLY".into(), "O_CREAT".into(), "O_TRUNC".into()];
                }
                let Some(path) = path else {
                    return Ok(Conv::Skip);
                };
                let p = self.path_arg(dirfd.map(String::as_str), path);
                keep_path(p, |path| Op::Open {
                    path,
                    flags: fl,
                    mode: octal(mode),
                    fd: ret_fd(),
                })
            }
            "close" if !a.is_empty() => keep_fd(self.fd_arg(&a[0]), |fd| Op::Close { fd }),
            "read" | "write" | "pread64" | "pwrite64" if a.len() >= 3 => {
                let len = len_of(a.get(2))?;
                let off = if a.len() >= 4 { offset(a.get(3))? } else { 0 };
                let head = a[1].starts_with("\"SQLite format 3\\0");
                let name = c.name.clone();
                keep_fd(self.fd_arg(&a[0]), |fd| match name.as_str() {
                    "read" => Op::Read { fd, len },
                    "write" => Op::Write { fd, len },
                    "pread64" => Op::Pread { fd, off, len },
                    _ => Op::Pwrite {
                        fd,
                        off,
                        len,
                        sqlite_header: head && off == 0,
                    },
                })
            }
            "lseek" if a.len() >= 3 => {
                let off = num(a.get(1)).ok_or_else(|| {
                    Refused::Call(format!("offset {} is not a number", input::quoted(&a[1])))
                })?;
                let whence = a[2].clone();
                keep_fd(self.fd_arg(&a[0]), |fd| Op::Lseek { fd, off, whence })
            }
            "fsync" if !a.is_empty() => keep_fd(self.fd_arg(&a[0]), |fd| Op::Fsync { fd }),
            "fdatasync" if !a.is_empty() => keep_fd(self.fd_arg(&a[0]), |fd| Op::Fdatasync { fd }),
            "syncfs" if !a.is_empty() => keep_fd(self.fd_arg(&a[0]), |fd| Op::Syncfs { fd }),
            "ftruncate" if a.len() >= 2 => {
                let len =
                    count_arg(a.get(1), "length").map_err(|e| Refused::Call(e.to_string()))?;
                keep_fd(self.fd_arg(&a[0]), |fd| Op::Ftruncate { fd, len })
            }
            "truncate" if a.len() >= 2 => {
                let len =
                    count_arg(a.get(1), "length").map_err(|e| Refused::Call(e.to_string()))?;
                keep_path(self.path_arg(None, &a[0]), |path| Op::Truncate {
                    path,
                    len,
                })
            }
            "fallocate" if a.len() >= 4 => {
                let mode = num(a.get(1)).unwrap_or(0);
                let (off, len) = (offset(a.get(2))?, count_arg(a.get(3), "length"));
                let len = len.map_err(|e| Refused::Call(e.to_string()))?;
                keep_fd(self.fd_arg(&a[0]), |fd| Op::Fallocate {
                    fd,
                    mode,
                    off,
                    len,
                })
            }
            "unlink" | "rmdir" if !a.is_empty() => {
                let rmdir = c.name == "rmdir";
                keep_path(self.path_arg(None, &a[0]), |path| {
                    if rmdir {
                        Op::Rmdir { path }
                    } else {
                        Op::Unlink { path }
                    }
                })
            }
            "unlinkat" if a.len() >= 2 => {
                let rmdir = a.get(2).is_some_and(|f| f.contains("AT_REMOVEDIR"));
                keep_path(self.path_arg(Some(&a[0]), &a[1]), |path| {
                    if rmdir {
                        Op::Rmdir { path }
                    } else {
                        Op::Unlink { path }
                    }
                })
            }
            "mkdir" | "mkdirat" => {
                let (dirfd, path, mode) = if c.name == "mkdirat" {
                    (a.first(), a.get(1), a.get(2))
                } else {
                    (None, a.first(), a.get(1))
                };
                let Some(path) = path else {
                    return Ok(Conv::Skip);
                };
                let p = self.path_arg(dirfd.map(String::as_str), path);
                // The root exists in every replay: making it is not replayed.
                if matches!(&p, Some(Ok(r)) if r == ".") {
                    return Ok(Conv::Skip);
                }
                keep_path(p, |path| Op::Mkdir {
                    path,
                    mode: octal(mode),
                })
            }
            "rename" | "renameat" | "renameat2" => return self.rename(c),
            "stat" | "lstat" | "fstat" | "newfstatat" | "statx" => self.stat(c),
            "fchown" | "chown" | "lchown" | "fchownat" | "fchmod" | "chmod" | "fchmodat" => {
                self.owner(c)
            }
            _ => Conv::Skip,
        })
    }

    /// A stat of a path, or of a descriptor (`fstat`, or `AT_EMPTY_PATH` with an empty path).
    fn stat(&mut self, c: &RawCall) -> Conv {
        let a = &c.args;
        match c.name.as_str() {
            "fstat" if !a.is_empty() => keep_fd(self.fd_arg(&a[0]), |fd| Op::Fstat { fd }),
            "stat" | "lstat" if !a.is_empty() => {
                keep_path(self.path_arg(None, &a[0]), |path| Op::Stat { path })
            }
            _ if a.len() >= 3 => {
                // newfstatat(dirfd, path, buf, flags) / statx(dirfd, path, flags, mask, buf)
                let flags = if c.name == "statx" {
                    &a[2]
                } else {
                    &a[a.len() - 1]
                };
                if a[1] == "\"\"" && flags.contains("AT_EMPTY_PATH") {
                    keep_fd(self.fd_arg(&a[0]), |fd| Op::Fstat { fd })
                } else {
                    keep_path(self.path_arg(Some(&a[0]), &a[1]), |path| Op::Stat { path })
                }
            }
            _ => Conv::Skip,
        }
    }

    /// A change of owner or mode, of a descriptor or a path.
    fn owner(&mut self, c: &RawCall) -> Conv {
        let a = &c.args;
        let id = |i: usize| num::<u32>(a.get(i)).unwrap_or(0);
        match (c.name.as_str(), a.len()) {
            ("fchown", 3..) => {
                let (uid, gid) = (id(1), id(2));
                keep_fd(self.fd_arg(&a[0]), |fd| Op::Fchown { fd, uid, gid })
            }
            ("chown" | "lchown", 3..) => {
                let (uid, gid) = (id(1), id(2));
                keep_path(self.path_arg(None, &a[0]), |path| Op::Chown {
                    path,
                    uid,
                    gid,
                })
            }
            ("fchownat", 4..) => {
                let (uid, gid) = (id(2), id(3));
                keep_path(self.path_arg(Some(&a[0]), &a[1]), |path| Op::Chown {
                    path,
                    uid,
                    gid,
                })
            }
            ("fchmod", 2..) => {
                let mode = octal(a.get(1));
                keep_fd(self.fd_arg(&a[0]), |fd| Op::Fchmod { fd, mode })
            }
            ("chmod", 2..) => {
                let mode = octal(a.get(1));
                keep_path(self.path_arg(None, &a[0]), |path| Op::Chmod { path, mode })
            }
            ("fchmodat", 3..) => {
                let mode = octal(a.get(2));
                keep_path(self.path_arg(Some(&a[0]), &a[1]), |path| Op::Chmod {
                    path,
                    mode,
                })
            }
            _ => Conv::Skip,
        }
    }

    fn rename(&mut self, c: &RawCall) -> Result<Conv, Refused> {
        let a = &c.args;
        let (from, to) = if c.name == "rename" && a.len() >= 2 {
            (self.path_arg(None, &a[0]), self.path_arg(None, &a[1]))
        } else if a.len() >= 4 {
            (
                self.path_arg(Some(&a[0]), &a[1]),
                self.path_arg(Some(&a[2]), &a[3]),
            )
        } else {
            return Ok(Conv::Skip);
        };
        Ok(match (from, to) {
            (Some(Ok(from)), Some(Ok(to))) => Conv::Keep(Op::Rename { from, to }),
            (Some(Err(())), Some(Err(()))) => Conv::Outside,
            (Some(f), Some(t)) => {
                let show = |r: Result<String, ()>| {
                    r.map_or_else(|()| "(outside)".into(), |p| input::quoted(&p))
                };
                return Err(Refused::AcrossRoot(show(f), show(t)));
            }
            _ => Conv::Skip,
        })
    }

    /// A call that changes which file a descriptor names (`dup…`, `fcntl`, `ioctl`,
    /// `close_range`, `clone`, `fork`, `execve`): the tables follow it, and the descriptions
    /// it ended are closed in the recording. `false`: not such a call.
    fn descriptors(&mut self, c: &RawCall) -> bool {
        let a = &c.args;
        let fd = |i: usize| {
            a.get(i)
                .and_then(|x| split_fd_path(x).0.parse::<i32>().ok())
        };
        let ok = c.errno.is_none() && c.ret.is_some_and(|r| r >= 0);
        let ret = c.ret.and_then(|r| i32::try_from(r).ok());
        let end = c.time_ns.saturating_add(c.dur_ns);
        let has = |i: usize, flag: &str| a.get(i).is_some_and(|x| x.split('|').any(|f| f == flag));
        let ended = match c.name.as_str() {
            "dup" | "dup2" | "dup3" => match (ok, fd(0), ret) {
                (true, Some(old), Some(new)) => {
                    let cloexec = c.name == "dup3" && has(2, "O_CLOEXEC");
                    self.fds.dup(c.tid, old, new, cloexec, end)
                }
                _ => vec![],
            },
            "fcntl" => match (ok, fd(0), a.get(1).map(String::as_str), ret) {
                (true, Some(old), Some(cmd @ ("F_DUPFD" | "F_DUPFD_CLOEXEC")), Some(new)) => {
                    self.fds.dup(c.tid, old, new, cmd == "F_DUPFD_CLOEXEC", end)
                }
                (true, Some(n), Some("F_SETFD"), _) => {
                    self.fds.set_cloexec(c.tid, n, has(2, "FD_CLOEXEC"));
                    vec![]
                }
                _ => vec![],
            },
            "ioctl" => {
                // `os.set_inheritable` and friends use these instead of F_SETFD.
                if let (true, Some(n), Some(req @ ("FIOCLEX" | "FIONCLEX"))) =
                    (ok, fd(0), a.get(1).map(String::as_str))
                {
                    self.fds.set_cloexec(c.tid, n, req == "FIOCLEX");
                }
                vec![]
            }
            "close_range" => {
                // `last` is often ~0U (4294967295): every number from `first` on.
                let bound = |i: usize| num::<u64>(a.get(i)).map(|n| n.min(i32::MAX as u64) as i32);
                match (ok, bound(0), bound(1)) {
                    (true, Some(first), Some(last)) => self.fds.close_range(
                        c.tid,
                        first,
                        last,
                        has(2, "CLOSE_RANGE_CLOEXEC"),
                        has(2, "CLOSE_RANGE_UNSHARE"),
                    ),
                    _ => vec![],
                }
            }
            "clone" | "clone3" | "fork" | "vfork" => match c.ret {
                Some(child) if ok && child > 0 => {
                    let flag = |f: &str| a.iter().any(|x| x.contains(f));
                    self.fds.spawn(
                        c.tid,
                        child as u64,
                        flag("CLONE_FILES"),
                        flag("CLONE_THREAD"),
                    )
                }
                _ => vec![],
            },
            "execve" | "execveat" if ok => self.fds.exec(c.tid, c.became),
            "execve" | "execveat" => vec![],
            _ => return false,
        };
        self.close_ended(c.time_ns, ended);
        true
    }

    /// Write a `close` of each description that ended at `time_ns` without a `close` call of
    /// its own (a `dup2` onto its number, an `execve`, an exit), on the thread that opened it
    /// (which has calls in the recording: a close on the exiting thread would add a replay
    /// thread for every short-lived child).
    fn close_ended(&mut self, time_ns: u64, ended: Vec<Ended>) {
        for e in ended {
            let c = RawCall {
                tid: e.opener,
                time_ns,
                name: "close".into(),
                args: vec![],
                ret: Some(0),
                ret_path: None,
                became: None,
                errno: None,
                dur_ns: 0,
            };
            self.keep(&c, Op::Close { fd: e.fd });
        }
    }

    /// A converted call on the recorded descriptor numbers → the calls written, on the
    /// numbers of the file descriptions they name.
    fn translate(&mut self, c: &RawCall, mut op: Op) {
        match &mut op {
            Op::Open { fd, .. } if c.errno.is_none() && *fd >= 0 => {
                let cloexec = c
                    .args
                    .iter()
                    .any(|x| !x.starts_with('"') && x.split('|').any(|f| f == "O_CLOEXEC"));
                let end = c.time_ns.saturating_add(c.dur_ns);
                let (written, ended) = self.fds.open(c.tid, *fd, cloexec, end);
                *fd = written;
                // What the number held ended unseen (its close was not in the recording).
                self.close_ended(c.time_ns, ended);
            }
            Op::Close { fd } => {
                let recorded = *fd;
                match self.fds.close(c.tid, recorded, c.time_ns) {
                    None => return self.inherited(recorded),
                    // One copy of several: nothing happens to the file.
                    Some(ended) if ended.is_empty() => return,
                    Some(ended) => {
                        *fd = ended[0].fd;
                        self.keep(c, op);
                        return self.close_ended(c.time_ns, ended[1..].to_vec());
                    }
                }
            }
            _ => {
                if let Some(fd) = op.fd_mut() {
                    let recorded = *fd;
                    match self.fds.lookup(c.tid, recorded) {
                        Some(written) => *fd = written,
                        None => return self.inherited(recorded),
                    }
                }
            }
        }
        self.keep(c, op);
    }

    /// A call inside the root on a descriptor no open kept here returned, nor a copy of one
    /// (one the program inherited), which a replay has no file for: counted instead.
    fn inherited(&mut self, fd: i32) {
        self.dropped_inherited += 1;
        self.inherited_fds.insert(fd);
        if self.inherited_fds.len() > MAX_INHERITED_FDS_LISTED {
            self.inherited_fds.pop_last();
        }
    }

    /// Add a call, on the number of its file description, to the recording. The reader's
    /// table is kept alongside, so a call it would refuse is counted as inherited instead
    /// (the tables above should never let one through).
    fn push(&mut self, c: &RawCall, op: Op) {
        if let Some(fd) = op.fd()
            && !self.open.contains_key(&fd)
        {
            return self.inherited(fd);
        }
        let t0 = *self.t0.get_or_insert(c.time_ns);
        self.tids.insert(c.tid);
        let call = Call {
            seq: self.calls.len() as u64,
            tid: c.tid,
            start_ns: c.time_ns.saturating_sub(t0),
            dur_ns: c.dur_ns,
            ret: c.ret.unwrap_or(-1),
            errno: c.errno.clone(),
            op,
        };
        match &call.op {
            Op::Open { fd, .. } if !call.failed() => {
                self.open.insert(*fd, call.end_ns());
            }
            Op::Close { fd } if self.open.get(fd).is_some_and(|&end| closes(end, &call)) => {
                self.open.remove(fd);
            }
            _ => {}
        }
        self.calls.push(call);
        self.lines.push(self.line);
    }
}

/// The directory of the first `syncfs` call (a `joj bench` run's directory).
fn first_syncfs_dir(steps: &[(u64, Step)]) -> Option<PathBuf> {
    steps
        .iter()
        .filter_map(|(_, s)| match s {
            Step::Call(c) => Some(c),
            Step::Exit { .. } => None,
        })
        .find(|c| c.name == "syncfs")
        .and_then(|c| c.args.first())
        .and_then(|a| split_fd_path(a).1)
        .map(PathBuf::from)
}

/// Import strace output `text` (`what` names it in errors).
pub fn import_strace(
    text: &str,
    what: &str,
    opts: &ImportOptions,
) -> Result<Recording, SyscallsError> {
    let raw = whole_calls(text, what)?;
    let root = match (&opts.root, opts.bench_window) {
        (Some(r), _) => normalize(r),
        (None, _) => first_syncfs_dir(&raw).ok_or_else(|| SyscallsError::NoBenchWindow {
            what: what.to_string(),
            found: 0,
        })?,
    };
    let mut imp = Importer {
        root,
        cwd: None,
        calls: vec![],
        lines: vec![],
        line: 0,
        tids: BTreeSet::new(),
        dropped: 0,
        t0: None,
        syncfs_on_root: 0,
        bench_window: opts.bench_window,
        dropped_after_window: 0,
        open: HashMap::new(),
        dropped_inherited: 0,
        inherited_fds: BTreeSet::new(),
        fds: FdTables::default(),
    };
    for (line, step) in &raw {
        imp.line = *line;
        let c = match step {
            Step::Call(c) => c,
            &Step::Exit { tid, time_ns } => {
                let ended = imp.fds.exit(tid);
                imp.close_ended(time_ns, ended);
                continue;
            }
        };
        if imp.descriptors(c) {
            if imp.fds.over_budget() {
                return Err(SyscallsError::StraceCall {
                    what: what.to_string(),
                    line: *line,
                    call: c.name.clone(),
                    why: format!(
                        "following the program's descriptors took more than {MAX_TABLE_WORK} \
                         table entries copied or walked (forks and execs of processes holding \
                         many descriptors inside the root); joj follows at most that"
                    ),
                });
            }
            continue;
        }
        match imp.convert(c) {
            Ok(Conv::Keep(op)) => imp.translate(c, op),
            Ok(Conv::Outside) => imp.dropped += 1,
            Ok(Conv::Skip) => {}
            Err(Refused::AcrossRoot(from, to)) => {
                return Err(SyscallsError::RenameAcrossRoot {
                    what: what.to_string(),
                    line: *line,
                    from,
                    to,
                });
            }
            Err(Refused::Call(why)) => {
                return Err(SyscallsError::StraceCall {
                    what: what.to_string(),
                    line: *line,
                    call: c.name.clone(),
                    why,
                });
            }
        }
    }
    imp.finish(what, opts)
}

impl Importer {
    /// Keep a converted call; with `bench_window` the first two `syncfs` on the root become
    /// the marks.
    fn keep(&mut self, c: &RawCall, op: Op) {
        // What a benchmark does after its window (close, checks, reports) is never replayed.
        if self.bench_window && self.syncfs_on_root >= 2 {
            self.dropped_after_window += 1;
            return;
        }
        if self.bench_window && matches!(op, Op::Syncfs { .. }) {
            let fd_path = c.args.first().and_then(|a| split_fd_path(a).1);
            if fd_path.is_some_and(|p| self.rel(Path::new(&p)).as_deref() == Some(".")) {
                self.syncfs_on_root += 1;
                match self.syncfs_on_root {
                    1 => {
                        return self.push(
                            c,
                            Op::Mark {
                                name: Mark::WindowBegin,
                            },
                        );
                    }
                    2 => {
                        return self.push(
                            c,
                            Op::Mark {
                                name: Mark::WindowEnd,
                            },
                        );
                    }
                    _ => {}
                }
            }
        }
        self.push(c, op);
    }

    fn finish(self, what: &str, opts: &ImportOptions) -> Result<Recording, SyscallsError> {
        if self.bench_window && self.syncfs_on_root < 2 {
            return Err(SyscallsError::NoBenchWindow {
                what: what.to_string(),
                found: self.syncfs_on_root,
            });
        }
        // Calls inside the root that were all on inherited descriptors (`true --version`
        // writing to a redirected stdout) show the root is right: the recording is empty.
        if self.calls.is_empty() && self.dropped_inherited == 0 {
            return Err(SyscallsError::NothingInRoot {
                what: what.to_string(),
                root: self.root.display().to_string(),
            });
        }
        let rec = Recording {
            header: Header {
                format: FORMAT.into(),
                version: VERSION,
                source: "strace".into(),
                command: opts.command.clone(),
                root: self.root.to_string_lossy().into_owned(),
                transactions: opts.transactions.max(1),
                threads: self.tids.len() as u64,
                calls: self.calls.len() as u64,
                dropped_outside_root: self.dropped,
                dropped_after_window: self.dropped_after_window,
                dropped_inherited: self.dropped_inherited,
                inherited_fds: self.inherited_fds.into_iter().collect(),
            },
            calls: self.calls,
        };
        // The check names a recording's line (its calls from line 2); the reader has the
        // strace text.
        let lines = self.lines;
        rec.check(what).map_err(|e| {
            e.on_line(|l| {
                let call = l.checked_sub(2).and_then(|i| usize::try_from(i).ok());
                call.and_then(|i| lines.get(i)).copied().unwrap_or(l)
            })
        })?;
        Ok(rec)
    }
}
