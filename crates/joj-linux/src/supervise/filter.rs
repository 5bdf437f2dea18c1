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
//! With the BPF observer of opens running ([`super::bpf_opens`]), an open whose flags cannot
//! write (none of [`WRITE_FLAGS`]) runs free too: BPF reads its path and file at its exit.
//! One that may write still waits, for what joj must know before it runs (whether the overlay
//! copies the file up); so do `creat` (always writes) and `openat2` (its flags are in memory
//! the filter cannot read).
//!
//! Layout of the classic-BPF program, over `struct seccomp_data` (`nr` at offset 0, `arch` at
//! 4, the arguments from 16, eight bytes each, the low word first):
//!
//! ```text
//! 0   ld  [arch]
//! 1   jeq AUDIT_ARCH, 0, ALLOW      another ABI (e.g. x32 or i386 on x86-64): not ours
//! 2   ld  [nr]
//! 3.. jeq NR_o, 0, 2                with the BPF observer, one triple per open with flags
//!     ld  [args[k] low]             its flags
//!     jset WRITE_FLAGS, NOTIFY, ALLOW
//!     jeq NR_i, NOTIFY, 0           one per call the notification thread handles
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

/// The opens whose flags the filter reads, and the offset of the flags' low word in
/// `struct seccomp_data`: with the BPF observer, only those that may write stop.
pub(crate) fn flag_checked_calls() -> Vec<(i64, u32)> {
    let mut v = vec![(libc::SYS_openat, offset_of_arg(2))];
    #[cfg(target_arch = "x86_64")]
    v.push((libc::SYS_open, offset_of_arg(1)));
    v
}

/// Where argument `i`'s low 32 bits are (both architectures here are little-endian).
const fn offset_of_arg(i: u32) -> u32 {
    16 + 8 * i
}

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
/// and opens that cannot write need no stop.
pub(crate) fn program(opens_free: bool) -> Vec<libc::sock_filter> {
    use libc::{BPF_ABS, BPF_JEQ, BPF_JMP, BPF_JSET, BPF_K, BPF_LD, BPF_RET, BPF_W};
    let flagged = if opens_free {
        flag_checked_calls()
    } else {
        Vec::new()
    };
    let notified: Vec<i64> = notified_calls()
        .into_iter()
        .filter(|nr| !flagged.iter().any(|(f, _)| f == nr))
        .collect();
    let traced = traced_calls();
    let n = 3 * flagged.len() + notified.len() + traced.len();
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
    for (nr, flags_at) in &flagged {
        // Not this call: skip its two instructions, `nr` still loaded.
        p.push(jump(BPF_JMP | BPF_JEQ | BPF_K, *nr as u32, 0, 2));
        p.push(stmt(BPF_LD | BPF_W | BPF_ABS, *flags_at));
        let at = p.len();
        p.push(jump(
            BPF_JMP | BPF_JSET | BPF_K,
            WRITE_FLAGS,
            to(at, notify),
            to(at, allow),
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
        run_call(prog, arch, nr, [0; 6])
    }

    /// A tiny classic-BPF interpreter for the instructions the filter uses, on a call `nr`
    /// whose arguments' low words are `args`.
    fn run_call(prog: &[libc::sock_filter], arch: u32, nr: u32, args: [u32; 6]) -> u32 {
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
                        k if (16..64).contains(&k) && k % 8 == 0 => args[(k as usize - 16) / 8],
                        k => panic!("unexpected load at {k}"),
                    };
                    pc += 1;
                }
                c if c == libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K => {
                    pc += 1 + usize::from(if acc == ins.k { ins.jt } else { ins.jf });
                }
                c if c == libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K => {
                    pc += 1 + usize::from(if acc & ins.k != 0 { ins.jt } else { ins.jf });
                }
                c if c == libc::BPF_RET | libc::BPF_K => return ins.k,
                other => panic!("unexpected BPF code {other:#x}"),
            }
        }
    }

    #[test]
    fn opens_and_block_moving_calls_wait_for_joj_and_writes_and_syncs_run_free() {
        let prog = program(false);
        for nr in notified_calls() {
            assert_eq!(
                run_with(&prog, AUDIT_ARCH, nr as u32),
                libc::SECCOMP_RET_USER_NOTIF
            );
        }
        for nr in traced_calls() {
            assert_eq!(
                run_with(&prog, AUDIT_ARCH, nr as u32),
                libc::SECCOMP_RET_TRACE
            );
        }
        for nr in [
            libc::SYS_read,
            libc::SYS_write,
            libc::SYS_pwrite64,
            libc::SYS_fsync,
            libc::SYS_fdatasync,
            libc::SYS_close,
            libc::SYS_mmap,
            libc::SYS_getpid,
        ] {
            assert_eq!(
                run_with(&prog, AUDIT_ARCH, nr as u32),
                libc::SECCOMP_RET_ALLOW
            );
        }
        // Another ABI's numbers mean other calls: never stopped.
        assert_eq!(
            run_with(&prog, 0x4000_0003, libc::SYS_openat as u32),
            libc::SECCOMP_RET_ALLOW
        );
    }

    #[test]
    fn with_the_bpf_observer_only_opens_that_may_write_wait() {
        let prog = program(true);
        let (notify, allow) = (libc::SECCOMP_RET_USER_NOTIF, libc::SECCOMP_RET_ALLOW);
        let openat = |flags: i32| {
            run_call(
                &prog,
                AUDIT_ARCH,
                libc::SYS_openat as u32,
                [libc::AT_FDCWD as u32, 0x1000, flags as u32, 0o644, 0, 0],
            )
        };
        assert_eq!(openat(libc::O_RDONLY | libc::O_CLOEXEC), allow);
        assert_eq!(openat(libc::O_RDONLY | libc::O_DIRECTORY), allow);
        for flags in [
            libc::O_WRONLY,
            libc::O_RDWR | libc::O_CLOEXEC,
            libc::O_RDONLY | libc::O_CREAT,
            libc::O_RDONLY | libc::O_TRUNC,
            libc::O_TMPFILE | libc::O_RDWR,
        ] {
            assert_eq!(openat(flags), notify, "flags {flags:#o}");
        }
        #[cfg(target_arch = "x86_64")]
        {
            let open = |flags: i32| {
                run_call(
                    &prog,
                    AUDIT_ARCH,
                    libc::SYS_open as u32,
                    [0x1000, flags as u32, 0, 0, 0, 0],
                )
            };
            assert_eq!(open(libc::O_RDONLY), allow);
            assert_eq!(open(libc::O_RDWR | libc::O_CREAT), notify);
            assert_eq!(run_with(&prog, AUDIT_ARCH, libc::SYS_creat as u32), notify);
        }
        // openat2's flags are behind a pointer: it always waits.
        assert_eq!(
            run_with(&prog, AUDIT_ARCH, libc::SYS_openat2 as u32),
            notify
        );
        // The rest is as without the observer.
        for nr in [libc::SYS_unlinkat, libc::SYS_renameat2, libc::SYS_ftruncate] {
            assert_eq!(run_with(&prog, AUDIT_ARCH, nr as u32), notify);
        }
        for nr in traced_calls() {
            assert_eq!(
                run_with(&prog, AUDIT_ARCH, nr as u32),
                libc::SECCOMP_RET_TRACE
            );
        }
        assert_eq!(run_with(&prog, AUDIT_ARCH, libc::SYS_fsync as u32), allow);
    }
}
