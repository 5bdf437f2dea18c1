//! `joj syscalls replay` refuses a file that is not a recording, a newer version, a cut file, a
//! path out of the root and a descriptor never opened — before any filesystem is made (so
//! without root) — each with its cause and fix; `import-strace` names a line that is not strace
//! output and a root that holds nothing.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

/// Run `joj syscalls replay FILE` on `text` and return its stderr (it must fail, exit 1).
fn replay(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("rec.jsonl");
    std::fs::write(&f, text).unwrap();
    let out = common::joj_command()
        .args(["syscalls", "replay"])
        .arg(&f)
        .args(["--fs", "ext4", "--out"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(err.contains("fix:"), "{err}");
    err
}

const HEADER: &str = r#"{"format":"joj-syscalls","version":1,"source":"strace","root":"/r","transactions":1,"threads":1,"calls":2,"dropped_outside_root":0}"#;
const OPEN: &str = r#"{"seq":0,"tid":1,"start_ns":0,"dur_ns":1,"ret":3,"call":"open","path":"a","flags":["O_RDWR","O_CREAT"],"mode":420,"fd":3}"#;

#[test]
fn joj_syscalls_bad_input_is_named_with_its_fix() {
    let e = replay("1234 1.5 openat(AT_FDCWD, \"x\", O_RDONLY) = 3 <0.000010>\n");
    assert!(
        e.contains("not a joj-syscalls recording") && e.contains("import-strace"),
        "{e}"
    );

    let e = replay(&format!(
        "{}\n{OPEN}\n",
        HEADER.replace("\"version\":1", "\"version\":7")
    ));
    assert!(e.contains("version 7") && e.contains("newer joj"), "{e}");

    let e = replay(&format!("{HEADER}\n{OPEN}\n"));
    assert!(e.contains("says it holds 2 calls but has 1"), "{e}");

    let escape =
        r#"{"seq":1,"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"unlink","path":"../../etc/x"}"#;
    let e = replay(&format!("{HEADER}\n{OPEN}\n{escape}\n"));
    assert!(
        e.contains("not inside the recorded root") && e.contains("--root"),
        "{e}"
    );

    let stray = r#"{"seq":1,"tid":1,"start_ns":5,"dur_ns":1,"ret":0,"call":"fsync","fd":9}"#;
    let e = replay(&format!("{HEADER}\n{OPEN}\n{stray}\n"));
    assert!(e.contains("descriptor 9") && e.contains("strace -f"), "{e}");

    let dir = tempfile::tempdir().unwrap();
    let st = dir.path().join("s.txt");
    std::fs::write(&st, "not strace at all\n").unwrap();
    let out = common::joj_command()
        .args(["syscalls", "import-strace"])
        .arg(&st)
        .args(["--root", "/x", "-o"])
        .arg(dir.path().join("r.jsonl"))
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && e.contains("line 1") && e.contains("fix:"),
        "{e}"
    );
    assert!(
        !dir.path().join("r.jsonl").exists(),
        "no recording is written"
    );
}
