//! `joj replay --device-for main=… --device-for journal=…` on the trace of an `ext4-extjournal`
//! run gives one section per device, each through its own profile, and a host time no shorter
//! than either device's waited time; the recording's host time composed with it on the data
//! device's profile's host, as the run composed it, with a profile of another phone said; with
//! `--honor-timestamps` (the gaps hold the host time already) nothing composed, and why.
//! Needs root and the scratch-filesystem prerequisites.

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
    let run: serde_json::Value = serde_json::from_slice(&common::joj_ok([
        "bench",
        "--fs",
        "ext4-extjournal",
        "--journal",
        "truncate",
        "--device",
        "sdcard-2013",
        "--journal-device",
        "galaxy-s5",
        "--sync-call",
        "fsync",
        "-n",
        "20",
        "--trace",
        "--json",
        "--out",
        out_dir.path().to_str().unwrap(),
    ]))
    .unwrap();
    let trace = run["trace_file"].as_str().unwrap();
    let replay = |args: &[&str]| -> Vec<u8> {
        let mut all = vec!["replay", trace];
        all.extend_from_slice(args);
        common::joj_ok(all)
    };
    let doc: serde_json::Value = serde_json::from_slice(&replay(&[
        "--device-for",
        "main=sdcard-2013",
        "--device-for",
        "journal=galaxy-s5",
        "--json",
    ]))
    .unwrap();
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
    let waited_s = host["modeled_s"].as_f64().unwrap();
    for d in devices {
        assert!(waited_s + 1e-9 >= d["device"]["app_wait_s"].as_f64().unwrap());
    }
    // The card has no write cache: Linux sends it no flush, so the replay sends none.
    let main = devices.iter().find(|d| d["named"] == "main").unwrap();
    assert_eq!(main["replay"]["flushes"], 0);

    // The recording's host time is composed with the time the host waited for both devices,
    // on the host of the data device's profile — the host `joj bench --device sdcard-2013
    // --journal-device galaxy-s5` composes on — and the journal profile's other phone is said.
    let m = &doc["modeled"];
    assert_eq!(doc["modeled_host_of"], "main", "{doc}");
    assert_eq!(m["ops"], 20, "{doc}");
    assert!(m["host"].as_str().unwrap().contains("Galaxy S3"), "{m}");
    let (host_s, device_s, modeled_s) = (
        m["host_s"].as_f64().unwrap(),
        m["device_s"].as_f64().unwrap(),
        m["modeled_s"].as_f64().unwrap(),
    );
    assert!(host_s > 0.0, "the recording's host time is part of it: {m}");
    assert!((device_s - waited_s).abs() < 1e-9, "{doc}");
    assert!((modeled_s - (host_s + device_s)).abs() < 1e-9, "{m}");
    let unused = doc["modeled_hosts_unused"].as_array().unwrap();
    assert_eq!(unused.len(), 1, "{doc}");
    assert!(unused[0].as_str().unwrap().contains("Galaxy S5"), "{doc}");
    // The same recording, the same profiles: the replay's figure is the run's own.
    for key in ["host_s", "device_s", "modeled_s"] {
        let (replayed, ran) = (
            m[key].as_f64().unwrap(),
            run["modeled"][key].as_f64().unwrap(),
        );
        assert!(
            (replayed - ran).abs() < 1e-9,
            "{key}: {replayed} against the run's {ran}"
        );
    }

    // Given in the other order, the data device's profile still gives the host; one phone's
    // card for both devices leaves no other host to say.
    for (first, second, unused) in [
        ("journal=galaxy-s5", "main=sdcard-2013", 1),
        ("main=sdcard-2013", "journal=sdcard-2013", 0),
    ] {
        let doc: serde_json::Value = serde_json::from_slice(&replay(&[
            "--device-for",
            first,
            "--device-for",
            second,
            "--same-device-ok",
            "--json",
        ]))
        .unwrap();
        assert_eq!(doc["modeled_host_of"], "main", "{doc}");
        let host = doc["modeled"]["host"].as_str().unwrap();
        assert!(host.contains("Galaxy S3"), "{doc}");
        let n = doc["modeled_hosts_unused"].as_array().unwrap().len();
        assert_eq!(n, unused, "{doc}");
    }
    // With the trace's gaps kept, the recording's host time is in them already: composing it
    // would count it twice, so nothing is composed, and the document says why — through one
    // device as through two.
    let main_dev = main["dev"].as_str().unwrap();
    for args in [
        &[
            "--device-for",
            "main=sdcard-2013",
            "--device-for",
            "journal=galaxy-s5",
        ][..],
        &["--dev", main_dev, "--device", "sdcard-2013"][..],
    ] {
        let mut args = args.to_vec();
        args.extend(["--honor-timestamps", "--json"]);
        let doc: serde_json::Value = serde_json::from_slice(&replay(&args)).unwrap();
        assert!(doc["modeled"].is_null(), "{args:?}: {doc}");
        let why = doc["modeled_not"].as_str().unwrap();
        assert!(why.contains("count the host twice"), "{args:?}: {why}");
    }
    let out = replay(&[
        "--device-for",
        "main=sdcard-2013",
        "--device-for",
        "journal=galaxy-s5",
    ]);
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.contains("modeled on sdcard-2013 (host: Galaxy S3")
            && text.contains("the host of main's profile")
            && text.contains("not used: journal's"),
        "{text}"
    );
}
