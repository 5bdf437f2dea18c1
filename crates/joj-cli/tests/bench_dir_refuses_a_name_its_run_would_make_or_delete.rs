#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
//! `bench --dir D` writes in a directory the user named, often a shared one, as root. Every name
//! the run would create or delete there — each thread's database and, beside it, the
//! `-journal`, `-wal`, `-shm` and `-waldio` SQLite and waldio keep — must be free: anything
//! already there (a file, a FIFO, a symbolic link, even to nothing) is refused before joj makes
//! anything, naming it and the fix, and D is left as it was. It used to be deleted by SQLite,
//! which takes a journal beside an empty database for a stale one; a foreign `-waldio` gave
//! "disk I/O error" and left an empty `joj-0.db`, and `-t 2` made `joj-0.db` before refusing
//! `joj-1.db`.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

/// Every name in `dir` with what it is: a file's bytes, a link's target, or `fifo`.
fn contents(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let t = e.file_type().unwrap();
            let what = if t.is_symlink() {
                format!("-> {}", std::fs::read_link(e.path()).unwrap().display())
            } else if t.is_file() {
                std::fs::read_to_string(e.path()).unwrap()
            } else {
                "fifo".into()
            };
            (e.file_name().to_string_lossy().into_owned(), what)
        })
        .collect()
}

/// `joj bench --fs host --dir DIR ARGS`: the exit code and stderr. A database workload runs 3
/// transactions (`-n 3`, which a file workload refuses).
fn bench_in(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let count: &[&str] = if args.contains(&"-a") {
        &[]
    } else {
        &["-n", "3"]
    };
    let out = common::joj_command()
        .args(["bench", "--fs", "host", "--dir"])
        .arg(dir)
        .args(count)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// With `planted` made in an empty directory, `bench ARGS` is refused naming `named`, and the
/// directory holds exactly what was planted.
fn refused(planted: &[(&str, &str)], args: &[&str], named: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for (name, what) in planted {
        let path = dir.join(name);
        match *what {
            "fifo" => assert_eq!(
                std::process::Command::new("mkfifo")
                    .arg(&path)
                    .status()
                    .unwrap()
                    .code(),
                Some(0)
            ),
            link if link.starts_with("-> ") => {
                std::os::unix::fs::symlink(&link[3..], &path).unwrap();
            }
            bytes => std::fs::write(&path, bytes).unwrap(),
        }
    }
    let before = contents(dir);
    let (code, err) = bench_in(dir, args);
    assert_eq!(code, Some(1), "{planted:?} {args:?}: {err}");
    let shown = dir.join(named).display().to_string();
    assert!(
        err.contains(&format!("{shown} already exists")) && err.contains("fix:"),
        "{planted:?} {args:?}: {err}"
    );
    assert_eq!(contents(dir), before, "{planted:?} {args:?}: {err}");
}

#[test]
fn a_journal_beside_the_database_to_be_is_refused_and_kept() {
    for mode in ["delete", "wal"] {
        let planted = [
            ("joj-0.db-wal", "MYWAL"),
            ("joj-0.db-journal", "MYJ"),
            ("joj-0.db-shm", "MYSHM"),
        ];
        refused(&planted, &["-j", mode], "joj-0.db-journal");
        refused(&planted[..1], &["-j", mode], "joj-0.db-wal");
        refused(&planted[2..], &["-j", mode], "joj-0.db-shm");
    }
    refused(
        &[("joj-0.db-wal", "fifo")],
        &["-j", "delete"],
        "joj-0.db-wal",
    );
}

#[test]
fn a_foreign_waldio_wal_is_refused_before_the_database_is_made() {
    refused(
        &[("joj-0.db-waldio", "not a waldio WAL")],
        &["-j", "waldio"],
        "joj-0.db-waldio",
    );
}

#[test]
fn a_link_at_the_database_name_is_refused_even_when_it_leads_nowhere() {
    let target = tempfile::tempdir().unwrap();
    let victim = target.path().join("made-through-the-link");
    let link = format!("-> {}", victim.display());
    refused(&[("joj-0.db", &link)], &["-j", "delete"], "joj-0.db");
    assert!(!victim.exists());
}

#[test]
fn a_later_threads_database_is_refused_before_the_first_is_made() {
    refused(&[("joj-1.db", "MINE")], &["-t", "2"], "joj-1.db");
    refused(
        &[("joj-1.db-journal", "MINE")],
        &["-t", "2", "-j", "delete"],
        "joj-1.db-journal",
    );
}

#[test]
fn a_file_workloads_file_is_never_made_through_a_link() {
    let target = tempfile::tempdir().unwrap();
    let victim = target.path().join("made-through-the-link");
    let link = format!("-> {}", victim.display());
    refused(
        &[("joj-file-0.dat", &link)],
        &["-a", "0", "-f", "64", "-r", "4"],
        "joj-file-0.dat",
    );
    assert!(!victim.exists());
}

#[test]
fn a_free_directory_still_runs() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("notes.txt"), "mine").unwrap();
    let (code, err) = bench_in(tmp.path(), &["-j", "wal"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("notes.txt")).unwrap(),
        "mine"
    );
}
