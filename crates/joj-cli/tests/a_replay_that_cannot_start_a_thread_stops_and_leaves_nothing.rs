//! `joj syscalls replay` of a recording of 300 threads, run in a pids cgroup that allows joj
//! 40 tasks: the replay cannot start all its threads (one per recorded thread). It used to
//! panic in the player and then hang for ever (the threads started waited for the calls of
//! the one that never ran); now the threads started are stopped and joj says why, with the
//! fix, removes its scratch filesystem, and exits 1.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::path::PathBuf;

use common::joj_limited;

const THREADS: u64 = 300;

/// A pids cgroup (v1 or v2) allowing `max` tasks, removed on drop.
struct PidsCgroup(PathBuf);

impl PidsCgroup {
    fn new(max: u32) -> PidsCgroup {
        let parent = ["/sys/fs/cgroup/pids", "/sys/fs/cgroup"]
            .into_iter()
            .map(PathBuf::from)
            .find(|p| {
                p.join("cgroup.procs").exists()
                    && (p.ends_with("pids") || p.join("cgroup.controllers").exists())
            })
            .expect("a pids cgroup hierarchy (cgroup v1 `pids` or v2)");
        let dir = parent.join(format!("joj-test-{}", std::process::id()));
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("pids.max"), max.to_string()).unwrap();
        PidsCgroup(dir)
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn a_replay_that_cannot_start_a_thread_stops_and_leaves_nothing() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("threads.jsonl");
    // Each thread has a second call after every thread's first, so that no thread can end
    // before all have started: with one call each, a thread could finish before the 40th
    // started, and the replay then ran to its end (1 run in 3 here).
    let calls = 2 * THREADS;
    let mut text = format!(
        r#"{{"format":"joj-syscalls","version":1,"source":"strace","root":"/r","transactions":1,"threads":{THREADS},"calls":{calls},"dropped_outside_root":0}}"#
    );
    text.push('\n');
    for seq in 0..calls {
        let i = seq % THREADS;
        text.push_str(&format!(
            r#"{{"seq":{seq},"tid":{},"start_ns":{},"dur_ns":1,"ret":0,"call":"stat","path":"."}}"#,
            1000 + i,
            seq * 1000
        ));
        text.push('\n');
    }
    std::fs::write(&rec, text).unwrap();
    let cgroup = PidsCgroup::new(40);
    let out = dir.path().join("out");
    let run = joj_limited(
        &[],
        Some(&cgroup.0),
        &[
            "syscalls",
            "replay",
            rec.to_str().unwrap(),
            "--fs",
            "ext4",
            "--image-mib",
            "64",
            "--timing",
            "fast",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stderr.contains("cannot start replay thread")
            && run
                .stderr
                .contains(&format!("of {THREADS} (one per recorded thread)"))
            && run.stderr.contains("fix:")
            && !run.stderr.contains("panicked"),
        "{}",
        run.stderr
    );
}
