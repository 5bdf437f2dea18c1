//! joj's VFSs among other VFSs, from C against the system's SQLite (`tests/c/vfs_stack.c`): a
//! VFS stacked over `waldio` or `joj` (a tracing, fault-injecting or crash-simulating test VFS
//! sits this way) gets waldio's reserve and works in WAL mode; one that writes into the
//! reserved bytes (a checksum VFS) is refused when the WAL opens, before any frame is written,
//! and at the next open with the reason; the accounting VFS forwards the system-call overrides,
//! `xSync` and `xDelete` to the unix VFS below it.

mod common;

use std::path::Path;
use std::process::Command;

fn program(dir: &Path) -> std::path::PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/vfs_stack.c");
    common::cc(dir, "vfs_stack", &src, &[])
}

fn run(dir: &Path, args: &[&str]) -> String {
    let out = common::run_ok(
        Command::new(program(dir))
            .arg(common::lib().with_extension(""))
            .args(args)
            .current_dir(dir),
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_vfs_stacked_over_waldio_or_joj_gets_the_reserve_and_works_in_wal_mode() {
    for base in ["waldio", "joj", "unix"] {
        let dir = tempfile::tempdir().unwrap();
        let out = run(dir.path(), &["stack", base, "s.db"]);
        assert!(out.contains("rows 200 reserve 0 failed 0"), "{base}: {out}");
        let reserve = if base == "waldio" { 24 } else { 0 };
        assert!(
            out.contains(&format!("header-reserve {reserve}\n")),
            "{base}: {out}"
        );
    }
}

#[test]
fn a_vfs_writing_into_the_reserve_over_waldio_is_refused_when_the_wal_opens() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["checksum", "c.db"]);
    // The insert in WAL mode fails at the WAL's open ("unable to open database file", not a
    // disk I/O error after writing); the next open is refused with the reason.
    assert!(
        out.contains("INSERT INTO t VALUES(1) -> 14 unable to open database file"),
        "{out}"
    );
    assert!(
        out.contains("open c.db on shim -> 14") && out.contains("reserved bytes are written"),
        "{out}"
    );
}

#[test]
fn the_accounting_vfs_forwards_system_calls_sync_and_delete_to_the_unix_vfs() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["syscalls", "u.db"]);
    assert!(out.contains("set 0 next-after-open close"), "{out}");
    // Six journals (CREATE TABLE and five inserts in DELETE mode): each deleted through the
    // unix VFS's xDelete (the replaced unlink), and its directory synced by the unix VFS's
    // xSync when the journal was first synced (the replaced openDirectory).
    assert!(out.contains("unlinks 6 directory-syncs 6"), "{out}");
}
