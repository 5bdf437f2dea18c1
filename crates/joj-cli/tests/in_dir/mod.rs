//! Running `joj` inside a test's own directory, and what that directory then holds.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
#![allow(dead_code)] // each test uses what it needs

use std::path::Path;

/// Runs joj in `dir`; returns (success, stdout, stderr).
pub fn joj(args: &[&str], dir: &Path) -> (bool, String, String) {
    let out = crate::common::joj_command()
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The names in `dir`, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}
