//! The descriptor tables of a recorded program, as the kernel kept them (`docs/formats/
//! syscalls.md`, "Descriptors: each process's table, copies and the end of a file
//! description"): one table per process (threads share theirs), each number naming an *open
//! file description* that `dup`, `fcntl(F_DUPFD)` and `fork` copy and that ends with its last
//! copy. The importer asks it which description a recorded number names and is told, as a
//! list of [`Ended`], which descriptions a call, an `execve` or an exit closed.
//!
//! Invariants: a description's `copies` is the number of table entries (current and `prev`)
//! that hold it, and it is in `live` exactly while that is above 0; two live descriptions
//! never share a written number. Only descriptions opened inside the recorded root are held:
//! a number outside the tables is the program's own business (inherited, a pipe, a library).
//! The work of copying and walking tables is bounded ([`MAX_TABLE_WORK`]): strace text is
//! someone else's file, and a few thousand forks of a process holding a few thousand copies
//! would otherwise cost the square of its size. Pure bookkeeping: no I/O, no clock.

use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A written number at or above this one names a description whose own number was still in
/// use by another live description when it was opened.
pub const FRESH_FDS_FROM: i32 = 1 << 20;

/// Table entries copied (at a fork, an `execve` that unshares) and walked (an `execve`'s
/// close-on-exec sweep, `close_range`) in one import, at most — which also bounds the entries
/// held at once (under 100 bytes each, some 200 MB at most): a program forking 100,000 times
/// while it holds 20 descriptors inside the root, or 1,000 times while it holds 2,000, stays
/// within it.
pub const MAX_TABLE_WORK: u64 = 1 << 21;

type DescId = u64;
type TableId = u64;

/// A file description whose last copy was dropped: its written number, and the thread that
/// opened it (a `close` the importer writes for an exit or an `execve` goes on that thread,
/// which has calls in the recording already).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    pub fd: i32,
    pub opener: u64,
}

/// One number in a process's table.
#[derive(Debug, Clone)]
struct Entry {
    desc: DescId,
    cloexec: bool,
    /// When the call that put the description at this number returned (ns, recording time).
    installed_end_ns: u64,
    /// The description the number held before, whose close has not been seen: a `close` on
    /// another thread that began before this entry's call returned closes that one (see
    /// `format::closes`).
    prev: Option<DescId>,
}

#[derive(Debug, Default)]
struct Table {
    /// Threads that use it and have not exited.
    members: u32,
    fds: BTreeMap<i32, Entry>,
}

#[derive(Debug)]
struct Desc {
    written: i32,
    copies: u32,
    opener: u64,
}

/// Every process's descriptors of the recording's files.
#[derive(Debug, Default)]
pub struct FdTables {
    tables: HashMap<TableId, Table>,
    of_tid: HashMap<u64, TableId>,
    /// The process (thread group) of each thread, and the threads of each.
    tgid_of: HashMap<u64, u64>,
    threads_of: HashMap<u64, BTreeSet<u64>>,
    descs: HashMap<DescId, Desc>,
    /// Written numbers of live descriptions.
    live: HashMap<i32, DescId>,
    next_table: TableId,
    next_desc: DescId,
    next_fresh: i32,
    work: u64,
}

impl FdTables {
    /// Whether the bound on copying and walking tables was passed: the import must stop.
    pub fn over_budget(&self) -> bool {
        self.work > MAX_TABLE_WORK
    }

    /// Count `n` entries of work; `false` once over the budget (the work is then not done).
    fn spend(&mut self, n: usize) -> bool {
        self.work = self.work.saturating_add(n as u64);
        !self.over_budget()
    }

    /// The table of `tid`, a new empty one for a thread no `clone` showed (the first process,
    /// or one attached to), which is then a process of its own.
    fn table_of(&mut self, tid: u64) -> TableId {
        if let Some(&t) = self.of_tid.get(&tid) {
            return t;
        }
        let t = self.new_table(1, BTreeMap::new());
        self.of_tid.insert(tid, t);
        self.join_group(tid, tid);
        t
    }

    fn join_group(&mut self, tid: u64, tgid: u64) {
        self.tgid_of.insert(tid, tgid);
        self.threads_of.entry(tgid).or_default().insert(tid);
    }

    fn leave_group(&mut self, tid: u64) {
        if let Some(g) = self.tgid_of.remove(&tid)
            && let Some(set) = self.threads_of.get_mut(&g)
        {
            set.remove(&tid);
            if set.is_empty() {
                self.threads_of.remove(&g);
            }
        }
    }

    fn new_table(&mut self, members: u32, fds: BTreeMap<i32, Entry>) -> TableId {
        let t = self.next_table;
        self.next_table += 1;
        self.tables.insert(t, Table { members, fds });
        t
    }

    fn entry(&self, tid: u64, fd: i32) -> Option<&Entry> {
        let t = self.of_tid.get(&tid)?;
        self.tables.get(t)?.fds.get(&fd)
    }

    /// The written number of the description `fd` names in `tid`'s process.
    pub fn lookup(&self, tid: u64, fd: i32) -> Option<i32> {
        let e = self.entry(tid, fd)?;
        self.descs.get(&e.desc).map(|d| d.written)
    }

    /// One copy of `desc` less; the description when that was the last.
    fn release(&mut self, desc: DescId) -> Option<Ended> {
        let d = self.descs.get_mut(&desc)?;
        d.copies = d.copies.saturating_sub(1);
        if d.copies > 0 {
            return None;
        }
        let ended = Ended {
            fd: d.written,
            opener: d.opener,
        };
        self.descs.remove(&desc);
        self.live.remove(&ended.fd);
        Some(ended)
    }

    /// Drop an entry: the descriptions that ended.
    fn drop_entry(&mut self, e: Entry) -> Vec<Ended> {
        let mut ended: Vec<Ended> = self.release(e.desc).into_iter().collect();
        if let Some(p) = e.prev {
            ended.extend(self.release(p));
        }
        ended
    }

    /// Put `desc` (one more copy of it) at `fd` in `tid`'s table. What the number held is
    /// kept as `prev` (a close of it on another thread may still come); what was kept before
    /// that is let go, and may end here.
    fn install(
        &mut self,
        tid: u64,
        fd: i32,
        desc: DescId,
        cloexec: bool,
        end_ns: u64,
    ) -> Vec<Ended> {
        if let Some(d) = self.descs.get_mut(&desc) {
            d.copies += 1;
        }
        let t = self.table_of(tid);
        let new = Entry {
            desc,
            cloexec,
            installed_end_ns: end_ns,
            prev: None,
        };
        let Some(old) = self
            .tables
            .get_mut(&t)
            .and_then(|tb| tb.fds.insert(fd, new))
        else {
            return vec![];
        };
        // The kernel handed out `fd` again: what held it was closed by something the
        // recording does not show, or is being closed on another thread right now.
        let ended = old.prev.and_then(|p| self.release(p)).into_iter().collect();
        if let Some(e) = self.tables.get_mut(&t).and_then(|tb| tb.fds.get_mut(&fd)) {
            e.prev = Some(old.desc);
        }
        ended
    }

    /// An `open` that returned `fd` (at `end_ns`): a new description; its written number, and
    /// what ended.
    pub fn open(&mut self, tid: u64, fd: i32, cloexec: bool, end_ns: u64) -> (i32, Vec<Ended>) {
        let mut written = fd;
        while self.live.contains_key(&written) {
            written = FRESH_FDS_FROM.saturating_add(self.next_fresh);
            self.next_fresh = self.next_fresh.saturating_add(1);
        }
        let desc = self.next_desc;
        self.next_desc += 1;
        self.descs.insert(
            desc,
            Desc {
                written,
                copies: 0,
                opener: tid,
            },
        );
        self.live.insert(written, desc);
        let ended = self.install(tid, fd, desc, cloexec, end_ns);
        (written, ended)
    }

    /// `dup`/`dup2`/`dup3`/`fcntl(F_DUPFD…)` of `old` to `new`: what ended (a `dup2` onto a
    /// number that held a description drops that copy).
    pub fn dup(&mut self, tid: u64, old: i32, new: i32, cloexec: bool, end_ns: u64) -> Vec<Ended> {
        if old == new {
            return vec![];
        }
        let mut ended = self.drop_fd(tid, new);
        if let Some(desc) = self.entry(tid, old).map(|e| e.desc) {
            ended.extend(self.install(tid, new, desc, cloexec, end_ns));
        }
        ended
    }

    /// Remove `fd` from `tid`'s table: what ended.
    fn drop_fd(&mut self, tid: u64, fd: i32) -> Vec<Ended> {
        let Some(t) = self.of_tid.get(&tid).copied() else {
            return vec![];
        };
        match self.tables.get_mut(&t).and_then(|tb| tb.fds.remove(&fd)) {
            Some(e) => self.drop_entry(e),
            None => vec![],
        }
    }

    /// A `close(fd)` that began at `start_ns`: `None` when `fd` held nothing the tables follow;
    /// otherwise the descriptions that ended — first the one the close closed, when it ended
    /// (empty: another copy lives on).
    pub fn close(&mut self, tid: u64, fd: i32, start_ns: u64) -> Option<Vec<Ended>> {
        let t = *self.of_tid.get(&tid)?;
        let entry = self.tables.get_mut(&t)?.fds.get_mut(&fd)?;
        if entry.installed_end_ns > start_ns {
            // Began before the number was handed out again: it closes what the number held
            // before (if the tables followed that), never the description put there since.
            let prev = entry.prev.take();
            return Some(prev.and_then(|p| self.release(p)).into_iter().collect());
        }
        let e = self.tables.get_mut(&t)?.fds.remove(&fd)?;
        Some(self.drop_entry(e))
    }

    /// `fcntl(fd, F_SETFD, …)`, `ioctl(fd, FIOCLEX / FIONCLEX)`.
    pub fn set_cloexec(&mut self, tid: u64, fd: i32, on: bool) {
        let Some(t) = self.of_tid.get(&tid) else {
            return;
        };
        if let Some(e) = self.tables.get_mut(t).and_then(|tb| tb.fds.get_mut(&fd)) {
            e.cloexec = on;
        }
    }

    /// `close_range(first, last, …)`: with `cloexec` the numbers are marked, otherwise dropped
    /// (`unshare` first gives the caller a table of its own).
    pub fn close_range(
        &mut self,
        tid: u64,
        first: i32,
        last: i32,
        cloexec: bool,
        unshare: bool,
    ) -> Vec<Ended> {
        if first > last {
            return vec![];
        }
        if unshare {
            self.unshare(tid);
        }
        let t = self.table_of(tid);
        let numbers: Vec<i32> = match self.tables.get(&t) {
            Some(tb) => tb.fds.range(first..=last).map(|(&n, _)| n).collect(),
            None => return vec![],
        };
        if cloexec {
            if !self.spend(numbers.len()) {
                return vec![];
            }
            for n in numbers {
                self.set_cloexec(tid, n, true);
            }
            return vec![];
        }
        // Each number is dropped once: no budget needed beyond what made it.
        numbers
            .into_iter()
            .flat_map(|n| self.drop_fd(tid, n))
            .collect()
    }

    /// A `clone`/`fork`/`vfork` of `parent` that made `child`: with `share_files`
    /// (`CLONE_FILES`) the child uses the parent's table, otherwise a copy of it; with
    /// `thread` (`CLONE_THREAD`) it is a thread of the parent's process. What ended: a thread
    /// id the kernel gave again leaves what it had (its exit was not shown).
    pub fn spawn(
        &mut self,
        parent: u64,
        child: u64,
        share_files: bool,
        thread: bool,
    ) -> Vec<Ended> {
        let t = self.table_of(parent);
        let ended = self.exit(child);
        if share_files {
            if let Some(tb) = self.tables.get_mut(&t) {
                tb.members += 1;
            }
            self.of_tid.insert(child, t);
        } else {
            let copy = self.copy_of(t);
            let c = self.new_table(1, copy);
            self.of_tid.insert(child, c);
        }
        let group = if thread {
            self.tgid_of.get(&parent).copied().unwrap_or(parent)
        } else {
            child
        };
        self.join_group(child, group);
        ended
    }

    /// The entries of table `t`, each description one copy more; the `prev` of each stays
    /// with `t` (a close racing an open is the parent's). Empty once over the budget.
    fn copy_of(&mut self, t: TableId) -> BTreeMap<i32, Entry> {
        let len = self.tables.get(&t).map_or(0, |tb| tb.fds.len());
        if !self.spend(len) {
            return BTreeMap::new();
        }
        let mut copy = self
            .tables
            .get(&t)
            .map(|tb| tb.fds.clone())
            .unwrap_or_default();
        for e in copy.values_mut() {
            e.prev = None;
            if let Some(d) = self.descs.get_mut(&e.desc) {
                d.copies += 1;
            }
        }
        copy
    }

    /// Give `tid` a table of its own when it shares one.
    fn unshare(&mut self, tid: u64) {
        let t = self.table_of(tid);
        if self.tables.get(&t).is_some_and(|tb| tb.members > 1) {
            let copy = self.copy_of(t);
            // Not the last member: nothing ends.
            self.leave(t);
            let c = self.new_table(1, copy);
            self.of_tid.insert(tid, c);
        }
    }

    /// An `execve` of `tid` that succeeded; `became` is the thread id it has after it (a
    /// thread other than the first takes the process's id: strace's `<pid changed to N>`).
    /// The process's other threads end, its table is unshared from any other process's, and
    /// its close-on-exec numbers are dropped: what ended.
    pub fn exec(&mut self, tid: u64, became: Option<u64>) -> Vec<Ended> {
        self.table_of(tid);
        let group = self.tgid_of.get(&tid).copied().unwrap_or(tid);
        let others: Vec<u64> = self
            .threads_of
            .get(&group)
            .map(|s| s.iter().copied().filter(|&t| t != tid).collect())
            .unwrap_or_default();
        let mut ended = vec![];
        for other in others {
            ended.extend(self.exit(other));
        }
        let mut tid = tid;
        if let Some(new) = became.filter(|&n| n != tid) {
            ended.extend(self.exit(new));
            if let Some(t) = self.of_tid.remove(&tid) {
                self.of_tid.insert(new, t);
            }
            self.leave_group(tid);
            self.join_group(new, new);
            tid = new;
        }
        self.unshare(tid);
        let t = self.table_of(tid);
        let len = self.tables.get(&t).map_or(0, |tb| tb.fds.len());
        if !self.spend(len) {
            return ended;
        }
        let cloexec: Vec<i32> = self
            .tables
            .get(&t)
            .map(|tb| {
                tb.fds
                    .iter()
                    .filter(|(_, e)| e.cloexec)
                    .map(|(&n, _)| n)
                    .collect()
            })
            .unwrap_or_default();
        for n in cloexec {
            ended.extend(self.drop_fd(tid, n));
        }
        ended
    }

    /// `tid` exited: when it was its table's last thread, everything in the table is dropped.
    pub fn exit(&mut self, tid: u64) -> Vec<Ended> {
        self.leave_group(tid);
        match self.of_tid.remove(&tid) {
            Some(t) => self.leave(t),
            None => vec![],
        }
    }

    /// One member of table `t` less: what ended when that was the last.
    fn leave(&mut self, t: TableId) -> Vec<Ended> {
        let Some(tb) = self.tables.get_mut(&t) else {
            return vec![];
        };
        tb.members = tb.members.saturating_sub(1);
        if tb.members > 0 {
            return vec![];
        }
        let Some(tb) = self.tables.remove(&t) else {
            return vec![];
        };
        tb.fds
            .into_values()
            .flat_map(|e| self.drop_entry(e))
            .collect()
    }
}
