//! `joj speed` runs every operation in every mode once per round, rotating the modes' order,
//! and gives each mode's ratio against stock WAL of the same round; a steady run's checks
//! (the WAL at its final size from the window's start) hold in every run.

use joj_experiment::speed::speed;
use joj_experiment::{FsChoice, RunOptions, StackError};
use joj_workload::{DbOp, DbWorkload, JournalMode, StartState};

fn base() -> DbWorkload {
    DbWorkload {
        transactions: 20,
        start: StartState::Steady,
        ..Default::default()
    }
}

#[test]
fn speed_pairs_every_mode_with_wal_in_each_round() {
    let modes = [
        JournalMode::Wal,
        JournalMode::waldio(joj_waldio::SyncOption::Full, false),
    ];
    let ops = [DbOp::Insert, DbOp::Delete];
    let mut seen = Vec::new();
    let r = speed(&base(), &ops, &modes, 2, &RunOptions::default(), |run| {
        seen.push((run.round, run.op.clone(), run.mode.clone()));
    })
    .expect("speed on a host directory");
    assert_eq!(r.runs.len(), 2 * 2 * 2);
    assert_eq!(seen.len(), r.runs.len());
    // Round 1 starts with wal, round 2 with waldio.
    assert_eq!(seen[0], (1, "insert".into(), "wal".into()));
    assert_eq!(seen[4], (2, "insert".into(), "waldio".into()));
    for run in &r.runs {
        assert!(run.checks_ok, "{run:?}");
        assert_eq!(run.transactions, 20);
        assert!(run.ops_per_sec > 0.0);
    }
    assert_eq!(r.summaries.len(), 4);
    for s in &r.summaries {
        assert_eq!(s.ratios.len(), 2, "{s:?}");
        if s.mode == "wal" {
            assert_eq!(s.median_ratio, 1.0);
        }
    }
}

#[test]
fn speed_without_wal_has_no_baseline() {
    let modes = [JournalMode::waldio(joj_waldio::SyncOption::Full, false)];
    let opts = RunOptions {
        fs: FsChoice::Host(None),
        ..RunOptions::default()
    };
    let e = speed(&base(), &[DbOp::Insert], &modes, 1, &opts, |_| {}).unwrap_err();
    assert!(
        matches!(
            e,
            joj_experiment::ExperimentError::Stack(StackError::SpeedNeedsWal)
        ),
        "{e}"
    );
}
