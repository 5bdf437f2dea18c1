//! The bounds a recording is held to before a replay ([`super::check`]), the importer's checks
//! of what strace shows, and the player's own guards: hostile numbers are refused with their
//! line, never allocated, slept on or wrapped.

use std::io::BufReader;
use std::time::Duration;

use super::SyscallsError;
use super::format::{Call, Mark, Op, Recording};
use super::play::{
    MAX_GAP_NS, MAX_REPLAY_THREADS, Phase, Player, Timing, diverged, due_times, recorded_span_ns,
};
use super::strace::{ImportOptions, import_strace};

const HEADER: &str = r#"{"format":"joj-syscalls","version":1,"source":"strace","root":"/r","transactions":1,"threads":1,"calls":CALLS,"dropped_outside_root":0}"#;
const OPEN: &str = r#"{"seq":0,"tid":1,"start_ns":0,"dur_ns":1,"ret":3,"call":"open","path":"a","flags":["O_RDWR","O_CREAT"],"mode":420,"fd":3}"#;

/// A recording of the open of `a` as descriptor 3 followed by `lines` (each a call line
/// without `seq`, which is added), read back.
fn read(lines: &[&str]) -> Result<Recording, SyscallsError> {
    let mut text = HEADER.replace("CALLS", &(lines.len() + 1).to_string());
    text.push('\n');
    text.push_str(OPEN);
    text.push('\n');
    for (i, l) in lines.iter().enumerate() {
        text.push_str(&format!("{{\"seq\":{},{}\n", i + 1, &l[1..]));
    }
    Recording::read(BufReader::new(text.as_bytes()), "rec.jsonl")
}

fn refused(lines: &[&str]) -> String {
    let e = read(lines).unwrap_err();
    assert!(
        matches!(e, SyscallsError::OutOfBounds { line: 3, .. }),
        "{e}"
    );
    e.to_string()
}

#[test]
fn a_read_or_write_longer_than_one_buffer_is_refused_with_its_line() {
    for len in ["1000000000000", "18446744073709551615", "67108865"] {
        for call in [
            format!(
                r#"{{"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"pwrite","fd":3,"off":0,"len":{len}}}"#
            ),
            format!(
                r#"{{"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"read","fd":3,"len":{len}}}"#
            ),
        ] {
            let e = refused(&[&call]);
            assert!(
                e.contains(&format!("{len} bytes")) && e.contains("67108864"),
                "{e}"
            );
        }
    }
    // 64 MiB itself is a call joj replays.
    read(&[r#"{"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"write","fd":3,"len":67108864}"#])
        .unwrap();
}

#[test]
fn offsets_and_sizes_past_a_file_offset_are_refused() {
    for call in [
        r#"{"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"ftruncate","fd":3,"len":9223372036854775808}"#,
        r#"{"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"pwrite","fd":3,"off":9223372036854775800,"len":4096}"#,
        r#"{"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"fallocate","fd":3,"mode":0,"off":18446744073709551615,"len":1}"#,
        r#"{"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"truncate","path":"a","len":18446744073709551615}"#,
    ] {
        let e = refused(&[call]);
        assert!(e.contains("off_t"), "{e}");
    }
}

#[test]
fn a_negative_descriptor_an_unknown_whence_or_flag_is_refused() {
    let e = refused(&[
        r#"{"tid":1,"start_ns":5,"dur_ns":1,"ret":-7,"call":"open","path":"b","flags":["O_RDONLY"],"mode":420,"fd":-7}"#,
    ]);
    assert!(e.contains("descriptor -7"), "{e}");
    let e = refused(&[r#"{"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"fsync","fd":-7}"#]);
    assert!(e.contains("descriptor -7"), "{e}");
    let e = refused(&[
        r#"{"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"lseek","fd":3,"off":0,"whence":"SEEK_BOGUS"}"#,
    ]);
    assert!(e.contains("SEEK_BOGUS") && e.contains("SEEK_DATA"), "{e}");
    let e = refused(&[
        r#"{"tid":1,"start_ns":5,"dur_ns":1,"ret":4,"call":"open","path":"b","flags":["O_RDONLY","BOGUS"],"mode":420,"fd":4}"#,
    ]);
    assert!(e.contains("\"BOGUS\"") && e.contains("O_PATH"), "{e}");
}

#[test]
fn removing_or_replacing_the_root_itself_is_refused() {
    for call in [
        r#"{"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"rmdir","path":"."}"#,
        r#"{"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"rename","from":".","to":"x"}"#,
        r#"{"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"rename","from":"a","to":"./."}"#,
        r#"{"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"unlink","path":"."}"#,
    ] {
        let e = refused(&[call]);
        assert!(e.contains("the recorded root itself"), "{e}");
    }
    // A file whose name is only dots is not the root.
    read(&[r#"{"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"unlink","path":"..."}"#]).unwrap();
}

#[test]
fn a_long_path_is_refused_and_quoted_short() {
    let long = "p".repeat(100_000);
    let call =
        format!(r#"{{"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"unlink","path":"{long}"}}"#);
    let e = refused(&[&call]);
    assert!(e.contains("100000 bytes") && e.len() < 1000, "{e}");
    // Out of the root and long: the message quotes a little of it.
    let call = format!(
        r#"{{"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"unlink","path":"/{}"}}"#,
        "q".repeat(3000)
    );
    let e = read(&[&call]).unwrap_err();
    assert!(matches!(e, SyscallsError::PathEscapesRoot { .. }), "{e}");
    assert!(e.to_string().len() < 1000, "{e}");
}

#[test]
fn a_line_longer_than_the_cap_is_refused_before_it_is_held() {
    let mut text = HEADER.replace("CALLS", "1");
    text.push('\n');
    text.push_str(&"x".repeat(3 << 20));
    let e = Recording::read(BufReader::new(text.as_bytes()), "big.jsonl").unwrap_err();
    assert!(
        matches!(e, SyscallsError::LineTooLong { line: 2, .. }),
        "{e}"
    );
    // A corrupt line's parser message is cut, however long the value it quotes.
    let call = format!(
        r#"{{"seq":0,"tid":1,"start_ns":0,"dur_ns":1,"ret":0,"call":"open","path":"a","flags":["{}"],"mode":"x","fd":3}}"#,
        "f".repeat(500_000)
    );
    let text = format!("{}\n{call}\n", HEADER.replace("CALLS", "1"));
    let e = Recording::read(BufReader::new(text.as_bytes()), "c.jsonl").unwrap_err();
    assert!(matches!(e, SyscallsError::Corrupt { .. }), "{e}");
    assert!(e.to_string().len() < 1000, "{e}");
}

#[test]
fn a_recording_that_is_a_device_is_refused_unread() {
    let e = Recording::read_file(std::path::Path::new("/dev/zero")).unwrap_err();
    assert!(e.to_string().contains("a character device"), "{e}");
}

fn at(seq: u64, start_ns: u64, op: Op) -> Call {
    Call {
        seq,
        tid: 1,
        start_ns,
        dur_ns: 1,
        ret: 0,
        errno: None,
        op,
    }
}

fn open_a() -> Op {
    Op::Open {
        path: "a".into(),
        flags: vec!["O_RDWR".into(), "O_CREAT".into()],
        mode: 0o644,
        fd: 3,
    }
}

fn fast() -> Phase<'static> {
    Phase {
        timing: Timing::Fast,
        observer: None,
        progress: None,
    }
}

#[test]
fn the_player_refuses_a_huge_length_instead_of_allocating_or_wrapping() {
    for len in [u64::MAX, 1_000_000_000_000] {
        let dir = tempfile::tempdir().unwrap();
        // Not a checked recording: a library caller may hand the player any calls.
        let calls = vec![
            at(0, 0, open_a()),
            at(
                1,
                10,
                Op::Pwrite {
                    fd: 3,
                    off: 0,
                    len,
                    sqlite_header: false,
                },
            ),
        ];
        let e = Player::new(dir.path()).play(&calls, &fast()).unwrap_err();
        assert!(matches!(e, SyscallsError::OutOfBounds { .. }), "{e}");
    }
}

#[test]
fn recorded_gaps_longer_than_a_minute_are_shortened_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let calls = vec![
        at(0, 0, open_a()),
        at(1, 1_000_000_000_000_000_000, Op::Fstat { fd: 3 }),
    ];
    // 10^18 ns is 31 years: the replay must cut it to a minute. Time runs only in the player's
    // own sleep, so wait for it with a deadline rather than for ever.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = Player::new(&root).play(
            &calls,
            &Phase {
                timing: Timing::Recorded,
                observer: None,
                progress: None,
            },
        );
        let _ = tx.send(r.map_err(|e| e.to_string()));
    });
    let report = rx
        .recv_timeout(Duration::from_nanos(MAX_GAP_NS) + Duration::from_secs(30))
        .expect("the replay slept on the recorded gap")
        .unwrap();
    assert_eq!(report.capped_gaps, 1);
    assert_eq!(report.cut_ns, 1_000_000_000_000_000_000 - MAX_GAP_NS);
}

#[test]
fn seek_data_and_a_negative_seek_run_as_the_kernel_runs_them() {
    let dir = tempfile::tempdir().unwrap();
    let failed = |mut c: Call, errno: &str| {
        c.ret = -1;
        c.errno = Some(errno.into());
        c
    };
    let seek = |seq, off, whence: &str| {
        at(
            seq,
            seq * 10,
            Op::Lseek {
                fd: 3,
                off,
                whence: whence.into(),
            },
        )
    };
    let calls = vec![
        at(0, 0, open_a()),
        // An empty file has no data: SEEK_DATA fails with ENXIO, as it did when recorded.
        failed(seek(1, 0, "SEEK_DATA"), "ENXIO"),
        // A negative absolute offset fails with EINVAL; it used to be replayed as 0.
        failed(seek(2, -5, "SEEK_SET"), "EINVAL"),
        seek(3, 0, "SEEK_END"),
    ];
    let report = Player::new(dir.path()).play(&calls, &fast()).unwrap();
    assert_eq!(report.unexpected_successes, 0, "{report:?}");
    // O_PATH is kept and honoured: the open of a directory for its path succeeds.
    let rec = read(&[
        r#"{"tid":1,"start_ns":5,"dur_ns":1,"ret":4,"call":"open","path":".","flags":["O_RDONLY","O_PATH","O_DIRECTORY"],"mode":0,"fd":4}"#,
    ])
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    Player::new(dir.path()).play(&rec.calls, &fast()).unwrap();
}

fn import(text: &str) -> Result<Recording, SyscallsError> {
    let opts = ImportOptions {
        root: Some("/r".into()),
        ..Default::default()
    };
    import_strace(text, "strace output s.txt", &opts)
}

#[test]
fn a_transfer_larger_than_its_count_is_refused_on_import() {
    let text = r#"10 1795625372.917970 openat(AT_FDCWD</r>, "a", O_RDWR|O_CREAT, 0644) = 3</r/a> <0.000010>
10 1795625372.917974 pwrite64(3</r/a>, "abc", 3, 0) = 1000000000000 <0.000010>
"#;
    let e = import(text).unwrap_err();
    assert!(
        matches!(e, SyscallsError::StraceCall { line: 2, .. }),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("returned 1000000000000 bytes for a count of 3"),
        "{e}"
    );
    // Within its count but past a buffer: refused too, with the strace line.
    let text = text.replace(
        "\"abc\", 3, 0) = 1000000000000",
        "\"abc\"..., 100000000, 0) = 100000000",
    );
    let e = import(&text).unwrap_err();
    assert!(
        e.to_string().contains("line 2") && e.to_string().contains("67108864"),
        "{e}"
    );
}

#[test]
fn a_negative_strace_offset_is_refused_not_zeroed() {
    let text = r#"10 1795625372.917970 openat(AT_FDCWD</r>, "a", O_RDWR|O_CREAT, 0644) = 3</r/a> <0.000010>
10 1795625372.917974 pwrite64(3</r/a>, "abc", 3, -5) = -1 EINVAL (Invalid argument) <0.000010>
"#;
    let e = import(text).unwrap_err();
    assert!(
        e.to_string().contains("offset -5 is negative") && e.to_string().contains("line 2"),
        "{e}"
    );
}

#[test]
fn o_path_is_kept_on_import() {
    let text = r#"10 1795625372.917970 openat(AT_FDCWD</r>, "d", O_RDONLY|O_PATH|O_DIRECTORY) = 3</r/d> <0.000010>
10 1795625372.917974 close(3</r/d>) = 0 <0.000010>
"#;
    let rec = import(text).unwrap();
    assert!(
        matches!(&rec.calls[0].op, Op::Open { flags, .. } if flags.iter().any(|f| f == "O_PATH")),
        "{:?}",
        rec.calls[0]
    );
}

#[test]
fn the_peak_of_open_descriptors_is_counted() {
    let open = |path: &str, fd| Op::Open {
        path: path.into(),
        flags: vec!["O_RDWR".into(), "O_CREAT".into()],
        mode: 0o644,
        fd,
    };
    let mut ops: Vec<Op> = (0..5).map(|i| open(&format!("f{i}"), i + 3)).collect();
    ops.push(Op::Close { fd: 3 });
    ops.push(open("g", 3));
    let rec = super::tests::recording(ops);
    assert_eq!(rec.peak_open_descriptors(), 5);
}

#[test]
fn only_gaps_longer_than_the_cap_are_shortened() {
    let calls = [
        at(0, 5, open_a()),
        at(1, 5 + MAX_GAP_NS, Op::Fstat { fd: 3 }),
        at(2, 10 + 3 * MAX_GAP_NS, Op::Fstat { fd: 3 }),
        // Out of order (a thread's clock): no gap, nothing cut.
        at(3, 7, Op::Fstat { fd: 3 }),
    ];
    let refs: Vec<&Call> = calls.iter().collect();
    let (due, capped, cut) = due_times(&refs);
    assert_eq!(due, [0, MAX_GAP_NS, 2 * MAX_GAP_NS, 2 * MAX_GAP_NS]);
    assert_eq!((capped, cut), (1, MAX_GAP_NS + 5));
}

/// What a replay at the recorded times will take, said before it starts: a 541-byte
/// recording of four calls 20 s apart held a scratch filesystem for a minute without a word.
#[test]
fn the_recorded_span_is_what_the_replay_will_wait() {
    let s = 1_000_000_000;
    let calls: Vec<Call> = (0..4)
        .map(|i| at(i, 5 + 20 * s * i, Op::Fstat { fd: 3 }))
        .collect();
    assert_eq!(recorded_span_ns(&calls), 60 * s);
    let long = [
        at(0, 0, open_a()),
        at(1, 10 * MAX_GAP_NS, Op::Fstat { fd: 3 }),
    ];
    assert_eq!(
        recorded_span_ns(&long),
        MAX_GAP_NS,
        "gaps are shortened as replayed"
    );
    assert_eq!(recorded_span_ns(&[]), 0);
    // Each phase is replayed on its own: the span of a recording is the sum of its phases'
    // (the gap across the window's mark is not waited).
    let mut phased = vec![at(0, 0, open_a())];
    phased.push(at(
        1,
        20 * s,
        Op::Mark {
            name: Mark::WindowBegin,
        },
    ));
    phased.push(at(2, 20 * s, Op::Fstat { fd: 3 }));
    phased.push(at(3, 30 * s, Op::Fstat { fd: 3 }));
    phased.push(at(
        4,
        30 * s,
        Op::Mark {
            name: Mark::WindowEnd,
        },
    ));
    let mut rec = super::tests::recording(vec![]);
    rec.calls = phased;
    let (before, window) = rec.phases();
    assert_eq!(recorded_span_ns(before) + recorded_span_ns(window), 10 * s);
}

#[test]
fn a_divergence_names_the_fix_its_error_calls_for() {
    let c = at(
        1,
        0,
        Op::Ftruncate {
            fd: 3,
            len: 1 << 50,
        },
    );
    for (errno, fix) in [
        (libc::ENOSPC, "--image-mib"),
        (libc::EMFILE, "ulimit -n"),
        (libc::EFBIG, "--fs xfs or btrfs"),
        (libc::EEXIST, "fresh filesystem"),
    ] {
        let e = diverged(
            &c,
            "a".into(),
            Some(&std::io::Error::from_raw_os_error(errno)),
        );
        assert!(e.to_string().contains(fix), "{errno}: {e}");
    }
}

#[test]
fn a_recording_of_more_threads_than_a_replay_starts_is_refused_before_any_starts() {
    let dir = tempfile::tempdir().unwrap();
    // One call per thread id: a few KB that would ask for thousands of OS threads.
    let calls: Vec<Call> = (0..=MAX_REPLAY_THREADS)
        .map(|t| {
            let mut c = at(t, t, Op::Fstat { fd: 3 });
            c.tid = t + 1;
            c
        })
        .collect();
    let r = Player::new(dir.path()).play(
        &calls,
        &Phase {
            timing: Timing::Fast,
            observer: None,
            progress: None,
        },
    );
    let err = r.expect_err("refused").to_string();
    assert!(
        err.contains(&format!("at most {MAX_REPLAY_THREADS}")),
        "{err}"
    );
}

/// Paths are read in the one spelling the importer writes (syscalls.md): another spelling of a
/// file (`a//b`, `./a`, `a/`) would be a second file to the replay's table, and no system
/// call takes a path holding a NUL byte.
#[test]
fn a_path_not_in_normal_form_or_holding_a_nul_is_refused_with_its_line() {
    for (path, says) in [
        (r"a//b", "normal form"),
        (r"./a", "normal form"),
        (r"a/", "normal form"),
        (r"a/./b", "normal form"),
        (r"a\u0000b", "NUL byte"),
    ] {
        let call = format!(
            r#"{{"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"unlink","path":"{path}"}}"#
        );
        let e = refused(&[&call]);
        assert!(e.contains(says), "{path}: {e}");
    }
    // What the importer writes is read: a path, a path in a folder, the root.
    read(&[r#"{"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"unlink","path":"d/a"}"#]).unwrap();
    read(&[r#"{"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"mkdir","path":"d","mode":493}"#])
        .unwrap();
}

/// A call the recording's check refuses is named by its line in the strace text read, not in
/// the recording the import makes (a call left out before it moved the line up by one).
#[test]
fn an_imported_call_refused_by_the_check_is_named_by_its_strace_line() {
    let text = r#"10 1795625372.917960 openat(AT_FDCWD</etc>, "/etc/passwd", O_RDONLY) = 3</etc/passwd> <0.000010>
10 1795625372.917961 close(3</etc/passwd>) = 0 <0.000010>
10 1795625372.917970 openat(AT_FDCWD</r>, "a", O_RDWR|O_CREAT, 0644) = 3</r/a> <0.000010>
10 1795625372.917971 fsync(3</r/a>) = 0 <0.000010>
10 1795625372.917972 openat(AT_FDCWD</r>, "b\0c", O_RDWR|O_CREAT, 0644) = 4</r/b> <0.000010>
10 1795625372.917973 close(4</r/b>) = 0 <0.000010>
"#;
    let e = import(text).unwrap_err();
    assert!(
        matches!(e, SyscallsError::OutOfBounds { line: 5, .. }),
        "{e}"
    );
    assert!(
        e.to_string()
            .starts_with("strace output s.txt line 5: open on a path holding a NUL"),
        "{e}"
    );
}
