//! When the traced command fails, joj says so first — its exit status, then its standard error
//! apart from anything of joj's, then a fix that fits — prints no report and writes no trace or
//! plot (they would measure a run that stopped part-way), and exits 1.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

fn failing(dir: &std::path::Path, args: &[&str]) -> (std::process::Output, tempfile::TempDir) {
    let out = tempfile::tempdir().unwrap();
    let run = common::joj_command()
        .current_dir(dir)
        .args(["trace", "--out"])
        .arg(out.path())
        .args(args)
        .output()
        .unwrap();
    (run, out)
}

#[test]
fn a_failed_command_is_said_first_with_its_stderr_and_no_trace() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let project = tempfile::tempdir().unwrap();
    let (run, out) = failing(
        project.path(),
        &[
            "--",
            "sh",
            "-c",
            "echo x > f && sync && echo 'app: no config found' >&2 && exit 7",
        ],
    );
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(
        run.stdout.is_empty(),
        "no report of a failed run: {:?}",
        run.stdout
    );
    let said: Vec<&str> = err.lines().filter(|l| l.starts_with("joj")).collect();
    assert!(
        said[0].starts_with("joj: the command failed with exit status 7"),
        "the failure comes first: {err}"
    );
    assert!(err.contains("  | app: no config found"), "{err}");
    let last = said.last().unwrap();
    assert!(
        last.contains("fix:")
            && last.contains("the command's own error")
            && last.contains("; true"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(out.path()).unwrap().count(),
        0,
        "no trace or plot of a failed run"
    );
}

#[test]
fn a_command_that_fails_silently_is_not_said_to_have_printed_an_error() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let project = tempfile::tempdir().unwrap();
    let (run, _out) = failing(project.path(), &["--", "false"]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(err.contains("exit status 1"), "{err}");
    assert!(!err.contains("lines above"), "there are none: {err}");
    assert!(err.contains("the command printed no error"), "{err}");
}

#[test]
fn a_python_without_loadable_extensions_is_told_to_use_the_distributions() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let project = tempfile::tempdir().unwrap();
    // What a pyenv Python built without --enable-loadable-sqlite-extensions says.
    let code = "import sys; sys.stderr.write(\"Traceback (most recent call last):\\nAttributeError: 'sqlite3.Connection' object has no attribute 'enable_load_extension'\\n\"); sys.exit(1)";
    let (run, _out) = failing(project.path(), &["--", "/usr/bin/python3", "-c", code]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(
        err.contains("/usr/bin/python3 …") && err.contains("fix:"),
        "{err}"
    );
}
