//! Under `joj trace`, each sync-type system call is counted on the file it was made on: O_DSYNC
//! writes (`dd oflag=dsync`), a pwritev2 with RWF_DSYNC, sync_file_range (`xfs_io sync_range`),
//! fsync and fdatasync (python3's `os`), and so are unlinks and truncates.

mod common;

const SCRIPT: &str = "dd if=/dev/zero of=d.bin bs=4k count=5 oflag=dsync 2>/dev/null \
    && xfs_io -f -c 'pwrite 0 8192' -c 'sync_range -w 0 8192' r.bin >/dev/null \
    && python3 -c \"import os
fd = os.open('p.bin', os.O_CREAT | os.O_WRONLY)
os.write(fd, b'x' * 4096); os.fsync(fd)
os.write(fd, b'y' * 4096); os.fdatasync(fd)
os.pwritev(fd, [b'z' * 4096], 8192, os.RWF_DSYNC)
os.ftruncate(fd, 4096)
open('gone.bin', 'w').write('x'); os.unlink('gone.bin')\"";

#[test]
fn sync_calls_are_counted_per_file_under_joj_trace() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let doc = common::joj_trace_json(&[], &["sh", "-c", SCRIPT]);
    let count = |path: &str, key: &str| common::traced_file(&doc, path)[key].as_u64().unwrap();
    assert_eq!(count("d.bin", "sync_writes"), 5);
    assert_eq!(count("d.bin", "data_bytes"), 5 * 4096);
    assert_eq!(count("r.bin", "sync_file_range"), 1);
    assert_eq!(count("p.bin", "fsync"), 1);
    assert_eq!(count("p.bin", "fdatasync"), 1);
    assert_eq!(count("p.bin", "sync_writes"), 1);
    assert_eq!(count("p.bin", "truncates"), 1);
    assert_eq!(count("gone.bin", "removals"), 1);
    assert_eq!(common::traced_file(&doc, "gone.bin")["deleted"], true);
    assert_eq!(doc["syscalls"]["fsync"], 1);
    assert_eq!(doc["syscalls"]["fdatasync"], 1);
    assert_eq!(doc["syscalls"]["truncates"], 1);
    assert_eq!(doc["syscalls"]["deletes"], 1);
}
