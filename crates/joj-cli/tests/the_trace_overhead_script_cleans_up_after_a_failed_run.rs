//! `workflow/scripts/trace_overhead.sh` cleans up after a run that fails halfway (a joj that
//! exits 1 after an untraced round made and removed its filesystem): it exits non-zero and
//! leaves no image, loop device or mount, and its cleanup kills nothing but what used its own
//! mount — a first version ran `fuser -k -m` on its mount directory after the mount was gone,
//! which names the filesystem holding that directory, /tmp's, and killed every process using
//! it. The script runs in a mount namespace of its own with its work directories (`TMPDIR`) on
//! a tmpfs of their own, so that a fault of this kind kills only the test's sentinel there.

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use std::process::Command;

fn images_left() -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("joj-overhead"))
        .collect()
}

#[test]
fn the_trace_overhead_script_cleans_up_after_a_failed_run() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let script = format!(
        "{}/../../workflow/scripts/trace_overhead.sh",
        env!("CARGO_MANIFEST_DIR")
    );
    let before = images_left();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().display();
    let inner = format!(
        "mount -t tmpfs joj-test {dir} || exit 90\n\
         cd {dir} && sleep 120 &\n\
         sentinel=$!\n\
         TMPDIR={dir} bash {script} micro 1 base bad=/bin/false > {dir}/out 2>&1\n\
         echo \"rc=$?\"\n\
         sleep 0.2\n\
         if kill -0 $sentinel 2>/dev/null; then echo sentinel-alive; kill $sentinel; else echo sentinel-killed; fi\n\
         cat {dir}/out >&2\n"
    );
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", &inner])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("rc=") && !said.contains("rc=0"),
        "{said}\n{err}"
    );
    assert!(said.contains("sentinel-alive"), "{said}\n{err}");
    assert!(
        err.contains("base "),
        "the untraced round did not run:\n{err}"
    );
    assert_eq!(images_left(), before, "an image was left in /dev/shm");
    let loops = Command::new("losetup").arg("-a").output().unwrap();
    let loops = String::from_utf8_lossy(&loops.stdout);
    assert!(
        !loops.contains("joj-overhead"),
        "a loop device was left: {loops}"
    );
}
