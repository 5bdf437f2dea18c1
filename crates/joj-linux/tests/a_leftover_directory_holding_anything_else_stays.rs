//! The sweep never removes recursively: a dead run's scratch directory loses its images and its
//! empty mount point, but a file joj did not put there keeps the directory, and the sweep
//! reports it with a fix instead of failing or deleting it.

use joj_linux::leftovers::{self, LeftoverError, Resource, Scope};
use joj_linux::scratch::RUN_DIR;

#[test]
fn a_leftover_directory_holding_anything_else_stays() {
    if !joj_linux::testgate::root_test() {
        return;
    }
    // A pid that is no process any more: a child that ran and was reaped.
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let dir = std::path::Path::new(RUN_DIR).join(format!("ext4-{dead}-AbC123"));
    std::fs::create_dir_all(dir.join("mnt")).unwrap();
    let image = dir.join(format!("ext4-{dead}-main-Qw3rTy.img"));
    std::fs::write(&image, b"image").unwrap();
    let notes = dir.join("notes.txt");
    std::fs::write(&notes, b"someone's").unwrap();

    let found = leftovers::find(Scope::Everything).unwrap();
    let ours: Vec<_> = found.remove.into_iter().filter(|l| l.pid == dead).collect();
    assert_eq!(ours.len(), 1, "{ours:?}");
    assert_eq!(ours[0].resource, Resource::ScratchDir(dir.clone()));
    let sweep = leftovers::remove(ours);
    let kept_and_said =
        dir.exists() && notes.exists() && !image.exists() && !dir.join("mnt").exists();
    std::fs::remove_file(&notes).unwrap();
    std::fs::remove_dir(&dir).unwrap();

    assert!(kept_and_said, "the directory was not kept as it should be");
    assert!(sweep.removed.is_empty(), "{:?}", sweep.removed);
    assert_eq!(sweep.problems.len(), 1, "{:?}", sweep.problems);
    let problem = &sweep.problems[0];
    assert!(matches!(problem, LeftoverError::Remove { pid, .. } if *pid == dead));
    let text = problem.to_string();
    assert!(
        text.contains(&dir.display().to_string()) && text.contains("fix:"),
        "{text}"
    );
    eprintln!("{text}");
}
