//! `joj replay --device-for main=sdcard-2013 --device-for journal=galaxy-s5` printed
//! "(0 dropped: no cache)" for galaxy-s5, which has a 256 KiB write cache. Only a device whose
//! profile has no write cache is said to have none; its flushes are dropped and counted. The
//! one-device replay says so too, and the JSON carries each profile's `cache_bytes`.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

/// A trace of two devices, each written and flushed twice.
fn two_device_trace(dir: &std::path::Path) -> std::path::PathBuf {
    let records: Vec<_> = (0..8u64)
        .map(|i| {
            let dev = if i % 2 == 0 { "7:0" } else { "7:1" };
            let op = if i < 4 {
                joj_trace::Op::Write
            } else {
                joj_trace::Op::Flush
            };
            let (sector, sectors) = if i < 4 { (i * 8, 8) } else { (0, 0) };
            joj_trace::TraceRecord::new(i, dev, op, sector, sectors)
        })
        .collect();
    common::two_device_trace(dir, &records)
}

fn replay(trace: &std::path::Path, args: &[&str]) -> String {
    let out = common::joj_command()
        .arg("replay")
        .arg(trace)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn line<'a>(text: &'a str, has: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(has))
        .unwrap_or_else(|| panic!("no line with {has:?} in: {text}"))
}

#[test]
fn only_a_device_without_a_write_cache_is_said_to_have_none() {
    let dir = tempfile::tempdir().unwrap();
    let t = two_device_trace(dir.path());
    let two = [
        "--device-for",
        "7:0=sdcard-2013",
        "--device-for",
        "7:1=galaxy-s5",
    ];
    let text = replay(&t, &two);
    let sd = line(&text, "through sdcard-2013");
    assert!(sd.contains("0 flushes (2 dropped: no write cache)"), "{sd}");
    let s5 = line(&text, "through galaxy-s5");
    assert!(
        s5.contains("2 flushes (0 dropped)") && !s5.contains("no "),
        "{s5}"
    );

    let json: serde_json::Value =
        serde_json::from_str(&replay(&t, &[&two[..], &["--json"]].concat())).unwrap();
    let caches: Vec<u64> = json["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["replay"]["cache_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(caches[0], 0, "{json}");
    assert!(caches[1] > 0, "{json}");

    let one = |profile: &str| replay(&t, &["--dev", "7:0", "--device", profile]);
    let sd = one("sdcard-2013");
    assert!(
        line(&sd, "requests:").contains("0 flushes (2 dropped: no write cache)"),
        "{sd}"
    );
    let s5 = one("galaxy-s5");
    let s5 = line(&s5, "requests:");
    assert!(s5.contains("2 flushes,") && !s5.contains("cache"), "{s5}");
    let json: serde_json::Value = serde_json::from_str(&replay(
        &t,
        &["--dev", "7:0", "--device", "sdcard-2013", "--json"],
    ))
    .unwrap();
    assert_eq!(json["replay"]["flushes_dropped"], 2, "{json}");
    assert_eq!(json["replay"]["cache_bytes"], 0, "{json}");
}
