//! Under `joj trace`, a file's data written by `sendfile`, `copy_file_range` or `splice` (from a
//! pipe) counts as written on that file, as a `write` of the same bytes does — call by call,
//! byte by byte — and into an O_DSYNC file it is a sync; a `splice` from a file into a pipe
//! writes no file. (Python's `shutil.copyfile` copies with `sendfile`, `cp` with
//! `copy_file_range`.)

mod common;

const SCRIPT: &str = "import os
src = os.open('src.bin', os.O_CREAT | os.O_RDWR, 0o644)
assert os.write(src, b'x' * 65536) == 65536
dst = os.open('dst.bin', os.O_CREAT | os.O_WRONLY, 0o644)
assert os.sendfile(dst, src, 0, 16384) == 16384
assert os.copy_file_range(src, dst, 8192, 0) == 8192
r, w = os.pipe()
assert os.write(w, b'y' * 4096) == 4096
assert os.splice(r, dst, 4096) == 4096
assert os.splice(src, w, 4096, offset_src=0) == 4096
os.fsync(dst)
sy = os.open('dsync.bin', os.O_CREAT | os.O_WRONLY | os.O_DSYNC, 0o644)
assert os.sendfile(sy, src, 0, 4096) == 4096
";

#[test]
fn writes_by_sendfile_copy_file_range_and_splice_are_counted_on_their_file() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let doc = common::joj_trace_json(&[], &["python3", "-c", SCRIPT]);
    let count = |path: &str, key: &str| common::traced_file(&doc, path)[key].as_u64().unwrap();
    assert_eq!(count("dst.bin", "write_calls"), 3, "{doc:#}");
    assert_eq!(count("dst.bin", "write_bytes"), 16384 + 8192 + 4096);
    assert_eq!(count("dst.bin", "fsync"), 1);
    assert_eq!(
        count("src.bin", "write_calls"),
        1,
        "a splice into a pipe writes no file"
    );
    assert_eq!(count("src.bin", "write_bytes"), 65536);
    assert_eq!(count("dsync.bin", "write_calls"), 1);
    assert_eq!(count("dsync.bin", "write_bytes"), 4096);
    assert_eq!(count("dsync.bin", "sync_writes"), 1);
    assert_eq!(
        doc["syscalls"]["write_bytes"],
        65536 + 16384 + 8192 + 4096 + 4096,
        "{}",
        doc["syscalls"]
    );
}
