//! A tracefs instance name that exists already — left by a dead process that had this pid, or
//! made by hand — is not ours: the tracer skips it for the next free `joj-<pid>-<n>` and leaves
//! it as it was.

mod common;

use std::path::PathBuf;

use joj_linux::BlockTracer;
use joj_linux::prereq::TRACEFS_ROOT;

/// Instances made by this test, removed again when it ends (also when it fails).
struct Taken(Vec<PathBuf>);

impl Drop for Taken {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_dir(p);
        }
    }
}

#[test]
fn a_taken_tracefs_instance_name_is_skipped() {
    if !common::machine_ready(&[]) {
        return;
    }
    let instances = PathBuf::from(TRACEFS_ROOT).join("instances");
    let pid = std::process::id();
    // The first three names this process would take (this file's only test: its counter
    // starts at 0).
    let taken = Taken(
        (0..3)
            .map(|n| instances.join(format!("joj-{pid}-{n}")))
            .collect(),
    );
    for p in &taken.0 {
        std::fs::create_dir(p).unwrap();
    }
    let tracer = BlockTracer::start(&["7:0"], 1024).unwrap();
    assert_eq!(
        tracer.instance_path(),
        instances.join(format!("joj-{pid}-3"))
    );
    assert!(tracer.instance_path().is_dir());
    tracer.stop().unwrap();
    assert!(!instances.join(format!("joj-{pid}-3")).exists());
    for p in &taken.0 {
        assert!(p.is_dir(), "{} was removed", p.display());
    }
}
