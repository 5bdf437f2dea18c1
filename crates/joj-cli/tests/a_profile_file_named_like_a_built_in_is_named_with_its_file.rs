//! A copy of emmc5.json with other timings, still `"name": "emmc5"`, was reported as `emmc5`
//! in every result (text, `.profile`, `.device.profile`, `.modeled.profile`): a result modeled
//! on it read as one of the built-in. Results now name a file's profile with its file (text
//! `emmc5 (file /abs/x.json)`, JSON `profile_source`), a file that differs from the built-in
//! it is named like is warned about, naming the fields, and a file in the current directory
//! with a built-in's name, which `--device NAME` does not read, is noted.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::path::Path;
use std::process::Output;

fn run(dir: &Path, args: &[&str]) -> Output {
    let out = common::joj_command()
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn slow_emmc5(dir: &Path) -> std::path::PathBuf {
    let mut v: serde_json::Value =
        serde_json::from_str(include_str!("../../joj-device/profiles/emmc5.json")).unwrap();
    v["timing"]["command_overhead_ns"] = 400_000.into();
    let path = dir.join("emmc5-slow.json");
    std::fs::write(&path, v.to_string()).unwrap();
    path
}

/// A one-device trace of writes and flushes.
fn trace(dir: &Path) -> std::path::PathBuf {
    let header = joj_trace::TraceHeader {
        clock: joj_trace::Clock::Mono,
        devices: vec![joj_trace::TraceDevice {
            dev: "7:0".to_string(),
            role: joj_trace::DeviceRole::Main,
            name: "/dev/loop0".to_string(),
        }],
        source: joj_trace::TraceSource::Tracefs,
        meta: Default::default(),
    };
    let records: Vec<joj_trace::TraceRecord> = (0..8)
        .map(|i| joj_trace::TraceRecord::new(i, "7:0", joj_trace::Op::Write, i * 8, 8))
        .collect();
    let path = dir.join("one.trace.jsonl");
    joj_trace::write_trace(std::fs::File::create(&path).unwrap(), &header, &records).unwrap();
    path
}

#[test]
fn a_changed_copy_of_a_built_in_is_named_with_its_file_and_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    let file = slow_emmc5(&dir);
    let abs = file.to_str().unwrap();
    let named = format!("emmc5 (file {abs})");

    let out = run(
        &dir,
        &[
            "device",
            "run",
            "--requests",
            "50",
            "--device",
            "emmc5-slow.json",
        ],
    );
    let (text, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(text.contains(&named), "{text}");
    assert!(
        err.contains("joj: warning:")
            && err.contains("named emmc5 like the built-in")
            && err.contains("timing.command_overhead_ns")
            && err.matches("joj: warning:").count() == 1,
        "{err}"
    );

    let t = trace(&dir);
    let t = t.to_str().unwrap();
    let out = run(&dir, &["replay", t, "--device", "emmc5-slow.json"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("through {named}")), "{text}");
    let out = run(
        &dir,
        &["replay", t, "--device", "emmc5-slow.json", "--json"],
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for section in [&json, &json["device"]] {
        assert_eq!(section["profile"], "emmc5", "{json}");
        assert_eq!(section["profile_source"], abs, "{json}");
    }

    let out = run(&dir, &["replay", t, "--device", "emmc5", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["profile_source"], "built-in", "{json}");
    assert_eq!(json["device"]["profile_source"], "built-in", "{json}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_unchanged_copy_is_named_with_its_file_without_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    std::fs::write(
        dir.join("copy.json"),
        include_str!("../../joj-device/profiles/emmc5.json"),
    )
    .unwrap();
    let out = run(
        &dir,
        &["device", "run", "--requests", "20", "--device", "copy.json"],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("emmc5 (file {})", dir.join("copy.json").display())),
        "{text}"
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_file_here_named_like_a_built_in_is_noted_as_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    slow_emmc5(&dir);
    std::fs::copy(dir.join("emmc5-slow.json"), dir.join("galaxy-s5")).unwrap();
    let out = run(
        &dir,
        &["device", "run", "--requests", "20", "--device", "galaxy-s5"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("joj: note:") && err.contains("./galaxy-s5"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("galaxy-s5:"));
    // ./NAME reads the file.
    let out = run(
        &dir,
        &[
            "device",
            "run",
            "--requests",
            "20",
            "--device",
            "./galaxy-s5",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("(file "), "{text}");
}
