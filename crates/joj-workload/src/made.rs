//! The files a run made in a directory it shares with others (`joj bench --fs host --dir D`,
//! Mobibench's `-p D`): each is recorded when the run creates it (`O_EXCL`, never through a
//! link), by its device and inode, so that the run can remove exactly those at its end and
//! leave D as it found it — never a file that was there before the run (that is refused before
//! anything is made: [`crate::sqlite::check_free`]), nor one that took a made file's name since.
//! A missing D is made, with its missing parents, and each of them removed at the end when it
//! is still the directory the run made and empty.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// One file a run created: its name, and the device and inode it was created as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MadeFile {
    pub path: PathBuf,
    dev: u64,
    ino: u64,
}

impl MadeFile {
    /// The file the run just created at `path` and holds open as `file`.
    pub fn of(path: &Path, file: &std::fs::File) -> std::io::Result<MadeFile> {
        let st = file.metadata()?;
        Ok(MadeFile {
            path: path.to_path_buf(),
            dev: st.dev(),
            ino: st.ino(),
        })
    }

    /// Whether `st` (of a name, not followed) is still this file.
    fn is(&self, st: &std::fs::Metadata) -> bool {
        st.file_type().is_file() && st.dev() == self.dev && st.ino() == self.ino
    }

    /// Whether `st` (of a name, not followed) is still this directory.
    fn is_dir(&self, st: &std::fs::Metadata) -> bool {
        st.file_type().is_dir() && st.dev() == self.dev && st.ino() == self.ino
    }
}

/// The files one run made: its databases (beside which SQLite and waldio made their journals,
/// [`joj_waldio::COMPANIONS`]) and a file workload's files.
#[derive(Debug, Default)]
pub struct Made {
    databases: Vec<MadeFile>,
    files: Vec<MadeFile>,
    /// The directories it made, outermost first.
    dirs: Vec<MadeFile>,
}

/// What [`Made::remove`] did: the names it removed, the directories it removed, and those it
/// kept with the reason.
#[derive(Debug, Default)]
pub struct Removed {
    pub removed: Vec<PathBuf>,
    pub removed_dirs: Vec<PathBuf>,
    pub kept: Vec<(PathBuf, &'static str)>,
}

impl Made {
    pub fn database(&mut self, f: MadeFile) {
        self.databases.push(f);
    }

    pub fn file(&mut self, f: MadeFile) {
        self.files.push(f);
    }

    /// Makes `dir` and its missing parents, each recorded (outermost first), as `mkdir -p`
    /// would; nothing when it exists. A directory another process makes meanwhile is not
    /// recorded.
    pub fn make_dirs(&mut self, dir: &Path) -> std::io::Result<()> {
        let missing: Vec<&Path> = dir
            .ancestors()
            .filter(|d| !d.as_os_str().is_empty())
            .take_while(|d| present(d).is_none())
            .collect();
        for d in missing.into_iter().rev() {
            match std::fs::create_dir(d) {
                Ok(()) => {
                    let st = std::fs::symlink_metadata(d)?;
                    self.dirs.push(MadeFile {
                        path: d.to_path_buf(),
                        dev: st.dev(),
                        ino: st.ino(),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.databases.is_empty() && self.files.is_empty() && self.dirs.is_empty()
    }

    /// Removes every file the run made that is still the file it made, and beside each
    /// database the journals SQLite or waldio left (`-journal`, `-wal`, `-shm`, `-waldio`:
    /// names the run found free before it made anything, so only its own SQLite made them)
    /// where each is a regular file — not a link — of this user on the database's
    /// filesystem. A name holding anything else is kept and named.
    pub fn remove(self) -> Removed {
        let mut out = Removed::default();
        let uid = rustix::process::geteuid().as_raw();
        for db in &self.databases {
            for (suffix, _) in joj_waldio::COMPANIONS {
                let mut name = db.path.as_os_str().to_owned();
                name.push(suffix);
                let path = PathBuf::from(name);
                let Some(st) = present(&path) else { continue };
                if st.file_type().is_file() && st.dev() == db.dev && st.uid() == uid {
                    unlink(path, &mut out);
                } else {
                    out.kept.push((path, "not a file this run's SQLite made"));
                }
            }
        }
        for f in self.databases.iter().chain(&self.files) {
            let Some(st) = present(&f.path) else { continue };
            if f.is(&st) {
                unlink(f.path.clone(), &mut out);
            } else {
                out.kept
                    .push((f.path.clone(), "no longer the file this run made"));
            }
        }
        for d in self.dirs.iter().rev() {
            let Some(st) = present(&d.path) else { continue };
            if !d.is_dir(&st) {
                out.kept
                    .push((d.path.clone(), "no longer the directory this run made"));
            } else if std::fs::remove_dir(&d.path).is_ok() {
                out.removed_dirs.push(d.path.clone());
            } else {
                out.kept.push((
                    d.path.clone(),
                    "a directory this run made, kept: it holds what the run did not make",
                ));
            }
        }
        out
    }
}

/// The metadata of what is at `path` (not followed), or `None` when nothing is (or it cannot
/// be read: then nothing is removed).
fn present(path: &Path) -> Option<std::fs::Metadata> {
    std::fs::symlink_metadata(path).ok()
}

fn unlink(path: PathBuf, out: &mut Removed) {
    match std::fs::remove_file(&path) {
        Ok(()) => out.removed.push(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(_) => out.kept.push((path, "could not be removed")),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
    use super::*;

    #[test]
    fn only_the_made_files_and_their_journals_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("a.db");
        let f = std::fs::File::create_new(&db).unwrap();
        let mut made = Made::default();
        made.database(MadeFile::of(&db, &f).unwrap());
        std::fs::write(dir.path().join("a.db-wal"), "w").unwrap();
        // A file that took a made file's name is not the made file.
        let other = dir.path().join("b.dat");
        let g = std::fs::File::create_new(&other).unwrap();
        made.file(MadeFile::of(&other, &g).unwrap());
        std::fs::remove_file(&other).unwrap();
        std::fs::write(&other, "someone else's").unwrap();
        std::fs::write(dir.path().join("notes"), "n").unwrap();
        let r = made.remove();
        assert_eq!(r.removed, vec![dir.path().join("a.db-wal"), db]);
        assert_eq!(r.kept.len(), 1);
        assert_eq!(r.kept[0].0, other);
        assert!(other.exists() && dir.path().join("notes").exists());
    }

    /// `--dir a/b` with `a` missing makes both; at the end an empty one goes, one holding
    /// what the run did not make stays, and a directory that was there is never touched.
    #[test]
    fn only_the_made_directories_go_and_only_when_empty() {
        let top = tempfile::tempdir().unwrap();
        let b = top.path().join("a").join("b");
        let mut made = Made::default();
        made.make_dirs(&b).unwrap();
        assert!(b.is_dir());
        let r = made.remove();
        assert_eq!(r.removed_dirs, vec![b.clone(), top.path().join("a")]);
        assert!(top.path().exists() && !top.path().join("a").exists());

        let mut made = Made::default();
        made.make_dirs(&b).unwrap();
        std::fs::write(b.join("notes"), "n").unwrap();
        let r = made.remove();
        assert!(r.removed_dirs.is_empty(), "{r:?}");
        assert_eq!(r.kept.len(), 2, "{r:?}");
        assert!(b.join("notes").exists());

        let mut made = Made::default();
        made.make_dirs(top.path()).unwrap();
        assert!(made.is_empty());
    }
}
