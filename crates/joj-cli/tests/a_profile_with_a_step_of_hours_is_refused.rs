//! A device profile whose page, erase or command times are absurdly long (a hostile or mistyped
//! file: `u64::MAX` nanoseconds) is refused naming the field, instead of overflowing the
//! device's nanosecond clock — which gave a panic (`command_latency_ns`) or a silently wrong
//! figure (`command_overhead_ns`).

mod common;

#[test]
fn a_profile_with_a_step_of_hours_is_refused_naming_the_field() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let base: serde_json::Value =
        serde_json::from_str(include_str!("../../joj-device/profiles/emmc5.json"))
            .expect("the built-in profile parses");
    for field in [
        "read_page_ns",
        "program_page_ns",
        "erase_block_ns",
        "command_overhead_ns",
        "command_latency_ns",
    ] {
        let mut p = base.clone();
        p["timing"][field] = u64::MAX.into();
        let path = dir.path().join(format!("{field}.json"));
        std::fs::write(&path, p.to_string()).expect("the profile is written");
        let out = common::joj_command()
            .args(["device", "run", "--requests", "10", "--device"])
            .arg(&path)
            .output()
            .expect("joj runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{field}: {err}");
        assert!(
            err.contains(&format!("timing.{field}")) && err.contains("fix:"),
            "{field}: {err}"
        );
    }
}
