//! Each replaying thread keeps to one CPU, as `joj bench` keeps each workload thread
//! (`crate::affinity`): ext4 takes a small file's blocks from the writing CPU's
//! preallocation, so a replay thread that moved between CPUs journaled one more metadata block
//! a commit than the recorded run (a recorded WAL insert run: 24.0 KiB of FS journal a
//! transaction replayed against 20.1 recorded, in 6 of 6 replays; kept to one CPU, 20.1 in 6
//! of 6).

use std::collections::BTreeSet;
use std::fs::File;
use std::path::Path;
use std::sync::Mutex;

use rustix::thread::{CpuSet, sched_getaffinity};

use super::format::Op;
use super::play::{Change, Phase, PlayObserver, Player, Synced, Timing};
use super::tests::recording;

/// The CPUs each sync's thread may run on, as the thread saw them.
#[derive(Default)]
struct Cpus(Mutex<Vec<BTreeSet<usize>>>);

impl PlayObserver for Cpus {
    fn before_change(&self, _: Change, _: &Path, _: &File) {}
    fn wrote(&self, _: &Path, _: u64, _: Option<u64>) {}
    fn synced(&self, _: Synced, _: Option<(&Path, &File)>, _: u64, _: u64) {
        self.0.lock().unwrap().push(allowed_cpus());
    }
}

/// The CPUs the calling thread may run on.
fn allowed_cpus<C: FromIterator<usize>>() -> C {
    let set = sched_getaffinity(None).unwrap();
    (0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect()
}

#[test]
fn each_replay_thread_keeps_to_one_cpu_the_same_in_every_replay() {
    let allowed: Vec<usize> = allowed_cpus();
    // Threads 1 and 2 alternate (`tests::call`): each opens, writes and syncs its own file.
    let mut ops = vec![];
    for (fd, name) in [(3, "a"), (4, "b")] {
        ops.push(Op::Open {
            path: name.into(),
            flags: vec!["O_RDWR".into(), "O_CREAT".into()],
            mode: 0o644,
            fd,
        });
    }
    for _ in 0..3 {
        for fd in [3, 4] {
            ops.push(Op::Fdatasync { fd });
        }
    }
    let rec = recording(ops);
    let mut seen = vec![];
    for _ in 0..3 {
        let dir = tempfile::tempdir().unwrap();
        let cpus = Cpus::default();
        Player::new(dir.path())
            .play(
                &rec.calls,
                &Phase {
                    timing: Timing::Fast,
                    observer: Some(&cpus),
                    progress: None,
                },
            )
            .unwrap();
        let syncs = cpus.0.into_inner().unwrap();
        assert_eq!(syncs.len(), 6);
        for cpus in &syncs {
            assert_eq!(cpus.len(), 1, "a replay thread may run on {cpus:?}");
        }
        // The recording's first thread on the first allowed CPU, the second on the next.
        let first: Vec<usize> = syncs[..2].iter().map(|c| *c.first().unwrap()).collect();
        assert_eq!(first, [allowed[0], allowed[1 % allowed.len()]]);
        seen.push(syncs);
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
}

#[test]
fn a_thread_keeps_its_cpu_from_the_unmeasured_part_into_the_window() {
    let allowed: Vec<usize> = allowed_cpus();
    let open = |path: &str, fd| Op::Open {
        path: path.into(),
        flags: vec!["O_RDWR".into(), "O_CREAT".into()],
        mode: 0o644,
        fd,
    };
    // Thread 1: opens a, syncs it; thread 2: opens b, syncs it (`tests::call` alternates).
    let rec = recording(vec![
        open("a", 3),
        open("b", 4),
        Op::Fdatasync { fd: 3 },
        Op::Fdatasync { fd: 4 },
    ]);
    let dir = tempfile::tempdir().unwrap();
    let player = Player::new(dir.path());
    let phase = |observer| Phase {
        timing: Timing::Fast,
        observer,
        progress: None,
    };
    // Before the window only thread 2 calls: it is the replay's first thread.
    player.play(&rec.calls[1..2], &phase(None)).unwrap();
    let cpus = Cpus::default();
    let window = [
        rec.calls[0].clone(),
        rec.calls[2].clone(),
        rec.calls[3].clone(),
    ];
    player.play(&window, &phase(Some(&cpus))).unwrap();
    let syncs: Vec<usize> = cpus
        .0
        .into_inner()
        .unwrap()
        .iter()
        .map(|c| *c.first().unwrap())
        .collect();
    // Thread 1's sync, then thread 2's: thread 2 kept the first CPU.
    assert_eq!(syncs, [allowed[1 % allowed.len()], allowed[0]]);
}
