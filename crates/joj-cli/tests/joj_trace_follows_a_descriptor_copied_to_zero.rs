//! A copy made with `fcntl(F_DUPFD_CLOEXEC, 0)` onto a free descriptor 0 — Python's `os.dup`
//! after `os.close(0)` — returns 0, as SQLite's lock calls do. The write and fsync through
//! descriptor 0 are the file's. (A build that recorded fcntl's exit only when not 0, to save
//! the lock calls' exit events, lost this write: see docs/measurement.md, "Fewer events, no
//! faster".)

#![allow(clippy::unwrap_used)]

mod common;

#[test]
fn joj_trace_follows_a_descriptor_copied_to_zero() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let script = "import os\n\
        fd = os.open('dup.dat', os.O_RDWR | os.O_CREAT, 0o644)\n\
        os.close(0)\n\
        z = os.dup(fd)\n\
        assert z == 0, z\n\
        os.write(z, b'x' * 4096)\n\
        os.fsync(z)\n";
    let doc = common::joj_trace_json(&["--image-mib", "64"], &["python3", "-c", script]);
    let dat = common::traced_file(&doc, "dup.dat");
    assert_eq!(dat["write_calls"], 1, "{dat}");
    assert_eq!(dat["write_bytes"], 4096, "{dat}");
    assert_eq!(dat["fsync"], 1, "{dat}");
    assert_eq!(doc["command"]["unresolved_syncs"], 0);
}
