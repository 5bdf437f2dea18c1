//! A run that panics while a scratch filesystem is mounted and a tracer is running leaves no
//! loop device, no mount under /run/joj and no tracefs instance of ours behind.

mod common;

use std::path::PathBuf;
use std::sync::Mutex;

use joj_linux::{BlockTracer, FsKind, ScratchFs};

#[test]
fn panic_inside_a_traced_run_releases_everything() {
    if !common::machine_ready(&[FsKind::Ext4ExtJournal]) {
        return;
    }
    let seen: Mutex<Option<(PathBuf, PathBuf)>> = Mutex::new(None);
    let result = std::panic::catch_unwind(|| {
        let kind = FsKind::Ext4ExtJournal;
        let fs = ScratchFs::create(kind, common::small_options(kind)).unwrap();
        let tracer = BlockTracer::start(&fs.dev_ids(), 1024).unwrap();
        *seen.lock().unwrap() =
            Some((fs.dir().to_path_buf(), tracer.instance_path().to_path_buf()));
        common::append_and_fsync(&fs.mount_path().join("f"), 4096);
        // Keep a file open on the filesystem, as a crashed workload would.
        let _open = std::fs::File::open(fs.mount_path().join("f")).unwrap();
        panic!("workload failed");
    });
    assert!(result.is_err());
    let (dir, instance) = seen
        .lock()
        .unwrap()
        .clone()
        .expect("the run got as far as tracing");

    assert!(
        common::loops_backed_under(&dir).is_empty(),
        "loop device left: {:?}",
        common::loops_backed_under(&dir)
    );
    assert!(
        common::mounts_under(&dir).is_empty(),
        "mount left: {:?}",
        common::mounts_under(&dir)
    );
    assert!(!dir.exists(), "{} left", dir.display());
    assert!(!instance.exists(), "{} left", instance.display());
    let prefix = format!("joj-{}-", std::process::id());
    let ours: Vec<_> = std::fs::read_dir("/sys/kernel/tracing/instances")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    assert!(ours.is_empty(), "instances left: {ours:?}");
}
