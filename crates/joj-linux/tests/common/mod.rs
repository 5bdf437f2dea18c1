//! Shared by the integration tests: prerequisite gating and leak checks.
//!
//! The tests need root, loop devices, tracefs and the filesystem tools. When something is
//! missing they fail, naming it, unless the developer opted out with `JOJ_SKIP_KERNEL_TESTS=1`
//! (`joj_linux::testgate`). Loop devices are shared by the whole machine, so the checks only look for
//! resources that belong to the test's own scratch directory or tracer, never at global counts.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use joj_linux::FsKind;

/// Whether the machine has what a test on `kinds` (plus tracefs) needs; fails the test when it
/// does not, unless kernel-level tests are skipped on purpose.
pub fn machine_ready(kinds: &[FsKind]) -> bool {
    joj_linux::testgate::kernel_test(kinds)
}

/// Small options: each kind at its minimum size (xfs 300 MiB), 16 MiB external journal.
pub fn small_options(kind: FsKind) -> joj_linux::ScratchOptions {
    joj_linux::ScratchOptions {
        size_bytes: kind.min_size_bytes().max(128 << 20),
        journal_size_bytes: 16 << 20,
        ..Default::default()
    }
}

/// Loop devices (`/dev/loopN`) whose backing file lies under `dir`, from sysfs.
pub fn loops_backed_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        return found;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("loop") {
            continue;
        }
        let backing =
            std::fs::read_to_string(e.path().join("loop/backing_file")).unwrap_or_default();
        if !backing.is_empty() && Path::new(backing.trim()).starts_with(dir) {
            found.push(format!("/dev/{name}"));
        }
    }
    found
}

/// Mount points at or under `dir`, from this process's mountinfo.
pub fn mounts_under(dir: &Path) -> Vec<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(PathBuf::from)
        .filter(|p| p.starts_with(dir))
        .collect()
}

/// Filesystem type mounted at exactly `path`.
pub fn fs_type_at(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    text.lines().find_map(|l| {
        let fields: Vec<&str> = l.split(' ').collect();
        let sep = fields.iter().position(|f| *f == "-")?;
        (Path::new(fields.get(4)?) == path).then(|| fields.get(sep + 1).map(|s| s.to_string()))?
    })
}

/// Appends `bytes` of a recognisable pattern to `path` and fsyncs it.
pub fn append_and_fsync(path: &Path, bytes: usize) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    let data: Vec<u8> = (0..bytes).map(|i| (i % 251) as u8).collect();
    f.write_all(&data).unwrap();
    f.sync_all().unwrap();
}

/// A loop device over a fresh sparse image of `bytes` in a temporary directory under
/// `/var/tmp` (kept alive by the returned directory), and the device opened for `O_DIRECT`
/// writes.
pub fn direct_loop(bytes: u64) -> (tempfile::TempDir, joj_linux::LoopDevice, std::fs::File) {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let image = dir.path().join("raw.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(bytes)
        .unwrap();
    let lo = joj_linux::LoopDevice::attach(&image, &joj_linux::LoopOptions::default()).unwrap();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(lo.path())
        .unwrap();
    (dir, lo, f)
}
