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
            // The thread 701 that opened it exited; the table lives on until 700 exits.
            (700, Op::Close { fd: 3 }),
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
