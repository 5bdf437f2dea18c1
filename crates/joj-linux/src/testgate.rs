//! Whether a kernel-level test can run on this machine, and what happens when it cannot.
//!
//! Every test that needs root, loop devices, tracefs or a filesystem's tools starts with
//! [`kernel_test`]. When something is missing the test **fails**, naming what is missing and
//! how to get it: a test that did not run never counts as passed. A developer without those
//! may opt out explicitly by setting [`OPT_OUT_ENV`] (`JOJ_SKIP_KERNEL_TESTS=1`); the test then
//! returns early, says so on stderr and, when [`SKIP_LOG_ENV`] names a file, appends one line
//! to it, so that the test command can count and print every test it skipped
//! (`scripts/test.sh` does).

use std::io::Write;

use crate::fs::FsKind;
use crate::prereq;

/// Set to `1` to skip (rather than fail) kernel-level tests on a machine that cannot run them.
pub const OPT_OUT_ENV: &str = "JOJ_SKIP_KERNEL_TESTS";
/// A file each skipped test appends a line to (`<test>: <what is missing>`).
pub const SKIP_LOG_ENV: &str = "JOJ_SKIP_LOG";

/// `true` when the machine has everything a traced test on `kinds` needs (root, loop devices,
/// tracefs with block events, each kind's tools and kernel support). Otherwise panics with what
/// is missing — unless the developer opted out with [`OPT_OUT_ENV`], in which case the skip is
/// recorded and `false` returned.
pub fn kernel_test(kinds: &[FsKind]) -> bool {
    let missing = match prereq::check_all(kinds) {
        Ok(()) => return true,
        Err(e) => e.to_string(),
    };
    decide(&missing)
}

/// As [`kernel_test`], for a test whose only need is root (mounts, `kill` of a child holding
/// kernel resources, a read-only remount).
pub fn root_test() -> bool {
    match prereq::check_root() {
        Ok(()) => true,
        Err(e) => decide(&e.to_string()),
    }
}

fn decide(missing: &str) -> bool {
    let test = std::thread::current()
        .name()
        .unwrap_or("a kernel-level test")
        .to_string();
    if !opted_out() {
        panic!(
            "{test} cannot run on this machine: {missing}\n(to skip the kernel-level tests \
             instead, set {OPT_OUT_ENV}=1; they are then counted as skipped, not passed)"
        );
    }
    eprintln!("skipped ({OPT_OUT_ENV}=1): {test}: {missing}");
    if let Some(path) = std::env::var_os(SKIP_LOG_ENV) {
        let line = format!("{test}: {}\n", missing.replace('\n', " "));
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            panic!(
                "{test} was skipped but the skip cannot be recorded in {}: {e}",
                std::path::Path::new(&path).display()
            );
        }
    }
    false
}

fn opted_out() -> bool {
    std::env::var_os(OPT_OUT_ENV).is_some_and(|v| !v.is_empty() && v != "0")
}
