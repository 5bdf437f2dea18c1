//! Each workload thread of a Mobibench-style SQLite run (`db::mobibench`) keeps to one CPU, and
//! so does each thread replaying a recording (`syscalls::play`). The paper workloads
//! (`db::paper`) run on the caller's thread, which joj's other threads are started from, and
//! are not pinned.
//!
//! Why: ext4 allocates the blocks of a small file (below `mb_stream_req`, 16 blocks by
//! default) from a preallocation of the CPU the writing thread runs on (mballoc's per-CPU
//! locality groups, `fs/ext4/mballoc.c`, `ext4_mb_group_or_file`). A thread that moves between
//! CPUs during a run spreads its WAL's or journal's blocks over two such regions, and most
//! commits then journal one more metadata block: measured here, 1,000 WAL inserts through
//! `galaxy-s5` gave 19.0 KiB of FS journal a transaction in some runs and 21.8–22.7 KiB in
//! others (3 of 6 unpinned), and 19.0 KiB in 8 of 8 runs kept to one CPU (either CPU). Which
//! mode a run got moved its modeled figure by 3 %. Kept to one CPU, the same command gives the
//! same trace.
//!
//! Which CPU: thread `t` of a run keeps to the `t`-th CPU (modulo their count) of those the
//! process may use, in ascending order — a choice made from the thread's number alone, so two
//! runs on the same machine choose alike.

use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};

/// The CPU thread `thread` keeps to, of the `allowed` CPUs (ascending); `None` if there are
/// none.
pub(crate) fn cpu_for(allowed: &[usize], thread: u32) -> Option<usize> {
    allowed.get(thread as usize % allowed.len().max(1)).copied()
}

/// Keep the calling thread, the run's thread number `thread`, to one CPU of those the process
/// may use. Returns the CPU, or the error of the kernel's refusal.
pub(crate) fn keep_to_one_cpu(thread: u32) -> std::io::Result<usize> {
    let set = sched_getaffinity(None)?;
    let allowed: Vec<usize> = (0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect();
    let cpu = cpu_for(&allowed, thread)
        .ok_or_else(|| std::io::Error::other("the process may use no CPU"))?;
    let mut one = CpuSet::new();
    one.set(cpu);
    sched_setaffinity(None, &one)?;
    Ok(cpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_take_the_allowed_cpus_in_turn() {
        assert_eq!(cpu_for(&[0, 1], 0), Some(0));
        assert_eq!(cpu_for(&[0, 1], 1), Some(1));
        assert_eq!(cpu_for(&[0, 1], 2), Some(0));
        assert_eq!(cpu_for(&[3, 5, 9], 4), Some(5));
        assert_eq!(cpu_for(&[], 0), None);
    }

    #[test]
    fn a_thread_kept_to_a_cpu_runs_there() {
        let cpu = std::thread::spawn(|| {
            let cpu = keep_to_one_cpu(0).map_err(|e| e.to_string())?;
            let now = sched_getaffinity(None).map_err(|e| e.to_string())?;
            if now.count() != 1 || !now.is_set(cpu) {
                return Err(format!(
                    "affinity after keeping to {cpu}: {} CPUs",
                    now.count()
                ));
            }
            Ok(cpu)
        })
        .join()
        .map_err(|_| "the thread panicked".to_string())
        .and_then(|r| r);
        assert!(cpu.is_ok(), "{cpu:?}");
    }
}
