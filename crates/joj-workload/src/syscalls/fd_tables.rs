//! The descriptor tables of a recorded program, as the kernel kept them (`docs/formats/
//! syscalls.md`, "Descriptors: each process's table, copies and the end of a file
//! description"): one table per process (threads share theirs), each number naming an *open
//! file description* that `dup`, `fcntl(F_DUPFD)` and `fork` copy and that ends with its last
//! copy. The importer asks it which description a recorded number names and is told, as a
//! list of numbers, which descriptions a call, an `execve` or an exit closed.
//!
//! Invariants: a description's `copies` is the number of table entries (current and `prev`)
//! that hold it, and it is in `live` exactly while that is above 0; two live descriptions
//! never share a written number. Only descriptions opened inside the recorded root are held:
//! a number outside the tables is the program's own business (inherited, a pipe, a library).
//! Pure bookkeeping: no I/O, no clock.

use std::collections::{BTreeMap, HashMap};

/// A written number at or above this one names a description whose own number was still in
/// use by another live description when it was opened.
pub const FRESH_FDS_FROM: i32 = 1 << 20;

type DescId = u64;
type TableId = u64;

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
    /// Threads that share it and have not exited.
    members: u32,
    fds: BTreeMap<i32, Entry>,
}

#[derive(Debug)]
struct Desc {
    written: i32,
    copies: u32,
}

/// Every process's descriptors of the recording's files.
#[derive(Debug, Default)]
pub struct FdTables {
    tables: HashMap<TableId, Table>,
    of_tid: HashMap<u64, TableId>,
    descs: HashMap<DescId, Desc>,
    /// Written numbers of live descriptions.
    live: HashMap<i32, DescId>,
    next_table: TableId,
    next_desc: DescId,
    next_fresh: i32,
}

impl FdTables {
    /// The table of `tid`, a new empty one for a thread no `clone` showed (the first process,
    /// or one attached to).
    fn table_of(&mut self, tid: u64) -> TableId {
        if let Some(&t) = self.of_tid.get(&tid) {
            return t;
        }
        let t = self.new_table(1, BTreeMap::new());
        self.of_tid.insert(tid, t);
        t
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

    /// One copy of `desc` less; its written number when that was the last.
    fn release(&mut self, desc: DescId) -> Option<i32> {
        let d = self.descs.get_mut(&desc)?;
        d.copies -= 1;
        if d.copies > 0 {
            return None;
        }
        let written = d.written;
        self.descs.remove(&desc);
        self.live.remove(&written);
        Some(written)
    }

    /// Drop an entry: the written numbers of the descriptions that ended.
    fn drop_entry(&mut self, e: Entry) -> Vec<i32> {
        let mut closed: Vec<i32> = self.release(e.desc).into_iter().collect();
        if let Some(p) = e.prev {
            closed.extend(self.release(p));
        }
        closed
    }

    /// Put `desc` (one more copy of it) at `fd` in `tid`'s table; what it replaces is kept as
    /// `prev` when the replaced entry was put there before this call began (a close of it may
    /// still come) — otherwise the replaced one ends here.
    fn install(&mut self, tid: u64, fd: i32, desc: DescId, cloexec: bool, end_ns: u64) {
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
        let old = self
            .tables
            .get_mut(&t)
            .and_then(|tb| tb.fds.insert(fd, new));
        if let Some(old) = old {
            // The kernel handed out `fd` again, so what held it was closed by something the
            // recording does not show, or is being closed on another thread right now: it is
            // kept as `prev` for such a close (and what was kept before it is let go).
            if let Some(p) = old.prev {
                self.release(p);
            }
            if let Some(e) = self.tables.get_mut(&t).and_then(|tb| tb.fds.get_mut(&fd)) {
                e.prev = Some(old.desc);
            }
        }
    }

    /// An `open` that returned `fd` (at `end_ns`): a new description; its written number.
    pub fn open(&mut self, tid: u64, fd: i32, cloexec: bool, end_ns: u64) -> i32 {
        let written = if self.live.contains_key(&fd) {
            let n = FRESH_FDS_FROM.saturating_add(self.next_fresh);
            self.next_fresh = self.next_fresh.saturating_add(1);
            n
        } else {
            fd
        };
        let desc = self.next_desc;
        self.next_desc += 1;
        self.descs.insert(desc, Desc { written, copies: 0 });
        self.live.insert(written, desc);
        self.install(tid, fd, desc, cloexec, end_ns);
        written
    }

    /// `dup`/`dup2`/`dup3`/`fcntl(F_DUPFD…)` of `old` to `new`: what ended (a `dup2` onto a
    /// number that held a description drops that copy).
    pub fn dup(&mut self, tid: u64, old: i32, new: i32, cloexec: bool, end_ns: u64) -> Vec<i32> {
        if old == new {
            return vec![];
        }
        let closed = self.drop_fd(tid, new);
        if let Some(desc) = self.entry(tid, old).map(|e| e.desc) {
            self.install(tid, new, desc, cloexec, end_ns);
        }
        closed
    }

    /// Remove `fd` from `tid`'s table: what ended.
    fn drop_fd(&mut self, tid: u64, fd: i32) -> Vec<i32> {
        let Some(t) = self.of_tid.get(&tid).copied() else {
            return vec![];
        };
        match self.tables.get_mut(&t).and_then(|tb| tb.fds.remove(&fd)) {
            Some(e) => self.drop_entry(e),
            None => vec![],
        }
    }

    /// A `close(fd)` that began at `start_ns`: `None` when `fd` held nothing the tables follow;
    /// otherwise the written numbers of the descriptions that ended, the one `fd` named first
    /// (empty: another copy lives on).
    pub fn close(&mut self, tid: u64, fd: i32, start_ns: u64) -> Option<Vec<i32>> {
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

    /// `fcntl(fd, F_SETFD, …)`.
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
    ) -> Vec<i32> {
        if unshare {
            self.unshare(tid);
        }
        let t = self.table_of(tid);
        let Some(tb) = self.tables.get_mut(&t) else {
            return vec![];
        };
        if first > last {
            return vec![];
        }
        if cloexec {
            for e in tb.fds.range_mut(first..=last).map(|(_, e)| e) {
                e.cloexec = true;
            }
            return vec![];
        }
        let gone: Vec<i32> = tb.fds.range(first..=last).map(|(&n, _)| n).collect();
        gone.into_iter()
            .flat_map(|n| self.drop_fd(tid, n))
            .collect()
    }

    /// A `clone`/`fork`/`vfork` of `parent` that made `child`: with `share` (`CLONE_FILES`,
    /// threads) the child uses the parent's table, otherwise a copy of it. What ended: a
    /// thread id the kernel gave again leaves the table it had (its exit was not shown).
    pub fn spawn(&mut self, parent: u64, child: u64, share: bool) -> Vec<i32> {
        let t = self.table_of(parent);
        let closed = match self.of_tid.remove(&child) {
            Some(old) => self.leave(old),
            None => vec![],
        };
        if share {
            if let Some(tb) = self.tables.get_mut(&t) {
                tb.members += 1;
            }
            self.of_tid.insert(child, t);
        } else {
            let copy = self.copy_of(t);
            let c = self.new_table(1, copy);
            self.of_tid.insert(child, c);
        }
        closed
    }

    /// The entries of table `t`, each description one copy more.
    fn copy_of(&mut self, t: TableId) -> BTreeMap<i32, Entry> {
        let copy = self
            .tables
            .get(&t)
            .map(|tb| tb.fds.clone())
            .unwrap_or_default();
        for e in copy.values() {
            for d in std::iter::once(e.desc).chain(e.prev) {
                if let Some(d) = self.descs.get_mut(&d) {
                    d.copies += 1;
                }
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

    /// An `execve` of `tid` that succeeded: its table unshared, close-on-exec numbers dropped.
    pub fn exec(&mut self, tid: u64) -> Vec<i32> {
        self.unshare(tid);
        let t = self.table_of(tid);
        let gone: Vec<i32> = self
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
        gone.into_iter()
            .flat_map(|n| self.drop_fd(tid, n))
            .collect()
    }

    /// `tid` exited: when it was its table's last thread, everything in the table is dropped.
    pub fn exit(&mut self, tid: u64) -> Vec<i32> {
        match self.of_tid.remove(&tid) {
            Some(t) => self.leave(t),
            None => vec![],
        }
    }

    /// One member of table `t` less: what ended when that was the last.
    fn leave(&mut self, t: TableId) -> Vec<i32> {
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
