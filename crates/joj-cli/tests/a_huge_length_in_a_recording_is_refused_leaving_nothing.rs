//! `joj syscalls replay` of a recording whose `pwrite` or `read` moves 10^12 or 2^64 - 1 bytes
//! (it used to abort allocating 1000000004096 bytes, leaving the mount, loop device, tracefs
//! instance and /run/joj directory, or to panic on `len + ALIGN`), whose `ftruncate` names a
//! size past `off_t`, or whose `rmdir` removes the root (the replay's run directory): each is
//! refused with its line before any filesystem is made, and nothing is left. `import-strace`
//! refuses a 3-byte `pwrite` that strace shows returning 10^12 instead of writing it into a
//! recording.

mod common;

use common::joj_bounded;

const HEADER: &str = r#"{"format":"joj-syscalls","version":1,"source":"strace","root":"/r","transactions":1,"threads":1,"calls":2,"dropped_outside_root":0}"#;
const OPEN: &str = r#"{"seq":0,"tid":1,"start_ns":0,"dur_ns":1,"ret":3,"call":"open","path":"a","flags":["O_RDWR","O_CREAT"],"mode":420,"fd":3}"#;

#[test]
fn a_huge_length_in_a_recording_is_refused_leaving_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    for (call, said) in [
        (
            r#"{"seq":1,"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"pwrite","fd":3,"off":0,"len":1000000000000}"#,
            "pwrite of 1000000000000 bytes, more than joj replays in one call (67108864 bytes",
        ),
        (
            r#"{"seq":1,"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"read","fd":3,"len":18446744073709551615}"#,
            "read of 18446744073709551615 bytes, more than joj replays in one call",
        ),
        (
            r#"{"seq":1,"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"ftruncate","fd":3,"len":9223372036854775808}"#,
            "ftruncate to 9223372036854775808 bytes, past the largest file offset",
        ),
        (
            r#"{"seq":1,"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"rmdir","path":"."}"#,
            "rmdir of the recorded root itself",
        ),
    ] {
        let rec = dir.path().join("rec.jsonl");
        std::fs::write(&rec, format!("{HEADER}\n{OPEN}\n{call}\n")).unwrap();
        let run = joj_bounded(&[
            "syscalls",
            "replay",
            rec.to_str().unwrap(),
            "--fs",
            "ext4",
            "--out",
            out,
        ]);
        assert_eq!(run.code, Some(1), "{run:?}");
        assert!(
            run.stderr.contains("rec.jsonl line 3: ")
                && run.stderr.contains(said)
                && run.stderr.contains("fix:"),
            "{}",
            run.stderr
        );
    }

    let strace = dir.path().join("s.txt");
    std::fs::write(
        &strace,
        "10 1795625372.917970 openat(AT_FDCWD</r>, \"a\", O_RDWR|O_CREAT, 0644) = 3</r/a> <0.000010>\n\
         10 1795625372.917974 pwrite64(3</r/a>, \"abc\", 3, 0) = 1000000000000 <0.000010>\n",
    )
    .unwrap();
    let rec = dir.path().join("imported.jsonl");
    let run = joj_bounded(&[
        "syscalls",
        "import-strace",
        strace.to_str().unwrap(),
        "--root",
        "/r",
        "-o",
        rec.to_str().unwrap(),
    ]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stderr
            .contains("line 2: pwrite64: returned 1000000000000 bytes for a count of 3"),
        "{}",
        run.stderr
    );
    assert!(!rec.exists(), "no recording is written");
}
