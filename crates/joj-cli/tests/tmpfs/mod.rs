//! A tmpfs (or another memory filesystem: ramfs) mounted for one test, unmounted when dropped —
//! also when the test panics, so a failed assertion never leaves a mount behind. Needs root
//! (`joj_linux::testgate::root_test`).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
#![allow(dead_code)] // each test uses part of it

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Tmpfs {
    mount: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tmpfs {
    /// A tmpfs with `options` (e.g. `ro,size=1m`) on a fresh directory.
    pub fn mount(options: &str) -> Tmpfs {
        Tmpfs::mount_kind("tmpfs", options)
    }

    /// A memory filesystem of type `kind` (`tmpfs`, `ramfs`) with `options` on a fresh
    /// directory.
    pub fn mount_kind(kind: &str, options: &str) -> Tmpfs {
        let dir = tempfile::tempdir().unwrap();
        let mount = dir.path().join("mnt");
        std::fs::create_dir(&mount).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", kind, "-o", options, kind])
            .arg(&mount)
            .status()
            .unwrap();
        assert!(mounted.success(), "mount -t {kind} -o {options} failed");
        Tmpfs { mount, _dir: dir }
    }

    pub fn path(&self) -> &Path {
        &self.mount
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mount).status();
    }
}
