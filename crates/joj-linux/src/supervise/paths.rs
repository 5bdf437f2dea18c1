//! Paths as the command names them and where joj reaches them: [`TracedDir`] (the command's
//! directory, and the overlay's upper directory that holds what it wrote there) and
//! [`normalized`].

use std::path::{Component, Path, PathBuf};

/// Where the files the command works on are: `command_root` as the command names it,
/// `joj_root` where joj opens it (the same directory without an overlay; the overlay's upper
/// directory with one).
#[derive(Debug, Clone)]
pub struct TracedDir {
    pub command_root: PathBuf,
    pub joj_root: PathBuf,
}

impl TracedDir {
    /// The command and joj see `dir` alike.
    pub fn same(dir: &Path) -> TracedDir {
        TracedDir {
            command_root: dir.to_path_buf(),
            joj_root: dir.to_path_buf(),
        }
    }

    /// Whether the command's `path` (absolute, normalized) is in the traced directory.
    pub fn contains(&self, path: &Path) -> bool {
        path.starts_with(&self.command_root)
    }

    /// Whether the command sees the directory through an overlay or a copy (joj reaches it
    /// elsewhere).
    pub fn is_overlay(&self) -> bool {
        self.command_root != self.joj_root
    }

    /// Where joj reaches the command's `path`.
    pub fn joj_path(&self, path: &Path) -> PathBuf {
        match path.strip_prefix(&self.command_root) {
            Ok(rest) if rest.as_os_str().is_empty() => self.joj_root.clone(),
            Ok(rest) => self.joj_root.join(rest),
            Err(_) => path.to_path_buf(),
        }
    }
}

/// `.` and `..` taken out of an absolute path, without following symlinks (SQLite names its
/// files by paths it resolved itself).
pub(crate) fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_maps_the_commands_paths_to_joj_and_nothing_else() {
        let s = TracedDir {
            command_root: "/home/u/app".into(),
            joj_root: "/run/joj/x/upper".into(),
        };
        assert!(s.contains(Path::new("/home/u/app/db/a.db")));
        assert!(!s.contains(Path::new("/home/u/application")));
        assert_eq!(
            s.joj_path(Path::new("/home/u/app/db/a.db")),
            Path::new("/run/joj/x/upper/db/a.db")
        );
        assert_eq!(
            s.joj_path(Path::new("/home/u/app")),
            Path::new("/run/joj/x/upper")
        );
        assert_eq!(s.joj_path(Path::new("/etc/x")), Path::new("/etc/x"));
        assert_eq!(normalized(Path::new("/a/./b/../c//d")), Path::new("/a/c/d"));
    }
}
