//! A run whose images are on a disk (`joj bench --image-dir DIR`) reports that disk's write
//! requests and bytes in the window next to the loop devices', and with direct I/O the bytes
//! the disk wrote of its own: the image file's metadata, which no block device writes
//! (docs/measurement.md, "Known limits", "The image file's own writes"). On Linux 6.13 and later
//! an OFF-mode commit makes the disk write the image's inode at nearly every flush (SQLite's
//! `fstat` at each transaction hands out a fine-grained timestamp, which moves the image file's
//! clock): at least half a 4 KiB block per commit.
//!
//! Needs root, a scratch ext4 and /var/tmp on a disk that /sys/dev/block lists (a filesystem
//! with a device number of its own, such as ext4 or xfs on a disk or partition): elsewhere the
//! test fails and says so.

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

fn bench(mode: &str, extra: &[&str]) -> serde_json::Value {
    let args = [
        &[
            "bench",
            "--fs",
            "ext4",
            "-j",
            mode,
            "--op",
            "insert",
            "-n",
            "300",
            "--image-mib",
            "256",
            "--json",
        ][..],
        extra,
    ]
    .concat();
    let out = common::run_joj(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn kernel_at_least(major: u64, minor: u64) -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let mut parts = release
        .trim()
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u64>().unwrap_or(0));
    let (a, b) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (a, b) >= (major, minor)
}

#[test]
fn the_disk_under_the_images_is_counted_beside_the_loop_devices() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let d = dir.path().to_str().unwrap();

    let off = bench("off", &["--image-dir", d, "--loop-direct-io"]);
    let b = &off["backing"];
    assert!(
        b.is_object(),
        "no backing section: is /var/tmp on a disk that /sys/dev/block lists? This test needs \
         it. {off}"
    );
    assert_eq!(b["direct_io"], true, "{b}");
    let (disk, lo) = (
        common::count(b, "disk_write_bytes"),
        common::count(b, "loop_write_bytes"),
    );
    assert!(
        lo >= 300 * 4096,
        "the loop devices wrote a page per commit at least: {b}"
    );
    assert!(
        disk >= lo,
        "every byte the loop device wrote reaches the disk: {b}"
    );
    assert_eq!(common::count(b, "own_write_bytes"), disk - lo, "{b}");
    assert!(
        common::count(b, "loop_flush_ios") >= 300,
        "a flush per commit: {b}"
    );
    if kernel_at_least(6, 13) {
        let own = b["own_bytes_per_txn"].as_f64().unwrap();
        assert!(
            own >= 0.5 * 4096.0,
            "an OFF commit makes the disk write the image's inode at most flushes on this \
             kernel (multigrain timestamps): {own} B per commit"
        );
    }

    // Through the page cache the disk sees merged writeback: counted, no difference drawn.
    let buffered = bench("off", &["--image-dir", d]);
    assert_eq!(buffered["backing"]["direct_io"], false, "{buffered}");
    assert!(
        buffered["backing"]["own_write_bytes"].is_null(),
        "{buffered}"
    );

    // In memory (the default) there is no disk under the images.
    let memory = bench("off", &[]);
    assert!(memory.get("backing").is_none(), "{memory}");
}
