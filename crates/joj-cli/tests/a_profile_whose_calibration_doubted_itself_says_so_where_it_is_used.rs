#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
//! `joj device calibrate` writes its doubts into the profile (`calibration.warnings`: the
//! reference took half the device's latency or more, on a busy machine), and writes the
//! profile all the same. A run on that profile said nothing of them (found by a probe of
//! 2026-11-29: a profile written at load 6.1 modeled 1,000,000 requests/s in silence); now every
//! command that loads it warns, printing their number, not the file's text.

mod common;

fn profile_with(dir: &std::path::Path, warnings: serde_json::Value) -> std::path::PathBuf {
    common::edited_profile(dir, "emmc5", "calibrated", |p| {
        p["name"] = "calibrated".into();
        p["calibration"] = serde_json::json!({ "warnings": warnings });
    })
}

/// `joj device run` of 10 requests on the profile at `p`: (exit ok, stderr).
fn run_on(p: &std::path::Path) -> (bool, String) {
    let (ok, _, err) = common::run_joj_text(&[
        "device",
        "run",
        "--requests",
        "10",
        "--device",
        p.to_str().unwrap(),
    ]);
    (ok, err)
}

#[test]
fn a_run_on_it_warns_with_the_number_of_doubts() {
    let dir = tempfile::tempdir().unwrap();
    let p = profile_with(
        dir.path(),
        serde_json::json!(["the reference\u{1b}[2J took 3.85 ms", "again"]),
    );
    let (ok, err) = run_on(&p);
    assert!(ok, "{err}");
    assert!(
        err.contains("warned 2 time(s)") && err.contains("fix: calibrate again"),
        "{err}"
    );
    assert!(
        !err.contains('\u{1b}'),
        "the file's text is not printed: {err:?}"
    );

    let p = profile_with(dir.path(), serde_json::json!([]));
    let (ok, err) = run_on(&p);
    assert!(ok, "{err}");
    assert!(!err.contains("warned"), "no doubt, no warning: {err}");
}
