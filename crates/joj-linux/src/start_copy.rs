//! A small starting directory copied onto the traced filesystem before the command runs
//! (docs/measurement.md, "The command's directory"): the command then sees it through a bind
//! mount of the copy instead of an overlay, so each of its calls costs what it costs on the
//! filesystem itself. An overlay adds its own work to every create, unlink, open and write
//! (measured: a DELETE-mode commit, which creates and unlinks its journal, ran 10–20 % slower
//! through one), which is not the program's.
//!
//! Only a directory that a copy shows exactly as it is, from the command's side, is copied:
//! regular files, directories and symbolic links (copied as links, not followed), no file with
//! another hard link (two copies would no longer be one file), no extended attribute other than
//! an SELinux label (an ACL or a file capability would be lost), at most [`MAX_ENTRIES`] entries
//! and [`MAX_BYTES`] of files, [`MAX_DEPTH`] directories deep. Anything else is left to the
//! overlay, and the reason is given.
//!
//! Invariants: the source is read through descriptors, each opened relative to its directory's
//! with `O_NOFOLLOW` and checked on the descriptor against what was listed (a name swapped for
//! another file or a link meanwhile stops the copy); a file is read no further than the size
//! listed, plus one byte to see that it grew; nothing of the source is written. The copy is
//! made in `dst`, which must not exist; on any refusal the partial copy is removed.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Timespec, Timestamps};

/// The most entries (files, directories, links) a copied directory holds.
pub const MAX_ENTRIES: u64 = 4096;
/// The most bytes of regular files a copied directory holds (sparse files count at their size).
pub const MAX_BYTES: u64 = 64 << 20;
/// The deepest a copied directory's tree goes.
pub const MAX_DEPTH: usize = 32;

/// What was copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Copied {
    /// Files, directories and links below the directory.
    pub entries: u64,
    /// Bytes of regular files.
    pub bytes: u64,
}

/// Why the directory was not copied (the command then sees it through an overlay).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NotCopied {
    #[error("it holds more than {MAX_ENTRIES} entries or {} MiB of files", MAX_BYTES >> 20)]
    TooLarge,
    #[error("it is more than {MAX_DEPTH} directories deep")]
    TooDeep,
    #[error("{} is not a regular file, directory or symbolic link", .0.display())]
    Special(PathBuf),
    #[error("{} has another hard link", .0.display())]
    HardLinked(PathBuf),
    #[error("{} has extended attributes", .0.display())]
    Xattrs(PathBuf),
    #[error("{} changed while it was copied", .0.display())]
    Changed(PathBuf),
    #[error("{} is another filesystem mounted below the directory", .0.display())]
    Mounted(PathBuf),
    #[error("--dir {} leads through a symbolic link of the directory", .0.display())]
    DirThroughLink(PathBuf),
    #[error("{what} {}: {source}", .path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn io_err(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> NotCopied {
    let path = path.to_path_buf();
    move |source| NotCopied::Io { what, path, source }
}

/// Copy the directory open at `src` (any descriptor of it, `O_PATH` will do) to `dst`, which is
/// created; its owner, mode and modification time are the source's. The tree is listed and
/// checked first, so a directory too large or unfit is refused before anything is written; the
/// copy checks again as it goes. On a refusal, `dst` is removed.
pub fn copy_small(src: &OwnedFd, dst: &Path) -> Result<Copied, NotCopied> {
    let open = || {
        rustix::fs::openat(
            src,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| io_err("opening", Path::new("."))(e.into()))
    };
    let root = open()?;
    no_xattrs(&root, Path::new("."))?;
    let dev = rustix::fs::fstat(&root)
        .map_err(|e| io_err("reading", Path::new("."))(e.into()))?
        .st_dev;
    let walk = Walk { dev };
    walk.copy_dir(&root, Path::new(""), None, 0, &mut Copied::default())?;
    let dir = open()?;
    let mut copied = Copied::default();
    let made = std::fs::DirBuilder::new()
        .mode(0o700)
        .create(dst)
        .map_err(io_err("creating", dst));
    let result = made.and_then(|()| {
        walk.copy_dir(&dir, Path::new(""), Some(dst), 0, &mut copied)?;
        let st =
            rustix::fs::fstat(&dir).map_err(|e| io_err("reading", Path::new("."))(e.into()))?;
        set_attributes(dst, &st, false)
    });
    match result {
        Ok(()) => Ok(copied),
        Err(e) => {
            let _ = std::fs::remove_dir_all(dst);
            Err(e)
        }
    }
}

/// What every entry is checked against: the device of the directory (an entry on another is a
/// filesystem mounted below it since joj checked, which the copy must not read).
struct Walk {
    dev: u64,
}

impl Walk {
    /// Copy the entries of the directory open at `dir` (`rel` below the source) into `to`; with
    /// no `to`, only list and check them.
    fn copy_dir(
        &self,
        dir: &OwnedFd,
        rel: &Path,
        to: Option<&Path>,
        depth: usize,
        copied: &mut Copied,
    ) -> Result<(), NotCopied> {
        if depth >= MAX_DEPTH {
            return Err(NotCopied::TooDeep);
        }
        let listed =
            rustix::fs::Dir::read_from(dir).map_err(|e| io_err("listing", rel)(e.into()))?;
        for entry in listed {
            let entry = entry.map_err(|e| io_err("listing", rel)(e.into()))?;
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            let name = std::ffi::OsStr::from_bytes(name.to_bytes());
            let here = rel.join(name);
            copied.entries += 1;
            if copied.entries > MAX_ENTRIES {
                return Err(NotCopied::TooLarge);
            }
            let st = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                .map_err(|e| io_err("reading", &here)(e.into()))?;
            if st.st_dev != self.dev {
                return Err(NotCopied::Mounted(here));
            }
            let target = to.map(|t| t.join(name));
            match FileType::from_raw_mode(st.st_mode) {
                FileType::Directory => {
                    let sub = open_checked(dir, name, &st, &here, OFlags::DIRECTORY)?;
                    no_xattrs(&sub, &here)?;
                    if let Some(target) = &target {
                        std::fs::DirBuilder::new()
                            .mode(0o700)
                            .create(target)
                            .map_err(io_err("creating", target))?;
                    }
                    self.copy_dir(&sub, &here, target.as_deref(), depth + 1, copied)?;
                    if let Some(target) = &target {
                        set_attributes(target, &st, false)?;
                    }
                }
                FileType::RegularFile => {
                    if st.st_nlink > 1 {
                        return Err(NotCopied::HardLinked(here));
                    }
                    let size = st.st_size as u64;
                    copied.bytes += size;
                    if copied.bytes > MAX_BYTES {
                        return Err(NotCopied::TooLarge);
                    }
                    // O_NONBLOCK: a FIFO swapped in since the listing cannot make the open wait.
                    let fd =
                        open_checked(dir, name, &st, &here, OFlags::NONBLOCK | OFlags::NOCTTY)?;
                    no_xattrs(&fd, &here)?;
                    if let Some(target) = &target {
                        copy_file(fd, &st, &here, target)?;
                    }
                }
                FileType::Symlink => {
                    if let Some(target) = &target {
                        let link = rustix::fs::readlinkat(dir, name, Vec::new())
                            .map_err(|e| io_err("reading the link", &here)(e.into()))?;
                        let link = std::ffi::OsStr::from_bytes(link.to_bytes());
                        std::os::unix::fs::symlink(link, target)
                            .map_err(io_err("creating", target))?;
                        set_attributes(target, &st, true)?;
                    }
                }
                _ => return Err(NotCopied::Special(here)),
            }
        }
        Ok(())
    }
}

/// The entry `name` of `dir`, listed as `st`, opened read-only without following a link (with
/// `flags` besides), and checked to be that very file.
fn open_checked(
    dir: &OwnedFd,
    name: &std::ffi::OsStr,
    st: &rustix::fs::Stat,
    here: &Path,
    flags: OFlags,
) -> Result<OwnedFd, NotCopied> {
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | flags,
        Mode::empty(),
    )
    .map_err(|e| io_err("opening", here)(e.into()))?;
    same_file(&fd, st, here)?;
    Ok(fd)
}

/// Make the directory `rel` (relative, no `..`: `--dir`, checked by the caller) inside the copy
/// `root`, following no symbolic link the copy holds: a `--dir` through one is refused (the
/// overlay's upper directory has no links, so it makes a directory there instead).
pub fn make_dir_beneath(root: &Path, rel: &Path) -> Result<(), NotCopied> {
    let open = |at: &OwnedFd, name: &std::ffi::OsStr| {
        rustix::fs::openat(
            at,
            name,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
    };
    let mut at = rustix::fs::open(
        root,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io_err("opening", root)(e.into()))?;
    for c in rel.components() {
        let std::path::Component::Normal(name) = c else {
            continue;
        };
        at = match open(&at, name) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => {
                rustix::fs::mkdirat(&at, name, Mode::from_raw_mode(0o755))
                    .map_err(|e| io_err("creating", rel)(e.into()))?;
                open(&at, name).map_err(|e| io_err("opening", rel)(e.into()))?
            }
            Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => {
                return Err(NotCopied::DirThroughLink(rel.to_path_buf()));
            }
            Err(e) => return Err(io_err("opening", rel)(e.into())),
        };
    }
    Ok(())
}

/// The descriptor names the file `st` was read from (not one swapped in since).
fn same_file(fd: &OwnedFd, st: &rustix::fs::Stat, here: &Path) -> Result<(), NotCopied> {
    let now = rustix::fs::fstat(fd).map_err(|e| io_err("reading", here)(e.into()))?;
    if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) {
        return Err(NotCopied::Changed(here.to_path_buf()));
    }
    Ok(())
}

/// Refuse a file or directory, open at `fd`, with an extended attribute a copy would lose (an
/// ACL, a file capability; an SELinux label is made anew by the filesystem the copy is on).
/// Read on the descriptor checked to be the listed file. (A symbolic link can carry none a
/// program sees: `user.` attributes are refused on links.)
fn no_xattrs(fd: &OwnedFd, here: &Path) -> Result<(), NotCopied> {
    let failed = |e: rustix::io::Errno| io_err("reading the attributes of", here)(e.into());
    // The names' length first: most files have none, and need no buffer.
    let len = match rustix::fs::flistxattr_query(fd) {
        Ok(n) => n,
        Err(rustix::io::Errno::NOTSUP) => 0,
        Err(e) => return Err(failed(e)),
    };
    if len == 0 {
        return Ok(());
    }
    // An SELinux label alone is 17 bytes; more than a page of names is certainly more.
    if len > 4096 {
        return Err(NotCopied::Xattrs(here.to_path_buf()));
    }
    let mut names = vec![0u8; len];
    let n = match rustix::fs::flistxattr(fd, &mut names) {
        Ok(n) => n,
        // Grown since the length was read: not only a label.
        Err(rustix::io::Errno::RANGE) => return Err(NotCopied::Xattrs(here.to_path_buf())),
        Err(e) => return Err(failed(e)),
    };
    let other = names[..n]
        .split(|b| *b == 0)
        .any(|x| !x.is_empty() && x != b"security.selinux");
    if other {
        return Err(NotCopied::Xattrs(here.to_path_buf()));
    }
    Ok(())
}

/// Copy the regular file open at `fd`, listed as `st`, to `target`.
fn copy_file(
    fd: OwnedFd,
    st: &rustix::fs::Stat,
    here: &Path,
    target: &Path,
) -> Result<(), NotCopied> {
    let size = st.st_size as u64;
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(target)
        .map_err(io_err("creating", target))?;
    let n = std::io::copy(&mut File::from(fd).take(size + 1), &mut out)
        .map_err(io_err("copying", here))?;
    if n != size {
        return Err(NotCopied::Changed(here.to_path_buf()));
    }
    out.flush().map_err(io_err("copying", here))?;
    drop(out);
    set_attributes(target, st, false)
}

/// Give `path` the owner, mode (not of a link) and modification time of `st`; its access time
/// is a second from now, so that reading it does not update it (relatime) and write to the
/// traced filesystem where the command's own directory would not have been.
fn set_attributes(path: &Path, st: &rustix::fs::Stat, link: bool) -> Result<(), NotCopied> {
    let no_follow = if link {
        AtFlags::SYMLINK_NOFOLLOW
    } else {
        AtFlags::empty()
    };
    let fail = |what| move |e: rustix::io::Errno| io_err(what, path)(e.into());
    rustix::fs::chownat(
        rustix::fs::CWD,
        path,
        Some(rustix::fs::Uid::from_raw(st.st_uid)),
        Some(rustix::fs::Gid::from_raw(st.st_gid)),
        no_follow,
    )
    .map_err(fail("giving an owner to"))?;
    if !link {
        // After the owner: chown clears set-user-ID and set-group-ID bits.
        rustix::fs::chmod(path, Mode::from_raw_mode(st.st_mode & 0o7777))
            .map_err(fail("setting the mode of"))?;
    }
    // A second from now: after the change time this call sets. Under relatime a read updates
    // an access time not later than the modification or change time — an inode write on the
    // traced filesystem in the window, where the command's own directory would have none.
    let soon = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        + std::time::Duration::from_secs(1);
    let times = Timestamps {
        last_access: Timespec {
            tv_sec: soon.as_secs() as _,
            tv_nsec: soon.subsec_nanos() as _,
        },
        last_modification: Timespec {
            tv_sec: st.st_mtime,
            tv_nsec: st.st_mtime_nsec as _,
        },
    };
    rustix::fs::utimensat(rustix::fs::CWD, path, &times, no_follow)
        .map_err(fail("setting the times of"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(dir: &Path) -> OwnedFd {
        rustix::fs::open(
            dir,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .unwrap()
    }

    #[test]
    fn a_small_tree_is_copied_with_its_links_modes_and_times() {
        let src = tempfile::tempdir().unwrap();
        let s = src.path();
        std::fs::create_dir(s.join("sub")).unwrap();
        std::fs::write(s.join("sub/a.txt"), b"hello").unwrap();
        std::fs::write(s.join("run.sh"), b"#!/bin/sh\n").unwrap();
        std::fs::set_permissions(
            s.join("run.sh"),
            std::os::unix::fs::PermissionsExt::from_mode(0o750),
        )
        .unwrap();
        std::os::unix::fs::symlink("/etc/hostname", s.join("out")).unwrap();
        let dst_parent = tempfile::tempdir().unwrap();
        let dst = dst_parent.path().join("copy");
        let c = copy_small(&open(s), &dst).unwrap();
        assert_eq!(
            c,
            Copied {
                entries: 4,
                bytes: 15
            }
        );
        assert_eq!(std::fs::read(dst.join("sub/a.txt")).unwrap(), b"hello");
        assert_eq!(
            std::fs::read_link(dst.join("out")).unwrap(),
            Path::new("/etc/hostname")
        );
        let mode = |p: &Path| {
            std::os::unix::fs::PermissionsExt::mode(
                &std::fs::symlink_metadata(p).unwrap().permissions(),
            ) & 0o7777
        };
        assert_eq!(mode(&dst.join("run.sh")), 0o750);
        let mtime = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
        assert_eq!(mtime(&dst.join("sub/a.txt")), mtime(&s.join("sub/a.txt")));
        assert_eq!(mtime(&dst.join("sub")), mtime(&s.join("sub")));
    }

    #[test]
    fn a_fifo_a_hard_link_or_too_many_bytes_leave_it_to_the_overlay_and_nothing_behind() {
        let dst_parent = tempfile::tempdir().unwrap();
        let dst = dst_parent.path().join("copy");
        let src = tempfile::tempdir().unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            src.path().join("pipe"),
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let e = copy_small(&open(src.path()), &dst).unwrap_err();
        assert!(
            matches!(&e, NotCopied::Special(p) if p == Path::new("pipe")),
            "{e}"
        );
        assert!(!dst.exists(), "the partial copy is removed");

        let src = tempfile::tempdir().unwrap();
        std::fs::write(src.path().join("a"), b"x").unwrap();
        std::fs::hard_link(src.path().join("a"), src.path().join("b")).unwrap();
        let e = copy_small(&open(src.path()), &dst).unwrap_err();
        assert!(matches!(e, NotCopied::HardLinked(_)), "{e}");
        assert!(!dst.exists());

        let src = tempfile::tempdir().unwrap();
        let big = File::create(src.path().join("sparse")).unwrap();
        big.set_len(MAX_BYTES + 1).unwrap();
        let e = copy_small(&open(src.path()), &dst).unwrap_err();
        assert!(matches!(e, NotCopied::TooLarge), "{e}");
        assert!(!dst.exists());
    }

    #[test]
    fn too_many_entries_too_deep_an_attribute_or_a_dir_through_a_link_are_refused() {
        let dst_parent = tempfile::tempdir().unwrap();
        let dst = dst_parent.path().join("copy");
        let src = tempfile::tempdir().unwrap();
        for i in 0..=MAX_ENTRIES {
            std::fs::write(src.path().join(i.to_string()), b"").unwrap();
        }
        let e = copy_small(&open(src.path()), &dst).unwrap_err();
        assert!(matches!(e, NotCopied::TooLarge), "{e}");
        assert!(!dst.exists(), "refused before anything is written");

        let src = tempfile::tempdir().unwrap();
        let mut deep = src.path().to_path_buf();
        for _ in 0..=MAX_DEPTH {
            deep.push("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        let e = copy_small(&open(src.path()), &dst).unwrap_err();
        assert!(matches!(e, NotCopied::TooDeep), "{e}");

        let src = tempfile::tempdir().unwrap();
        std::fs::write(src.path().join("f"), b"x").unwrap();
        match rustix::fs::setxattr(
            src.path().join("f"),
            "user.joj",
            b"1",
            rustix::fs::XattrFlags::empty(),
        ) {
            Ok(()) => {
                let e = copy_small(&open(src.path()), &dst).unwrap_err();
                assert!(
                    matches!(&e, NotCopied::Xattrs(p) if p == Path::new("f")),
                    "{e}"
                );
            }
            // A filesystem without user attributes cannot hold the case.
            Err(rustix::io::Errno::NOTSUP) => {}
            Err(e) => panic!("setxattr: {e}"),
        }

        let src = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), src.path().join("sub")).unwrap();
        copy_small(&open(src.path()), &dst).unwrap();
        let e = make_dir_beneath(&dst, Path::new("sub/new")).unwrap_err();
        assert!(matches!(e, NotCopied::DirThroughLink(_)), "{e}");
        assert!(!outside.path().join("new").exists());
        make_dir_beneath(&dst, Path::new("a/b")).unwrap();
        assert!(dst.join("a/b").is_dir());
    }
}
