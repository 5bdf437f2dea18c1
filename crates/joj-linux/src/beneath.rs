//! Paths inside a mounted image joj did not make itself (a crash state, a saved log's image),
//! or inside a folder someone else owns (the results `joj report` reads), resolved beneath
//! its root only.
//!
//! Such an image may have been crafted: a symbolic link, a `..` or a filesystem mounted on a
//! directory inside it could lead a path that starts at the mount point somewhere else on the
//! host; a folder's owner may swap a name for a link between the moment joj lists it and the
//! moment it reads it. [`Beneath`] holds a descriptor of the root and resolves every path from
//! it with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)`, plus
//! `RESOLVE_NO_XDEV` for an image ([`Mounts`]), one component at a time, so that a refusal
//! names the component that caused it: a path with `..` or outside the root, a symbolic link
//! (wherever it points), a crossing into another mount, or a component of the wrong type (a
//! FIFO, socket or device node where a file is read, a file where a directory is walked
//! through).
//!
//! Invariants: nothing here follows a link or leaves the root; a file is opened only if it is a
//! regular file, checked on the open descriptor (a FIFO is opened `O_NONBLOCK`, so even a race
//! that swapped one in could not make the open wait); nothing is created, written or removed.

use std::ffi::OsString;
use std::fs::File;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// How every lookup resolves: beneath the descriptor, no symbolic or magic links.
const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);

/// Whether a lookup may enter a filesystem mounted beneath the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mounts {
    /// Refused ([`BeneathError::Crossing`]): nothing mounted inside an image is part of it.
    Stay,
    /// Entered: a folder's subfolders may be mounts, which only root makes.
    Cross,
}

/// Most bytes of a symbolic link's target quoted in a message.
const TARGET_QUOTED_BYTES: usize = 200;

/// What is at a path beneath the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// Nothing (or a directory on the way is missing).
    Missing,
    /// A regular file of `bytes` bytes.
    File {
        bytes: u64,
    },
    Directory,
}

/// A path that would leave the root, or that leads to something other than what was asked.
/// `path` is always relative to the root, as the image names it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BeneathError {
    #[error(
        "{} is not a path inside {}: it is outside it or climbs out with `..`",
        .path.display(), .root.display()
    )]
    Outside { path: PathBuf, root: PathBuf },
    #[error("{} is a symbolic link (to {target}), which is not followed", .path.display())]
    Link { path: PathBuf, target: String },
    #[error("{} is a {found}, where a {wanted} is expected", .path.display())]
    WrongType {
        path: PathBuf,
        found: &'static str,
        wanted: &'static str,
    },
    #[error("{} is the mount point of another filesystem, which is not entered", .path.display())]
    Crossing { path: PathBuf },
    #[error("looking up {} beneath {}: {source}", .path.display(), .root.display())]
    Io {
        path: PathBuf,
        root: PathBuf,
        source: std::io::Error,
    },
}

/// A mounted image's root, from which every path is resolved beneath it.
#[derive(Debug)]
pub struct Beneath {
    root: PathBuf,
    dir: OwnedFd,
    resolve: ResolveFlags,
}

fn type_name(t: FileType) -> &'static str {
    match t {
        FileType::RegularFile => "regular file",
        FileType::Directory => "directory",
        FileType::Symlink => "symbolic link",
        FileType::Fifo => "FIFO",
        FileType::Socket => "socket",
        FileType::CharacterDevice => "character device",
        FileType::BlockDevice => "block device",
        _ => "file of unknown type",
    }
}

impl Beneath {
    /// The root `root` (a directory joj made, e.g. a mount point), opened as a descriptor; no
    /// lookup leaves its filesystem.
    pub fn open_root(root: &Path) -> Result<Beneath, BeneathError> {
        let dir = rustix::fs::open(
            root,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| BeneathError::Io {
            path: PathBuf::new(),
            root: root.to_path_buf(),
            source: e.into(),
        })?;
        Ok(Beneath::from_dir(root.to_path_buf(), dir, Mounts::Stay))
    }

    /// The folder open at `dir` (a descriptor held since it was listed, so that a name on the
    /// way swapped since leads nowhere), shown as `root`.
    pub fn from_dir(root: PathBuf, dir: OwnedFd, mounts: Mounts) -> Beneath {
        let resolve = match mounts {
            Mounts::Stay => RESOLVE.union(ResolveFlags::NO_XDEV),
            Mounts::Cross => RESOLVE,
        };
        Beneath { root, dir, resolve }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Another handle of the same root (its descriptor duplicated).
    pub fn try_clone(&self) -> std::io::Result<Beneath> {
        Ok(Beneath {
            root: self.root.clone(),
            dir: self.dir.try_clone()?,
            resolve: self.resolve,
        })
    }

    /// The directory at `rel`, as a root of its own (resolving as this one does).
    pub fn open_dir(&self, rel: &Path) -> Result<Beneath, BeneathError> {
        let rel = self.relative(rel)?;
        match self.walk(&rel)? {
            Some((fd, FileType::Directory, _)) => Ok(Beneath {
                root: self.root.join(&rel),
                dir: fd,
                resolve: self.resolve,
            }),
            None => Err(self.io(&rel, Errno::NOENT)),
            Some((_, t, _)) => Err(BeneathError::WrongType {
                path: rel,
                found: type_name(t),
                wanted: "directory",
            }),
        }
    }

    /// `path` relative to the root, by its text alone: an absolute path must start with the
    /// root, and no component may be `..`. (`.` components are dropped.)
    pub fn relative(&self, path: &Path) -> Result<PathBuf, BeneathError> {
        let outside = || BeneathError::Outside {
            path: path.to_path_buf(),
            root: self.root.clone(),
        };
        let rest = if path.is_absolute() {
            path.strip_prefix(&self.root).map_err(|_| outside())?
        } else {
            path
        };
        let mut rel = PathBuf::new();
        for c in rest.components() {
            match c {
                Component::Normal(n) => rel.push(n),
                Component::CurDir => {}
                Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                    return Err(outside());
                }
            }
        }
        Ok(rel)
    }

    /// The root joined with `rel` (for a caller that must hand a path to a library): safe to
    /// use only for a path [`Beneath::entry`] accepted, on a mount that follows no links.
    pub fn absolute(&self, rel: &Path) -> PathBuf {
        self.root.join(rel)
    }

    fn io(&self, rel: &Path, e: Errno) -> BeneathError {
        BeneathError::Io {
            path: rel.to_path_buf(),
            root: self.root.clone(),
            source: e.into(),
        }
    }

    /// Opens each component of `rel` in turn (`O_PATH`, not following a final link), checking
    /// each is a directory before walking into it; `None` when one is missing. The last
    /// descriptor and its type.
    fn walk(&self, rel: &Path) -> Result<Option<(OwnedFd, FileType, u64)>, BeneathError> {
        let rel = self.relative(rel)?;
        let mut cur: Option<OwnedFd> = None;
        let mut so_far = PathBuf::new();
        let mut last = None;
        for c in rel.components() {
            so_far.push(c);
            let at = match &cur {
                Some(fd) => rustix::fs::openat2(
                    fd,
                    c.as_os_str(),
                    OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                    self.resolve,
                ),
                None => rustix::fs::openat2(
                    &self.dir,
                    c.as_os_str(),
                    OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                    self.resolve,
                ),
            };
            let fd = match at {
                Ok(fd) => fd,
                Err(Errno::NOENT) => return Ok(None),
                Err(Errno::XDEV) => return Err(BeneathError::Crossing { path: so_far }),
                // A link the flags refused before handing it back (not expected with O_PATH |
                // O_NOFOLLOW, which return the link itself).
                Err(Errno::LOOP) => {
                    return Err(BeneathError::Link {
                        path: so_far,
                        target: "?".into(),
                    });
                }
                Err(e) => return Err(self.io(&so_far, e)),
            };
            let st = rustix::fs::fstat(&fd).map_err(|e| self.io(&so_far, e))?;
            let t = FileType::from_raw_mode(st.st_mode);
            if t == FileType::Symlink {
                let target = rustix::fs::readlinkat(&fd, "", Vec::new())
                    .map(|t| {
                        let b = t.as_bytes();
                        let shown = String::from_utf8_lossy(&b[..b.len().min(TARGET_QUOTED_BYTES)]);
                        if b.len() > TARGET_QUOTED_BYTES {
                            format!("{shown}…")
                        } else {
                            shown.into_owned()
                        }
                    })
                    .unwrap_or_else(|_| "?".into());
                return Err(BeneathError::Link {
                    path: so_far,
                    target,
                });
            }
            last = Some((t, st.st_size.max(0) as u64));
            cur = Some(fd);
            if so_far != rel && t != FileType::Directory {
                return Err(BeneathError::WrongType {
                    path: so_far,
                    found: type_name(t),
                    wanted: "directory",
                });
            }
        }
        Ok(match (cur, last) {
            (Some(fd), Some((t, bytes))) => Some((fd, t, bytes)),
            // The root itself.
            _ => {
                let fd = self.dir.try_clone().map_err(|e| BeneathError::Io {
                    path: PathBuf::new(),
                    root: self.root.clone(),
                    source: e,
                })?;
                Some((fd, FileType::Directory, 0))
            }
        })
    }

    /// What is at `rel`: missing, a regular file or a directory; anything else (a link, a
    /// FIFO, a socket, a device node, a mount crossing, a way out) is an error.
    pub fn entry(&self, rel: &Path) -> Result<Entry, BeneathError> {
        match self.walk(rel)? {
            None => Ok(Entry::Missing),
            Some((_, FileType::RegularFile, bytes)) => Ok(Entry::File { bytes }),
            Some((_, FileType::Directory, _)) => Ok(Entry::Directory),
            Some((_, t, _)) => Err(BeneathError::WrongType {
                path: self.relative(rel)?,
                found: type_name(t),
                wanted: "regular file or directory",
            }),
        }
    }

    /// Opens the regular file at `rel` for reading; anything else is refused.
    pub fn open_file(&self, rel: &Path) -> Result<File, BeneathError> {
        let rel = self.relative(rel)?;
        match self.entry(&rel)? {
            Entry::File { .. } => {}
            Entry::Missing => {
                return Err(self.io(&rel, Errno::NOENT));
            }
            Entry::Directory => {
                return Err(BeneathError::WrongType {
                    path: rel,
                    found: "directory",
                    wanted: "regular file",
                });
            }
        }
        let fd = rustix::fs::openat2(
            &self.dir,
            &rel,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
            self.resolve,
        )
        .map_err(|e| self.io(&rel, e))?;
        let st = rustix::fs::fstat(&fd).map_err(|e| self.io(&rel, e))?;
        let t = FileType::from_raw_mode(st.st_mode);
        if t != FileType::RegularFile {
            return Err(BeneathError::WrongType {
                path: rel,
                found: type_name(t),
                wanted: "regular file",
            });
        }
        rustix::fs::fcntl_setfl(&fd, OFlags::empty()).map_err(|e| self.io(&rel, e))?;
        Ok(File::from(fd))
    }

    /// The names in the directory at `rel` (without `.` and `..`), sorted.
    pub fn read_dir(&self, rel: &Path) -> Result<Vec<OsString>, BeneathError> {
        let rel = self.relative(rel)?;
        if self.entry(&rel)? != Entry::Directory {
            return Err(BeneathError::WrongType {
                path: rel,
                found: "file or nothing",
                wanted: "directory",
            });
        }
        let at = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel.as_path()
        };
        let fd = rustix::fs::openat2(
            &self.dir,
            at,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
            self.resolve,
        )
        .map_err(|e| self.io(&rel, e))?;
        let dir = rustix::fs::Dir::new(fd).map_err(|e| self.io(&rel, e))?;
        let mut names = Vec::new();
        for entry in dir {
            let entry = entry.map_err(|e| self.io(&rel, e))?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push(OsString::from(std::ffi::OsStr::from_bytes(name)));
            }
        }
        names.sort();
        Ok(names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn tree() -> (tempfile::TempDir, tempfile::TempDir) {
        let root = tempfile::tempdir().unwrap();
        let host = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("d")).unwrap();
        std::fs::write(root.path().join("d/f"), b"12345").unwrap();
        std::fs::write(host.path().join("secret"), b"host").unwrap();
        symlink(host.path(), root.path().join("out")).unwrap();
        symlink("f", root.path().join("d/inner-link")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            root.path().join("d/fifo"),
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        (root, host)
    }

    #[test]
    fn regular_files_and_directories_are_found_and_missing_ones_are_missing() {
        let (root, _host) = tree();
        let b = Beneath::open_root(root.path()).unwrap();
        assert_eq!(b.entry(Path::new("d/f")).unwrap(), Entry::File { bytes: 5 });
        assert_eq!(b.entry(Path::new("d")).unwrap(), Entry::Directory);
        assert_eq!(b.entry(Path::new("")).unwrap(), Entry::Directory);
        assert_eq!(b.entry(Path::new("d/nope")).unwrap(), Entry::Missing);
        assert_eq!(b.entry(Path::new("nope/f")).unwrap(), Entry::Missing);
        let abs = root.path().join("d/./f");
        assert_eq!(b.entry(&abs).unwrap(), Entry::File { bytes: 5 });
        let mut s = String::new();
        std::io::Read::read_to_string(&mut b.open_file(Path::new("d/f")).unwrap(), &mut s).unwrap();
        assert_eq!(s, "12345");
        assert_eq!(
            b.read_dir(Path::new("d")).unwrap(),
            ["f", "fifo", "inner-link"].map(OsString::from)
        );
    }

    #[test]
    fn links_climbs_and_special_files_are_refused_naming_the_component() {
        let (root, host) = tree();
        let b = Beneath::open_root(root.path()).unwrap();
        match b.entry(Path::new("out/secret")) {
            Err(BeneathError::Link { path, target }) => {
                assert_eq!(path, Path::new("out"));
                assert_eq!(target, host.path().display().to_string());
            }
            other => panic!("{other:?}"),
        }
        // Even a link that stays inside is not followed.
        assert!(matches!(
            b.open_file(Path::new("d/inner-link")),
            Err(BeneathError::Link { .. })
        ));
        for climb in ["../x", "d/../../x"] {
            assert!(matches!(
                b.entry(Path::new(climb)),
                Err(BeneathError::Outside { .. })
            ));
        }
        assert!(matches!(
            b.entry(&host.path().join("secret")),
            Err(BeneathError::Outside { .. })
        ));
        match b.open_file(Path::new("d/fifo")) {
            Err(e @ BeneathError::WrongType { .. }) => assert!(e.to_string().contains("FIFO")),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            b.entry(Path::new("d/f/x")),
            Err(BeneathError::WrongType {
                wanted: "directory",
                ..
            })
        ));
    }

    #[test]
    fn a_folder_beneath_is_a_root_of_its_own_and_a_link_to_one_is_refused() {
        let (root, _host) = tree();
        let fd = rustix::fs::open(
            root.path(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .unwrap();
        let b = Beneath::from_dir(root.path().to_path_buf(), fd, Mounts::Cross);
        let d = b.open_dir(Path::new("d")).unwrap();
        assert_eq!(d.root(), root.path().join("d"));
        assert_eq!(d.entry(Path::new("f")).unwrap(), Entry::File { bytes: 5 });
        assert!(matches!(
            d.entry(Path::new("../out")),
            Err(BeneathError::Outside { .. })
        ));
        assert!(matches!(
            b.open_dir(Path::new("out")),
            Err(BeneathError::Link { .. })
        ));
        assert!(matches!(
            b.open_dir(Path::new("d/f")),
            Err(BeneathError::WrongType {
                wanted: "directory",
                ..
            })
        ));
        let c = d.try_clone().unwrap();
        assert_eq!(c.entry(Path::new("f")).unwrap(), Entry::File { bytes: 5 });
    }
}
