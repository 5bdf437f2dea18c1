//! `joj device calibrate DIR -o P.json` measures the disk under DIR with O_DIRECT (a test file
//! made there and removed) and writes a profile joj loads: its timing derived from the
//! measurements, this machine as its host, the measurements themselves under `calibration`
//! (queue-depth scaling in `calibration.queue_depth.points`, which splits the command's time into
//! a serial and an overlapped part), and the reference measured on joj's memory loop device that
//! each latency had taken off (docs/device-model.md, "The reference"), and a flush after a write
//! made once the clock ticked (kept, not used), with its control on the reference. It never replaces a file without --force, and
//! refuses a block device without --destroy-data.

mod common;

#[test]
fn device_calibrate_writes_a_profile_from_measurements() {
    // The reference is measured on a loop device joj makes in memory: root, loop devices and
    // mkfs.ext4.
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    // A directory on this machine's disk (not /tmp, which may be memory): O_DIRECT must work.
    let base = std::path::Path::new("/var/tmp");
    let dir = tempfile::tempdir_in(base).unwrap();
    let out = tempfile::tempdir().unwrap();
    let profile = out.path().join("disk.json");
    let p = profile.to_str().unwrap();
    let d = dir.path().to_str().unwrap();
    let o = common::run_joj(&[
        "device",
        "calibrate",
        d,
        "-o",
        p,
        "--size-mib",
        "64",
        "--samples",
        "20",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let loaded = joj_device::Profile::load(p).expect("joj loads the profile it wrote");
    assert_eq!(loaded.name, "disk");
    assert!(loaded.host.as_ref().is_some_and(|h| h.cpu_factor == 1.0));
    let cal = loaded
        .calibration
        .as_ref()
        .expect("the measurements are kept");
    let points = cal["queue_depth"]["points"]
        .as_array()
        .expect("queue-depth points");
    assert_eq!(points.len(), 4);
    assert!(cal["measured"]["write_4k"]["median_us"].as_f64().unwrap() > 0.0);
    // A flush after a write made once the clock ticked is measured and kept (the profile does
    // not use it): at least ten samples, one a tick.
    let ticked = &cal["measured"]["flush_after_4k_clock_ticked"];
    assert!(
        ticked["samples"].as_u64().is_some_and(|n| n >= 10)
            && ticked["median_us"].as_f64() > Some(0.0),
        "{cal}"
    );
    // The reference, measured on joj's memory loop device, is kept and named as taken off.
    // Its ticked flush is the control of the device's: the same wait, no file behind it.
    for pattern in [
        "write_4k",
        "read_4k",
        "flush_after_4k",
        "flush_after_4k_clock_ticked",
    ] {
        let us = cal["measured"]["reference"][pattern]["median_us"].as_f64();
        assert!(us.is_some_and(|us| us > 0.0), "{pattern}: {cal}");
    }
    assert!(
        cal["derived"]
            .as_object()
            .unwrap()
            .keys()
            .any(|k| k.starts_with("reference subtracted"))
            && loaded
                .sources
                .iter()
                .any(|s| s.contains("memory loop device")),
        "{cal}"
    );
    // The command's fixed time is split, by the queue-depth scaling, into a serial and an
    // overlapped part that add up to it; the model's throughput is kept beside each point.
    let whole = cal["derived"]["command time ns (4 KiB write less its transfer)"]
        .as_f64()
        .expect("the command's fixed time");
    let t = &loaded.timing;
    let split = (t.command_overhead_ns + t.command_latency_ns) as f64;
    assert!((split - whole).abs() <= 1.0, "{t:?} against {whole}");
    assert!((1..=8).contains(&t.queue_depth), "{t:?}");
    assert_eq!(cal["queue_depth"]["fit"].as_array().map(Vec::len), Some(4));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.contains("overlapped, queue depth"), "{said}");
    assert!(
        said.contains("reference (a loop device in memory"),
        "{said}"
    );
    assert!(said.contains("once the clock ticked"), "{said}");
    assert!(
        said.contains("the reference, with the same wait and no file written behind it"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "the test file is removed"
    );
    // An existing output is not replaced without --force.
    let again = common::run_joj(&[
        "device",
        "calibrate",
        d,
        "-o",
        p,
        "--size-mib",
        "64",
        "--samples",
        "20",
    ]);
    assert!(!again.status.success());
    // A block device is written over only with --destroy-data.
    if std::path::Path::new("/dev/loop0").exists() {
        let other = out.path().join("dev.json");
        let b = common::run_joj(&[
            "device",
            "calibrate",
            "/dev/loop0",
            "-o",
            other.to_str().unwrap(),
        ]);
        assert!(!b.status.success());
        assert!(
            String::from_utf8_lossy(&b.stderr).contains("--destroy-data"),
            "{}",
            String::from_utf8_lossy(&b.stderr)
        );
    }
}
