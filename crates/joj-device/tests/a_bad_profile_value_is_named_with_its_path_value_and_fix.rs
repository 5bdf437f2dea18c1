//! A profile refused for a zero geometry count, a page that is not whole sectors, a non-positive
//! over-provisioning or a destage watermark above 100 % was named without its field path, the
//! value given or the fix. Each message names the full path (`geometry.channels`,
//! `ftl.over_provisioning_percent`), the value and a `fix:` with an example value.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_device::Profile;

fn message(set: impl Fn(&mut serde_json::Value)) -> String {
    let mut v = serde_json::to_value(Profile::builtin("emmc5").unwrap()).unwrap();
    set(&mut v);
    Profile::from_json(&v.to_string()).unwrap_err().to_string()
}

fn names(text: &str, path: &str, value: &str) {
    assert!(
        text.contains(&format!("{path} is {value}")) && text.contains("fix: give"),
        "{path} = {value}: {text}"
    );
}

#[test]
fn each_geometry_count_of_zero_is_named() {
    for field in [
        "pages_per_block",
        "blocks_per_plane",
        "channels",
        "dies_per_channel",
        "planes_per_die",
    ] {
        let text = message(|v| v["geometry"][field] = 0.into());
        names(&text, &format!("geometry.{field}"), "0");
    }
}

#[test]
fn a_page_of_part_sectors_is_named() {
    let text = message(|v| v["geometry"]["page_bytes"] = 3000.into());
    names(&text, "geometry.page_bytes", "3000");
    assert!(text.contains("8192"), "{text}");
}

#[test]
fn a_negative_over_provisioning_is_named_under_ftl() {
    let text = message(|v| v["ftl"]["over_provisioning_percent"] = (-1.0).into());
    names(&text, "ftl.over_provisioning_percent", "-1");
}

#[test]
fn a_destage_watermark_above_100_is_named_under_cache() {
    let text = message(|v| v["cache"]["destage_watermark_percent"] = 200.into());
    names(&text, "cache.destage_watermark_percent", "200");
}
