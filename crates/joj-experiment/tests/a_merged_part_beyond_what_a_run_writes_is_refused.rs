//! `joj crash merge` reads parts anyone can write. A part whose numbers go beyond what any
//! run writes is refused on reading, naming the file and the field, before any number sizes
//! an allocation or a loop. The probe that found these (2026-11-27) edited one field of a
//! real part each: a journal whose runs leave a gap (the mount model panicked), a replay
//! reading 10^18 journal blocks (the mount model's loop never ended), a journal of 500,000
//! blocks (4 GB of the model's memory from a 4.8 KB file), a shard count of 2^32 − 1 (a 34 GB
//! allocation aborted) or 50 million (a 489 MB message listing the missing shards).
//!
//! The fixture is a part `joj crash fs --fs ext4 --from-log … --states 4 --shard 1/1 --json
//! --save` wrote (ext4, wal, 5 transactions; its journal 1,024 blocks in three runs).

use std::path::{Path, PathBuf};

use joj_experiment::error::ExperimentError;
use joj_experiment::kernel_crash_states::error::CrashFsError;
use joj_experiment::kernel_crash_states::merge;
use serde_json::{Value, json};

const PART: &str = include_str!("fixtures/crash-part-ext4-wal-1-of-1.json");

/// The fixture with `edit` applied, written into `dir` as `name`.
fn part(dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut v: Value = serde_json::from_str(PART).expect("the fixture parses");
    edit(&mut v);
    let path = dir.join(name);
    std::fs::write(&path, v.to_string()).expect("the part is written");
    path
}

/// The error merging the part `edit` makes gives, and its message.
fn refusal(edit: impl FnOnce(&mut Value)) -> (CrashFsError, String) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = part(dir.path(), "edited.json", edit);
    match merge(std::slice::from_ref(&path)) {
        Err(ExperimentError::CrashFs(e)) => {
            let text = e.to_string();
            assert!(
                text.contains(&path.display().to_string()) || text.contains("shard"),
                "{text}"
            );
            assert!(text.contains("fix:"), "{text}");
            (e, text)
        }
        other => panic!(
            "expected a refusal, got {:?}",
            other.map(|r| r.states_explored)
        ),
    }
}

#[test]
fn the_fixture_merges_as_it_was_written() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let report = merge(&[part(dir.path(), "p1.json", |_| {})]).expect("the part merges");
    assert_eq!(report.states_explored, 4);
    let mount = report.mount.expect("ext4's journal replays are modeled");
    assert_eq!(mount.images, 4);
    assert!(mount.max_ms > 0.0, "{mount:?}");
}

#[test]
fn a_journal_whose_runs_leave_a_gap_is_refused_naming_the_field() {
    let (e, text) =
        refusal(|v| v["journal"]["runs"] = json!([{"logical": 5, "physical": 0, "blocks": 3}]));
    assert!(matches!(e, CrashFsError::PartOutOfBounds { .. }), "{e:?}");
    assert!(
        text.contains("journal run 0 starts at journal block 5"),
        "{text}"
    );
}

#[test]
fn a_replay_reading_more_than_its_journal_is_refused_naming_the_field() {
    let (e, text) = refusal(|v| {
        v["images"][0]["outcome"]["replay"]["journal_blocks_read"] = json!(10u64.pow(18))
    });
    assert!(matches!(e, CrashFsError::PartOutOfBounds { .. }), "{e:?}");
    assert!(
        text.contains(
            "images[0].outcome.replay.journal_blocks_read is 1000000000000000000, more than 1024"
        ),
        "{text}"
    );
}

#[test]
fn a_journal_larger_than_mke2fs_makes_is_refused_naming_the_bound() {
    let (e, text) = refusal(|v| {
        v["journal"]["runs"] = json!([{"logical": 0, "physical": 0, "blocks": 500_000}])
    });
    assert!(matches!(e, CrashFsError::PartOutOfBounds { .. }), "{e:?}");
    assert!(text.contains("beyond the 33280"), "{text}");
}

#[test]
fn a_shard_count_beyond_what_shard_takes_is_refused() {
    for n in [u64::from(u32::MAX), 50_000_000] {
        let (e, text) = refusal(|v| v["shard"] = json!({"k": 1, "n": n}));
        assert!(matches!(e, CrashFsError::PartOutOfBounds { .. }), "{e:?}");
        assert!(
            text.contains(&format!("shard 1 of {n}")) && text.contains("10000"),
            "{text}"
        );
        assert!(text.len() < 1000, "{} bytes", text.len());
    }
}

#[test]
fn missing_shards_are_listed_twenty_at_most_and_the_rest_counted() {
    let (e, text) = refusal(|v| v["shard"] = json!({"k": 1, "n": 10_000}));
    assert!(
        matches!(&e, CrashFsError::PartsMissing { n: 10_000, missing } if missing.len() == 9_999),
        "{e:?}"
    );
    assert!(
        text.contains("shards 2, 3, 4") && text.contains("21, and 9979 more of 10000 missing"),
        "{text}"
    );
    assert!(text.len() < 1000, "{} bytes", text.len());
}

#[test]
fn a_part_time_that_no_run_takes_is_refused_naming_the_shard_and_field() {
    // The probe's parts said a check took -1 s or 1e308 s; the merge printed "in -1.0 s,
    // 4000000000.0 states/s".
    for (field, value, shown) in [
        ("check_s", json!(-1.0), "-1"),
        ("check_s", json!(1e308), "1e308"),
        ("check_s", json!(2e7), "20000000"),
        ("record_s", json!(-0.5), "-0.5"),
        ("states_per_s", json!(-3.0), "-3"),
    ] {
        let (e, text) = refusal(|v| match field {
            "check_s" => v["check_s"] = value.clone(),
            "record_s" => v["run"]["log"]["record_s"] = value.clone(),
            _ => v["run"]["states_per_s"] = value.clone(),
        });
        assert!(matches!(e, CrashFsError::PartInvalid { .. }), "{e:?}");
        let named = match field {
            "record_s" => "run.log.record_s",
            "states_per_s" => "run.states_per_s",
            f => f,
        };
        assert!(
            text.contains(&format!("shard 1/1: {named} is {shown}"))
                && text.contains("not a time a run takes"),
            "{field}: {text}"
        );
    }
}

/// One edit of a part's document.
type Edit<'a> = Box<dyn Fn(&mut Value) + 'a>;

/// The merge starts from the part's `run` and adds what the states show: a part whose `run`
/// already counted violations (2^64 − 1: the first real one wrapped it to 0, a verdict of
/// "no violation"), or gave counts no run makes (2^64 − 1 transactions and writes were printed,
/// its in-flight share wrapped to 1.8 × 10^21 %), is refused naming the field (found by a
/// probe of joj's inputs, 2026-11-28; docs/robustness.md H131).
#[test]
fn a_run_whose_figures_no_run_makes_is_refused_naming_the_field() {
    let max = json!(u64::MAX);
    let cases: Vec<(&str, Edit)> = vec![
        (
            "run.violations is 18446744073709551615",
            Box::new(|v| v["run"]["violations"] = max.clone()),
        ),
        (
            "run.images_checked is 3",
            Box::new(|v| v["run"]["images_checked"] = json!(3)),
        ),
        (
            "run.transactions is 18446744073709551615",
            Box::new(|v| v["run"]["transactions"] = max.clone()),
        ),
        (
            "run.transactions is 0",
            Box::new(|v| v["run"]["transactions"] = json!(0)),
        ),
        (
            "run.log.writes is 18446744073709551615",
            Box::new(|v| v["run"]["log"]["writes"] = max.clone()),
        ),
        (
            "run.log.write_bytes is 18446744073709551615",
            Box::new(|v| v["run"]["log"]["write_bytes"] = max.clone()),
        ),
        (
            "run.states_by_kind (added up) is more than 2^64",
            Box::new(|v| {
                v["run"]["states_by_kind"]["torn"] = max.clone();
                v["run"]["states_by_kind"]["subset"] = max.clone();
            }),
        ),
        (
            "run.states_by_kind (added up) is 5, and a run's is the states explored (4)",
            Box::new(|v| v["run"]["states_by_kind"]["torn"] = json!(1)),
        ),
        (
            "run.coverage.per_epoch[0].share is -1",
            Box::new(|v| v["run"]["coverage"]["per_epoch"][0]["share"] = json!(-1.0)),
        ),
        (
            "run.coverage is a summary of other epochs",
            Box::new(|v| v["run"]["coverage"]["share_max"] = json!(0.5)),
        ),
        (
            "run.coverage.per_epoch[0].fault_model_states is -1",
            Box::new(|v| v["run"]["coverage"]["per_epoch"][0]["fault_model_states"] = json!(-1.0)),
        ),
    ];
    for (said, edit) in cases {
        let (e, text) = refusal(edit);
        assert!(
            matches!(e, CrashFsError::PartOutOfBounds { .. }),
            "{said}: {e:?}"
        );
        assert!(text.contains(said), "{said}: {text}");
    }
}

/// A part's states claimed beyond the run's (1,000 explored where the kinds add up to 4) are
/// refused, not merged into a document that says 1,000.
#[test]
fn a_run_claiming_more_states_than_its_kinds_is_refused() {
    let (e, text) = refusal(|v| v["run"]["states_explored"] = json!(1000));
    assert!(matches!(e, CrashFsError::PartOutOfBounds { .. }), "{e:?}");
    assert!(
        text.contains("run.states_by_kind (added up) is 4"),
        "{text}"
    );
}
