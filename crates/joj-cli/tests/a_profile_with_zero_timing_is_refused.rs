//! A device profile whose timings or bandwidths are zero would model a device that takes no
//! time while every result still names the profile: it is refused, naming the field and a
//! value to give.

mod common;

#[test]
fn a_profile_with_zero_bandwidth_or_zero_timings_is_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let base: serde_json::Value =
        serde_json::from_str(include_str!("../../joj-device/profiles/emmc5.json")).unwrap();
    for field in [
        "host_bytes_per_s",
        "channel_bytes_per_s",
        "read_page_ns",
        "program_page_ns",
        "erase_block_ns",
    ] {
        let mut p = base.clone();
        p["timing"][field] = 0.into();
        let path = dir.path().join(format!("{field}.json"));
        std::fs::write(&path, p.to_string()).unwrap();
        let out = common::joj_command()
            .args(["device", "run", "--requests", "10", "--device"])
            .arg(&path)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{field}: {err}");
        assert!(
            err.contains(&format!("timing.{field} is 0")) && err.contains("fix:"),
            "{field}: {err}"
        );
    }
    // Zero everywhere: the first zero is named.
    let mut p = base.clone();
    for (_, v) in p["timing"].as_object_mut().unwrap() {
        *v = 0.into();
    }
    let path = dir.path().join("all-zero.json");
    std::fs::write(&path, p.to_string()).unwrap();
    let out = common::joj_command()
        .args(["device", "run", "--requests", "10", "--device"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is 0"));
}
