//! A joj-trace header lists every device, and a reader takes lines of at most 1 MiB: blkparse
//! text naming more devices than a trace may list (4,096) is refused by `joj trace import` and
//! `joj replay`, naming the first device too many and the fix, and nothing is written. At the
//! bound, the import writes a trace that `joj trace show` reads back.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

fn blkparse(devices: u32) -> String {
    (0..devices)
        .map(|i| {
            format!(
                "  {},{}    1        6     0.{i:09}  1234  D  WS 2048 + 8 [x]\n",
                1 + i / 1000,
                i % 1000
            )
        })
        .collect()
}

#[test]
fn blkparse_text_of_more_devices_than_a_trace_lists_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = d.join("many.txt");
    std::fs::write(&text, blkparse(4097)).unwrap();
    let out = d.join("many.jsonl");
    let (text_s, out_s) = (text.to_str().unwrap(), out.to_str().unwrap());
    for args in [
        vec!["trace", "import", "-o", out_s, text_s],
        vec!["replay", "--device", "emmc5", text_s],
    ] {
        let o = common::run_joj(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("names more than 4096 devices (the 4097th is 5:96)")
                && err.contains("fix:")
                && err.lines().count() == 1,
            "{args:?}: {err}"
        );
        assert!(!out.exists(), "{args:?}: nothing written");
    }

    std::fs::write(&text, blkparse(4096)).unwrap();
    let o = common::run_joj(&["trace", "import", "-o", out_s, text_s]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = common::run_joj(&["trace", "show", out_s]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("\"records\": 4096"));
}
