//! `joj syscalls record` kept one descriptor table of recorded numbers for every process and
//! never saw `dup`, `dup2`, `fcntl(F_DUPFD)` or `fork`: a shell's `exec 3>f; echo a >&3`
//! (the shell writes through a `dup2` copy at 1) was recorded as an open and no write, and a
//! child writing through an inherited descriptor lost its writes (counted as inherited). The
//! importer now follows each process's table (`docs/formats/syscalls.md`, "Descriptors"):
//! every write lands on the file it went to, each file is closed where its last copy was, and
//! the recording replays.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::collections::HashMap;
use std::process::Stdio;

#[test]
fn a_shells_and_a_childs_copies_are_recorded_on_the_file_they_write() {
    let Some((dir, root)) = common::recording_dirs() else {
        return;
    };
    let rec = dir.path().join("rec.jsonl");
    // The shell: f at 3, written through its copy at 1 twice and by a subshell through its
    // inherited copy once; Python (inheriting 3 too): g, a dup of it, the original closed,
    // written through the dup, then a child that closes the inherited copies and execs.
    let script = "exec 3>f; echo a >&3; echo b >&3; (echo c >&3); \
        /usr/bin/python3 -c 'import os, subprocess; fd = os.open(\"g\", os.O_WRONLY | os.O_CREAT); \
        d = os.dup(fd); os.close(fd); os.write(d, b\"x\"); subprocess.run([\"true\"])'";
    let out = common::joj_command()
        .args(["syscalls", "record", "--root"])
        .arg(&root)
        .arg("-o")
        .arg(&rec)
        .args(["--", "sh", "-c", script])
        .current_dir(&root)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        std::fs::read_to_string(root.join("f")).unwrap(),
        "a\nb\nc\n"
    );

    let text = std::fs::read_to_string(&rec).unwrap();
    let mut lines = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap());
    let header = lines.next().unwrap();
    assert_eq!(
        header["dropped_inherited"].as_u64().unwrap_or(0),
        0,
        "{header}"
    );
    let calls: Vec<serde_json::Value> = lines.collect();
    // What was written and closed on each file: a number names the file its open named until
    // the close of it.
    let mut file_of: HashMap<i64, String> = HashMap::new();
    let mut did: HashMap<(String, String), Vec<u64>> = HashMap::new();
    for c in &calls {
        let fd = c["fd"].as_i64();
        match c["call"].as_str().unwrap() {
            "open" if c["ret"].as_i64().unwrap() >= 0 => {
                file_of.insert(fd.unwrap(), c["path"].as_str().unwrap().to_string());
            }
            call @ ("write" | "close") => {
                let path = file_of[&fd.unwrap()].clone();
                let len = c["len"].as_u64().unwrap_or(0);
                did.entry((call.to_string(), path)).or_default().push(len);
                if call == "close" {
                    file_of.remove(&fd.unwrap());
                }
            }
            _ => {}
        }
    }
    let on = |call: &str, path: &str| {
        did.get(&(call.to_string(), path.to_string()))
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(on("write", "f"), [2, 2, 2], "{text}");
    assert_eq!(on("write", "g"), [1], "{text}");
    // Each file closed once, where its last copy ended (the shell's and Python's exits).
    assert_eq!(on("close", "f").len(), 1, "{text}");
    assert_eq!(on("close", "g").len(), 1, "{text}");

    if let Err(stderr) = common::replay_on_ext4(&rec, dir.path()) {
        panic!("the replay: {stderr}");
    }
}

/// `--root .` (relative, from the directory the program runs in) used to fail: the recorded
/// paths are absolute, and none started with `.` (`"/etc/ld.so.cache" is not inside the
/// recorded root`). A relative root is taken from joj's working directory, as the shell would.
#[test]
fn a_relative_root_is_taken_from_the_working_directory() {
    let Some((dir, root)) = common::recording_dirs() else {
        return;
    };
    let rec = dir.path().join("rel.jsonl");
    let out = common::joj_command()
        .args(["syscalls", "record", "--root", ".", "-o"])
        .arg(&rec)
        .args(["--", "sh", "-c", "echo hi > f"])
        .current_dir(&root)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let text = std::fs::read_to_string(&rec).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(
        header["root"].as_str().unwrap(),
        std::path::absolute(&root).unwrap().to_str().unwrap()
    );
    assert!(text.lines().count() > 1, "the write to f is recorded");
}
