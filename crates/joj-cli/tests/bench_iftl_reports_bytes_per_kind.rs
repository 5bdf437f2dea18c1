//! `joj bench -j iftl --device openssd-iftl` prints, next to the device's throughput, where the
//! i-FTL put the run's bytes: data to flash, the file layer's metadata to NVM, and no flash
//! page for mapping (its tables are NVM stores). No kernel filesystem is involved.

use std::process::Command;

#[test]
fn an_iftl_run_says_where_its_bytes_went() {
    let out = Command::new(env!("CARGO_BIN_EXE_joj"))
        .args([
            "bench",
            "--journal",
            "iftl",
            "--device",
            "openssd-iftl",
            "-n",
            "50",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("i-FTL:"))
        .unwrap_or_else(|| panic!("no i-FTL line in:\n{text}"));
    let numbers: Vec<u64> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let [data, metadata, mapping, _lazy] = numbers[..] else {
        panic!("unexpected i-FTL line: {line}");
    };
    assert!(
        data >= 50 * 4096,
        "50 inserts wrote {data} B of data: {line}"
    );
    assert!(metadata > 0, "the database grew, its inode changed: {line}");
    assert_eq!(mapping, 0, "{line}");
}
