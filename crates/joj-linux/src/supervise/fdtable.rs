//! The command's descriptor tables, rebuilt from what the supervisor saw: the path and flags
//! of every open (read at its stop), the descriptor the open returned, and every call that
//! copies, closes or marks a descriptor (from the syscall trace, in time order). A sync or
//! write event names only a descriptor; this model says which file it is, as the kernel's
//! table said at that instant. Pure: no I/O.
//!
//! What it follows, as the kernel does: `close`, `close_range` (with `CLOSE_RANGE_CLOEXEC` and
//! `CLOSE_RANGE_UNSHARE`), `dup`, `dup2`, `dup3`, `fcntl(F_DUPFD, F_DUPFD_CLOEXEC, F_SETFD)`;
//! a new task shares its creator's table with `CLONE_FILES` (threads) and gets a copy without
//! (processes); `exec` unshares the table and closes the close-on-exec descriptors. A
//! descriptor it did not see open (inherited from joj, received over a socket) is unknown:
//! the caller resolves it through `/proc` or counts it as unresolved, never guesses.
//!
//! An open that did not stop (the BPF observer saw it: [`super::bpf_opens`]) comes as a
//! [`RecordedOpen`], paired with its exit event by thread, descriptor and time; an open whose
//! exit finds no record is counted ([`FdModel::unseen_opens`]), its descriptor unknown.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::bpf_opens::RecordedOpen;
#[cfg(test)]
use super::bpf_opens::{Kind, OpenRecord};
use super::sync_kind::SyncKind;
use crate::syscall_line::{SysEvent, SysEventKind};

const CLONE_FILES: u64 = 0x400;
const CLOSE_RANGE_UNSHARE: u64 = 1 << 1;
const CLOSE_RANGE_CLOEXEC: u64 = 1 << 2;
const F_DUPFD: u64 = 0;
const F_SETFD: u64 = 2;
const F_DUPFD_CLOEXEC: u64 = 1030;
const FD_CLOEXEC: u64 = 1;
/// RWF_DSYNC | RWF_SYNC of pwritev2.
const RWF_ANY_SYNC: u64 = 0x2 | 0x4;

/// The argument holding the descriptor a call writes or acts on: the output of
/// `copy_file_range` and `splice` (their third), the first of every other call recorded.
fn acted_on_arg(call: &str) -> usize {
    if matches!(call, "copy_file_range" | "splice") {
        2
    } else {
        0
    }
}

/// What an open was about, read at its stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OpenedFile {
    /// The path, absolute, as the command named it.
    pub(crate) path: PathBuf,
    /// A directory when it was opened (SQLite opens one to sync it after a create or delete).
    pub(crate) directory: bool,
    /// Opened with O_DSYNC or O_SYNC: every write is a sync.
    pub(crate) dsync: bool,
    /// Opened with flags that may write.
    pub(crate) may_write: bool,
    pub(crate) flags: u64,
    /// The open copies the file up from an overlay's lower layer (a file the command opens
    /// for writing that exists only in the directory it started from).
    pub(crate) copy_up: bool,
    /// When the open stopped, or entered the kernel when it did not stop (CLOCK_MONOTONIC ns).
    pub(crate) stopped_ns: u64,
}

#[derive(Debug, Clone)]
struct Entry {
    file: Arc<OpenedFile>,
    cloexec: bool,
}

/// What an event meant for the files.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Seen {
    /// An open returned a descriptor of `file` at `end_ns`.
    Opened { file: Arc<OpenedFile>, end_ns: u64 },
    /// A task wrote a line to the trace's marker file.
    Marked {
        tid: i32,
        time_ns: u64,
        text: String,
    },
    /// A sync-type call ran from `start_ns` to `end_ns`; `file` is `None` for `sync` /
    /// `syncfs` (`kind` WholeFs) or a descriptor not seen opened (`fd` of process `tid`).
    Synced {
        kind: SyncKind,
        file: Option<Arc<OpenedFile>>,
        tid: i32,
        fd: i32,
        start_ns: u64,
        end_ns: u64,
    },
    /// An `ftruncate` ran from `start_ns` to `end_ns`; `file` is `None` for a descriptor not
    /// seen opened (`fd` of process `tid`).
    Truncated {
        file: Option<Arc<OpenedFile>>,
        tid: i32,
        fd: i32,
        start_ns: u64,
        end_ns: u64,
    },
    /// A write of `bytes` to a file seen opened; `sync` when it was synchronous (O_DSYNC
    /// descriptor or RWF_DSYNC).
    Wrote {
        file: Arc<OpenedFile>,
        bytes: u64,
        /// Where a `pwrite64` wrote (`None` for the other calls).
        offset: Option<u64>,
        sync: bool,
        start_ns: u64,
        end_ns: u64,
    },
}

/// How far apart a record's exit and the trace's exit event of the same open may be (both are
/// taken in the same return from the call; this only bounds a preemption between them).
const PAIRING_SLACK_NS: u64 = 10_000_000;

/// A call entered and not yet returned.
#[derive(Debug, Clone)]
struct Entered {
    call: String,
    args: Vec<u64>,
    time_ns: u64,
    /// The file its descriptor named at entry.
    file: Option<Arc<OpenedFile>>,
}

/// The tables of every task of the command.
#[derive(Debug, Default)]
pub(crate) struct FdModel {
    tables: HashMap<u64, HashMap<i32, Entry>>,
    table_of: HashMap<i32, u64>,
    next_table: u64,
    /// Opens stopped at, waiting for their exit events, by thread, oldest first (the events
    /// thread may read an open's exit after the thread's next open has stopped).
    pending_opens: HashMap<i32, std::collections::VecDeque<OpenedFile>>,
    entered: HashMap<i32, Entered>,
    /// With the BPF observer: its records by thread, oldest first.
    recorded: Option<HashMap<i32, std::collections::VecDeque<RecordedOpen>>>,
    /// Records owed by thread: exits applied before their records came, whose records are
    /// dropped when they come.
    owed: HashMap<i32, u64>,
    /// Opens that returned a descriptor the model could not name: no record paired with the
    /// exit (one lost), or a relative path with nothing to resolve it against.
    pub(crate) unseen_opens: u64,
    /// Unlinks the BPF observer saw whose path joj could not name.
    pub(crate) unseen_unlinks: u64,
}

impl FdModel {
    /// A model whose first task is `root`, with an empty table (what it inherited from joj is
    /// unknown).
    pub(crate) fn new(root: i32) -> FdModel {
        let mut m = FdModel::default();
        let t = m.new_table(HashMap::new());
        m.table_of.insert(root, t);
        m
    }

    /// Opens come from the BPF observer ([`FdModel::open_recorded`]), none from a stop.
    pub(crate) fn with_recorded_opens(mut self) -> FdModel {
        self.recorded = Some(HashMap::new());
        self
    }

    /// The BPF observer saw an open (in time order per thread).
    pub(crate) fn open_recorded(&mut self, open: RecordedOpen) {
        let tid = open.rec.tid;
        if let Some(owed) = self.owed.get_mut(&tid) {
            // Its exit was applied before it came (counted unseen then).
            *owed -= 1;
            if *owed == 0 {
                self.owed.remove(&tid);
            }
            return;
        }
        if let Some(r) = self.recorded.as_mut() {
            r.entry(tid).or_default().push_back(open);
        }
    }

    /// Whether opens come from the BPF observer.
    pub(crate) fn opens_recorded(&self) -> bool {
        self.recorded.is_some()
    }

    /// Records of `tid` not yet paired with an exit event.
    pub(crate) fn recorded_waiting(&self, tid: i32) -> usize {
        self.recorded
            .as_ref()
            .and_then(|r| r.get(&tid))
            .map_or(0, |q| q.len())
    }

    fn new_table(&mut self, entries: HashMap<i32, Entry>) -> u64 {
        let id = self.next_table;
        self.next_table += 1;
        self.tables.insert(id, entries);
        id
    }

    fn table(&mut self, tid: i32, tgid: i32) -> u64 {
        if let Some(&t) = self.table_of.get(&tid) {
            return t;
        }
        // A thread whose creation was not seen shares its process's table.
        let t = match self.table_of.get(&tgid) {
            Some(&t) => t,
            None => self.new_table(HashMap::new()),
        };
        self.table_of.insert(tid, t);
        t
    }

    fn lookup(&mut self, tid: i32, tgid: i32, fd: u64) -> Option<Arc<OpenedFile>> {
        let t = self.table(tid, tgid);
        let fd = i32::try_from(fd).ok()?;
        self.tables.get(&t)?.get(&fd).map(|e| e.file.clone())
    }

    /// The stop of an open by `tid` learnt `file`; its exit event gives the descriptor.
    pub(crate) fn open_stopped(&mut self, tid: i32, file: OpenedFile) {
        self.pending_opens.entry(tid).or_default().push_back(file);
    }

    /// Apply one event, in time order.
    pub(crate) fn apply(&mut self, e: &SysEvent) -> Option<Seen> {
        match &e.kind {
            SysEventKind::NewTask { pid, clone_flags } => {
                let parent = self.table(e.tid, e.tgid);
                let t = if clone_flags & CLONE_FILES != 0 {
                    parent
                } else {
                    let copy = self.tables.get(&parent).cloned().unwrap_or_default();
                    self.new_table(copy)
                };
                self.table_of.insert(*pid, t);
                None
            }
            SysEventKind::Exec { pid, old_pid } => {
                let old = self.table(*old_pid, e.tgid);
                let kept: HashMap<i32, Entry> = self
                    .tables
                    .get(&old)
                    .map(|t| {
                        t.iter()
                            .filter(|(_, en)| !en.cloexec)
                            .map(|(fd, en)| (*fd, en.clone()))
                            .collect()
                    })
                    .unwrap_or_default();
                let t = self.new_table(kept);
                self.table_of.remove(old_pid);
                self.table_of.insert(*pid, t);
                None
            }
            SysEventKind::Marker(text) => Some(Seen::Marked {
                tid: e.tid,
                time_ns: e.time_ns,
                text: text.clone(),
            }),
            SysEventKind::Enter { call, args } => self.enter(e, call, args),
            SysEventKind::Exit { call, ret } => self.exit(e, call, *ret),
        }
    }

    fn enter(&mut self, e: &SysEvent, call: &str, args: &[u64]) -> Option<Seen> {
        let arg = |i: usize| args.get(i).copied().unwrap_or(0);
        match call {
            "close" => {
                let t = self.table(e.tid, e.tgid);
                if let (Some(table), Ok(fd)) = (self.tables.get_mut(&t), i32::try_from(arg(0))) {
                    table.remove(&fd);
                }
            }
            "close_range" => {
                let (first, last, flags) = (arg(0), arg(1), arg(2));
                let mut t = self.table(e.tid, e.tgid);
                if flags & CLOSE_RANGE_UNSHARE != 0 {
                    let copy = self.tables.get(&t).cloned().unwrap_or_default();
                    t = self.new_table(copy);
                    self.table_of.insert(e.tid, t);
                }
                if let Some(table) = self.tables.get_mut(&t) {
                    let in_range = |fd: &i32| (first..=last).contains(&(*fd as u64));
                    if flags & CLOSE_RANGE_CLOEXEC != 0 {
                        for (_, en) in table.iter_mut().filter(|(fd, _)| in_range(fd)) {
                            en.cloexec = true;
                        }
                    } else {
                        table.retain(|fd, _| !in_range(fd));
                    }
                }
            }
            _ => {
                let file = self.lookup(e.tid, e.tgid, arg(acted_on_arg(call)));
                self.entered.insert(
                    e.tid,
                    Entered {
                        call: call.to_string(),
                        args: args.to_vec(),
                        time_ns: e.time_ns,
                        file,
                    },
                );
            }
        }
        None
    }

    fn exit(&mut self, e: &SysEvent, call: &str, ret: i64) -> Option<Seen> {
        if matches!(call, "openat" | "open" | "creat" | "openat2") {
            let file = if self.recorded.is_some() {
                self.recorded_open(e, ret)
            } else {
                self.pending_opens.get_mut(&e.tid)?.pop_front()
            }?;
            let fd = i32::try_from(ret).ok().filter(|fd| *fd >= 0)?;
            let cloexec = file.flags & libc::O_CLOEXEC as u64 != 0;
            let file = Arc::new(file);
            self.set(e, fd, file.clone(), cloexec);
            return Some(Seen::Opened {
                file,
                end_ns: e.time_ns,
            });
        }
        let entered = self.entered.remove(&e.tid).filter(|en| en.call == call)?;
        let arg = |i: usize| entered.args.get(i).copied().unwrap_or(0);
        let (start_ns, end_ns) = (entered.time_ns, e.time_ns);
        let synced = |kind: SyncKind, file: Option<Arc<OpenedFile>>| {
            let kind = match (&file, kind) {
                (Some(f), SyncKind::Fsync | SyncKind::Fdatasync) if f.directory => {
                    SyncKind::Directory {
                        datasync: kind == SyncKind::Fdatasync,
                    }
                }
                _ => kind,
            };
            Some(Seen::Synced {
                kind,
                file,
                tid: e.tid,
                fd: i32::try_from(arg(0)).unwrap_or(-1),
                start_ns,
                end_ns,
            })
        };
        match call {
            "fsync" => synced(SyncKind::Fsync, entered.file.clone()),
            "fdatasync" => synced(SyncKind::Fdatasync, entered.file.clone()),
            "sync_file_range" => synced(SyncKind::SyncFileRange, entered.file.clone()),
            "ftruncate" => Some(Seen::Truncated {
                file: entered.file.clone(),
                tid: e.tid,
                fd: i32::try_from(arg(0)).unwrap_or(-1),
                start_ns,
                end_ns,
            }),
            "syncfs" | "sync" => Some(Seen::Synced {
                kind: SyncKind::WholeFs,
                file: None,
                tid: e.tid,
                fd: -1,
                start_ns,
                end_ns,
            }),
            "write" | "pwrite64" | "writev" | "pwritev" | "pwritev2" | "sendfile64"
            | "copy_file_range" | "splice" => {
                let file = entered.file.clone()?;
                let bytes = u64::try_from(ret).ok()?;
                let sync = file.dsync || (call == "pwritev2" && arg(5) & RWF_ANY_SYNC != 0);
                Some(Seen::Wrote {
                    file,
                    bytes,
                    offset: (call == "pwrite64").then(|| arg(3)),
                    sync,
                    start_ns,
                    end_ns,
                })
            }
            "dup" | "dup2" | "dup3" | "fcntl" => {
                self.copied(e, call, ret, &entered);
                None
            }
            _ => None,
        }
    }

    /// A `dup`, `dup2`, `dup3` or `fcntl` returned `ret`: a copy of the descriptor it was
    /// called on, or (`F_SETFD`) its close-on-exec flag changed.
    fn copied(&mut self, e: &SysEvent, call: &str, ret: i64, entered: &Entered) {
        let arg = |i: usize| entered.args.get(i).copied().unwrap_or(0);
        let Some(new_fd) = i32::try_from(ret).ok().filter(|fd| *fd >= 0) else {
            return;
        };
        let cloexec = match call {
            "dup3" => arg(2) & libc::O_CLOEXEC as u64 != 0,
            "fcntl" => match arg(1) {
                F_DUPFD => false,
                F_DUPFD_CLOEXEC => true,
                F_SETFD => {
                    let t = self.table(e.tid, e.tgid);
                    let Ok(fd) = i32::try_from(arg(0)) else {
                        return;
                    };
                    if let Some(en) = self.tables.get_mut(&t).and_then(|t| t.get_mut(&fd)) {
                        en.cloexec = arg(2) & FD_CLOEXEC != 0;
                    }
                    return;
                }
                _ => return,
            },
            _ => false,
        };
        match entered.file.clone() {
            Some(file) => self.set(e, new_fd, file, cloexec),
            None => {
                // A copy of a descriptor not seen opened is not known either.
                let t = self.table(e.tid, e.tgid);
                if let Some(table) = self.tables.get_mut(&t) {
                    table.remove(&new_fd);
                }
            }
        }
    }

    /// The file of an open whose exit is `e`, from its record (with the BPF observer, opens do
    /// not stop).
    fn recorded_open(&mut self, e: &SysEvent, ret: i64) -> Option<OpenedFile> {
        let recorded = self.recorded.as_mut()?;
        let queue = recorded.entry(e.tid).or_default();
        // A record whose exit is long before this one belongs to an exit the trace lost.
        while queue
            .front()
            .is_some_and(|r| r.rec.exit_ns + PAIRING_SLACK_NS < e.time_ns)
        {
            queue.pop_front();
        }
        // A thread's records come in the order of its opens' exits, as their exit events do:
        // the first waiting is this exit's — if it returned the same and within the slack (a
        // record lost in the ring leaves the next open's first: not taken for this one).
        let rec = match queue.front() {
            Some(r)
                if r.rec.ret == ret && r.rec.exit_ns.abs_diff(e.time_ns) <= PAIRING_SLACK_NS =>
            {
                queue.pop_front()
            }
            Some(_) => None,
            None => {
                // Not read yet (later than the events thread waits): the next record of this
                // thread is this exit's, and is dropped when it comes, never taken for the
                // thread's next open.
                *self.owed.entry(e.tid).or_default() += 1;
                None
            }
        };
        if queue.is_empty() {
            recorded.remove(&e.tid);
        }
        let file = rec.and_then(|r| self.file_of(e, r));
        if file.is_none() && ret >= 0 {
            self.unseen_opens += 1;
        }
        file
    }

    /// What a record says was opened, its path made absolute.
    fn file_of(&mut self, e: &SysEvent, r: RecordedOpen) -> Option<OpenedFile> {
        let path = match r.absolute {
            Some(p) => p,
            None => {
                let named = r.rec.path.as_ref()?;
                let dirfd = u64::try_from(r.rec.dirfd).ok()?;
                let base = self
                    .lookup(e.tid, e.tgid, dirfd)
                    .map(|f| f.path.clone())
                    .or(r.dirfd_path)?;
                super::paths::normalized(&base.join(named))
            }
        };
        Some(OpenedFile {
            path,
            directory: r.rec.is_directory(),
            dsync: r.rec.flags & libc::O_DSYNC as u64 != 0,
            may_write: r.rec.may_write(),
            flags: r.rec.flags,
            // Read from the upper file when the open is seen (`bpf_opens::copied_up`).
            copy_up: false,
            stopped_ns: r.rec.enter_ns,
        })
    }

    fn set(&mut self, e: &SysEvent, fd: i32, file: Arc<OpenedFile>, cloexec: bool) {
        let t = self.table(e.tid, e.tgid);
        self.tables
            .entry(t)
            .or_default()
            .insert(fd, Entry { file, cloexec });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(tid: i32, t: u64, kind: SysEventKind) -> SysEvent {
        SysEvent {
            tid,
            tgid: tid,
            time_ns: t,
            kind,
        }
    }
    fn enter(tid: i32, t: u64, call: &str, args: &[u64]) -> SysEvent {
        ev(
            tid,
            t,
            SysEventKind::Enter {
                call: call.into(),
                args: args.to_vec(),
            },
        )
    }
    fn exit(tid: i32, t: u64, call: &str, ret: i64) -> SysEvent {
        ev(
            tid,
            t,
            SysEventKind::Exit {
                call: call.into(),
                ret,
            },
        )
    }
    fn file(path: &str, flags: i32) -> OpenedFile {
        OpenedFile {
            path: path.into(),
            directory: false,
            dsync: flags & libc::O_DSYNC != 0,
            may_write: true,
            flags: flags as u64,
            copy_up: false,
            stopped_ns: 0,
        }
    }
    fn open(m: &mut FdModel, tid: i32, t: u64, f: OpenedFile, fd: i64) {
        m.open_stopped(tid, f);
        assert!(matches!(
            m.apply(&exit(tid, t, "openat", fd)),
            Some(Seen::Opened { .. })
        ));
    }
    fn synced_path(s: Option<Seen>) -> Option<String> {
        match s {
            Some(Seen::Synced { file, .. }) => file.map(|f| f.path.to_string_lossy().into_owned()),
            other => panic!("not a sync: {other:?}"),
        }
    }
    fn fsync(m: &mut FdModel, tid: i32, t: u64, fd: u64) -> Option<String> {
        m.apply(&enter(tid, t, "fsync", &[fd]));
        synced_path(m.apply(&exit(tid, t + 1, "fsync", 0)))
    }

    #[test]
    fn a_truncate_names_its_file_thread_and_times() {
        let mut m = FdModel::new(10);
        open(&mut m, 10, 1, file("/d/a-journal", libc::O_RDWR), 3);
        m.apply(&enter(10, 2, "ftruncate", &[3, 0]));
        match m.apply(&exit(10, 5, "ftruncate", 0)) {
            Some(Seen::Truncated {
                file: Some(f),
                tid: 10,
                fd: 3,
                start_ns: 2,
                end_ns: 5,
            }) => assert_eq!(f.path, std::path::Path::new("/d/a-journal")),
            other => panic!("not the truncate: {other:?}"),
        }
        // A descriptor not seen opened: named by process and number.
        m.apply(&enter(10, 6, "ftruncate", &[9, 0]));
        assert!(matches!(
            m.apply(&exit(10, 7, "ftruncate", 0)),
            Some(Seen::Truncated {
                file: None,
                fd: 9,
                ..
            })
        ));
    }

    #[test]
    fn a_sync_names_the_file_its_descriptor_had_when_it_was_called() {
        let mut m = FdModel::new(10);
        open(&mut m, 10, 1, file("/d/a.db", libc::O_RDWR), 3);
        assert_eq!(fsync(&mut m, 10, 2, 3).as_deref(), Some("/d/a.db"));
        // Closed, then reused by something joj did not see opened (a socket): unknown.
        m.apply(&enter(10, 4, "close", &[3]));
        assert_eq!(fsync(&mut m, 10, 5, 3), None);
        // Closed while the sync ran: the sync is still the file's.
        open(&mut m, 10, 6, file("/d/b", libc::O_RDWR), 3);
        m.apply(&enter(10, 7, "fsync", &[3]));
        m.apply(&enter(11, 8, "close", &[3]));
        assert_eq!(
            synced_path(m.apply(&exit(10, 9, "fsync", 0))).as_deref(),
            Some("/d/b")
        );
    }

    #[test]
    fn dups_threads_forks_and_exec_follow_the_kernel() {
        let mut m = FdModel::new(10);
        open(
            &mut m,
            10,
            1,
            file("/d/keep", libc::O_RDWR | libc::O_DSYNC),
            3,
        );
        open(
            &mut m,
            10,
            2,
            file("/d/cloexec", libc::O_RDWR | libc::O_CLOEXEC),
            4,
        );
        m.apply(&enter(10, 3, "dup2", &[3, 7]));
        m.apply(&exit(10, 4, "dup2", 7));
        // A thread shares the table, a process gets a copy.
        m.apply(&ev(
            10,
            5,
            SysEventKind::NewTask {
                pid: 11,
                clone_flags: CLONE_FILES | 0x10000,
            },
        ));
        m.apply(&ev(
            10,
            6,
            SysEventKind::NewTask {
                pid: 20,
                clone_flags: 0x11,
            },
        ));
        m.apply(&enter(11, 7, "close", &[7]));
        assert_eq!(fsync(&mut m, 10, 8, 7), None, "the thread closed it");
        assert_eq!(
            fsync(&mut m, 20, 9, 7).as_deref(),
            Some("/d/keep"),
            "the child's copy still has it"
        );
        // exec drops close-on-exec descriptors only.
        m.apply(&ev(
            20,
            10,
            SysEventKind::Exec {
                pid: 20,
                old_pid: 20,
            },
        ));
        assert_eq!(fsync(&mut m, 20, 11, 4), None);
        assert_eq!(fsync(&mut m, 20, 12, 3).as_deref(), Some("/d/keep"));
        // An O_DSYNC descriptor's writes are syncs; a plain one's only with RWF_DSYNC.
        m.apply(&enter(20, 13, "pwrite64", &[3, 0, 4096, 0]));
        match m.apply(&exit(20, 14, "pwrite64", 4096)) {
            Some(Seen::Wrote { sync, bytes, .. }) => assert!(sync && bytes == 4096),
            other => panic!("{other:?}"),
        }
        open(&mut m, 20, 15, file("/d/plain", libc::O_RDWR), 5);
        m.apply(&enter(20, 16, "pwritev2", &[5, 0, 1, 0, 0, 0x2]));
        assert!(matches!(
            m.apply(&exit(20, 17, "pwritev2", 10)),
            Some(Seen::Wrote { sync: true, .. })
        ));
        m.apply(&enter(20, 18, "write", &[5, 0, 10]));
        assert!(matches!(
            m.apply(&exit(20, 19, "write", 10)),
            Some(Seen::Wrote { sync: false, .. })
        ));
    }

    #[test]
    fn sendfile_copy_file_range_and_splice_write_their_output() {
        let mut m = FdModel::new(1);
        open(&mut m, 1, 1, file("/d/in", libc::O_RDWR), 3);
        open(&mut m, 1, 2, file("/d/out", libc::O_WRONLY), 4);
        let wrote = |s: Option<Seen>| match s {
            Some(Seen::Wrote { file, bytes, .. }) => Some((file.path.clone(), bytes)),
            _ => None,
        };
        let out = Some((PathBuf::from("/d/out"), 100));
        m.apply(&enter(1, 3, "sendfile64", &[4, 3, 0, 100]));
        assert_eq!(wrote(m.apply(&exit(1, 4, "sendfile64", 100))), out);
        m.apply(&enter(1, 5, "copy_file_range", &[3, 0, 4, 0, 100, 0]));
        assert_eq!(wrote(m.apply(&exit(1, 6, "copy_file_range", 100))), out);
        m.apply(&enter(1, 7, "splice", &[9, 0, 4, 0, 100, 0]));
        assert_eq!(wrote(m.apply(&exit(1, 8, "splice", 100))), out);
        // From the file into a pipe (a descriptor not opened as a file): no file written.
        m.apply(&enter(1, 9, "splice", &[3, 0, 9, 0, 100, 0]));
        assert_eq!(wrote(m.apply(&exit(1, 10, "splice", 100))), None);
    }

    #[test]
    fn close_range_and_fcntl_change_what_they_name() {
        let mut m = FdModel::new(1);
        for fd in 3..6 {
            open(
                &mut m,
                1,
                fd as u64,
                file(&format!("/f{fd}"), libc::O_RDWR),
                fd,
            );
        }
        m.apply(&enter(1, 10, "fcntl", &[3, F_DUPFD_CLOEXEC, 10]));
        m.apply(&exit(1, 11, "fcntl", 10));
        m.apply(&enter(1, 12, "close_range", &[4, 4, 0]));
        m.apply(&enter(
            1,
            13,
            "close_range",
            &[5, u32::MAX as u64, CLOSE_RANGE_CLOEXEC],
        ));
        m.apply(&ev(1, 14, SysEventKind::Exec { pid: 1, old_pid: 1 }));
        assert_eq!(fsync(&mut m, 1, 15, 3).as_deref(), Some("/f3"));
        for fd in [4, 5, 10] {
            assert_eq!(fsync(&mut m, 1, 16 + fd, fd), None, "fd {fd}");
        }
    }

    #[test]
    fn opens_stopped_before_their_exits_were_read_pair_in_order() {
        let mut m = FdModel::new(1);
        m.open_stopped(1, file("/d/a-wal", libc::O_RDWR));
        m.open_stopped(1, file("/d/a-shm", libc::O_RDWR));
        m.apply(&exit(1, 1, "openat", 4));
        m.apply(&exit(1, 2, "openat", 5));
        assert_eq!(fsync(&mut m, 1, 3, 4).as_deref(), Some("/d/a-wal"));
        assert_eq!(fsync(&mut m, 1, 5, 5).as_deref(), Some("/d/a-shm"));
    }

    #[test]
    fn a_failed_open_adds_nothing_and_a_directory_sync_is_one() {
        let mut m = FdModel::new(1);
        m.open_stopped(1, file("/nope", libc::O_RDONLY));
        assert_eq!(m.apply(&exit(1, 1, "openat", -2)), None);
        let dir = OpenedFile {
            directory: true,
            ..file("/d", libc::O_RDONLY)
        };
        open(&mut m, 1, 2, dir, 3);
        m.apply(&enter(1, 3, "fdatasync", &[3]));
        match m.apply(&exit(1, 4, "fdatasync", 0)) {
            Some(Seen::Synced { kind, .. }) => {
                assert_eq!(kind, SyncKind::Directory { datasync: true })
            }
            other => panic!("{other:?}"),
        }
    }

    /// A record of the BPF observer: `tid` opened `path` (relative to `dirfd`) with `flags`,
    /// returning `ret` at `t`.
    fn recorded(tid: i32, t: u64, path: &str, dirfd: i32, flags: i32, ret: i64) -> RecordedOpen {
        let mode = if path.ends_with('/') {
            libc::S_IFDIR
        } else {
            libc::S_IFREG
        };
        let rec = OpenRecord {
            tid,
            enter_ns: t - 1,
            exit_ns: t,
            ret,
            flags: flags as u64,
            dirfd,
            path: Some(path.into()),
            dev: 1,
            ino: 2,
            mode,
            cwd_dev: 1,
            cwd_ino: 3,
            kind: Kind::Open,
        };
        let absolute = path
            .starts_with('/')
            .then(|| PathBuf::from(path.trim_end_matches('/')));
        RecordedOpen {
            rec,
            absolute,
            dirfd_path: None,
        }
    }

    fn opened(s: Option<Seen>) -> Arc<OpenedFile> {
        match s {
            Some(Seen::Opened { file, .. }) => file,
            other => panic!("not an open: {other:?}"),
        }
    }

    #[test]
    fn opens_seen_by_bpf_pair_with_their_exits_and_name_their_descriptors() {
        let mut m = FdModel::new(1).with_recorded_opens();
        // A directory opened read-only, then synced: a directory sync, by path.
        m.open_recorded(recorded(1, 10, "/d/", libc::AT_FDCWD, libc::O_RDONLY, 3));
        assert!(opened(m.apply(&exit(1, 10, "openat", 3))).directory);
        m.apply(&enter(1, 11, "fsync", &[3]));
        match m.apply(&exit(1, 12, "fsync", 0)) {
            Some(Seen::Synced { kind, file, .. }) => {
                assert_eq!(kind, SyncKind::Directory { datasync: false });
                assert_eq!(file.unwrap().path, PathBuf::from("/d"));
            }
            other => panic!("{other:?}"),
        }
        // A file relative to that directory's descriptor, named through the model — not by
        // what `/proc` said when the record was read (the number may name another file by
        // then).
        let mut rel = recorded(1, 20, "x", 3, libc::O_RDONLY, 4);
        rel.dirfd_path = Some(PathBuf::from("/d/later.db"));
        m.open_recorded(rel);
        m.apply(&exit(1, 20, "openat", 4));
        assert_eq!(fsync(&mut m, 1, 21, 4).as_deref(), Some("/d/x"));
        // An open that may write, copied up: both said, from its record.
        let w = recorded(
            1,
            30,
            "/d/a.db",
            libc::AT_FDCWD,
            libc::O_RDWR | libc::O_DSYNC,
            5,
        );
        m.open_recorded(w);
        let f = opened(m.apply(&exit(1, 30, "openat", 5)));
        assert!(f.may_write && f.dsync && !f.directory);
        assert_eq!(f.stopped_ns, 29, "the open's entry");
        assert_eq!(fsync(&mut m, 1, 31, 5).as_deref(), Some("/d/a.db"));
        // A failed open consumes its record and names nothing.
        m.open_recorded(recorded(
            1,
            40,
            "/d/none",
            libc::AT_FDCWD,
            libc::O_RDONLY,
            -2,
        ));
        assert_eq!(m.apply(&exit(1, 40, "openat", -2)), None);
        assert_eq!(m.recorded_waiting(1), 0);
        assert_eq!(m.unseen_opens, 0);
    }

    #[test]
    fn an_open_whose_record_is_missing_is_counted_and_names_nothing() {
        let mut m = FdModel::new(1).with_recorded_opens();
        assert_eq!(m.apply(&exit(1, 40, "openat", 7)), None);
        assert_eq!(m.unseen_opens, 1);
        assert_eq!(fsync(&mut m, 1, 41, 7), None, "its descriptor is unknown");
        // A record that comes after its exit was applied (counted unseen above, fd 7 at 40) is
        // dropped, not taken for the thread's next open of the same descriptor.
        m.open_recorded(recorded(
            1,
            40,
            "/d/late",
            libc::AT_FDCWD,
            libc::O_RDONLY,
            7,
        ));
        m.open_recorded(recorded(
            1,
            47,
            "/d/next",
            libc::AT_FDCWD,
            libc::O_RDONLY,
            7,
        ));
        m.apply(&exit(1, 47, "openat", 7));
        assert_eq!(fsync(&mut m, 1, 48, 7).as_deref(), Some("/d/next"));
        assert_eq!(m.recorded_waiting(1), 0);
        // A record whose descriptor is not the exit's is not taken for it, and stays for its
        // own exit.
        m.open_recorded(recorded(1, 60, "/d/a", libc::AT_FDCWD, libc::O_RDONLY, 9));
        assert_eq!(m.apply(&exit(1, 60, "openat", 10)), None);
        assert_eq!(m.unseen_opens, 2);
        m.apply(&exit(1, 60, "openat", 9));
        assert_eq!(fsync(&mut m, 1, 61, 9).as_deref(), Some("/d/a"));
        // A record far older than the exit belongs to an exit the trace lost: dropped, and the
        // next one pairs.
        m.open_recorded(recorded(
            1,
            100,
            "/d/old",
            libc::AT_FDCWD,
            libc::O_RDONLY,
            11,
        ));
        m.open_recorded(recorded(
            1,
            900_000_000,
            "/d/new",
            libc::AT_FDCWD,
            libc::O_RDONLY,
            11,
        ));
        m.apply(&exit(1, 900_000_000, "openat", 11));
        assert_eq!(fsync(&mut m, 1, 900_000_001, 11).as_deref(), Some("/d/new"));
        // A relative path whose base nobody could name.
        m.open_recorded(recorded(
            1,
            910_000_000,
            "rel",
            libc::AT_FDCWD,
            libc::O_RDONLY,
            12,
        ));
        assert_eq!(m.apply(&exit(1, 910_000_000, "openat", 12)), None);
        assert_eq!(m.unseen_opens, 3);
    }
}
