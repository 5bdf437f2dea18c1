//! `joj bench --fs ext4-extjournal --device P --journal-device Q --json` replays the run's
//! filesystem device through P and its external journal through Q, each its own device: the
//! JSON has a `devices` section per device and a `device` section timed as the host sees both.
//! Refused without --fs ext4-extjournal. Needs root and the scratch-filesystem prerequisites.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

fn ready() -> bool {
    joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4ExtJournal])
}

fn bench(fs: &str, out: &std::path::Path) -> std::process::Output {
    common::joj_command()
        .args(["bench", "--fs", fs, "--journal", "truncate", "-n", "20"])
        .args([
            "--device",
            "sdcard-2013",
            "--journal-device",
            "galaxy-s5",
            "--json",
        ])
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn bench_journal_device_gives_a_section_per_device() {
    if !ready() {
        return;
    }
    let out_dir = tempfile::tempdir().unwrap();
    let refused = bench("ext4", out_dir.path());
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("use --fs ext4-extjournal"));
    let out = bench("ext4-extjournal", out_dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let devices = doc["devices"].as_array().expect("a devices section");
    assert_eq!(devices.len(), 2, "{doc}");
    let role = |r: &str| devices.iter().find(|d| d["role"] == r).unwrap();
    assert_eq!(role("main")["device"]["profile"], "sdcard-2013");
    assert_eq!(role("journal")["device"]["profile"], "galaxy-s5");
    let d = &doc["device"];
    assert_eq!(d["profile"], "sdcard-2013+galaxy-s5");
    assert_eq!(d["ops"], 20);
    // Together the devices saw what the block layer saw.
    assert_eq!(d["host_write_bytes"], doc["block"]["write_bytes"]);
    let host_s = d["modeled_s"].as_f64().unwrap();
    let waited: f64 = devices
        .iter()
        .map(|s| s["device"]["app_wait_s"].as_f64().unwrap())
        .sum();
    assert!((d["app_wait_s"].as_f64().unwrap() - waited).abs() < 1e-9);
    assert!(host_s + 1e-9 >= waited);
}
