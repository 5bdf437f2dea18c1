//! What the extension's tests share: the built `libjoj.so`, the system's `python3` and
//! `sqlite3`, and running them. A missing tool fails the test naming the fix.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The crate's cdylib as `cargo test` built it with the tests, from the same sources:
/// `target/ext/<profile>/deps/libjoj.so` (`cargo build` copies it to `target/ext/<profile>/`,
/// where the README loads it from; `cargo test` does not).
pub fn lib() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe.parent().expect("deps directory");
    let lib = dir.join("libjoj.so");
    assert!(
        lib.exists(),
        "{} is missing: build it with `cd crates/joj-ext && cargo build --release` \
         (./scripts/setup.sh does)",
        lib.display()
    );
    lib
}

/// The distribution's `python3` (Debian's build has `enable_load_extension`; a pyenv or
/// `--disable-loadable-sqlite-extensions` build may not).
pub fn python() -> PathBuf {
    let p = PathBuf::from("/usr/bin/python3");
    assert!(
        p.exists(),
        "/usr/bin/python3 is missing: apt-get install python3 (./scripts/setup.sh does)"
    );
    p
}

/// The distribution's `sqlite3` shell.
pub fn sqlite3() -> PathBuf {
    let p = PathBuf::from("/usr/bin/sqlite3");
    assert!(
        p.exists(),
        "/usr/bin/sqlite3 is missing: apt-get install sqlite3 (./scripts/setup.sh does)"
    );
    p
}

/// A script of tests/py.
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/py")
        .join(name)
}

/// Run `cmd`, returning its output; panics with both streams if it failed.
pub fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Run the system `sqlite3` in `dir` with `input` on stdin; (status ok, stdout, stderr).
pub fn shell(dir: &Path, args: &[&str], input: &str) -> (bool, String, String) {
    use std::io::Write;
    let mut child = Command::new(sqlite3())
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawning sqlite3");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("writing to sqlite3");
    let out = child.wait_with_output().expect("sqlite3 output");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The fenced code block that follows `<!-- test: NAME -->` in the README, with the README's
/// relative extension path replaced by the built one.
pub fn readme_block(name: &str) -> String {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let text = std::fs::read_to_string(&readme).expect("README.md");
    let marker = format!("<!-- test: {name} -->");
    let after = text
        .split_once(&marker)
        .unwrap_or_else(|| panic!("README.md has no {marker}"))
        .1;
    let body = after
        .split_once("```")
        .and_then(|(_, rest)| rest.split_once('\n'))
        .map(|(_, rest)| rest)
        .and_then(|rest| rest.split_once("```"))
        .map(|(block, _)| block)
        .unwrap_or_else(|| panic!("README.md: no code block after {marker}"));
    body.replace(
        "target/ext/release/libjoj",
        &lib().with_extension("").to_string_lossy(),
    )
}

/// Compile the C program `source` against the system's SQLite into `dir/out`, with `extra`
/// flags (`-ljoj` links the extension built with these tests).
pub fn cc(dir: &Path, out: &str, source: &Path, extra: &[&str]) -> PathBuf {
    let exe = dir.join(out);
    let lib_dir = lib().parent().unwrap().to_path_buf();
    run_ok(
        Command::new("cc")
            .arg("-Wall")
            .arg("-o")
            .arg(&exe)
            .arg(source)
            .arg(format!(
                "-I{}",
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("include")
                    .display()
            ))
            .args(extra)
            .arg(format!("-L{}", lib_dir.display()))
            .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
            .arg("-lsqlite3"),
    );
    exe
}
