//! Ctrl-C (SIGINT) in the middle of a traced run on a scratch filesystem: joj exits with 130 and
//! leaves no loop device, mount or tracefs instance behind.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The scratch-filesystem prerequisites; the test fails naming what is missing, unless
/// kernel-level tests are skipped on purpose (`JOJ_SKIP_KERNEL_TESTS=1`).
fn ready() -> bool {
    joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4])
}

fn ours(pid: u32) -> (Vec<String>, Vec<String>, Vec<String>) {
    let tag = format!("-{pid}-");
    let loops = std::fs::read_dir("/sys/block")
        .map(|d| {
            d.flatten()
                .filter(|e| {
                    std::fs::read_to_string(e.path().join("loop/backing_file"))
                        .unwrap_or_default()
                        .contains(&tag)
                })
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let mounts = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split(' ').nth(4).map(str::to_string))
        .filter(|m| m.starts_with("/run/joj") && m.contains(&tag))
        .collect();
    let instances = std::fs::read_dir("/sys/kernel/tracing/instances")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&format!("joj-{pid}-")))
                .collect()
        })
        .unwrap_or_default();
    (loops, mounts, instances)
}

#[test]
fn ctrl_c_during_a_traced_run_leaves_nothing() {
    if !ready() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_joj"))
        .args([
            "bench",
            "--fs",
            "ext4",
            "--trace",
            "-n",
            "100000",
            "--interval-ms",
            "2",
            "--image-mib",
            "64",
            "--out",
        ])
        .arg(out.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait until the run is inside its window: scratch mounted and tracer instance created.
    let t0 = Instant::now();
    loop {
        let (l, m, i) = ours(pid);
        if !l.is_empty() && !m.is_empty() && !i.is_empty() {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the run never started: {:?}",
            ours(pid)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: plain kill(2) on our own child.
    assert_eq!(unsafe { libc_kill(pid as i32, 2) }, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    // The loop device is released by the kernel once its last opener is gone.
    let t0 = Instant::now();
    while ours(pid) != (vec![], vec![], vec![]) && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        ours(pid),
        (vec![], vec![], vec![]),
        "left behind after Ctrl-C"
    );
}

unsafe extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}
