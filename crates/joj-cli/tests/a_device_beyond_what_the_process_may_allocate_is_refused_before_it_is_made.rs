#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
//! A profile within every bound of its format (2^28 NAND pages of 512 B, the page bound) makes
//! a device whose state takes some 6.5 GB from the start. Under a 3 GB address-space limit
//! (`ulimit -v`, as a shared machine or a container sets one) joj aborted with "memory
//! allocation of 4294967296 bytes failed" and a backtrace (found by a probe of 2026-11-29);
//! now every command that makes a device refuses it first, with the limit and the fix.

mod common;

use std::os::unix::process::CommandExt;

/// `emmc5` with 2^28 pages of 512 B and no cache.
fn page_bound_profile(dir: &std::path::Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../joj-device/profiles/emmc5.json"
    ))
    .unwrap();
    let mut p: serde_json::Value = serde_json::from_str(&text).unwrap();
    p["name"] = "page-bound".into();
    p["geometry"]["page_bytes"] = 512.into();
    p["geometry"]["pages_per_block"] = 4096.into();
    p["geometry"]["blocks_per_plane"] = 8192.into();
    p["cache"]["capacity_bytes"] = 0.into();
    let path = dir.join("page-bound.json");
    std::fs::write(&path, p.to_string()).unwrap();
    path
}

/// `joj ARGS` with at most 3 GB of address space: (exit code, signal, stderr).
fn joj_limited(args: &[&std::ffi::OsStr]) -> (Option<i32>, Option<i32>, String) {
    let mut cmd = common::joj_command();
    cmd.args(args);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 3 << 30,
                rlim_max: 3 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    use std::os::unix::process::ExitStatusExt;
    (
        out.status.code(),
        out.status.signal(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_refused((code, signal, err): (Option<i32>, Option<i32>, String)) {
    assert_eq!(
        (code, signal),
        (Some(1), None),
        "refused with an error, not aborted: {err}"
    );
    assert!(
        err.contains("ulimit -v") && err.contains("fix:"),
        "the limit and the fix are named: {err}"
    );
}

#[test]
fn device_run_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = page_bound_profile(dir.path());
    let args: Vec<&std::ffi::OsStr> = ["device", "run", "--requests", "10", "--device"]
        .iter()
        .map(std::ffi::OsStr::new)
        .chain([p.as_os_str()])
        .collect();
    assert_refused(joj_limited(&args));
}

#[test]
fn replay_refuses_it_as_the_profiles_fault_not_the_traces() {
    let dir = tempfile::tempdir().unwrap();
    let p = page_bound_profile(dir.path());
    let trace = dir.path().join("one.txt");
    std::fs::write(&trace, "  8,0 1 1 0.0 1 Q WS 2048 + 8 [x]\n").unwrap();
    let args: Vec<&std::ffi::OsStr> = vec![
        "replay".as_ref(),
        trace.as_os_str(),
        "--device".as_ref(),
        p.as_os_str(),
    ];
    let r = joj_limited(&args);
    assert!(
        r.2.contains("making the emulated device") && !r.2.contains("trace record"),
        "{}",
        r.2
    );
    assert_refused(r);
}
