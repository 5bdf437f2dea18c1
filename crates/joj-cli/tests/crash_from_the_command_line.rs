//! `joj crash` from the command line: `--json` is one document whose counts add up and exit 0
//! when every cut passed; `--canary` exits 0 only when the test caught the early
//! acknowledgement; bad arguments fail with a message naming the fix.

mod common;

fn joj(args: &[&str]) -> (bool, String, String) {
    common::run_joj_text(&[&["crash", "device"], args].concat())
}

const SMALL: [&str; 4] = ["--workload", "rl-bench", "--rl-divisor", "100"];

#[test]
fn crash_json_counts_every_cut() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("crash.json");
    let mut args = SMALL.to_vec();
    args.extend(["--cuts", "30", "--json", "--save", save.to_str().unwrap()]);
    let (ok, out, err) = joj(&args);
    assert!(ok, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("stdout is one JSON document");
    assert_eq!(doc["cuts"], 30);
    assert_eq!(doc["passed"], 30, "{doc}");
    assert_eq!(doc["failed"], 0);
    assert_eq!(doc["workload"], "rl-bench");
    assert!(doc["commands_per_run"].as_u64().unwrap() > 0);
    assert!(doc["paths"]["batch_commits"].as_u64().unwrap() > 0);
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&save).unwrap()).unwrap();
    assert_eq!(saved, doc);
}

#[test]
fn the_canary_is_caught_and_says_so() {
    let mut args = SMALL.to_vec();
    args.extend(["--cuts", "60", "--canary"]);
    let (ok, out, err) = joj(&args);
    assert!(ok, "the canary must be caught in 60 cuts: {out}{err}");
    assert!(out.contains("canary"), "{out}");
    assert!(
        err.contains("acknowledged"),
        "each caught cut is listed: {err}"
    );
}

#[test]
fn bad_arguments_name_the_fix() {
    let (ok, _, err) = joj(&["--workload", "tpcc-nope"]);
    assert!(!ok);
    assert!(
        err.contains("possible values") && err.contains("tpcc-write"),
        "{err}"
    );

    let mut args = SMALL.to_vec();
    args.extend(["--cuts", "0"]);
    let (ok, _, err) = joj(&args);
    assert!(!ok);
    assert!(err.contains("--cuts"), "{err}");

    let (ok, _, err) = joj(&["--device", "no-such-profile"]);
    assert!(!ok);
    assert!(err.contains("no-such-profile"), "{err}");

    // The paper's synthetic table does not fit the file layer of a device cut down to 64
    // blocks per plane; 8 blocks per plane are no device at all.
    let (ok, _, err) = joj(&["--blocks-per-plane", "64", "--cuts", "1"]);
    assert!(!ok);
    assert!(
        err.contains("file layer is full") && err.contains("--blocks-per-plane"),
        "{err}"
    );
    let (ok, _, err) = joj(&["--blocks-per-plane", "8", "--cuts", "1"]);
    assert!(!ok);
    assert!(
        err.contains("--blocks-per-plane 8") && err.contains("cannot hold") && err.contains("fix:"),
        "{err}"
    );
}
