//! `joj replay --profile-for main=… --profile-for journal=…` on the trace of an `ext4-extjournal`
//! run gives one section per device, each through its own profile, and a host time no shorter
//! than either device's waited time. Needs root and the scratch-filesystem prerequisites.

mod common;

fn ready() -> bool {
    joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4ExtJournal])
}

#[test]
fn an_extjournal_run_replays_with_a_profile_per_device() {
    if !ready() {
        return;
    }
    let out_dir = tempfile::tempdir().unwrap();
    let out = common::joj_command()
        .args(["bench", "--fs", "ext4-extjournal", "--journal", "truncate"])
        .args([
            "--sync-call",
            "fsync",
            "-n",
            "20",
            "--trace",
            "--json",
            "--out",
        ])
        .arg(out_dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let trace = run["trace_file"].as_str().unwrap();
    let out = common::joj_command()
        .args(["replay", trace, "--device-for", "main=sdcard-2013"])
        .args(["--device-for", "journal=galaxy-s5", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let devices = doc["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 2, "one section per device: {doc}");
    let profile_of = |named: &str| {
        devices
            .iter()
            .find(|d| d["named"] == named)
            .map(|d| d["profile"].as_str().unwrap().to_string())
    };
    assert_eq!(profile_of("main").as_deref(), Some("sdcard-2013"));
    assert_eq!(profile_of("journal").as_deref(), Some("galaxy-s5"));
    assert_ne!(devices[0]["dev"], devices[1]["dev"]);
    // Both devices were written: the journal device holds ext4's journal.
    for d in devices {
        assert!(d["replay"]["writes"].as_u64().unwrap() > 0, "{d}");
    }
    let host = &doc["host"];
    assert_eq!(host["ops"], 20);
    let host_s = host["modeled_s"].as_f64().unwrap();
    for d in devices {
        assert!(host_s + 1e-9 >= d["device"]["app_wait_s"].as_f64().unwrap());
    }
    // The card has no write cache: Linux sends it no flush, so the replay sends none.
    let main = devices.iter().find(|d| d["named"] == "main").unwrap();
    assert_eq!(main["replay"]["flushes"], 0);
}
