//! Every file joj reads is read as a regular file with a size limit: `/dev/zero` (which never
//! ends), a FIFO (whose open blocks until a writer comes), a 3 GB file and a file whose one
//! line runs on for a GiB are each refused with the file, the cause and the fix — before any
//! scratch filesystem is made, within a 4 GiB address space and a deadline, leaving nothing.
//! Each used to abort allocating (exit 134, leaving the run's mount, loop device and tracefs
//! instance when one was made), run out of memory, or hang.

mod common;

use common::{Bounded, joj_bounded};

fn refused(args: &[&str], cause: &str) -> Bounded {
    let run = joj_bounded(args);
    assert_eq!(run.code, Some(1), "joj {args:?}: {run:?}");
    assert!(
        run.stderr.contains(cause) && run.stderr.contains("fix:"),
        "joj {args:?}: {}",
        run.stderr
    );
    assert!(run.stderr.len() < 2000, "joj {args:?}: {}", run.stderr);
    run
}

#[test]
fn an_input_that_is_a_device_a_fifo_or_huge_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let out = p("out");
    let zero = "/dev/zero";
    let device = "is a character device, not a regular file";
    for args in [
        vec!["syscalls", "replay", zero, "--out", &out],
        vec![
            "syscalls",
            "import-strace",
            zero,
            "--root",
            "/r",
            "-o",
            &p("r.jsonl"),
        ],
        vec!["trace", "show", zero],
        vec!["trace", "plot", zero, "-o", &p("t.svg")],
        vec!["trace", "import", zero, "-o", &p("t.jsonl")],
        vec!["replay", zero],
        vec!["device", "inspect", zero],
        vec!["apptxn", "--device", zero, "--transactions", "2"],
        vec!["bench", "--device", zero, "-n", "2", "--out", &out],
    ] {
        refused(&args, device);
    }
    // A profile is read before the trace it would replay.
    let trace = p("trace.jsonl");
    std::fs::write(&trace, "x\n").unwrap();
    refused(&["replay", &trace, "--device", zero], device);
    let rec = p("rec.jsonl");
    std::fs::write(&rec, "{}\n").unwrap();
    refused(
        &["syscalls", "replay", &rec, "--device", zero, "--out", &out],
        "is not a joj-syscalls recording",
    );

    let fifo = p("fifo");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    for args in [
        vec!["device", "inspect", &fifo],
        vec!["syscalls", "replay", &fifo, "--out", &out],
        vec!["trace", "show", &fifo],
    ] {
        refused(&args, "is a FIFO (named pipe), not a regular file");
    }
    // A crash log and a crash part: refused as well, without waiting for a writer.
    refused(
        &["crash", "fs", "--from-log", &fifo],
        "a FIFO, not a regular file",
    );
    refused(&["crash", "merge", &fifo], "it is not a regular file");

    // 3 GB without a newline (sparse: it takes no disk).
    let big = p("big");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(3_000_000_000)
        .unwrap();
    for args in [
        vec!["syscalls", "replay", &big, "--out", &out],
        vec!["trace", "show", &big],
        vec![
            "syscalls",
            "import-strace",
            &big,
            "--root",
            "/r",
            "-o",
            &p("r2.jsonl"),
        ],
    ] {
        refused(&args, "3000000000 bytes (2.8 GiB), more than joj reads as");
    }
    // An image is judged by its header before the rest is read.
    refused(&["device", "inspect", &big], "not a joj device image");

    // A recording whose second line is a path of 64 MiB: refused at the line's cap, without
    // holding it, and the message does not repeat it.
    let long = p("long.jsonl");
    {
        use std::io::Write;
        let mut f = std::io::BufWriter::new(std::fs::File::create(&long).unwrap());
        writeln!(
            f,
            r#"{{"format":"joj-syscalls","version":1,"source":"strace","root":"/r","transactions":1,"threads":1,"calls":1,"dropped_outside_root":0}}"#
        )
        .unwrap();
        write!(
            f,
            r#"{{"seq":0,"tid":1,"start_ns":0,"dur_ns":1,"ret":0,"call":"unlink","path":"/"#
        )
        .unwrap();
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..64 {
            f.write_all(&chunk).unwrap();
        }
        writeln!(f, "\"}}").unwrap();
    }
    refused(
        &["syscalls", "replay", &long, "--out", &out],
        "line 2 is longer than 1048576 bytes",
    );
    // The same call with a path of 100 kB is parsed, refused, and quoted short.
    let short = p("short.jsonl");
    std::fs::write(
        &short,
        format!(
            "{}\n{{\"seq\":0,\"tid\":1,\"start_ns\":0,\"dur_ns\":1,\"ret\":0,\"call\":\"unlink\",\"path\":\"/{}\"}}\n",
            r#"{"format":"joj-syscalls","version":1,"source":"strace","root":"/r","transactions":1,"threads":1,"calls":1,"dropped_outside_root":0}"#,
            "a".repeat(100_000)
        ),
    )
    .unwrap();
    refused(
        &["syscalls", "replay", &short, "--out", &out],
        "bytes, longer than Linux takes (4095)",
    );
}
