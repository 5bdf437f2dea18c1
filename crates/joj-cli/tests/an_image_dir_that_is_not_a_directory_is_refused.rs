//! `--image-dir` naming a FIFO, a file or nothing is refused before anything is made, saying so
//! (it was "cannot create an image in fifo: Not a directory …; fix: check free space and
//! permissions there", the wrong fix).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

#[test]
fn an_image_dir_that_is_a_fifo_a_file_or_missing_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    for (path, why) in [
        (&fifo, "not a directory"),
        (&file, "not a directory"),
        (&dir.path().join("missing"), "does not exist"),
    ] {
        let p = path.to_str().unwrap();
        let (ok, _, stderr) =
            common::run_joj_text(&["bench", "--fs", "ext4", "--image-dir", p, "-n", "10"]);
        assert!(!ok, "{p}");
        assert!(
            stderr.contains(&format!("--image-dir {p}: {why}"))
                && stderr.contains("fix: give a directory on a disk"),
            "{stderr}"
        );
    }
    // Nothing was made beside them.
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 2, "{left:?}");
}
