//! `joj syscalls replay --out DIR`: a folder it cannot write is refused before any filesystem
//! is made; a write into it that fails after the run (the folder's filesystem full, or out of
//! inodes) names the file in DIR as given. It named `/proc/self/fd/N/…` (the descriptor joj
//! holds the folder by), or no file at all (`I/O: No space left on device`).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

mod tmpfs;

const RECORDING: &str = r#"{"format":"joj-syscalls","version":1,"source":"strace","root":"/r","transactions":1,"threads":1,"calls":3,"dropped_outside_root":0}
{"seq":0,"tid":1,"start_ns":0,"dur_ns":1,"ret":3,"call":"open","path":"a","flags":["O_RDWR","O_CREAT"],"mode":420,"fd":3}
{"seq":1,"tid":1,"start_ns":10,"dur_ns":1,"ret":0,"call":"fsync","fd":3}
{"seq":2,"tid":1,"start_ns":20,"dur_ns":1,"ret":0,"call":"close","fd":3}
"#;

/// `joj syscalls replay rec.jsonl --fs ext4 --out OUT`: its exit status and stderr.
fn replay(rec: &std::path::Path, out: &std::path::Path) -> (Option<i32>, String) {
    let run = common::joj_command()
        .args(["syscalls", "replay"])
        .arg(rec)
        .args(["--fs", "ext4", "--out"])
        .arg(out)
        .output()
        .unwrap();
    (
        run.status.code(),
        String::from_utf8_lossy(&run.stderr).into_owned(),
    )
}

#[test]
fn a_replay_output_that_cannot_be_written_names_the_folder_given() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec.jsonl");
    std::fs::write(&rec, RECORDING).unwrap();

    let ro = tmpfs::Tmpfs::mount("ro,size=1m");
    let (code, err) = replay(&rec, ro.path());
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "--out: cannot create files in {}",
            ro.path().display()
        )) && err.contains("fix:"),
        "{err}"
    );

    // 4 KiB: the files' first bytes fail; 2 inodes (the root's and one): the second file's
    // creation fails.
    for options in ["size=4k", "size=1m,nr_inodes=2"] {
        let full = tmpfs::Tmpfs::mount(options);
        let (code, err) = replay(&rec, full.path());
        assert_eq!(code, Some(1), "{options}: {err}");
        assert!(
            err.contains(&format!(
                "writing {}/ext4-replay-rec.",
                full.path().display()
            )) && err.contains("No space left on device")
                && err.contains("fix:")
                && !err.contains("/proc/self/fd"),
            "{options}: {err}"
        );
        let left: Vec<_> = std::fs::read_dir(full.path()).unwrap().collect();
        assert!(left.is_empty(), "{options}: {left:?} left behind");
    }
}
