//! What a joj run needs from the machine, checked up front so a missing piece is reported by
//! name with the way to get it, instead of surfacing later as an obscure ioctl or mount error.
//!
//! Checks: running as root; `/dev/loop-control` (the loop driver); tracefs at
//! `/sys/kernel/tracing` with the block events — [`ensure_tracefs`] *mounts tracefs there if it
//! is not mounted yet* (the only change to the machine these checks make, besides `modprobe`);
//! the userspace tools of each filesystem; and kernel support for each filesystem
//! (`/proc/filesystems`, trying `modprobe <fs>` when absent).

use std::path::{Path, PathBuf};

use crate::fs::FsKind;
pub use crate::tools::{ToolMissing, find_tool, package_for};

/// Where tracefs is mounted on current kernels.
pub const TRACEFS_ROOT: &str = "/sys/kernel/tracing";
/// The loop driver's control node.
pub const LOOP_CONTROL: &str = "/dev/loop-control";

/// A prerequisite the machine lacks.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PrereqError {
    #[error(
        "joj-linux needs root (effective uid is {euid}) to attach loop devices, mount \
         filesystems and use tracefs; fix: run as root (e.g. with sudo)"
    )]
    NotRoot { euid: u32 },
    #[error(
        "{LOOP_CONTROL} is missing, so no loop device can be created; fix: `modprobe loop` \
         (or use a kernel with CONFIG_BLK_DEV_LOOP)"
    )]
    LoopControlMissing,
    #[error(
        "tracefs is not available at {path}: {detail}; fix: `mount -t tracefs nodev {path}` \
         (needs a kernel with CONFIG_TRACING)"
    )]
    TracefsUnavailable { path: PathBuf, detail: String },
    #[error(
        "tracefs at {path} has no block events (events/block/block_rq_issue); fix: use a kernel \
         with block tracepoints (CONFIG_BLK_DEV_IO_TRACE / CONFIG_TRACEPOINTS)"
    )]
    BlockEventsMissing { path: PathBuf },
    #[error(transparent)]
    ToolMissing(#[from] ToolMissing),
    #[error(
        "the kernel does not support {fs} (not in /proc/filesystems; `modprobe {fs}`: {detail}); \
         fix: load the {fs} module or use a kernel built with it"
    )]
    FsUnsupported { fs: &'static str, detail: String },
}

/// Fails unless the effective user is root.
pub fn check_root() -> Result<(), PrereqError> {
    let euid = rustix::process::geteuid().as_raw();
    if euid == 0 {
        Ok(())
    } else {
        Err(PrereqError::NotRoot { euid })
    }
}

/// Fails unless the loop driver's control node exists.
pub fn check_loop_control() -> Result<(), PrereqError> {
    if Path::new(LOOP_CONTROL).exists() {
        Ok(())
    } else {
        Err(PrereqError::LoopControlMissing)
    }
}

/// Makes sure tracefs is mounted at [`TRACEFS_ROOT`] — mounting it there if it is not — and
/// has the block events. Returns the tracefs root.
pub fn ensure_tracefs() -> Result<PathBuf, PrereqError> {
    let root = PathBuf::from(TRACEFS_ROOT);
    if !root.join("instances").is_dir() {
        if !root.is_dir() {
            return Err(PrereqError::TracefsUnavailable {
                path: root,
                detail: "the directory does not exist (is sysfs mounted?)".into(),
            });
        }
        rustix::mount::mount(
            "nodev",
            &root,
            "tracefs",
            rustix::mount::MountFlags::empty(),
            None,
        )
        .map_err(|e| PrereqError::TracefsUnavailable {
            path: root.clone(),
            detail: format!("not mounted, and mounting it failed: {e}"),
        })?;
        if !root.join("instances").is_dir() {
            return Err(PrereqError::TracefsUnavailable {
                path: root,
                detail: "mounted, but it has no instances directory".into(),
            });
        }
    }
    if !root.join("events/block/block_rq_issue").is_dir()
        || !root.join("events/block/block_bio_queue").is_dir()
    {
        return Err(PrereqError::BlockEventsMissing { path: root });
    }
    Ok(root)
}

/// Fails unless the kernel supports filesystem type `fs`, loading its module if needed.
pub fn check_kernel_fs(fs: &'static str) -> Result<(), PrereqError> {
    if kernel_has_fs(fs) {
        return Ok(());
    }
    let detail = match crate::cmd::run("modprobe", [fs]) {
        Ok(_) if kernel_has_fs(fs) => return Ok(()),
        Ok(_) => "loaded, but still not listed".to_string(),
        Err(e) => e.to_string(),
    };
    Err(PrereqError::FsUnsupported { fs, detail })
}

fn kernel_has_fs(fs: &str) -> bool {
    std::fs::read_to_string("/proc/filesystems").is_ok_and(|list| {
        list.lines()
            .any(|l| l.split_whitespace().last() == Some(fs))
    })
}

/// Everything [`crate::ScratchFs::create`] needs for `kind`: root, loop driver, the
/// filesystem's tools and kernel support.
pub fn check_fs(kind: FsKind) -> Result<(), PrereqError> {
    check_root()?;
    check_loop_control()?;
    for tool in kind.tools() {
        crate::tools::find_tool(tool)?;
    }
    check_kernel_fs(kind.fs_type())
}

/// Everything a traced run on each of `kinds` needs: [`check_fs`] for each, plus tracefs.
pub fn check_all(kinds: &[FsKind]) -> Result<(), PrereqError> {
    check_root()?;
    for &kind in kinds {
        check_fs(kind)?;
    }
    ensure_tracefs().map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tool_is_a_prerequisite_error() {
        let err: PrereqError = find_tool("mkfs.nonexistent-joj").unwrap_err().into();
        assert!(matches!(err, PrereqError::ToolMissing(ToolMissing { .. })));
    }
}
