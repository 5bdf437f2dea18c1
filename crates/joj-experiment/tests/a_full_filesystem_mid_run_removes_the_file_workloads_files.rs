//! A filesystem that fills while a file workload writes (another writer took the space after
//! the workload's free-space check) fails the run as a full disk, naming the fix, and the run's
//! data files are removed so the disk is not left full.

use std::process::Command;

use joj_workload::file;
use joj_workload::{FileAccess, FileWorkload, Unmeasured, WorkloadError};

#[test]
fn a_full_filesystem_mid_run_removes_the_file_workloads_files() {
    if !joj_linux::testgate::root_test() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mnt = tmp.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=2m", "tmpfs"])
        .arg(&mnt)
        .status()
        .unwrap();
    assert!(mounted.success(), "mount of a 2 MiB tmpfs failed");
    let w = FileWorkload {
        access: FileAccess::Write,
        file_size_bytes: 1 << 20,
        record_bytes: 4096,
        ..FileWorkload::default()
    };
    let prepared = file::prepare(&mnt, &w);
    // Another writer takes what is left.
    let filler = mnt.join("filler");
    let mut f = std::fs::File::create(&filler).unwrap();
    let chunk = vec![7u8; 64 << 10];
    while std::io::Write::write_all(&mut f, &chunk).is_ok() {}
    drop(f);
    let result = prepared.and_then(|()| file::run(&mnt, &w, &Unmeasured, None));
    let left: Vec<_> = std::fs::read_dir(&mnt)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let unmounted = Command::new("umount").arg(&mnt).status().unwrap();
    assert!(unmounted.success());
    let err = result.unwrap_err();
    assert!(matches!(err, WorkloadError::DiskFull { .. }), "{err:?}");
    assert!(err.to_string().contains("fix:"), "{err}");
    assert_eq!(left, vec!["filler".to_string()], "the run's files stay");
}
