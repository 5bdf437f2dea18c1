//! The importer follows copies of descriptors (`docs/formats/syscalls.md`, "Descriptors: each
//! process's table, copies and the end of a file description"): calls through a `dup`, a
//! `dup2`, an `fcntl(F_DUPFD)` or a child's inherited table are written on the one number of
//! the file description they name, and its `close` is written where its last copy ended.

use super::format::{Op, Recording};
use super::{ImportOptions, import_strace};
use std::io::BufReader;

/// strace of `sh -c 'exec 3>f; echo a >&3; echo b >&3; (echo c >&3); python3 -c "import os,
/// subprocess; fd=os.open("g", os.O_WRONLY|os.O_CREAT); d=os.dup(fd); os.close(fd);
/// os.write(d,b"x"); subprocess.run(["true"])"'` in `/r` (strace 6.1, Linux 6.18), the
/// libraries' lines taken out.
const SHELL_AND_PYTHON: &str = include_str!("testdata/shell-and-python-copies.strace");

fn import(text: &str) -> Recording {
    let opts = ImportOptions {
        root: Some("/r".into()),
        ..Default::default()
    };
    let rec = import_strace(text, "t", &opts).unwrap();
    // What was written reads back: every call passes the reader's descriptor check.
    let mut bytes = Vec::new();
    rec.write(&mut bytes).unwrap();
    let again = Recording::read(BufReader::new(bytes.as_slice()), "again").unwrap();
    assert_eq!(again, rec);
    rec
}

/// `(tid, op)` of each call, for comparing.
fn calls(rec: &Recording) -> Vec<(u64, Op)> {
    rec.calls.iter().map(|c| (c.tid, c.op.clone())).collect()
}

fn write(fd: i32, len: u64) -> Op {
    Op::Write { fd, len }
}

fn open(path: &str, fd: i32) -> impl Fn(&Op) -> bool + '_ {
    move |op| matches!(op, Op::Open { path: p, fd: f, .. } if p == path && *f == fd)
}

#[test]
fn a_shells_and_a_childs_copies_write_to_the_file_they_name() {
    let rec = import(SHELL_AND_PYTHON);
    let got = calls(&rec);
    assert_eq!(rec.header.dropped_inherited, 0, "{got:?}");
    assert_eq!(got.len(), 8, "{got:?}");
    assert!(open("f", 3)(&got[0].1), "{got:?}");
    // The shell's two writes through its copy at 1 (dup2), the subshell's through its copy
    // of the table: all on f's description, 3.
    assert_eq!(
        got[1..4],
        [
            (9127, write(3, 2)),
            (9127, write(3, 2)),
            (9128, write(3, 2))
        ]
    );
    // Python: g at 4, copied to 5 (F_DUPFD_CLOEXEC), 4 closed (the copy lives: nothing
    // happens to the file), written through 5.
    assert!(open("g", 4)(&got[4].1), "{got:?}");
    assert_eq!(got[5], (9129, write(4, 1)));
    // The child's close_range dropped its copies only; g ends when Python exits, f when the
    // shell does.
    assert_eq!(
        got[6..],
        [(9129, Op::Close { fd: 4 }), (9127, Op::Close { fd: 3 })]
    );
    let exit = |tid: u64| {
        SHELL_AND_PYTHON
            .lines()
            .find(|l| l.starts_with(&format!("{tid} ")) && l.contains("+++ exited"))
            .unwrap()
    };
    assert!(exit(9129).contains("1795801182.523247"));
    let t0 = 1_795_801_182_395_640_000;
    assert_eq!(rec.calls[6].start_ns, 1_795_801_182_523_247_000 - t0);
    assert_eq!(rec.calls[7].start_ns, 1_795_801_182_523_663_000 - t0);
}

#[test]
fn a_number_given_again_while_a_copy_lives_gets_a_number_of_its_own() {
    let text = r#"700 1.000000 openat(AT_FDCWD</r>, "a", O_RDWR|O_CREAT, 0644) = 3</r/a> <0.000010>
700 1.000100 dup(3</r/a>) = 4</r/a> <0.000010>
700 1.000200 close(3</r/a>) = 0 <0.000010>
700 1.000300 openat(AT_FDCWD</r>, "b", O_RDWR|O_CREAT, 0644) = 3</r/b> <0.000010>
700 1.000400 write(3</r/b>, "x", 1) = 1 <0.000010>
700 1.000500 write(4</r/a>, "yy", 2) = 2 <0.000010>
700 1.000600 close(4</r/a>) = 0 <0.000010>
700 1.000700 close(3</r/b>) = 0 <0.000010>
"#;
    let rec = import(text);
    let fresh = 1 << 20;
    let got = calls(&rec);
    assert!(
        open("a", 3)(&got[0].1) && open("b", fresh)(&got[1].1),
        "{got:?}"
    );
    assert_eq!(
        got[2..],
        [
            (700, write(fresh, 1)),
            (700, write(3, 2)),
            (700, Op::Close { fd: 3 }),
            (700, Op::Close { fd: fresh })
        ]
    );
}

#[test]
fn threads_share_a_table_and_a_forked_childs_close_closes_nothing() {
    let text = r#"700 1.000000 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM, exit_signal=0, stack=0x7f, stack_size=0x7fff00}, 88) = 701 <0.000050>
701 1.000100 openat(AT_FDCWD</r>, "a", O_RDWR|O_CREAT, 0644) = 3</r/a> <0.000010>
700 1.000200 write(3</r/a>, "x", 1) = 1 <0.000010>
700 1.000300 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = 702 <0.000050>
702 1.000400 write(3</r/a>, "yy", 2) = 2 <0.000010>
702 1.000500 close(3</r/a>) = 0 <0.000010>
702 1.000600 +++ exited with 0 +++
701 1.000700 +++ exited with 0 +++
700 1.000800 fsync(3</r/a>) = 0 <0.000010>
700 1.000900 +++ exited with 0 +++
"#;
    let rec = import(text);
    let got = calls(&rec);
    assert!(open("a", 3)(&got[0].1), "{got:?}");
    assert_eq!(
        got[1..],
        [
            (700, write(3, 1)),
            (702, write(3, 2)),
            (700, Op::Fsync { fd: 3 }),
            // The thread 701 that opened it exited; the table lives on until 700 exits, and
            // the close is written on the thread that opened the file.
            (701, Op::Close { fd: 3 }),
        ]
    );
}

#[test]
fn an_execve_ends_the_close_on_exec_descriptors_and_a_dup2_the_one_it_replaces() {
    let text = r#"700 1.000000 openat(AT_FDCWD</r>, "a", O_RDWR|O_CREAT|O_CLOEXEC, 0644) = 3</r/a> <0.000010>
700 1.000100 openat(AT_FDCWD</r>, "b", O_RDWR|O_CREAT, 0644) = 4</r/b> <0.000010>
700 1.000200 openat(AT_FDCWD</r>, "c", O_RDWR|O_CREAT, 0644) = 5</r/c> <0.000010>
700 1.000300 fcntl(5</r/c>, F_SETFD, FD_CLOEXEC) = 0 <0.000010>
700 1.000400 dup2(4</r/b>, 6) = 6</r/b> <0.000010>
700 1.000500 dup2(5</r/c>, 4</r/b>) = 4</r/c> <0.000010>
700 1.000600 execve("/bin/true", ["true"], 0x7f /* 1 var */) = 0 <0.000100>
700 1.000800 write(6</r/b>, "x", 1) = 1 <0.000010>
700 1.000900 write(4</r/c>, "x", 1) = 1 <0.000010>
"#;
    let rec = import(text);
    let got = calls(&rec);
    assert_eq!(got.len(), 6, "{got:?}");
    // The dup2 onto 4 drops one of b's two copies; the execve ends a (O_CLOEXEC) and c's copy
    // at 5 (F_SETFD) but not c's copy at 4 (dup2 clears the flag).
    assert_eq!(
        got[3..],
        [
            (700, Op::Close { fd: 3 }),
            (700, write(4, 1)),
            (700, write(5, 1)),
        ]
    );
    assert_eq!(rec.calls[3].start_ns, 600_000, "at the execve");
}

#[test]
fn without_exit_lines_a_childs_copy_stays_open_and_the_recording_reads() {
    // strace -qq hides `+++ exited`: the child's copy is never seen to end, so the parent's
    // close closes one copy of two and nothing is written for it.
    let text = r#"700 1.000000 openat(AT_FDCWD</r>, "a", O_RDWR|O_CREAT, 0644) = 3</r/a> <0.000010>
700 1.000100 vfork() = 701 <0.000050>
701 1.000200 write(3</r/a>, "x", 1) = 1 <0.000010>
700 1.000300 close(3</r/a>) = 0 <0.000010>
"#;
    let rec = import(text);
    let got = calls(&rec);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[1], (701, write(3, 1)));
}

#[test]
fn a_close_racing_an_open_on_another_thread_closes_what_the_number_held() {
    // 701's open of b began before 700's close of 3 (a) and returned 3 after it began.
    let text = r#"700 1.000000 clone3({flags=CLONE_VM|CLONE_FILES|CLONE_THREAD}, 88) = 701 <0.000010>
700 1.000100 openat(AT_FDCWD</r>, "a", O_RDWR|O_CREAT, 0644) = 3</r/a> <0.000010>
701 1.000200 openat(AT_FDCWD</r>, "b", O_RDWR|O_CREAT, 0644) = 3</r/b> <0.000800>
700 1.000500 close(3</r/a>) = 0 <0.000010>
701 1.002000 write(3</r/b>, "x", 1) = 1 <0.000010>
701 1.003000 close(3</r/b>) = 0 <0.000010>
"#;
    let rec = import(text);
    let got = calls(&rec);
    let fresh = 1 << 20;
    assert!(
        open("a", 3)(&got[0].1) && open("b", fresh)(&got[1].1),
        "{got:?}"
    );
    assert_eq!(
        got[2..],
        [
            (700, Op::Close { fd: 3 }),
            (701, write(fresh, 1)),
            (701, Op::Close { fd: fresh })
        ]
    );
}

#[test]
fn an_execve_by_a_second_thread_takes_the_process_id_and_ends_its_threads() {
    let text = r#"700 1.000000 openat(AT_FDCWD</r>, "a", O_RDWR|O_CREAT|O_CLOEXEC, 0644) = 3</r/a> <0.000010>
700 1.000100 openat(AT_FDCWD</r>, "b", O_RDWR|O_CREAT, 0644) = 4</r/b> <0.000010>
700 1.000200 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM}, 88) = 701 <0.000010>
701 1.000300 execve("/bin/sh", ["sh", "-c", "echo y >&4"], 0x7f /* 1 var */ <pid changed to 700 ...>
700 1.000400 +++ superseded by execve in pid 701 +++
700 1.000500 <... execve resumed>) = 0 <0.000200>
700 1.000600 write(4</r/b>, "y\n", 2) = 2 <0.000010>
700 1.000700 +++ exited with 0 +++
"#;
    let rec = import(text);
    let got = calls(&rec);
    assert_eq!(
        got[2..],
        [
            (700, Op::Close { fd: 3 }),
            (700, write(4, 2)),
            (700, Op::Close { fd: 4 })
        ],
        "a (close-on-exec) ends at the execve, b at the exit"
    );
    assert_eq!(rec.calls[2].start_ns, 300_000, "at the execve's start");
}

#[test]
fn a_short_lived_childs_exit_closes_on_the_thread_that_opened_the_file() {
    // `exec 3>f; sleep 0.02 & exec 3>&-`: the child holds the last copy; its close must not
    // make a replay thread of its own.
    let text = r#"700 1.000000 openat(AT_FDCWD</r>, "f", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</r/f> <0.000010>
700 1.000100 write(3</r/f>, "x\n", 2) = 2 <0.000010>
700 1.000200 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = 701 <0.000050>
700 1.000300 close(3</r/f>) = 0 <0.000010>
701 1.000400 execve("/bin/sleep", ["sleep", "0.02"], 0x7f /* 1 var */) = 0 <0.000200>
701 1.020000 +++ exited with 0 +++
"#;
    let rec = import(text);
    assert_eq!(calls(&rec)[2..], [(700, Op::Close { fd: 3 })]);
    assert_eq!(rec.header.threads, 1);
    assert_eq!(rec.calls[2].start_ns, 20_000_000, "when the child exited");
}

#[test]
fn close_on_exec_set_by_close_range_or_ioctl_ends_a_copy_at_the_execve() {
    // 701 shares 700's table (CLONE_FILES, another process), unshares it with close_range,
    // marking its numbers close-on-exec, and execs: its copies end, 700's stay. 700 marks b
    // close-on-exec with ioctl(FIOCLEX) and execs: b ends there.
    let text = r#"700 1.000000 openat(AT_FDCWD</r>, "a", O_RDWR|O_CREAT, 0644) = 3</r/a> <0.000010>
700 1.000100 openat(AT_FDCWD</r>, "b", O_RDWR|O_CREAT, 0644) = 4</r/b> <0.000010>
700 1.000200 clone(child_stack=NULL, flags=CLONE_FILES|SIGCHLD) = 701 <0.000010>
701 1.000300 close_range(3, 4294967295, CLOSE_RANGE_UNSHARE|CLOSE_RANGE_CLOEXEC) = 0 <0.000010>
701 1.000400 execve("/bin/true", ["true"], 0x7f /* 1 var */) = 0 <0.000100>
701 1.000600 +++ exited with 0 +++
700 1.000700 write(3</r/a>, "x", 1) = 1 <0.000010>
700 1.000800 ioctl(4</r/b>, FIOCLEX) = 0 <0.000010>
700 1.000900 execve("/bin/true", ["true"], 0x7f /* 1 var */) = 0 <0.000100>
700 1.001100 write(3</r/a>, "y", 1) = 1 <0.000010>
"#;
    let rec = import(text);
    assert_eq!(
        calls(&rec)[2..],
        [
            (700, write(3, 1)),
            (700, Op::Close { fd: 4 }),
            (700, write(3, 1))
        ]
    );
}

#[test]
fn a_recorded_number_above_the_fresh_ones_never_shares_a_live_number() {
    // `big` holds 2^20 as recorded; b's number must be fresh, and not that one.
    let text = r#"700 1.000000 openat(AT_FDCWD</r>, "big", O_RDWR|O_CREAT, 0644) = 1048576</r/big> <0.000010>
700 1.000100 openat(AT_FDCWD</r>, "a", O_RDWR|O_CREAT, 0644) = 3</r/a> <0.000010>
700 1.000200 dup(3</r/a>) = 4</r/a> <0.000010>
700 1.000300 close(3</r/a>) = 0 <0.000010>
700 1.000400 openat(AT_FDCWD</r>, "b", O_RDWR|O_CREAT, 0644) = 3</r/b> <0.000010>
700 1.000500 write(1048576</r/big>, "x", 1) = 1 <0.000010>
700 1.000600 write(3</r/b>, "yy", 2) = 2 <0.000010>
700 1.000700 write(4</r/a>, "zzz", 3) = 3 <0.000010>
"#;
    let rec = import(text);
    assert_eq!(rec.header.dropped_inherited, 0);
    let opened: Vec<i32> = rec
        .calls
        .iter()
        .filter_map(|c| match c.op {
            Op::Open { fd, .. } => Some(fd),
            _ => None,
        })
        .collect();
    assert_eq!(opened, [1 << 20, 3, (1 << 20) + 1]);
    let writes: Vec<Op> = rec.calls[3..].iter().map(|c| c.op.clone()).collect();
    assert_eq!(
        writes,
        [write(1 << 20, 1), write((1 << 20) + 1, 2), write(3, 3)]
    );
}

#[test]
fn copying_tables_past_the_bound_is_refused_not_squared() {
    // 1,000 copies of one descriptor, then forks that each copy all of them: the import stops
    // at the bound on copied entries, with the line, instead of holding them all.
    let mut text = String::from(
        "700 1.000000 openat(AT_FDCWD</r>, \"a\", O_RDWR|O_CREAT, 0644) = 3</r/a> <0.000001>\n",
    );
    for n in 4..1004 {
        text.push_str(&format!(
            "700 1.{:06} dup(3</r/a>) = {n}</r/a> <0.000001>\n",
            n
        ));
    }
    let forks = super::fd_tables::MAX_TABLE_WORK / 1000 + 2;
    for i in 0..forks {
        text.push_str(&format!(
            "700 2.{:09} vfork() = {} <0.000001>\n",
            i,
            10_000 + i
        ));
    }
    let opts = ImportOptions {
        root: Some("/r".into()),
        ..Default::default()
    };
    let e = import_strace(&text, "t", &opts).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("vfork") && msg.contains("descriptors"),
        "{msg}"
    );
}
