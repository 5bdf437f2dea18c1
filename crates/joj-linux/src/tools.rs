//! Finding the filesystem tools joj runs (mkfs, debugfs, xfs_db, btrfs, modprobe), and the
//! Debian package that provides each.

use std::path::{Path, PathBuf};

/// Directories searched after `$PATH`: root's tools live in `sbin`, which a non-login `$PATH`
/// often lacks.
const EXTRA_TOOL_DIRS: [&str; 4] = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"];

/// A tool's output joj cannot read: what was expected, and the text it found instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} in `{near}`")]
pub struct OutputUnparsable {
    pub what: &'static str,
    pub near: String,
}

/// A tool is not installed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{tool}` is not installed (not in $PATH nor /usr/sbin, /sbin); fix: apt-get install {package}"
)]
pub struct ToolMissing {
    pub tool: String,
    pub package: &'static str,
}

/// The Debian package that provides `tool`.
pub fn package_for(tool: &str) -> &'static str {
    match tool {
        "mkfs.ext4" | "debugfs" | "dumpe2fs" => "e2fsprogs",
        "mkfs.xfs" | "xfs_db" => "xfsprogs",
        "mkfs.btrfs" | "btrfs" => "btrfs-progs",
        "modprobe" => "kmod",
        "strace" => "strace",
        _ => "the package that provides it",
    }
}

/// Finds `tool` in `$PATH`, then in the sbin/bin directories.
pub fn find_tool(tool: &str) -> Result<PathBuf, ToolMissing> {
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path_var)
        .chain(EXTRA_TOOL_DIRS.iter().map(PathBuf::from))
        .map(|dir| dir.join(tool))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| ToolMissing {
            tool: tool.to_string(),
            package: package_for(tool),
        })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_tool_error_names_the_package_to_install() {
        let err = find_tool("mkfs.nonexistent-joj").unwrap_err();
        assert_eq!(err.tool, "mkfs.nonexistent-joj");
        assert_eq!(package_for("xfs_db"), "xfsprogs");
        assert!(err.to_string().contains("apt-get install"));
    }
}
