//! `joj syscalls replay` counts the writes it plays as `joj trace -- COMMAND` counts a
//! program's: per file, the recording's `write` and `pwrite` calls and their lengths (a WAL
//! header written at offset 0 among them, and writes on an `O_DSYNC` descriptor as synchronous
//! writes), in `syscalls.write_calls` / `write_bytes` their sums, and in `files` the bytes by
//! role. It used to report `0 writes of 0 B` and every file's `writes 0` while it wrote
//! megabytes: the player told the watcher of syncs and changes, never of writes. The same calls
//! made by a Python program under `joj trace` give the same figures.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use std::collections::BTreeMap;

/// One recorded call (descriptors are the recording's numbers).
enum Step {
    Open {
        path: &'static str,
        flags: &'static [&'static str],
        fd: i32,
    },
    Pwrite {
        fd: i32,
        off: u64,
        len: u64,
        sqlite_header: bool,
    },
    Write {
        fd: i32,
        len: u64,
    },
    Fdatasync {
        fd: i32,
    },
    Close {
        fd: i32,
    },
}

use Step::*;

const RW: &[&str] = &["O_RDWR", "O_CREAT"];

/// A database, its rollback journal written at its position, a WAL whose header is written,
/// and a log on an `O_DSYNC` descriptor.
const STEPS: &[Step] = &[
    Open {
        path: "t.db",
        flags: RW,
        fd: 3,
    },
    Pwrite {
        fd: 3,
        off: 0,
        len: 4096,
        sqlite_header: true,
    },
    Pwrite {
        fd: 3,
        off: 4096,
        len: 4096,
        sqlite_header: false,
    },
    Open {
        path: "t.db-journal",
        flags: RW,
        fd: 4,
    },
    Write { fd: 4, len: 512 },
    Write { fd: 4, len: 1000 },
    Pwrite {
        fd: 4,
        off: 1512,
        len: 28,
        sqlite_header: false,
    },
    Fdatasync { fd: 4 },
    Open {
        path: "t.db-wal",
        flags: RW,
        fd: 5,
    },
    Pwrite {
        fd: 5,
        off: 0,
        len: 32,
        sqlite_header: false,
    },
    Pwrite {
        fd: 5,
        off: 32,
        len: 4120,
        sqlite_header: false,
    },
    Fdatasync { fd: 5 },
    Open {
        path: "log.txt",
        flags: &["O_WRONLY", "O_CREAT", "O_DSYNC"],
        fd: 6,
    },
    Write { fd: 6, len: 100 },
    Write { fd: 6, len: 200 },
    Pwrite {
        fd: 3,
        off: 8192,
        len: 4096,
        sqlite_header: false,
    },
    Fdatasync { fd: 3 },
    Close { fd: 6 },
    Close { fd: 5 },
    Close { fd: 4 },
    Close { fd: 3 },
];

/// The recording of [`STEPS`] (no window marks: measured whole, as a traced program is).
fn recording() -> String {
    let mut s = format!(
        r#"{{"format":"joj-syscalls","version":1,"source":"strace","root":"/r","transactions":1,"threads":1,"calls":{},"dropped_outside_root":0}}"#,
        STEPS.len()
    );
    s.push('\n');
    for (i, step) in STEPS.iter().enumerate() {
        let common = format!(r#""seq":{i},"tid":1,"start_ns":{},"dur_ns":1"#, i * 1000);
        let line = match step {
            Open { path, flags, fd } => format!(
                r#"{{{common},"ret":{fd},"call":"open","path":"{path}","flags":{},"mode":420,"fd":{fd}}}"#,
                serde_json::to_string(flags).unwrap()
            ),
            Pwrite {
                fd,
                off,
                len,
                sqlite_header,
            } => format!(
                r#"{{{common},"ret":{len},"call":"pwrite","fd":{fd},"off":{off},"len":{len},"sqlite_header":{sqlite_header}}}"#
            ),
            Write { fd, len } => {
                format!(r#"{{{common},"ret":{len},"call":"write","fd":{fd},"len":{len}}}"#)
            }
            Fdatasync { fd } => format!(r#"{{{common},"ret":0,"call":"fdatasync","fd":{fd}}}"#),
            Close { fd } => format!(r#"{{{common},"ret":0,"call":"close","fd":{fd}}}"#),
        };
        s.push_str(&line);
        s.push('\n');
    }
    s
}

/// A Python program making the calls of [`STEPS`] with the player's data.
fn program() -> String {
    let mut s = String::from("import os\nfd = {}\n");
    let data = |len: u64, header: bool| {
        if header {
            format!(r#"b"SQLite format 3\0" + b"\x5a" * {}"#, len - 16)
        } else {
            format!(r#"b"\x5a" * {len}"#)
        }
    };
    for step in STEPS {
        s.push_str(&match step {
            Open { path, flags, fd } => {
                let flags: Vec<String> = flags.iter().map(|f| format!("os.{f}")).collect();
                format!(
                    "fd[{fd}] = os.open({path:?}, {}, 0o644)\n",
                    flags.join(" | ")
                )
            }
            Pwrite {
                fd,
                off,
                len,
                sqlite_header,
            } => format!(
                "os.pwrite(fd[{fd}], {}, {off})\n",
                data(*len, *sqlite_header)
            ),
            Write { fd, len } => format!("os.write(fd[{fd}], {})\n", data(*len, false)),
            Fdatasync { fd } => format!("os.fdatasync(fd[{fd}])\n"),
            Close { fd } => format!("os.close(fd[{fd}])\n"),
        });
    }
    s
}

/// What the recording writes, by file: write calls, bytes, and writes on a synchronous
/// descriptor.
fn expected() -> BTreeMap<&'static str, (u64, u64, u64)> {
    let mut open: BTreeMap<i32, (&str, bool)> = BTreeMap::new();
    let mut by_file = BTreeMap::new();
    for step in STEPS {
        let (fd, len) = match step {
            Open { path, flags, fd } => {
                open.insert(*fd, (*path, flags.contains(&"O_DSYNC")));
                continue;
            }
            Pwrite { fd, len, .. } | Write { fd, len } => (*fd, *len),
            Fdatasync { .. } | Close { .. } => continue,
        };
        let (path, sync) = open[&fd];
        let e: &mut (u64, u64, u64) = by_file.entry(path).or_default();
        e.0 += 1;
        e.1 += len;
        e.2 += u64::from(sync);
    }
    by_file
}

fn run(args: &[&str], what: &str) -> std::process::Output {
    let out = common::joj_command().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn doc(out: &std::process::Output, what: &str) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{what} printed no JSON document ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// The write figures of a document: per file (calls, bytes, sync writes, WAL header writes),
/// the `syscalls` totals and the `files` bytes by role.
fn writes(d: &serde_json::Value) -> serde_json::Value {
    let files: BTreeMap<String, serde_json::Value> = d["command"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                serde_json::json!([
                    f["kind"],
                    f["write_calls"],
                    f["write_bytes"],
                    f["sync_writes"],
                    f["wal_header_writes"]
                ]),
            )
        })
        .collect();
    serde_json::json!({
        "files": files,
        "syscalls": [d["syscalls"]["write_calls"], d["syscalls"]["write_bytes"]],
        "bytes_by_role": d["files"],
    })
}

#[test]
fn a_syscalls_replay_counts_the_writes_it_plays() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("writes.jsonl");
    std::fs::write(&rec, recording()).unwrap();
    let rec = rec.to_str().unwrap();
    // Traces and plots where the test cleans them up, not in the working directory.
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let replay_args = [
        "syscalls", "replay", rec, "--fs", "ext4", "--timing", "fast", "--out", out,
    ];
    let replayed = doc(
        &run(
            &[&replay_args[..], &["--json"]].concat(),
            "joj syscalls replay",
        ),
        "joj syscalls replay --json",
    );

    // Per file: the recording's calls and lengths.
    let want = expected();
    for (path, (calls, bytes, sync)) in &want {
        let f = common::traced_file(&replayed, path);
        assert_eq!(
            (
                f["write_calls"].as_u64(),
                f["write_bytes"].as_u64(),
                f["sync_writes"].as_u64()
            ),
            (Some(*calls), Some(*bytes), Some(*sync)),
            "{path}: (write_calls, write_bytes, sync_writes) of {f}"
        );
    }
    assert_eq!(
        common::traced_file(&replayed, "t.db-wal")["wal_header_writes"].as_u64(),
        Some(1),
        "the WAL's 32-byte header at offset 0"
    );
    // In all: their sums, and by role.
    let (calls, bytes) = want
        .values()
        .fold((0, 0), |(c, b), (calls, bytes, _)| (c + calls, b + bytes));
    let s = &replayed["syscalls"];
    assert_eq!(
        (s["write_calls"].as_u64(), s["write_bytes"].as_u64()),
        (Some(calls), Some(bytes)),
        "syscalls: {s}"
    );
    let role = |p: &str| want[p].1;
    assert_eq!(
        replayed["files"],
        serde_json::json!({
            "database_bytes": role("t.db"),
            "wal_bytes": role("t.db-wal"),
            "rollback_journal_bytes": role("t.db-journal"),
            "other_bytes": role("log.txt"),
        }),
        "files"
    );
    assert_eq!(common::traced_file(&replayed, "t.db")["kind"], "database");

    // The text says so too.
    let text =
        String::from_utf8_lossy(&run(&replay_args, "joj syscalls replay").stdout).into_owned();
    assert!(
        text.contains(&format!("; {calls} writes of {bytes} B to its files")),
        "{text}"
    );

    // And a program making the same calls, under joj trace, is counted the same.
    let py = "/usr/bin/python3";
    assert!(
        std::path::Path::new(py).is_file(),
        "{py} is missing: this test traces a Python program; fix: apt-get install python3"
    );
    let traced = doc(
        &run(
            &[
                "trace",
                "--fs",
                "ext4",
                "--json",
                "--empty",
                "--out",
                out,
                "--",
                py,
                "-c",
                &program(),
            ],
            "joj trace -- python3",
        ),
        "joj trace --json",
    );
    assert_eq!(
        writes(&replayed),
        writes(&traced),
        "the replay's writes (left) against joj trace's of the same calls (right)"
    );
}
