//! The seccomp filter a supervised command runs under. It stops the command only where joj
//! must act before the kernel does: `SECCOMP_RET_USER_NOTIF` — the task waits in the kernel
//! until joj's notification thread answers — for the calls that end a file's claim on its
//! blocks (unlink, rename, truncate: joj reads the file's extents first) and for the opens
//! (joj reads the path, which the syscall trace records only as a pointer);
//! `SECCOMP_RET_TRACE` (a ptrace stop) for io_uring's three calls, whose submission queue joj
//! reads in the command's memory; `ALLOW` for every other call, writes and syncs included:
//! those are seen by the kernel's syscall tracepoints without stopping anyone
//! ([`crate::syscall_trace`]).
//!
//! With the BPF observer of opens running ([`super::bpf_opens`]), opens run free too: BPF
//! reads each one's path and file at its exit, and whether the overlay copied the file up is
//! read from the upper file afterwards. On ext4 unlinks and `ftruncate` run free as well: the
//! extents the file gives up are read as ext4 frees them ([`super::freed`]). `truncate` of a
//! path still stops (the path is read at the stop; no program of the observer reads it).
//!
//! Layout of the classic-BPF program, over `struct seccomp_data` (`nr` at offset 0, `arch` at
//! 4):
//!
//! ```text
//! 0   ld  [arch]
//! 1   jeq AUDIT_ARCH, 0, ALLOW      another ABI (e.g. x32 or i386 on x86-64): not ours
//! 2   ld  [nr]
//! 3.. jeq NR_i, NOTIFY, 0           one per call the notification thread handles
//!     jeq NR_j, TRACE, 0            one per io_uring call
//!     ret ALLOW
//!     ret NOTIFY
//!     ret TRACE
//! ```

/// The system calls the command waits at while joj's notification thread handles them.
pub(crate) fn notified_calls() -> Vec<i64> {
    let mut v = vec![
        libc::SYS_unlinkat,
        libc::SYS_renameat2,
        libc::SYS_truncate,
        libc::SYS_ftruncate,
        libc::SYS_openat,
        libc::SYS_openat2,
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([
        libc::SYS_unlink,
        libc::SYS_rename,
        libc::SYS_renameat,
        libc::SYS_open,
        libc::SYS_creat,
    ]);
    #[cfg(target_arch = "aarch64")]
    v.push(libc::SYS_renameat);
    v
}

/// The opens, which the BPF observer sees without a stop.
pub(crate) fn open_calls() -> Vec<i64> {
    let mut v = vec![libc::SYS_openat, libc::SYS_openat2];
    #[cfg(target_arch = "x86_64")]
    v.extend([libc::SYS_open, libc::SYS_creat]);
    v
}

/// The calls that free blocks that run without a stop on ext4, where the BPF observer reads the
/// extents ext4 frees: `unlink`, `ftruncate` (the syscall trace names its descriptor's file),
/// and `unlinkat` of a path from the working directory (`AT_FDCWD`, checked in the filter: an
/// unlink relative to a directory descriptor, as `rm -r` makes them, still stops — the observer
/// names a directory descriptor only by what it named when the record is read, which may be
/// another file).
#[cfg(target_arch = "x86_64")]
pub(crate) fn freeing_calls() -> Vec<i64> {
    vec![libc::SYS_unlink, libc::SYS_ftruncate]
}

#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn freeing_calls() -> Vec<i64> {
    vec![libc::SYS_ftruncate]
}

/// `unlinkat`'s directory descriptor, low word, in `struct seccomp_data` (arguments from 16).
const OFFSET_ARG0: u32 = 16;

/// The calls stopped with ptrace: io_uring's, whose ring setup is read back at its exit.
pub(crate) fn traced_calls() -> Vec<i64> {
    vec![
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ]
}

/// The open flags that may write a file: an open with none of them only reads.
pub(crate) const WRITE_FLAGS: u32 =
    (libc::O_WRONLY | libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC) as u32;

#[cfg(target_arch = "x86_64")]
pub(crate) const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
pub(crate) const AUDIT_ARCH: u32 = 0xC000_00B7;

const OFFSET_NR: u32 = 0;
const OFFSET_ARCH: u32 = 4;

fn stmt(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u32, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    }
}

/// The filter program (see the module header); `opens_free`: the BPF observer of opens runs,
/// and opens need no stop; `unlinks_free`: it takes the traced ext4's freed extents too, and
/// unlinks and `ftruncate` need none either.
pub(crate) fn program(opens_free: bool, unlinks_free: bool) -> Vec<libc::sock_filter> {
    use libc::{BPF_ABS, BPF_JEQ, BPF_JMP, BPF_K, BPF_LD, BPF_RET, BPF_W};
    let mut free = if opens_free { open_calls() } else { Vec::new() };
    if unlinks_free {
        free.extend(freeing_calls());
    }
    // With unlinks free, unlinkat is checked apart (three instructions): free from AT_FDCWD.
    let notified: Vec<i64> = notified_calls()
        .into_iter()
        .filter(|nr| !(free.contains(nr) || unlinks_free && *nr == libc::SYS_unlinkat))
        .collect();
    let traced = traced_calls();
    let checked_apart = if unlinks_free { 3 } else { 0 };
    let n = checked_apart + notified.len() + traced.len();
    // Every jump offset must fit the u8 of classic BPF.
    assert!(n + 6 < 255, "seccomp filter too long for 8-bit jumps");
    // Instructions: 3 before the checks, n checks, then `ret ALLOW`, `ret NOTIFY`, `ret TRACE`.
    let allow = 3 + n;
    let notify = allow + 1;
    let trace = allow + 2;
    // The offset of a jump at `from` to `to` (the next instruction is offset 0).
    let to = |from: usize, to: usize| (to - from - 1) as u8;
    let mut p = Vec::with_capacity(trace + 1);
    p.push(stmt(BPF_LD | BPF_W | BPF_ABS, OFFSET_ARCH));
    p.push(jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH, 0, to(1, allow)));
    p.push(stmt(BPF_LD | BPF_W | BPF_ABS, OFFSET_NR));
    if unlinks_free {
        // Not unlinkat: skip its two instructions, `nr` still loaded.
        p.push(jump(
            BPF_JMP | BPF_JEQ | BPF_K,
            libc::SYS_unlinkat as u32,
            0,
            2,
        ));
        p.push(stmt(BPF_LD | BPF_W | BPF_ABS, OFFSET_ARG0));
        let at = p.len();
        p.push(jump(
            BPF_JMP | BPF_JEQ | BPF_K,
            libc::AT_FDCWD as u32,
            to(at, allow),
            to(at, notify),
        ));
    }
    for (nr, target) in notified
        .iter()
        .map(|nr| (nr, notify))
        .chain(traced.iter().map(|nr| (nr, trace)))
    {
        let at = p.len();
        p.push(jump(
            BPF_JMP | BPF_JEQ | BPF_K,
            *nr as u32,
            to(at, target),
            0,
        ));
    }
    debug_assert_eq!(p.len(), allow);
    p.push(stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_ALLOW));
    p.push(stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_USER_NOTIF));
    p.push(stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_TRACE));
    p
}

/// Install the filter in the calling process and return the notification listener's
/// descriptor. Runs between fork and exec: no allocation, only system calls on memory prepared
/// before the fork.
pub(crate) fn install(prog: &[libc::sock_filter]) -> std::io::Result<i32> {
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_ptr().cast_mut(),
    };
    // SAFETY: `fprog` points at `prog`, which outlives the call; the kernel copies it.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &fprog as *const libc::sock_fprog,
        )
    };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(rc as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_with(prog: &[libc::sock_filter], arch: u32, nr: u32) -> u32 {
        run_at(prog, arch, nr, 0)
    }

    /// A tiny classic-BPF interpreter for the instructions the filter uses, on a call `nr`
    /// whose first argument's low word is `arg0`.
    fn run_at(prog: &[libc::sock_filter], arch: u32, nr: u32, arg0: u32) -> u32 {
        let mut acc = 0u32;
        let mut pc = 0usize;
        loop {
            let ins = prog[pc];
            let code = u32::from(ins.code);
            match code {
                c if c == libc::BPF_LD | libc::BPF_W | libc::BPF_ABS => {
                    acc = match ins.k {
                        OFFSET_ARCH => arch,
                        OFFSET_NR => nr,
                        OFFSET_ARG0 => arg0,
                        k => panic!("unexpected load at {k}"),
                    };
                    pc += 1;
                }
                c if c == libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K => {
                    pc += 1 + usize::from(if acc == ins.k { ins.jt } else { ins.jf });
                }
                c if c == libc::BPF_RET | libc::BPF_K => return ins.k,
                other => panic!("unexpected BPF code {other:#x}"),
            }
        }
    }

    /// Each of `calls` gets `want` from `prog`.
    fn each(prog: &[libc::sock_filter], calls: impl IntoIterator<Item = i64>, want: u32) {
        for nr in calls {
            assert_eq!(run_with(prog, AUDIT_ARCH, nr as u32), want, "call {nr}");
        }
    }

    #[test]
    fn opens_and_block_moving_calls_wait_for_joj_and_writes_and_syncs_run_free() {
        let prog = program(false, false);
        each(&prog, notified_calls(), libc::SECCOMP_RET_USER_NOTIF);
        each(&prog, traced_calls(), libc::SECCOMP_RET_TRACE);
        let free = [
            libc::SYS_read,
            libc::SYS_write,
            libc::SYS_pwrite64,
            libc::SYS_fsync,
            libc::SYS_fdatasync,
            libc::SYS_close,
            libc::SYS_mmap,
            libc::SYS_getpid,
        ];
        each(&prog, free, libc::SECCOMP_RET_ALLOW);
        // Another ABI's numbers mean other calls: never stopped.
        assert_eq!(
            run_with(&prog, 0x4000_0003, libc::SYS_openat as u32),
            libc::SECCOMP_RET_ALLOW
        );
    }

    #[test]
    fn with_the_bpf_observer_opens_run_free_and_the_rest_is_as_without() {
        let prog = program(true, false);
        each(&prog, open_calls(), libc::SECCOMP_RET_ALLOW);
        let rest = notified_calls()
            .into_iter()
            .filter(|nr| !open_calls().contains(nr));
        each(&prog, rest, libc::SECCOMP_RET_USER_NOTIF);
        each(&prog, traced_calls(), libc::SECCOMP_RET_TRACE);
        each(&prog, [libc::SYS_fsync], libc::SECCOMP_RET_ALLOW);
    }

    #[test]
    fn with_ext4_freed_blocks_unlinks_and_ftruncate_run_free_too_and_renames_and_truncate_wait() {
        let prog = program(true, true);
        each(
            &prog,
            open_calls().into_iter().chain(freeing_calls()),
            libc::SECCOMP_RET_ALLOW,
        );
        each(&prog, [libc::SYS_ftruncate], libc::SECCOMP_RET_ALLOW);
        let wait = [libc::SYS_renameat2, libc::SYS_truncate];
        each(&prog, wait, libc::SECCOMP_RET_USER_NOTIF);
        // unlinkat: free from the working directory, stopped from a directory descriptor.
        let unlinkat =
            |dirfd: i32| run_at(&prog, AUDIT_ARCH, libc::SYS_unlinkat as u32, dirfd as u32);
        assert_eq!(unlinkat(libc::AT_FDCWD), libc::SECCOMP_RET_ALLOW);
        assert_eq!(unlinkat(3), libc::SECCOMP_RET_USER_NOTIF);
        // Without the freed blocks, unlinkat always stops.
        let opens_only = program(true, false);
        let at = |dirfd: i32| {
            run_at(
                &opens_only,
                AUDIT_ARCH,
                libc::SYS_unlinkat as u32,
                dirfd as u32,
            )
        };
        assert_eq!(at(libc::AT_FDCWD), libc::SECCOMP_RET_USER_NOTIF);
        each(
            &opens_only,
            [libc::SYS_ftruncate],
            libc::SECCOMP_RET_USER_NOTIF,
        );
    }
}
