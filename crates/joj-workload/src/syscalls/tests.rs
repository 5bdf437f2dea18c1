//! Unit tests of the syscalls module on real strace output captured on this machine
//! (`testdata/`): `bench-delete-2.strace` is `joj syscalls record --bench-window -- joj bench
//! --fs ext4 --trace -n 2 --journal delete` cut to its first five lines and every line naming
//! the scratch mount; `threads-truncate.strace` is `joj bench --fs host --dir /tmp/st/h2
//! --threads 2 -n 6 --journal truncate` under the same strace, whole (59 unfinished/resumed
//! pairs).

use std::io::BufReader;

use super::format::{Call, Header, Mark, Op, Recording};
use super::play::{Phase, Player, Timing};
use super::strace::{ImportOptions, import_strace};
use super::strace_line::{Line, parse_line};
use super::{BadLine, SyscallsError};

const BENCH: &str = include_str!("testdata/bench-delete-2.strace");
const THREADS: &str = include_str!("testdata/threads-truncate.strace");

fn bench_recording() -> Recording {
    let opts = ImportOptions {
        bench_window: true,
        transactions: 2,
        ..Default::default()
    };
    import_strace(BENCH, "bench fixture", &opts).unwrap()
}

fn threads_recording() -> Recording {
    let opts = ImportOptions {
        root: Some("/tmp/st/h2".into()),
        transactions: 6,
        ..Default::default()
    };
    import_strace(THREADS, "threads fixture", &opts).unwrap()
}

#[test]
fn a_padded_thread_column_and_a_descriptor_path_are_read() {
    let line =
        "5073  1795625372.917974 syncfs(6</run/joj/ext4-5073-pUJFBa/mnt/joj>) = 0 <0.002680>";
    let Ok(Line::Call(c)) = parse_line(line) else {
        panic!("not a call: {line}")
    };
    assert_eq!(c.tid, 5073);
    assert_eq!(c.time_ns, 1_795_625_372_917_974_000);
    assert_eq!(c.name, "syncfs");
    assert_eq!(c.args, ["6</run/joj/ext4-5073-pUJFBa/mnt/joj>"]);
    assert_eq!(
        (c.ret, c.errno.as_deref(), c.dur_ns),
        (Some(0), None, 2_680_000)
    );
}

#[test]
fn a_failed_call_keeps_its_errno() {
    let line = r#"24547 1795624668.076082 openat(AT_FDCWD</tmp/st>, "/sys/block/loop6/loop/backing_file", O_RDONLY|O_CLOEXEC) = -1 ENOENT (No such file or directory) <0.000013>"#;
    let Ok(Line::Call(c)) = parse_line(line) else {
        panic!("not a call")
    };
    assert_eq!(c.ret, Some(-1));
    assert_eq!(c.errno.as_deref(), Some("ENOENT"));
    assert_eq!(c.args.len(), 3);
    assert_eq!(c.args[1], r#""/sys/block/loop6/loop/backing_file""#);
}

#[test]
fn a_data_string_with_commas_and_parentheses_stays_one_argument() {
    let line = r#"11028 1795625402.094044 pwrite64(5</tmp/st/h2/j>, "a,b)\"(c"..., 4096, 4620) = 4096 <0.000022>"#;
    let Ok(Line::Call(c)) = parse_line(line) else {
        panic!("not a call")
    };
    assert_eq!(c.args.len(), 4, "{:?}", c.args);
    assert_eq!(c.args[3], "4620");
}

#[test]
fn unfinished_and_resumed_halves_are_recognised() {
    let first = r#"11028 1795625402.094044 pwrite64(5</tmp/st/h2/joj-1.db-journal>, "SQLite format 3\0\20\0\1\1\0@  \0\0\0\1\0\0\0\2"..., 4096, 4620 <unfinished ...>"#;
    let second = "11028 1795625402.094078 <... pwrite64 resumed>) = 4096 <0.000022>";
    assert!(matches!(
        parse_line(first),
        Ok(Line::Unfinished { tid: 11028, ref name, .. }) if name == "pwrite64"
    ));
    assert!(matches!(
        parse_line(second),
        Ok(Line::Resumed { tid: 11028, ref name, .. }) if name == "pwrite64"
    ));
    assert_eq!(
        parse_line("11021 1795625402.2 +++ exited with 0 +++"),
        Ok(Line::Exited {
            tid: 11021,
            time_ns: 1_795_625_402_200_000_000
        })
    );
    assert_eq!(
        parse_line("11021 1795625402.2 --- SIGCHLD {si_signo=SIGCHLD} ---"),
        Ok(Line::Other)
    );
    assert_eq!(
        parse_line("hello world"),
        Err(BadLine::NoThreadId),
        "a line that is not strace output"
    );
}

#[test]
fn interleaved_threads_are_joined_into_whole_calls() {
    let rec = threads_recording();
    let count = |name: &str| rec.calls.iter().filter(|c| c.op.name() == name).count();
    // Every pwrite64 / fdatasync on a descriptor under the root, unfinished halves counted once
    // (the resumed half names no descriptor).
    let lines = |pat: &str| {
        THREADS
            .lines()
            .filter(|l| l.contains(pat) && l.contains("</tmp/st/h2"))
            .count()
    };
    assert_eq!(count("pwrite"), lines(" pwrite64("));
    assert_eq!(count("fdatasync"), lines(" fdatasync("));
    assert_eq!(rec.header.threads, 3, "the main thread and two workers");
    // A joined call starts at its unfinished line and lasts as its resumed line says: the two
    // pwrites at .094044 (thread 11028) and .094064 (thread 11027) interleave.
    let find = |tid: u64, at: u64| {
        rec.calls
            .iter()
            .find(|c| c.tid == tid && matches!(c.op, Op::Pwrite { off, .. } if off == at))
            .unwrap_or_else(|| panic!("the pwrite at {at} of thread {tid}"))
    };
    let joined = find(11028, 4620);
    let other = find(11027, 0);
    assert_eq!(other.start_ns - joined.start_ns, 20_000);
    assert_eq!(other.dur_ns, 28_000);
    assert_eq!(joined.dur_ns, 22_000);
    assert!(matches!(
        joined.op,
        Op::Pwrite {
            len: 4096,
            sqlite_header: false,
            ..
        }
    ));
    assert!(
        rec.calls.windows(2).all(|w| w[0].start_ns <= w[1].start_ns),
        "calls are in start order"
    );
    assert!(
        rec.calls
            .iter()
            .any(|c| matches!(c.op, Op::Ftruncate { len: 0, .. }))
    );
}

#[test]
fn a_bench_recording_finds_its_root_and_window() {
    let rec = bench_recording();
    assert_eq!(rec.header.root, "/run/joj/ext4-5073-pUJFBa/mnt/joj");
    assert!(rec.has_window());
    let (before, window) = rec.phases();
    assert!(!before.is_empty() && !window.is_empty());
    // The database is created and given its header before the window.
    assert!(before.iter().any(|c| matches!(
        &c.op,
        Op::Pwrite {
            sqlite_header: true,
            off: 0,
            ..
        }
    ) && !c.failed()));
    // DELETE mode: each of the two transactions deletes its journal inside the window.
    let unlinks = window
        .iter()
        .filter(|c| matches!(&c.op, Op::Unlink { path } if path == "joj-0.db-journal"))
        .count();
    assert_eq!(unlinks, 2);
    assert!(rec.header.dropped_outside_root > 0);
    // Nothing after the window is kept: the end mark is the last call.
    assert!(matches!(
        rec.calls.last().map(|c| &c.op),
        Some(Op::Mark {
            name: Mark::WindowEnd
        })
    ));
    assert!(rec.header.dropped_after_window > 0);
    assert!(
        rec.calls
            .iter()
            .all(|c| c.op.paths().iter().all(|p| !p.starts_with('/')))
    );
}

#[test]
fn a_recording_reads_back_as_written() {
    for rec in [bench_recording(), threads_recording()] {
        let mut buf = Vec::new();
        rec.write(&mut buf).unwrap();
        let back = Recording::read(BufReader::new(&buf[..]), "round trip").unwrap();
        assert_eq!(back, rec);
    }
}

/// The bench recording's text with `edit` applied to its lines.
fn edited(edit: impl FnOnce(&mut Vec<String>)) -> Result<Recording, SyscallsError> {
    let mut buf = Vec::new();
    bench_recording().write(&mut buf).unwrap();
    let mut lines: Vec<String> = String::from_utf8(buf)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    edit(&mut lines);
    Recording::read(BufReader::new(lines.join("\n").as_bytes()), "edited")
}

#[test]
fn a_foreign_file_is_refused_with_the_importer_named() {
    let e = Recording::read(BufReader::new(BENCH.as_bytes()), "x").unwrap_err();
    assert!(matches!(e, SyscallsError::Foreign { .. }), "{e}");
    assert!(e.to_string().contains("import-strace"), "{e}");
    let e = Recording::read(BufReader::new(&b""[..]), "empty").unwrap_err();
    assert!(matches!(e, SyscallsError::Foreign { .. }), "{e}");
}

#[test]
fn a_newer_version_is_refused() {
    let e = edited(|l| l[0] = l[0].replace("\"version\":1", "\"version\":2")).unwrap_err();
    assert!(matches!(e, SyscallsError::Version { found: 2, .. }), "{e}");
    assert!(e.to_string().contains("newer joj"), "{e}");
}

#[test]
fn a_corrupt_or_cut_recording_is_refused() {
    let e = edited(|l| l[5] = l[5][..l[5].len() / 2].to_string()).unwrap_err();
    assert!(matches!(e, SyscallsError::Corrupt { line: 6, .. }), "{e}");
    let e = edited(|l| {
        l.pop();
    })
    .unwrap_err();
    assert!(matches!(e, SyscallsError::CountMismatch { .. }), "{e}");
}

#[test]
fn a_path_escaping_the_root_is_refused() {
    for bad in ["../etc/passwd", "/etc/passwd", "a/../../b"] {
        let e = edited(|l| {
            let i = l
                .iter()
                .position(|x| x.contains("\"call\":\"unlink\""))
                .unwrap();
            l[i] = l[i].replace("joj-0.db-journal", bad);
        })
        .unwrap_err();
        assert!(
            matches!(e, SyscallsError::PathEscapesRoot { .. }),
            "{bad}: {e}"
        );
        assert!(e.to_string().contains("--root"), "{e}");
    }
}

#[test]
fn a_call_on_a_descriptor_never_opened_is_refused() {
    let e = edited(|l| {
        let i = l
            .iter()
            .position(|x| x.contains("\"call\":\"pwrite\""))
            .unwrap();
        let (head, tail) = l[i].split_once("\"fd\":").unwrap();
        let rest = tail.trim_start_matches(|c: char| c.is_ascii_digit());
        l[i] = format!("{head}\"fd\":977{rest}");
    })
    .unwrap_err();
    assert!(
        matches!(e, SyscallsError::UnknownFd { call: "pwrite", .. }),
        "{e}"
    );
    assert!(e.to_string().contains("strace -f"), "{e}");
}

#[test]
fn marks_come_in_order() {
    let e = edited(|l| {
        for x in l.iter_mut() {
            if x.contains("window-end") {
                *x = x.replace("window-end", "window-begin");
            }
        }
    })
    .unwrap_err();
    assert!(matches!(e, SyscallsError::Invalid { .. }), "{e}");
}

#[test]
fn a_rename_across_the_root_is_refused() {
    let text = r#"7 1.000001 rename("/r/a", "/elsewhere/b") = 0 <0.000010>"#;
    let opts = ImportOptions {
        root: Some("/r".into()),
        ..Default::default()
    };
    let e = import_strace(text, "t", &opts).unwrap_err();
    assert!(matches!(e, SyscallsError::RenameAcrossRoot { .. }), "{e}");
}

#[test]
fn a_bench_window_without_its_syncfs_is_refused() {
    let opts = ImportOptions {
        bench_window: true,
        ..Default::default()
    };
    let e = import_strace(THREADS, "threads", &opts).unwrap_err();
    assert!(matches!(e, SyscallsError::NoBenchWindow { .. }), "{e}");
}

fn call(seq: u64, op: Op) -> Call {
    Call {
        seq,
        tid: 1 + seq % 2,
        start_ns: seq * 1000,
        dur_ns: 10,
        ret: 0,
        errno: None,
        op,
    }
}

pub(super) fn recording(ops: Vec<Op>) -> Recording {
    let calls: Vec<Call> = ops
        .into_iter()
        .enumerate()
        .map(|(i, op)| call(i as u64, op))
        .collect();
    let rec = Recording {
        header: Header {
            format: super::format::FORMAT.into(),
            version: super::format::VERSION,
            source: "test".into(),
            command: None,
            root: "/r".into(),
            transactions: 1,
            threads: 2,
            calls: calls.len() as u64,
            dropped_outside_root: 0,
            dropped_after_window: 0,
            dropped_inherited: 0,
            inherited_fds: vec![],
        },
        calls,
    };
    rec.check("test").unwrap();
    rec
}

fn rw(path: &str, fd: i32) -> Op {
    Op::Open {
        path: path.into(),
        flags: vec!["O_RDWR".into(), "O_CREAT".into()],
        mode: 0o644,
        fd,
    }
}

#[test]
fn the_player_leaves_the_files_the_calls_make() {
    let dir = tempfile::tempdir().unwrap();
    let rec = recording(vec![
        Op::Mkdir {
            path: "d".into(),
            mode: 0o755,
        },
        rw("d/x.db", 3),
        rw("j", 4),
        Op::Pwrite {
            fd: 3,
            off: 0,
            len: 4096,
            sqlite_header: true,
        },
        Op::Pwrite {
            fd: 4,
            off: 8192,
            len: 100,
            sqlite_header: false,
        },
        Op::Fdatasync { fd: 3 },
        Op::Ftruncate { fd: 4, len: 5000 },
        Op::Close { fd: 4 },
        Op::Rename {
            from: "j".into(),
            to: "k".into(),
        },
        Op::Mark {
            name: Mark::WindowBegin,
        },
        Op::Mark {
            name: Mark::WindowEnd,
        },
    ]);
    let player = Player::new(dir.path());
    let report = player
        .play(
            &rec.calls,
            &Phase {
                timing: Timing::Fast,
                observer: None,
                progress: None,
            },
        )
        .unwrap();
    assert_eq!(report.threads, 2);
    let db = std::fs::read(dir.path().join("d/x.db")).unwrap();
    assert_eq!(db.len(), 4096);
    assert_eq!(&db[..16], b"SQLite format 3\0");
    assert!(db[16..].iter().all(|&b| b == super::play::FILL_BYTE));
    assert!(!dir.path().join("j").exists());
    assert_eq!(std::fs::metadata(dir.path().join("k")).unwrap().len(), 5000);
}

#[test]
fn a_call_that_fails_where_it_succeeded_stops_the_replay() {
    let dir = tempfile::tempdir().unwrap();
    let rec = recording(vec![Op::Unlink {
        path: "never-made".into(),
    }]);
    let e = Player::new(dir.path())
        .play(
            &rec.calls,
            &Phase {
                timing: Timing::Recorded,
                observer: None,
                progress: None,
            },
        )
        .unwrap_err();
    assert!(matches!(e, SyscallsError::Diverged { seq: 0, .. }), "{e}");
    assert!(e.to_string().contains("never-made"), "{e}");
}

#[test]
fn stats_and_owner_changes_are_kept_for_their_side_effects() {
    // Real lines of `joj bench --fs host --dir /tmp/st/h3 -j persist` as root: SQLite stats the
    // database, gives the journal its owner (fchown) and stats it.
    let text = r#"16199 1795625685.480107 newfstatat(3</usr/lib/x86_64-linux-gnu/libgcc_s.so.1>, "", {st_mode=S_IFREG|0644, st_size=125312, ...}, AT_EMPTY_PATH) = 0 <0.000007>
16199 1795625685.500065 statx(AT_FDCWD</tmp/st>, "/tmp/st/h3/joj-0.db", AT_STATX_SYNC_AS_STAT, STATX_ALL, 0x7ffe009d2280) = -1 ENOENT (No such file or directory) <0.000036>
16199 1795625685.503377 openat(AT_FDCWD</tmp/st>, "/tmp/st/h3/joj-0.db-journal", O_RDWR|O_CREAT|O_NOFOLLOW|O_CLOEXEC, 0644) = 4</tmp/st/h3/joj-0.db-journal> <0.000142>
16199 1795625685.503830 fchown(4</tmp/st/h3/joj-0.db-journal>, 0, 0) = 0 <0.000062>
16199 1795625685.503950 fstat(4</tmp/st/h3/joj-0.db-journal>, {st_mode=S_IFREG|0644, st_size=0, ...}) = 0 <0.000049>"#;
    let opts = ImportOptions {
        root: Some("/tmp/st/h3".into()),
        ..Default::default()
    };
    let rec = import_strace(text, "t", &opts).unwrap();
    let ops: Vec<&Op> = rec.calls.iter().map(|c| &c.op).collect();
    assert_eq!(
        ops,
        [
            &Op::Stat {
                path: "joj-0.db".into()
            },
            &Op::Open {
                path: "joj-0.db-journal".into(),
                flags: vec!["O_RDWR".into(), "O_CREAT".into(), "O_NOFOLLOW".into()],
                mode: 0o644,
                fd: 4
            },
            &Op::Fchown {
                fd: 4,
                uid: 0,
                gid: 0
            },
            &Op::Fstat { fd: 4 },
        ]
    );
    assert_eq!(rec.calls[0].errno.as_deref(), Some("ENOENT"));
    assert_eq!(rec.header.dropped_outside_root, 1);
}

#[test]
fn the_shipped_example_recordings_read_and_carry_a_window() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/recordings");
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        let f = std::fs::File::open(&path).unwrap();
        let rec = Recording::read(BufReader::new(f), &path.display().to_string())
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(rec.has_window(), "{}", path.display());
        let (before, window) = rec.phases();
        assert!(
            !before.is_empty() && !window.is_empty(),
            "{}",
            path.display()
        );
        seen += 1;
    }
    assert_eq!(seen, 4, "the four recordings of docs/recordings/README.md");
}

#[test]
fn a_descriptor_number_freed_by_a_close_during_anothers_open_stays_with_the_open() {
    // Thread 1 opens `a` as 11 and later closes it; thread 2's open of `b`, which started just
    // before that close and returned after it, got 11 back; thread 2 then syncs 11. In start
    // order the open comes before the close (as xfs's two-thread TRUNCATE run recorded it).
    let at = |seq, tid, start_ns, dur_ns, op| Call {
        seq,
        tid,
        start_ns,
        dur_ns,
        ret: 0,
        errno: None,
        op,
    };
    let open = |path: &str| Op::Open {
        path: path.into(),
        flags: vec!["O_RDWR".into(), "O_CREAT".into()],
        mode: 0o644,
        fd: 11,
    };
    let calls = vec![
        at(0, 1, 0, 10, open("a")),
        at(1, 2, 100, 50, open("b")),
        at(2, 1, 110, 10, Op::Close { fd: 11 }),
        at(3, 2, 200, 10, Op::Fdatasync { fd: 11 }),
        at(4, 2, 300, 10, Op::Close { fd: 11 }),
    ];
    let mut rec = recording(vec![Op::Mkdir {
        path: "d".into(),
        mode: 0o755,
    }]);
    rec.header.calls = calls.len() as u64;
    rec.calls = calls;
    rec.check("race").unwrap();
    let dir = tempfile::tempdir().unwrap();
    Player::new(dir.path())
        .play(
            &rec.calls,
            &Phase {
                timing: Timing::Fast,
                observer: None,
                progress: None,
            },
        )
        .unwrap();
    assert!(dir.path().join("b").exists());
}

#[test]
fn a_pipe_is_never_inside_the_root() {
    // `-y` shows a pipe as `pipe:[N]`, which is not a path relative to the working directory
    // (a pyenv shim's bash closing its pipe, with its cwd the recorded root).
    let text = r#"25699 1795627163.744880 newfstatat(AT_FDCWD</tmp/st/py>, ".", {st_mode=S_IFDIR|0755, st_size=4096, ...}, 0) = 0 <0.000007>
25699 1795627163.768177 close(4<pipe:[349783]>) = 0 <0.000012>"#;
    let opts = ImportOptions {
        root: Some("/tmp/st/py".into()),
        ..Default::default()
    };
    let rec = import_strace(text, "t", &opts).unwrap();
    assert_eq!(rec.calls.len(), 1, "{:?}", rec.calls);
    assert_eq!(rec.calls[0].op, Op::Stat { path: ".".into() });
    assert_eq!(rec.header.dropped_outside_root, 1);
}

#[test]
fn calls_with_too_few_arguments_are_skipped_not_a_panic() {
    // Regression: these arms indexed their first (or second) argument unchecked.
    let mut text = String::new();
    for call in [
        "close()",
        "fsync()",
        "fdatasync()",
        "syncfs()",
        "unlink()",
        "rmdir()",
        "fstat()",
        "stat()",
        "lstat()",
        r#"rename("/r/a")"#,
    ] {
        text.push_str(&format!("100 1795625372.917974 {call} = 0 <0.000010>\n"));
    }
    let opts = ImportOptions {
        root: Some("/r".into()),
        ..Default::default()
    };
    // Every call is skipped, so the recording has nothing under the root: a clear error.
    let e = import_strace(&text, "t", &opts).unwrap_err();
    assert!(matches!(e, SyscallsError::NothingInRoot { .. }), "{e}");
}

#[test]
fn calls_on_descriptors_the_program_did_not_open_are_left_out_and_counted() {
    // `sh -c 'exec 3<>made; exec 4<&3; echo x >&4; exec 3<&- 4<&-; exec 0<&-'` with its stdin
    // and stdout files under the root: the copy 4 (dup2, not recorded), the saved copies 11 and
    // 12 (fcntl F_DUPFD), and the inherited 0 and 1 are no open's; the close of 3 after the
    // open is kept. `joj syscalls record -- true` refused its close of descriptor 0.
    let text = r#"700 1.000000 openat(AT_FDCWD</r>, "made", O_RDWR|O_CREAT, 0666) = 3</r/made> <0.000010>
700 1.000100 write(1</r/made>, "x\n", 2) = 2 <0.000010>
700 1.000200 close(11</r/out.txt>) = 0 <0.000010>
700 1.000300 close(3</r/made>) = 0 <0.000010>
700 1.000400 close(4</r/made>) = 0 <0.000010>
700 1.000500 fstat(3</r/made>) = -1 EBADF (Bad file descriptor) <0.000010>
700 1.000600 close(0</r/in.txt>) = 0 <0.000010>
700 1.000700 close(12</r/in.txt>) = 0 <0.000010>"#;
    let opts = ImportOptions {
        root: Some("/r".into()),
        ..Default::default()
    };
    let rec = import_strace(text, "t", &opts).unwrap();
    let ops: Vec<&Op> = rec.calls.iter().map(|c| &c.op).collect();
    assert!(
        matches!(
            ops.as_slice(),
            [Op::Open { fd: 3, .. }, Op::Close { fd: 3 }]
        ),
        "{ops:?}"
    );
    assert_eq!(rec.header.dropped_inherited, 6);
    assert_eq!(rec.header.inherited_fds, [0, 1, 3, 4, 11, 12]);
    assert_eq!(
        rec.calls[0].start_ns, 0,
        "times count from the first call kept"
    );
    // Written and read again: the reader's check of descriptors holds for what was kept.
    let mut bytes = Vec::new();
    rec.write(&mut bytes).unwrap();
    let again = Recording::read(BufReader::new(bytes.as_slice()), "again").unwrap();
    assert_eq!(again, rec);

    // Only inherited descriptors inside the root (`true --version` writing to a redirected
    // stdout): the root is right, and the recording is empty; nothing inside it: an error.
    let only = "700 1.0 write(1</r/out.txt>, \"x\", 1) = 1 <0.000010>\n";
    let rec = import_strace(only, "t", &opts).unwrap();
    assert!(rec.calls.is_empty() && rec.header.dropped_inherited == 1);
    let outside = "700 1.0 write(1</elsewhere>, \"x\", 1) = 1 <0.000010>\n";
    let e = import_strace(outside, "t", &opts).unwrap_err();
    assert!(matches!(e, SyscallsError::NothingInRoot { .. }), "{e}");
}

#[test]
fn the_header_lists_the_smallest_sixteen_inherited_descriptors() {
    let text: String = (0..40)
        .rev()
        .map(|fd| format!("700 1.{fd:06} close({fd}</r/f>) = 0 <0.000001>\n"))
        .collect();
    let opts = ImportOptions {
        root: Some("/r".into()),
        ..Default::default()
    };
    let rec = import_strace(&text, "t", &opts).unwrap();
    assert_eq!(rec.header.dropped_inherited, 40);
    assert_eq!(rec.header.inherited_fds, (0..16).collect::<Vec<_>>());
}
