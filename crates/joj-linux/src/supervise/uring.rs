//! What a supervised command submits through io_uring, as far as it can be read. A sync, write
//! or open submitted on a ring is not a system call: the filter never stops at it, so the
//! supervisor sees only `io_uring_setup`, `io_uring_enter` and `io_uring_register`. At a
//! ring's setup its parameters are read back from the command's memory once the call returned
//! (the ring's layout: where head, tail, mask and index array lie); at each `io_uring_enter`,
//! before the kernel takes the submissions, the entries between the ring's head and tail are
//! read from the command's mappings of the ring (`/proc/<tid>/maps` names them
//! `anon_inode:[io_uring]`, the SQ ring at offset 0, the entries at `IORING_OFF_SQES`).
//!
//! Layouts (`linux/io_uring.h`, little-endian):
//!
//! ```text
//! io_uring_params (120 B): sq_entries u32 @0, cq_entries @4, flags @8, …, sq_off @40
//! io_sqring_offsets (40 B): head u32 @0, tail @4, ring_mask @8, ring_entries @12, flags @16,
//!                           dropped @20, array @24, resv1 @28, user_addr u64 @32
//! io_uring_sqe (64 B, 128 with SQE128): opcode u8 @0, flags u8 @1, ioprio u16 @2, fd i32 @4,
//!                           off u64 @8, addr u64 @16, len u32 @24, op_flags u32 @28, …
//! ```
//!
//! What cannot be read is counted, never guessed: a ring polled by a kernel thread (`SQPOLL`:
//! submissions need no system call), one whose memory the command supplied (`NO_MMAP`), a
//! process with two rings on one anonymous inode, or a registered-file entry (its descriptor
//! is an index into a table joj did not read).

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};

const IORING_OFF_SQES: u64 = 0x1000_0000;
const SETUP_SQPOLL: u32 = 1 << 1;
const SETUP_SQE128: u32 = 1 << 10;
const SETUP_NO_MMAP: u32 = 1 << 14;
const SETUP_NO_SQARRAY: u32 = 1 << 16;
const IOSQE_FIXED_FILE: u8 = 1;
const OP_WRITEV: u8 = 2;
const OP_FSYNC: u8 = 3;
const OP_WRITE_FIXED: u8 = 5;
const OP_SYNC_FILE_RANGE: u8 = 8;
const OP_OPENAT: u8 = 18;
const OP_WRITE: u8 = 23;
const OP_OPENAT2: u8 = 28;
const FSYNC_DATASYNC: u32 = 1;
/// RWF_DSYNC | RWF_SYNC.
const RWF_ANY_SYNC: u32 = 0x2 | 0x4;
/// The most entries read at one `io_uring_enter` (the kernel's own limit on a ring).
const MAX_ENTRIES: u32 = 32768;
const PARAMS_BYTES: usize = 120;

/// A ring's layout, from its `io_uring_params`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ring {
    flags: u32,
    sq_entries: u32,
    head: u32,
    tail: u32,
    ring_mask: u32,
    array: u32,
}

impl Ring {
    /// The layout in the 120 bytes of `io_uring_params`.
    pub(crate) fn from_params(p: &[u8; PARAMS_BYTES]) -> Ring {
        let u = |off: usize| u32::from_le_bytes([p[off], p[off + 1], p[off + 2], p[off + 3]]);
        Ring {
            sq_entries: u(0),
            flags: u(8),
            head: u(40),
            tail: u(44),
            ring_mask: u(48),
            array: u(64),
        }
    }

    fn sqe_bytes(&self) -> u64 {
        if self.flags & SETUP_SQE128 != 0 {
            128
        } else {
            64
        }
    }
}

/// The parameters the kernel wrote back at `addr` in `tid` when `io_uring_setup` returned.
pub(crate) fn read_params(tid: libc::pid_t, addr: u64) -> Option<Ring> {
    let mem = File::open(format!("/proc/{tid}/mem")).ok()?;
    let mut p = [0u8; PARAMS_BYTES];
    mem.read_exact_at(&mut p, addr).ok()?;
    Some(Ring::from_params(&p))
}

/// Which sync a submission is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RingSync {
    Fsync,
    Fdatasync,
    SyncFileRange,
    /// A write with `RWF_DSYNC` or `RWF_SYNC`.
    SyncWrite,
}

/// One submission that touches durability or writes, as read from a ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Submitted {
    /// A sync or a synchronous write on descriptor `fd` (`None`: a registered file).
    Sync { kind: RingSync, fd: Option<i32> },
    /// An open (`IORING_OP_OPENAT`, `OPENAT2`): where it goes is not known before it runs.
    Open,
}

/// What reading the submissions at one `io_uring_enter` found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Read {
    pub(crate) submitted: Vec<Submitted>,
    /// The submissions could not be read (see the module comment for why they may not be).
    pub(crate) unreadable: bool,
    /// Writes without a sync flag: their descriptors, for the caller to check for `O_DSYNC`.
    pub(crate) writes: Vec<i32>,
}

/// The rings each process set up, by (process, ring descriptor).
#[derive(Debug, Default)]
pub(crate) struct Rings {
    rings: HashMap<(libc::pid_t, i32), Ring>,
}

impl Rings {
    pub(crate) fn set_up(&mut self, tgid: libc::pid_t, fd: i32, ring: Ring) {
        self.rings.insert((tgid, fd), ring);
    }

    /// The submissions `tid` (of process `tgid`) is about to hand the kernel with an
    /// `io_uring_enter` on `fd` of `to_submit` entries.
    pub(crate) fn entering(
        &self,
        tid: libc::pid_t,
        tgid: libc::pid_t,
        fd: i32,
        to_submit: u32,
    ) -> Read {
        let unreadable = Read {
            unreadable: to_submit > 0,
            ..Read::default()
        };
        let Some(ring) = self.rings.get(&(tgid, fd)) else {
            return unreadable;
        };
        if ring.flags & (SETUP_SQPOLL | SETUP_NO_MMAP) != 0 {
            return Read {
                unreadable: true,
                ..Read::default()
            };
        }
        if to_submit == 0 {
            return Read::default();
        }
        read_entries(tid, fd, ring, to_submit).unwrap_or(unreadable)
    }
}

/// The start addresses of the ring's SQ mapping and entries mapping in `tid`, found by the
/// ring descriptor's inode; `None` when they are not exactly one each.
fn mappings(tid: libc::pid_t, fd: i32) -> Option<(u64, u64)> {
    let ino = std::fs::metadata(format!("/proc/{tid}/fd/{fd}"))
        .ok()?
        .ino();
    let maps = std::fs::read_to_string(format!("/proc/{tid}/maps")).ok()?;
    let (mut sq, mut sqes) = (Vec::new(), Vec::new());
    for line in maps
        .lines()
        .filter(|l| l.ends_with("anon_inode:[io_uring]"))
    {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (Some(range), Some(off), Some(inode)) = (f.first(), f.get(2), f.get(4)) else {
            continue;
        };
        if inode.parse::<u64>().ok() != Some(ino) {
            continue;
        }
        let start = u64::from_str_radix(range.split('-').next()?, 16).ok()?;
        match u64::from_str_radix(off, 16).ok()? {
            0 => sq.push(start),
            IORING_OFF_SQES => sqes.push(start),
            _ => {}
        }
    }
    match (sq.as_slice(), sqes.as_slice()) {
        ([sq], [sqes]) => Some((*sq, *sqes)),
        _ => None,
    }
}

fn read_entries(tid: libc::pid_t, fd: i32, ring: &Ring, to_submit: u32) -> Option<Read> {
    let (sq, sqes) = mappings(tid, fd)?;
    let mem = File::open(format!("/proc/{tid}/mem")).ok()?;
    let u32_at = |addr: u64| {
        let mut b = [0u8; 4];
        mem.read_exact_at(&mut b, addr)
            .ok()
            .map(|()| u32::from_le_bytes(b))
    };
    let head = u32_at(sq + u64::from(ring.head))?;
    let tail = u32_at(sq + u64::from(ring.tail))?;
    let mask = u32_at(sq + u64::from(ring.ring_mask))?;
    let count = tail
        .wrapping_sub(head)
        .min(to_submit)
        .min(ring.sq_entries)
        .min(MAX_ENTRIES);
    let mut read = Read::default();
    for i in 0..count {
        let slot = head.wrapping_add(i) & mask;
        let index = if ring.flags & SETUP_NO_SQARRAY != 0 {
            slot
        } else {
            u32_at(sq + u64::from(ring.array) + 4 * u64::from(slot))? & mask
        };
        let mut e = [0u8; 32];
        mem.read_exact_at(&mut e, sqes + u64::from(index) * ring.sqe_bytes())
            .ok()?;
        let (opcode, flags) = (e[0], e[1]);
        let fd =
            (flags & IOSQE_FIXED_FILE == 0).then(|| i32::from_le_bytes([e[4], e[5], e[6], e[7]]));
        let op_flags = u32::from_le_bytes([e[28], e[29], e[30], e[31]]);
        let sync = |kind| Submitted::Sync { kind, fd };
        match opcode {
            OP_FSYNC if op_flags & FSYNC_DATASYNC != 0 => {
                read.submitted.push(sync(RingSync::Fdatasync))
            }
            OP_FSYNC => read.submitted.push(sync(RingSync::Fsync)),
            OP_SYNC_FILE_RANGE => read.submitted.push(sync(RingSync::SyncFileRange)),
            OP_WRITEV | OP_WRITE | OP_WRITE_FIXED if op_flags & RWF_ANY_SYNC != 0 => {
                read.submitted.push(sync(RingSync::SyncWrite));
            }
            OP_WRITEV | OP_WRITE | OP_WRITE_FIXED => read.writes.extend(fd),
            OP_OPENAT | OP_OPENAT2 => read.submitted.push(Submitted::Open),
            _ => {}
        }
    }
    Some(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rings_layout_is_read_from_its_parameters() {
        let mut p = [0u8; PARAMS_BYTES];
        let mut put = |off: usize, v: u32| p[off..off + 4].copy_from_slice(&v.to_le_bytes());
        put(0, 4);
        put(8, SETUP_SQE128);
        put(40, 0);
        put(44, 64);
        put(48, 256);
        put(64, 1024);
        let r = Ring::from_params(&p);
        assert_eq!(
            r,
            Ring {
                flags: SETUP_SQE128,
                sq_entries: 4,
                head: 0,
                tail: 64,
                ring_mask: 256,
                array: 1024
            }
        );
        assert_eq!(r.sqe_bytes(), 128);
    }

    #[test]
    fn an_unknown_or_polled_ring_is_unreadable_not_guessed() {
        let mut rings = Rings::default();
        let me = std::process::id() as libc::pid_t;
        assert!(rings.entering(me, me, 99, 1).unreadable);
        assert!(!rings.entering(me, me, 99, 0).unreadable);
        let mut p = [0u8; PARAMS_BYTES];
        p[8] = SETUP_SQPOLL as u8;
        rings.set_up(me, 99, Ring::from_params(&p));
        assert!(rings.entering(me, me, 99, 0).unreadable);
    }
}
