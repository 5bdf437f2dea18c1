//! The seccomp filter a supervised command runs under: `SECCOMP_RET_TRACE` for the few system
//! calls that decide where a file's blocks belong or that make data durable, for io_uring's
//! (whose submissions the filter cannot see), and for opens that may write (to find files
//! written outside the scratch filesystem); `ALLOW` for every other call, read-only opens
//! included, so the command runs at full speed between them.
//!
//! Layout of the classic-BPF program, over `struct seccomp_data` (`nr` at offset 0, `arch` at
//! 4, `instruction_pointer` at 8, `args[i]` at 16 + 8·i, its low 32 bits first on these
//! little-endian architectures):
//!
//! ```text
//! 0   ld  [arch]
//! 1   jeq AUDIT_ARCH, 0, ALLOW      another ABI (e.g. x32 or i386 on x86-64): not ours
//! 2   ld  [nr]
//! 3.. jeq NR_i, TRACE, 0            one per call traced whatever its arguments
//!     jeq NR_OPEN_j, 0, +2          one triple per open whose flags are argument k_j:
//!     ld  [args[k_j] low]
//!     jset WRITE_FLAGS, TRACE, ALLOW
//!     ret ALLOW
//!     ret TRACE
//! ```

/// The system calls stopped at, by number on this architecture.
pub(crate) fn traced_calls() -> Vec<i64> {
    let mut v = vec![
        libc::SYS_unlinkat,
        libc::SYS_renameat2,
        libc::SYS_truncate,
        libc::SYS_ftruncate,
        libc::SYS_fsync,
        libc::SYS_fdatasync,
        libc::SYS_sync_file_range,
        libc::SYS_syncfs,
        libc::SYS_sync,
        libc::SYS_write,
        libc::SYS_pwrite64,
        libc::SYS_writev,
        libc::SYS_pwritev,
        libc::SYS_pwritev2,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        // Its flags are in a struct the filter cannot read: every openat2 stops.
        libc::SYS_openat2,
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([
        libc::SYS_unlink,
        libc::SYS_rename,
        libc::SYS_renameat,
        libc::SYS_creat,
    ]);
    #[cfg(target_arch = "aarch64")]
    v.push(libc::SYS_renameat);
    v
}

/// The open flags that may write a file: an open with none of them only reads.
pub(crate) const WRITE_FLAGS: u32 =
    (libc::O_WRONLY | libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC) as u32;

/// The opens stopped at only when their flags (the argument of the given index) may write.
pub(crate) fn opens() -> Vec<(i64, u32)> {
    let mut v = vec![(libc::SYS_openat, 2)];
    #[cfg(target_arch = "x86_64")]
    v.push((libc::SYS_open, 1));
    v
}

#[cfg(target_arch = "x86_64")]
pub(crate) const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
pub(crate) const AUDIT_ARCH: u32 = 0xC000_00B7;

const OFFSET_NR: u32 = 0;
const OFFSET_ARCH: u32 = 4;
const OFFSET_ARGS: u32 = 16;

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

/// The filter program (see the module header).
pub(crate) fn program() -> Vec<libc::sock_filter> {
    use libc::{BPF_ABS, BPF_JEQ, BPF_JMP, BPF_JSET, BPF_K, BPF_LD, BPF_RET, BPF_W};
    let calls = traced_calls();
    let opens = opens();
    let n = calls.len();
    let m = opens.len();
    // Every jump offset must fit the u8 of classic BPF.
    assert!(
        n + 3 * m + 3 < 255,
        "seccomp filter too long for 8-bit jumps"
    );
    // Instructions: 3 before the checks, n checks, 3 per open, then `ret ALLOW`, `ret TRACE`.
    let allow = 3 + n + 3 * m;
    let trace = allow + 1;
    // The offset of a jump at `from` to `to` (the next instruction is offset 0).
    let to = |from: usize, to: usize| (to - from - 1) as u8;
    let mut p = Vec::with_capacity(trace + 1);
    p.push(stmt(BPF_LD | BPF_W | BPF_ABS, OFFSET_ARCH));
    p.push(jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH, 0, to(1, allow)));
    p.push(stmt(BPF_LD | BPF_W | BPF_ABS, OFFSET_NR));
    for nr in &calls {
        let at = p.len();
        p.push(jump(
            BPF_JMP | BPF_JEQ | BPF_K,
            *nr as u32,
            to(at, trace),
            0,
        ));
    }
    for (nr, arg) in &opens {
        let at = p.len();
        // Another call: skip this open's two instructions, the number still loaded.
        p.push(jump(BPF_JMP | BPF_JEQ | BPF_K, *nr as u32, 0, 2));
        p.push(stmt(BPF_LD | BPF_W | BPF_ABS, OFFSET_ARGS + 8 * arg));
        p.push(jump(
            BPF_JMP | BPF_JSET | BPF_K,
            WRITE_FLAGS,
            to(at + 2, trace),
            to(at + 2, allow),
        ));
    }
    debug_assert_eq!(p.len(), allow);
    p.push(stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_ALLOW));
    p.push(stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_TRACE));
    p
}

/// Install the filter in the calling process. Runs between fork and exec: no allocation, only
/// system calls on memory prepared before the fork.
pub(crate) fn install(prog: &[libc::sock_filter]) -> std::io::Result<()> {
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_ptr().cast_mut(),
    };
    // SAFETY: `fprog` points at `prog`, which outlives the call; the kernel copies it.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            0,
            &fprog as *const libc::sock_fprog,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny classic-BPF interpreter for the instructions the filter uses, on a call `nr`
    /// whose arguments' low words are `args`.
    fn run_with(prog: &[libc::sock_filter], arch: u32, nr: u32, args: [u32; 6]) -> u32 {
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
                        k => args[((k - OFFSET_ARGS) / 8) as usize],
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

    fn run(prog: &[libc::sock_filter], arch: u32, nr: u32) -> u32 {
        run_with(prog, arch, nr, [0; 6])
    }

    #[test]
    fn only_opens_that_may_write_are_stopped_and_io_uring_always() {
        let prog = program();
        let trace = libc::SECCOMP_RET_TRACE;
        let allow = libc::SECCOMP_RET_ALLOW;
        let openat = libc::SYS_openat as u32;
        let flags = |f: i32| [0, 0, f as u32, 0, 0, 0];
        assert_eq!(
            run_with(&prog, AUDIT_ARCH, openat, flags(libc::O_RDONLY)),
            allow
        );
        assert_eq!(
            run_with(
                &prog,
                AUDIT_ARCH,
                openat,
                flags(libc::O_RDONLY | libc::O_CLOEXEC)
            ),
            allow
        );
        for f in [
            libc::O_WRONLY,
            libc::O_RDWR | libc::O_CLOEXEC,
            libc::O_CREAT,
            libc::O_TRUNC,
        ] {
            assert_eq!(
                run_with(&prog, AUDIT_ARCH, openat, flags(f)),
                trace,
                "{f:#o}"
            );
        }
        for nr in [
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
            libc::SYS_io_uring_register,
        ] {
            assert_eq!(run(&prog, AUDIT_ARCH, nr as u32), trace);
        }
        #[cfg(target_arch = "x86_64")]
        {
            let open = libc::SYS_open as u32;
            let second = |f: i32| [0, f as u32, 0, 0, 0, 0];
            assert_eq!(
                run_with(&prog, AUDIT_ARCH, open, second(libc::O_RDONLY)),
                allow
            );
            assert_eq!(
                run_with(&prog, AUDIT_ARCH, open, second(libc::O_WRONLY)),
                trace
            );
        }
        // A call after the opens' checks in number order still passes.
        assert_eq!(run(&prog, AUDIT_ARCH, libc::SYS_getpid as u32), allow);
    }

    #[test]
    fn traced_calls_trace_and_others_pass() {
        let prog = program();
        for nr in traced_calls() {
            assert_eq!(run(&prog, AUDIT_ARCH, nr as u32), libc::SECCOMP_RET_TRACE);
        }
        for nr in [
            libc::SYS_read,
            libc::SYS_openat,
            libc::SYS_close,
            libc::SYS_mmap,
        ] {
            assert_eq!(run(&prog, AUDIT_ARCH, nr as u32), libc::SECCOMP_RET_ALLOW);
        }
        // Another ABI's numbers mean other calls: never stopped.
        assert_eq!(
            run(&prog, 0x4000_0003, libc::SYS_fsync as u32),
            libc::SECCOMP_RET_ALLOW
        );
    }
}
