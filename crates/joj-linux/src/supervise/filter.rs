//! The seccomp filter a supervised command runs under: `SECCOMP_RET_TRACE` for the few system
//! calls that decide where a file's blocks belong or that make data durable, `ALLOW` for every
//! other call (so the command runs at full speed between them).
//!
//! Layout of the classic-BPF program, over `struct seccomp_data` (`nr` at offset 0, `arch` at
//! 4, `instruction_pointer` at 8, `args[i]` at 16 + 8·i):
//!
//! ```text
//! 0   ld  [arch]
//! 1   jeq AUDIT_ARCH, 0, ALLOW      another ABI (e.g. x32 or i386 on x86-64): not ours
//! 2   ld  [nr]
//! 3.. jeq NR_i, TRACE, 0            one per traced call
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
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([libc::SYS_unlink, libc::SYS_rename, libc::SYS_renameat]);
    #[cfg(target_arch = "aarch64")]
    v.push(libc::SYS_renameat);
    v
}

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

/// The filter program (see the module header).
pub(crate) fn program() -> Vec<libc::sock_filter> {
    use libc::{BPF_ABS, BPF_JEQ, BPF_JMP, BPF_K, BPF_LD, BPF_RET, BPF_W};
    let calls = traced_calls();
    let n = calls.len();
    // Every jump offset must fit the u8 of classic BPF.
    assert!(n + 3 < 255, "seccomp filter too long for 8-bit jumps");
    let mut p = Vec::with_capacity(n + 5);
    p.push(stmt(BPF_LD | BPF_W | BPF_ABS, OFFSET_ARCH));
    // Not equal: skip the nr load and every check, landing on `ret ALLOW`.
    p.push(jump(
        BPF_JMP | BPF_JEQ | BPF_K,
        AUDIT_ARCH,
        0,
        (n + 1) as u8,
    ));
    p.push(stmt(BPF_LD | BPF_W | BPF_ABS, OFFSET_NR));
    for (i, nr) in calls.iter().enumerate() {
        // From check i, `ret TRACE` is the (n - i)th instruction on: n - i - 1 checks left, then
        // `ret ALLOW`.
        let to_trace = (n - i) as u8;
        p.push(jump(BPF_JMP | BPF_JEQ | BPF_K, *nr as u32, to_trace, 0));
    }
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

    /// A tiny classic-BPF interpreter for the instructions the filter uses.
    fn run(prog: &[libc::sock_filter], arch: u32, nr: u32) -> u32 {
        let mut acc = 0u32;
        let mut pc = 0usize;
        loop {
            let ins = prog[pc];
            let code = u32::from(ins.code);
            match code {
                c if c == libc::BPF_LD | libc::BPF_W | libc::BPF_ABS => {
                    acc = if ins.k == OFFSET_ARCH { arch } else { nr };
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
