//! `joj waldio inspect` or `convert` of a FIFO or a directory named as the database said
//! `… is not a regular file` and no fix; it names what the name holds and the fix, reads
//! nothing (a FIFO is never opened) and changes nothing.

mod common;

use common::joj_bounded;

#[test]
fn waldio_refuses_a_database_that_is_not_a_file_with_its_fix() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.db");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let folder = dir.path().join("folder.db");
    std::fs::create_dir(&folder).unwrap();
    for (path, kind) in [(&fifo, "a FIFO"), (&folder, "a directory")] {
        let path = path.to_str().unwrap();
        for command in ["inspect", "convert"] {
            let run = joj_bounded(&["waldio", command, path]);
            assert_eq!(run.code, Some(1), "{command} {path}: {run:?}");
            assert!(
                run.stderr
                    .contains(&format!("{path} is not a regular file ({kind})"))
                    && run
                        .stderr
                        .contains("; fix: give the path of the database file"),
                "{command}: {}",
                run.stderr
            );
        }
    }
    assert!(std::fs::read_dir(&folder).unwrap().next().is_none());
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["fifo.db", "folder.db"], "nothing made beside them");
}
