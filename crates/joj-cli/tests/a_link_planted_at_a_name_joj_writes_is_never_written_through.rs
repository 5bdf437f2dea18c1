//! joj runs as root, often in directories other people can write (`/tmp`). A name joj writes
//! at that somebody could know in advance — strace's output of `joj syscalls record`, the
//! temporary file of `joj device format`, the test file of `joj device calibrate` — must never
//! be written through a symlink planted there, nor a file already there removed.

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::path::Path;
use std::process::Command;

fn victim(dir: &Path) -> std::path::PathBuf {
    let v = dir.join("victim");
    std::fs::write(&v, b"precious").unwrap();
    v
}

/// Plant a symlink to `target` at `$dir/<prefix><pid of the joj to run><suffix>`, then exec joj
/// with `args` (the shell's pid is joj's), with `TMPDIR` = `dir`.
fn plant_then_run(dir: &Path, prefix: &str, suffix: &str, target: &Path, args: &[&str]) {
    let script = format!("ln -s \"$1\" \"$2/{prefix}$$\"'{suffix}' && shift 2 && exec \"$@\"",);
    let _ = Command::new("sh")
        .args(["-c", &script, "sh"])
        .arg(target)
        .arg(dir)
        .arg(common::JOJ)
        .args(args)
        .env("TMPDIR", dir)
        .output()
        .unwrap();
}

#[test]
fn syscalls_record_never_writes_straces_output_through_a_planted_link() {
    common::need_strace();
    let dir = tempfile::tempdir().unwrap();
    let v = victim(dir.path());
    let root = dir.path().join("work");
    std::fs::create_dir(&root).unwrap();
    let out = dir.path().join("rec.jsonl");
    plant_then_run(
        dir.path(),
        "joj-strace-",
        ".txt",
        &v,
        &[
            "syscalls",
            "record",
            "--root",
            root.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--",
            "true",
        ],
    );
    assert_eq!(std::fs::read(&v).unwrap(), b"precious");
}

#[test]
fn device_format_never_writes_the_image_through_a_planted_link() {
    let dir = tempfile::tempdir().unwrap();
    let v = victim(dir.path());
    let img = dir.path().join("x.img");
    std::os::unix::fs::symlink(&v, dir.path().join("x.img.tmp")).unwrap();
    let run = Command::new(common::JOJ)
        .args(["device", "format"])
        .arg(&img)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(std::fs::read(&v).unwrap(), b"precious");
    assert!(
        std::fs::symlink_metadata(&img).unwrap().is_file(),
        "the image is a file of its own, not the link renamed"
    );
}

#[test]
fn device_calibrate_never_removes_a_file_it_did_not_make() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("disk");
    std::fs::create_dir(&target).unwrap();
    let script = "echo data > \"$1/joj-calibrate-$$.img\" && shift && exec \"$@\"";
    let out = dir.path().join("p.json");
    let run = Command::new("sh")
        .args(["-c", script, "sh"])
        .arg(&target)
        .arg(common::JOJ)
        .args([
            "device",
            "calibrate",
            "--size-mib",
            "64",
            "--samples",
            "10",
            "-o",
        ])
        .arg(&out)
        .arg(&target)
        .output()
        .unwrap();
    let left: Vec<_> = std::fs::read_dir(&target)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 1, "somebody else's file was removed: {left:?}");
    // It got as far as making its test file (and stopped there).
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("is not joj's: it is left as it is"), "{err}");
}
