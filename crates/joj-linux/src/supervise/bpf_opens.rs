//! The BPF observer of opens (`bpf/opens.bpf.c`, built by build.rs): every open of the
//! command's tasks seen at its exit, in the kernel, without stopping the task — its path as the
//! task gave it, its flags, the descriptor and the file it names (device, inode, mode), and the
//! task's working directory (device, inode). With it, opens need no stop ([`super::filter`]):
//! what a stop learnt before the open ran — whether the overlay copies the file up from the
//! directory the command started in — is read afterwards from the upper file ([`resolved`]).
//!
//! Loaded with aya, a maintained pure-Rust loader that relocates the program's kernel-structure
//! reads to the running kernel (CO-RE) and reads its ring buffer; joj keeps no loader of its
//! own. The records are read by the events thread after each read of the syscall trace, waiting
//! up to 20 ms for the record of an open whose exit it has read (written at the same exit, so
//! there unless the task was preempted between the two); one later than that is counted unseen
//! ([`OpenObserver::drain`], the model's pairing in `fdtable`).

use std::collections::HashMap as Map;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use aya::maps::{Array, HashMap, MapData, RingBuf};
use aya::programs::{RawTracePoint, TracePoint};

/// The object build.rs compiled, aligned as aya's parser needs.
static OBJECT: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/opens.bpf.o"));

/// Bytes before the path in a record (`struct open_record`).
const HEADER: usize = 72;
/// `path_len` of a path the program could not read.
const UNREADABLE: u16 = 0xffff;

/// One open, as the kernel saw it at its exit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OpenRecord {
    pub(crate) tid: i32,
    /// CLOCK_MONOTONIC ns of the call's entry and exit.
    pub(crate) enter_ns: u64,
    pub(crate) exit_ns: u64,
    /// The descriptor, or `-errno`.
    pub(crate) ret: i64,
    pub(crate) flags: u64,
    pub(crate) dirfd: i32,
    /// The path as the task passed it; `None` when it could not be read.
    pub(crate) path: Option<PathBuf>,
    /// The opened file: its filesystem's device (`st_dev`), inode and mode (0 when the call
    /// failed).
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) mode: u32,
    /// The task's working directory at the exit: device and inode.
    pub(crate) cwd_dev: u64,
    pub(crate) cwd_ino: u64,
    pub(crate) kind: Kind,
}

/// What a record is (`enum call` of the program).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Open,
    /// chdir, fchdir: `dev` and `ino` are the working directory's before it, `cwd_*` after.
    Chdir,
    /// unlink, unlinkat (`flags`: unlinkat's, `AT_REMOVEDIR` for a directory): `dev` and
    /// `ino` are the inode ext4 unlinked (0 when it unlinked none).
    Unlink,
    /// ext4 freed `ret` blocks of inode `ino` from physical block `flags` (logical block
    /// `cwd_ino`).
    Freed,
    /// ext4 freed inode `ino`: its number may name another file from now on.
    InodeFreed,
}

impl Kind {
    fn of(call: u32) -> Option<Kind> {
        Some(match call {
            1..=4 => Kind::Open,
            5 | 6 => Kind::Chdir,
            7 | 8 => Kind::Unlink,
            9 => Kind::Freed,
            10 => Kind::InodeFreed,
            _ => return None,
        })
    }
}

impl OpenRecord {
    pub(crate) fn is_directory(&self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFDIR
    }

    pub(crate) fn may_write(&self) -> bool {
        self.flags & u64::from(super::filter::WRITE_FLAGS) != 0
    }
}

/// The kernel's `dev_t` (`major << 20 | minor`) as user space's.
fn user_dev(kernel: u32) -> u64 {
    libc::makedev(kernel >> 20, kernel & 0xf_ffff)
}

/// User space's `dev_t` as the kernel's.
fn kernel_dev(user: u64) -> u32 {
    (libc::major(user) << 20) | (libc::minor(user) & 0xf_ffff)
}

/// A record's fields at their offsets (see `struct open_record`); `None` if it is short.
pub(crate) fn parse(b: &[u8]) -> Option<OpenRecord> {
    let u64_at = |o: usize| Some(u64::from_ne_bytes(b.get(o..o + 8)?.try_into().ok()?));
    let u32_at = |o: usize| Some(u32::from_ne_bytes(b.get(o..o + 4)?.try_into().ok()?));
    let u16_at = |o: usize| Some(u16::from_ne_bytes(b.get(o..o + 2)?.try_into().ok()?));
    let path_len = u16_at(66)?;
    let path = if path_len == UNREADABLE {
        None
    } else {
        use std::os::unix::ffi::OsStrExt;
        let bytes = b.get(HEADER..HEADER + usize::from(path_len))?;
        Some(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)))
    };
    Some(OpenRecord {
        enter_ns: u64_at(0)?,
        exit_ns: u64_at(8)?,
        ret: u64_at(16)? as i64,
        flags: u64_at(24)?,
        ino: u64_at(32)?,
        cwd_ino: u64_at(40)?,
        dirfd: u32_at(48)? as i32,
        tid: u32_at(52)? as i32,
        dev: user_dev(u32_at(56)?),
        cwd_dev: user_dev(u32_at(60)?),
        mode: u32::from(u16_at(64)?),
        kind: Kind::of(u32_at(68)?)?,
        path,
    })
}

/// An open the BPF observer saw, with what the events thread resolved of its path when it read
/// the record (the model itself reads nothing).
#[derive(Debug, Clone)]
pub(crate) struct RecordedOpen {
    pub(crate) rec: OpenRecord,
    /// The path made absolute without the model: given absolute, or against the working
    /// directory the record names.
    pub(crate) absolute: Option<PathBuf>,
    /// What `/proc` said the directory descriptor named, for a path relative to one that the
    /// model did not see opened.
    pub(crate) dirfd_path: Option<PathBuf>,
}

/// Why the observer could not start: joj then stops at every open, as without it.
#[derive(Debug, thiserror::Error)]
#[error("the BPF observer of opens could not start ({step}): {source}")]
pub struct BpfError {
    step: &'static str,
    #[source]
    source: Box<dyn std::error::Error + Send + Sync>,
}

fn bpf_err<E: std::error::Error + Send + Sync + 'static>(
    step: &'static str,
) -> impl FnOnce(E) -> BpfError {
    move |e| BpfError {
        step,
        source: Box::new(e),
    }
}

fn program<'b>(
    bpf: &'b mut aya::Ebpf,
    name: &str,
) -> Result<&'b mut aya::programs::Program, BpfError> {
    bpf.program_mut(name).ok_or_else(|| BpfError {
        step: "finding a program",
        source: format!("{name} is not in the object").into(),
    })
}

/// A map the object should hold and does not.
fn missing(map: &str) -> BpfError {
    BpfError {
        step: "finding a map",
        source: format!("no map `{map}` in the object").into(),
    }
}

/// The loaded, attached programs and the maps joj reads.
pub(crate) struct OpenObserver {
    /// Owns the programs and their links: dropping it detaches them.
    bpf: aya::Ebpf,
    records: RingBuf<MapData>,
    lost: Array<MapData, u64>,
    /// Records too short to read (none expected: counted, not dropped in silence).
    unparsed: u64,
}

impl std::fmt::Debug for OpenObserver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OpenObserver")
    }
}

/// (program, tracepoint category, tracepoint) of every program in the object.
fn programs() -> Vec<(&'static str, &'static str, &'static str)> {
    let mut v = vec![
        ("task_exited", "sched", "sched_process_exit"),
        ("openat_enter", "syscalls", "sys_enter_openat"),
        ("openat_exit", "syscalls", "sys_exit_openat"),
        ("openat2_enter", "syscalls", "sys_enter_openat2"),
        ("openat2_exit", "syscalls", "sys_exit_openat2"),
        ("chdir_enter", "syscalls", "sys_enter_chdir"),
        ("chdir_exit", "syscalls", "sys_exit_chdir"),
        ("fchdir_enter", "syscalls", "sys_enter_fchdir"),
        ("fchdir_exit", "syscalls", "sys_exit_fchdir"),
        ("unlinkat_enter", "syscalls", "sys_enter_unlinkat"),
        ("unlinkat_exit", "syscalls", "sys_exit_unlinkat"),
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([
        ("open_enter", "syscalls", "sys_enter_open"),
        ("open_exit", "syscalls", "sys_exit_open"),
        ("creat_enter", "syscalls", "sys_enter_creat"),
        ("creat_exit", "syscalls", "sys_exit_creat"),
        ("unlink_enter", "syscalls", "sys_enter_unlink"),
        ("unlink_exit", "syscalls", "sys_exit_unlink"),
    ]);
    v
}

/// (program, raw tracepoint): the scheduler's, whose arguments are task pointers read with
/// CO-RE (a tracepoint's record lays them out differently from kernel to kernel).
const RAW_PROGRAMS: [(&str, &str); 2] = [
    ("task_forked", "sched_process_fork"),
    ("task_execed", "sched_process_exec"),
];

/// ext4's programs, attached only when a filesystem's freed blocks are taken.
const EXT4_PROGRAMS: [(&str, &str, &str); 3] = [
    ("ext4_unlinked", "ext4", "ext4_unlink_enter"),
    ("ext4_freed", "ext4", "ext4_remove_blocks"),
    ("ext4_inode_freed", "ext4", "ext4_free_inode"),
];

impl OpenObserver {
    /// Load and attach the programs. No task is watched until [`OpenObserver::watch`].
    /// `freed`: the ext4 filesystem whose unlinks and freed blocks are taken
    /// ([`super::freed::FreedBlocks`]).
    pub(crate) fn start(
        freed: Option<super::freed::FreedBlocks>,
    ) -> Result<OpenObserver, BpfError> {
        let dev: u32 = freed.map_or(0, |f| kernel_dev(f.dev));
        let mut bpf = aya::EbpfLoader::new()
            .set_global("freed_dev", &dev, true)
            .load(OBJECT)
            .map_err(bpf_err("loading the object"))?;
        let ext4: &[_] = if freed.is_some() { &EXT4_PROGRAMS } else { &[] };
        for (name, point) in RAW_PROGRAMS {
            let p: &mut RawTracePoint = program(&mut bpf, name)?
                .try_into()
                .map_err(bpf_err("finding a program"))?;
            p.load().map_err(bpf_err("loading a program"))?;
            p.attach(point).map_err(bpf_err("attaching a program"))?;
        }
        for (name, category, point) in programs().into_iter().chain(ext4.iter().copied()) {
            let p: &mut TracePoint = program(&mut bpf, name)?
                .try_into()
                .map_err(bpf_err("finding a program"))?;
            p.load().map_err(bpf_err("loading a program"))?;
            p.attach(category, point)
                .map_err(bpf_err("attaching a program"))?;
        }
        let records = bpf.take_map("opens").ok_or_else(|| missing("opens"))?;
        let records = RingBuf::try_from(records).map_err(bpf_err("opening the ring buffer"))?;
        let lost = bpf.take_map("lost").ok_or_else(|| missing("lost"))?;
        let lost = Array::try_from(lost).map_err(bpf_err("opening the lost counters"))?;
        Ok(OpenObserver {
            bpf,
            records,
            lost,
            unparsed: 0,
        })
    }

    /// Watch `tid` and every task it starts from now on.
    pub(crate) fn watch(&mut self, tid: i32) -> Result<(), BpfError> {
        let tasks = self.bpf.map_mut("tasks").ok_or_else(|| missing("tasks"))?;
        let mut tasks: HashMap<_, i32, i32> =
            HashMap::try_from(tasks).map_err(bpf_err("opening the task map"))?;
        tasks
            .insert(tid, 1, 0)
            .map_err(bpf_err("adding the command"))
    }

    /// Append every record written so far to `out`; returns how many.
    pub(crate) fn drain(&mut self, out: &mut Vec<OpenRecord>) -> usize {
        let mut n = 0;
        while let Some(item) = self.records.next() {
            match parse(&item) {
                Some(r) => {
                    out.push(r);
                    n += 1;
                }
                None => self.unparsed += 1,
            }
        }
        n
    }

    /// Records the ring had no room for or joj could not read, and tasks or calls the maps had
    /// no room for: whatever the observer could not see, of any kind.
    pub(crate) fn lost(&self) -> u64 {
        (0..2)
            .filter_map(|i| self.lost.get(&i, 0).ok())
            .sum::<u64>()
            + self.unparsed
    }
}

/// Working directories by device and inode, as the command names them: a record names its
/// task's working directory by its inode, which joj can name only while some task of the
/// command is in it (`/proc/<tid>/cwd`) — so each is learnt once, and a record of a task that
/// has ended since is resolved by one that had the same directory.
/// At most [`CWDS_KEPT_BYTES`] of names are kept: a command that enters more directories than
/// that has the opens relative to the others named through `/proc` while their task lives,
/// else counted unseen. A directory keeps the first name joj learnt (renamed since, it is
/// still named by it), and a relative `chdir` is joined as written (`..` after a link names
/// the link's parent, where the kernel went to the target's).
#[derive(Debug, Default)]
pub(crate) struct Cwds(Map<(u64, u64), PathBuf>, usize);

/// Bytes of directory names joj keeps.
const CWDS_KEPT_BYTES: usize = 16 << 20;

impl Cwds {
    /// Learn `tid`'s working directory; returns its device and inode.
    pub(crate) fn learn(&mut self, tid: i32) -> Option<(u64, u64)> {
        let at = format!("/proc/{tid}/cwd");
        let path = std::fs::read_link(&at).ok()?;
        let m = std::fs::metadata(&at).ok()?;
        let key = (m.dev(), m.ino());
        self.keep(key, path);
        Some(key)
    }

    fn keep(&mut self, key: (u64, u64), path: PathBuf) {
        let bytes = path.as_os_str().len() + 64;
        if self.0.contains_key(&key) || self.1 + bytes > CWDS_KEPT_BYTES {
            return;
        }
        self.1 += bytes;
        self.0.insert(key, path);
    }

    /// A task changed its working directory: learn the new one's name, from the path it gave
    /// (against the one it left, when relative) or the descriptor (fchdir), else `/proc`.
    pub(crate) fn changed(&mut self, r: &OpenRecord) {
        let key = (r.cwd_dev, r.cwd_ino);
        if r.ret != 0 || self.0.contains_key(&key) {
            return;
        }
        let named = match &r.path {
            Some(p) if p.is_absolute() => Some(p.clone()),
            Some(p) => self.0.get(&(r.dev, r.ino)).map(|old| old.join(p)),
            // fchdir: what the descriptor names now, if it is still the directory entered.
            None => u64::try_from(r.dirfd).ok().and_then(|fd| {
                let m = std::fs::metadata(format!("/proc/{}/fd/{fd}", r.tid)).ok()?;
                ((m.dev(), m.ino()) == key)
                    .then(|| super::tracee::fd_path(r.tid, fd))
                    .flatten()
            }),
        };
        match named {
            Some(p) => self.keep(key, super::paths::normalized(&p)),
            None => {
                self.learn(r.tid);
            }
        }
    }

    fn of(&mut self, r: &OpenRecord) -> Option<PathBuf> {
        let key = (r.cwd_dev, r.cwd_ino);
        if let Some(p) = self.0.get(&key) {
            return Some(p.clone());
        }
        // Not kept (new, or beyond the bound): what `/proc` says, if it is this directory.
        let at = format!("/proc/{}/cwd", r.tid);
        let m = std::fs::metadata(&at).ok()?;
        if (m.dev(), m.ino()) != key {
            return None;
        }
        let path = std::fs::read_link(&at).ok()?;
        self.keep(key, path.clone());
        Some(path)
    }
}

/// A record with what can be resolved of its path now, outside the model: against the working
/// directory the record names, and where it leads (a link in the command's directory may lead
/// out of it, or into it). A path relative to a directory descriptor is left to the model,
/// which knows what the descriptor named at the open (its number may name another file by
/// now); `/proc` is asked only for a descriptor the model did not see opened.
///
/// `traced_dev`: the device of the filesystem the command's directory is on (the overlay's, or
/// the scratch filesystem's). A file the open reached on another device went out of the
/// directory through a link, whatever its path says: it is named where it landed — by the task's
/// view if it still runs, else by joj's, which sees the starting directory's own links (the
/// overlay's lower layer) at the same paths.
pub(crate) fn resolved(
    r: OpenRecord,
    cwds: &mut Cwds,
    landed: &mut Landed,
    scope: &super::paths::TracedDir,
    traced_dev: Option<u64>,
) -> RecordedOpen {
    let (named, dirfd_path) = named(&r, cwds);
    let absolute = named.map(|named| {
        let path = super::paths::normalized(&named);
        if !(r.may_write() || scope.contains(&path)) || r.ret < 0 {
            return path;
        }
        let excl = (libc::O_CREAT | libc::O_EXCL) as u64;
        let follow_last = r.flags & libc::O_NOFOLLOW as u64 == 0 && r.flags & excl != excl;
        let landed = landed.leads_to(r.tid, &named, follow_last);
        let left = traced_dev.is_some_and(|d| d != r.dev) && scope.contains(&path);
        match landed {
            Some(p) if !(left && scope.contains(&p)) => p,
            _ if left => std::fs::canonicalize(&named).unwrap_or(path),
            _ => path,
        }
    });
    RecordedOpen {
        rec: r,
        absolute,
        dirfd_path,
    }
}

/// Where the opens of one read of the records led ([`super::tracee::leads_to`], normalized),
/// each task's name looked up once: the lookup answers from the filesystem as it is when asked,
/// not as it was at the open, so the opens of one name by one task read together get one
/// answer whether it is asked once or for each. A DELETE-mode commit creates its journal under
/// the same name every time: a read of 100 ms of commits made some 250 lookups of it, each a
/// walk from `/proc/<tid>/root`, and the walks held back the command's syncs (measured in
/// docs/measurement.md, "The events thread's reads held the syncs back"). Emptied at each read;
/// it holds at most one entry per open read.
#[derive(Debug, Default)]
pub(crate) struct Landed {
    answers: Map<(i32, PathBuf, bool), Option<PathBuf>>,
    /// Lookups made in all.
    lookups: u64,
}

impl Landed {
    /// Forget the answers: the filesystem may have changed since they were asked.
    pub(crate) fn clear(&mut self) {
        self.answers.clear();
    }

    /// Lookups made since the run began.
    pub(crate) fn lookups(&self) -> u64 {
        self.lookups
    }

    fn leads_to(
        &mut self,
        tid: i32,
        named: &std::path::Path,
        follow_last: bool,
    ) -> Option<PathBuf> {
        self.answer(tid, named, follow_last, || {
            super::tracee::leads_to(tid, named, follow_last)
        })
    }

    /// `lookup`'s answer for this task, name and flag, asked once until [`Landed::clear`].
    /// "Cannot be told" (`None`) is kept too: what makes it — the task gone (the read at the
    /// command's end finds every task gone), a directory on the way missing — holds for the
    /// rest of the read as well; only a lookup that lost 64 races in a row to renames and
    /// mounts elsewhere is not, and it is no likelier for the next open of the name.
    fn answer(
        &mut self,
        tid: i32,
        named: &std::path::Path,
        follow_last: bool,
        lookup: impl FnOnce() -> Option<PathBuf>,
    ) -> Option<PathBuf> {
        let lookups = &mut self.lookups;
        self.answers
            .entry((tid, named.to_path_buf(), follow_last))
            .or_insert_with(|| {
                *lookups += 1;
                lookup().map(|p| super::paths::normalized(&p))
            })
            .clone()
    }
}

/// A record's path made absolute against the working directory it names, or (relative to a
/// directory descriptor) what `/proc` says that descriptor names now, for the caller to use when
/// the model did not see it opened.
fn named(r: &OpenRecord, cwds: &mut Cwds) -> (Option<PathBuf>, Option<PathBuf>) {
    match &r.path {
        Some(p) if p.is_absolute() => (Some(p.clone()), None),
        Some(p) if r.dirfd == libc::AT_FDCWD => (cwds.of(r).map(|c| c.join(p)), None),
        Some(_) => (
            None,
            u64::try_from(r.dirfd)
                .ok()
                .and_then(|fd| super::tracee::fd_path(r.tid, fd)),
        ),
        None => (None, None),
    }
}

/// The path an unlink from the working directory named, made absolute (its last component is
/// not followed: an unlink removes a link, not what it leads to).
pub(crate) fn unlinked_path(r: &OpenRecord, cwds: &mut Cwds) -> Option<PathBuf> {
    named(r, cwds).0.map(|p| super::paths::normalized(&p))
}

/// How much earlier than the open's entry a file's birth time may read: the filesystem stamps
/// it from the coarse clock, up to a tick behind (4 ms at 250 Hz, 10 ms at 100 Hz; 5.3 ms seen
/// here). A file the command's other calls copied up within this time before an open that may
/// write it (a `touch`, then a write) is counted as copied up by the open.
const BIRTH_CLOCK_SLACK_NS: u64 = 25_000_000;

/// Whether an open of `path` with `flags`, from `enter_ns` to `exit_ns`, copied the file up
/// from the overlay's lower layer — the directory the command started in, which joj sees as it
/// is, beneath the overlay the command sees: an open that may write and does not truncate, of
/// a file the lower layer has, whose upper file carries overlayfs's copy-up origin and was born
/// during this open. (A stop read this before the open: the upper file missing, the lower one
/// there.)
pub(crate) fn copied_up(
    flags: u64,
    enter_ns: u64,
    exit_ns: u64,
    scope: &super::paths::TracedDir,
    path: &std::path::Path,
) -> bool {
    if flags & u64::from(super::filter::WRITE_FLAGS) == 0
        || flags & libc::O_TRUNC as u64 != 0
        || !scope.is_overlay()
        || !scope.contains(path)
        || !std::fs::metadata(path).is_ok_and(|m| m.is_file())
    {
        return false;
    }
    let upper = scope.joj_path(path);
    if rustix::fs::lgetxattr_query(&upper, "trusted.overlay.origin").is_err() {
        return false;
    }
    // Only the birth time is asked for: a stat that returns the mtime would make the file's
    // next write take a fine-grained one (see `device_quietly` in joj-experiment).
    let Ok(st) = rustix::fs::statx(
        rustix::fs::CWD,
        &upper,
        rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
        rustix::fs::StatxFlags::BTIME,
    ) else {
        return false;
    };
    if st.stx_mask & rustix::fs::StatxFlags::BTIME.bits() == 0 {
        return false;
    }
    let born_real =
        st.stx_btime.tv_sec.unsigned_abs() * 1_000_000_000 + u64::from(st.stx_btime.tv_nsec);
    let born = born_real.saturating_sub(real_minus_mono_ns());
    born + BIRTH_CLOCK_SLACK_NS >= enter_ns && born <= exit_ns + BIRTH_CLOCK_SLACK_NS
}

/// CLOCK_REALTIME minus CLOCK_MONOTONIC, now.
fn real_minus_mono_ns() -> u64 {
    let real = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
    let real = real.tv_sec.unsigned_abs() * 1_000_000_000 + real.tv_nsec.unsigned_abs();
    real.saturating_sub(crate::tracefs::now_mono_ns())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_and_name_are_looked_up_once_per_read() {
        let mut landed = Landed::default();
        let asked = std::cell::Cell::new(0);
        let ask = |l: &mut Landed, tid, name: &str, follow| {
            l.answer(tid, std::path::Path::new(name), follow, || {
                asked.set(asked.get() + 1);
                Some(PathBuf::from(format!("/w/{name}/../x")))
            })
        };
        for _ in 0..3 {
            assert_eq!(ask(&mut landed, 1, "j", true), Some(PathBuf::from("/w/x")));
        }
        assert_eq!(asked.get(), 1, "one name, one task, one read: one lookup");
        ask(&mut landed, 2, "j", true);
        ask(&mut landed, 1, "j", false);
        ask(&mut landed, 1, "k", true);
        assert_eq!(
            asked.get(),
            4,
            "another task, flag or name is its own lookup"
        );
        landed.clear();
        ask(&mut landed, 1, "j", true);
        assert_eq!(asked.get(), 5, "the next read asks again");
        assert_eq!(landed.lookups(), 5);
        // "Cannot be told" (the task gone) holds for the read too.
        for _ in 0..2 {
            assert_eq!(
                landed.answer(3, std::path::Path::new("/gone"), true, || None),
                None
            );
        }
        assert_eq!(landed.lookups(), 6);
    }

    #[test]
    fn a_record_is_read_at_the_programs_offsets() {
        let mut b = vec![0u8; HEADER];
        b[0..8].copy_from_slice(&10u64.to_ne_bytes());
        b[8..16].copy_from_slice(&20u64.to_ne_bytes());
        b[16..24].copy_from_slice(&(-2i64).to_ne_bytes());
        b[24..32].copy_from_slice(&(libc::O_CLOEXEC as u64).to_ne_bytes());
        b[32..40].copy_from_slice(&77u64.to_ne_bytes());
        b[40..48].copy_from_slice(&2u64.to_ne_bytes());
        b[48..52].copy_from_slice(&(-100i32).to_ne_bytes());
        b[52..56].copy_from_slice(&42u32.to_ne_bytes());
        b[56..60].copy_from_slice(&((7u32 << 20) | 3).to_ne_bytes());
        b[60..64].copy_from_slice(&((254u32 << 20) | 1).to_ne_bytes());
        b[64..66].copy_from_slice(&0o040755u16.to_ne_bytes());
        b[66..68].copy_from_slice(&3u16.to_ne_bytes());
        b[68..72].copy_from_slice(&1u32.to_ne_bytes());
        b.extend_from_slice(b"a/b\0");
        let r = parse(&b).unwrap();
        assert_eq!(r.path.as_deref(), Some(std::path::Path::new("a/b")));
        assert_eq!((r.enter_ns, r.exit_ns, r.ret), (10, 20, -2));
        assert_eq!(r.flags, libc::O_CLOEXEC as u64);
        assert_eq!((r.ino, r.cwd_ino, r.dirfd, r.tid), (77, 2, -100, 42));
        assert_eq!(r.dev, libc::makedev(7, 3));
        assert_eq!(r.cwd_dev, libc::makedev(254, 1));
        assert!(r.is_directory());
        assert!(!r.may_write() && r.kind == Kind::Open);
        b[24..32].copy_from_slice(&(libc::O_RDWR as u64).to_ne_bytes());
        assert!(parse(&b).unwrap().may_write());
        // A path the program could not read, and a record cut short.
        b[66..68].copy_from_slice(&UNREADABLE.to_ne_bytes());
        assert_eq!(parse(&b).unwrap().path, None);
        assert_eq!(parse(&b[..40]), None);
    }
}
