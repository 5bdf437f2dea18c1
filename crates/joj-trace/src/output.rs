//! Output files (traces, plots, result documents): checked before any work is done, written
//! whole or not at all, and never replacing an input or — unless the caller says so — an
//! existing file.
//!
//! A file is first *staged*: written to a hidden temporary file in the directory it will live
//! in (so no step crosses filesystems) and synced. It is then *published* under its name:
//! - [`Existing::Replace`]: renamed over whatever regular file has the name;
//! - [`Existing::Keep`]: hard-linked to the name, which succeeds only if the name is free (like
//!   `O_EXCL`), so a file that appeared since the check — another run's — is never replaced;
//!   on a filesystem without hard links an empty file claims the name with `create_new` and the
//!   staged file is renamed over that claim.
//!
//! [`publish_unique`] gives a set of files the first free stem of `stem`, `stem-2`, `stem-3`, …
//! the same way, so runs writing into one folder at the same time each keep their own files.
//!
//! Invariants: a published file is complete and synced when its name appears (except for the
//! claim of the no-hard-link fallback, empty until the rename a moment later); a failure at any
//! step removes the temporary file and every name this call took, and leaves whatever was at
//! the name before.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, ErrorKind};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::OutputError;

/// What publishing does when the name is already taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Leave the existing file as it is and fail with [`OutputError::Exists`].
    Keep,
    /// Replace an existing regular file (the user asked for it, e.g. with `--force`).
    Replace,
}

impl Existing {
    /// `Replace` when `force`, otherwise `Keep`.
    pub fn replace_if(force: bool) -> Existing {
        if force {
            Existing::Replace
        } else {
            Existing::Keep
        }
    }
}

/// Everything that can be known about `path` as an output before the work that produces it:
/// it is not the same file as any of `inputs` (by device and inode, so also through a symlink
/// or a hard link), not a directory or a special file, not an existing file unless `existing`
/// is `Replace`, and its directory exists and lets us create files.
pub fn check_output(path: &Path, existing: Existing, inputs: &[&Path]) -> Result<(), OutputError> {
    if let Some(input) = inputs.iter().find(|input| same_file(path, input)) {
        return Err(OutputError::SameAsInput {
            output: path.to_path_buf(),
            input: input.to_path_buf(),
        });
    }
    match fs::symlink_metadata(path) {
        Ok(link) => {
            // Follow a symlink to say what it names; a dangling one is replaced like a file.
            let m = fs::metadata(path).unwrap_or(link);
            let path = path.to_path_buf();
            if m.is_dir() {
                return Err(OutputError::IsDirectory { path });
            }
            if !m.is_file() && !m.file_type().is_symlink() {
                return Err(OutputError::NotRegularFile { path });
            }
            if existing == Existing::Keep {
                return Err(OutputError::Exists { path });
            }
        }
        // Not there, or a file on the way: the directory check below says which.
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {}
        Err(source) => {
            return Err(OutputError::Inspect {
                path: path.to_path_buf(),
                source,
            });
        }
    }
    let dir = parent_dir(path);
    match fs::metadata(&dir) {
        Ok(m) if m.is_dir() => {
            probe_writable(&dir)?;
            pin_folder(&dir, (m.dev(), m.ino()));
            Ok(())
        }
        Ok(_) => Err(OutputError::NotADirectory {
            path: path.to_path_buf(),
            dir,
        }),
        Err(e) if e.kind() == ErrorKind::NotFound => Err(OutputError::NoDirectory {
            path: path.to_path_buf(),
            dir,
        }),
        Err(source) => Err(OutputError::Inspect { path: dir, source }),
    }
}

/// Check a directory that outputs will be written into (and that is created if missing): it
/// is a directory, or its nearest existing ancestor is one, and that one lets us create files.
pub fn check_output_dir(dir: &Path) -> Result<(), OutputError> {
    refuse_link(dir)?;
    let mut at = dir.to_path_buf();
    loop {
        match fs::metadata(&at) {
            Ok(m) if m.is_dir() => return probe_writable(&at),
            Ok(_) => {
                return Err(OutputError::DirBlocked {
                    dir: dir.to_path_buf(),
                    found: at,
                });
            }
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                let parent = parent_dir(&at);
                if parent == at {
                    return Err(OutputError::Inspect {
                        path: at,
                        source: e,
                    });
                }
                at = parent;
            }
            Err(source) => return Err(OutputError::Inspect { path: at, source }),
        }
    }
}

/// [`OutputError::DirIsLink`] when `dir` itself (its last component) is a symbolic link.
fn refuse_link(dir: &Path) -> Result<(), OutputError> {
    match fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => Err(OutputError::DirIsLink {
            dir: dir.to_path_buf(),
            target: fs::canonicalize(dir).ok(),
        }),
        _ => Ok(()),
    }
}

impl std::os::fd::AsFd for OutputDir {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.held.as_fd()
    }
}

/// An output folder, made if missing and held open: files are staged and published in it
/// through its descriptor ([`OutputDir::at`], `/proc/self/fd/N`), so that whoever can change
/// the folder's name cannot swap a link in for it between the check and the writes. Its last
/// component is never a symbolic link ([`OutputError::DirIsLink`]).
#[derive(Debug)]
pub struct OutputDir {
    dir: PathBuf,
    held: File,
    at: PathBuf,
}

impl OutputDir {
    pub fn open(dir: &Path) -> Result<OutputDir, OutputError> {
        refuse_link(dir)?;
        fs::create_dir_all(dir).map_err(|source| OutputError::Write {
            path: dir.to_path_buf(),
            source,
        })?;
        let held =
            open_folder(dir, libc::O_NOFOLLOW).map_err(|source| match source.raw_os_error() {
                Some(libc::ELOOP) => OutputError::DirIsLink {
                    dir: dir.to_path_buf(),
                    target: fs::canonicalize(dir).ok(),
                },
                _ => OutputError::Write {
                    path: dir.to_path_buf(),
                    source,
                },
            })?;
        Ok(OutputDir::holding(dir, held))
    }

    fn holding(dir: &Path, held: File) -> OutputDir {
        use std::os::fd::AsRawFd;
        let at = PathBuf::from(format!("/proc/self/fd/{}", held.as_raw_fd()));
        OutputDir {
            dir: dir.to_path_buf(),
            held,
            at,
        }
    }

    /// Where to stage and publish files: the folder held, whatever its name leads to now.
    pub fn at(&self) -> &Path {
        &self.at
    }

    /// The path a reader knows a file written [`OutputDir::at`] by: in the folder as named.
    pub fn shown(&self, written: &Path) -> PathBuf {
        match written.file_name() {
            Some(name) => self.dir.join(name),
            None => self.dir.clone(),
        }
    }

    /// [`stage`] `name` in this folder, through its descriptor; an error names the file in the
    /// folder as named, not the descriptor's `/proc/self/fd/N`.
    pub fn stage<E>(
        &self,
        name: &str,
        fill: impl FnOnce(&mut BufWriter<File>) -> Result<(), E>,
    ) -> Result<Staged, E>
    where
        E: From<OutputError>,
    {
        stage_in(self.at(), &self.dir, name, fill)
    }

    /// [`publish_unique`] in this folder; the paths returned and an error's name the files in
    /// the folder as named.
    pub fn publish_unique<const N: usize>(
        &self,
        stem: &str,
        files: [(&str, Staged); N],
    ) -> Result<[PathBuf; N], OutputError> {
        publish_unique(self.at(), stem, files)
            .map(|paths| paths.map(|p| self.shown(&p)))
            .map_err(|e| shown_in(e, self))
    }

    /// [`Staged::publish`] as `name` in this folder; the path returned and an error's name the
    /// file in the folder as named.
    pub fn publish(
        &self,
        staged: Staged,
        name: &str,
        existing: Existing,
    ) -> Result<PathBuf, OutputError> {
        staged
            .publish(&self.at().join(name), existing)
            .map_err(|e| shown_in(e, self))?;
        Ok(self.dir.join(name))
    }
}

/// Most folders [`check_output`] remembers (the oldest is forgotten first): a process checks
/// a few outputs before its run.
const PINNED_FOLDERS: usize = 256;

/// The folders outputs were checked in, as named, with the device and inode each named then.
static PINNED: std::sync::Mutex<Vec<(PathBuf, (u64, u64))>> = std::sync::Mutex::new(Vec::new());

fn pinned() -> std::sync::MutexGuard<'static, Vec<(PathBuf, (u64, u64))>> {
    PINNED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Remember that `dir` named the folder `id` when an output in it was checked.
fn pin_folder(dir: &Path, id: (u64, u64)) {
    let mut p = pinned();
    p.retain(|(d, _)| d != dir);
    if p.len() >= PINNED_FOLDERS {
        p.remove(0);
    }
    p.push((dir.to_path_buf(), id));
}

/// Write `path` through `fill` atomically: stage it next to `path`, then publish it as
/// `existing` says. On any error `path` is left as it was and no temporary file remains.
///
/// The folder is opened once and every step goes through that descriptor
/// (`/proc/self/fd/N`), and it must be the folder [`check_output`] found under the same name
/// ([`OutputError::DirChanged`]): whoever can rename in a folder above (a project someone else
/// owns) could otherwise give the name to a link to a folder only root may write, during the
/// run or between two steps, and root's output would land — or replace a file — there.
pub fn write_atomically<E>(
    path: &Path,
    existing: Existing,
    fill: impl FnOnce(&mut BufWriter<File>) -> Result<(), E>,
) -> Result<(), E>
where
    E: From<OutputError>,
{
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| OutputError::IsDirectory {
            path: path.to_path_buf(),
        })?;
    let dir = parent_dir(path);
    // The folder as the user named it (links on the way followed, as the check followed them).
    let held = open_folder(&dir, 0).map_err(|source| OutputError::Write {
        path: path.to_path_buf(),
        source,
    })?;
    let id = held
        .metadata()
        .map(|m| (m.dev(), m.ino()))
        .map_err(|source| OutputError::Inspect {
            path: dir.clone(),
            source,
        })?;
    let checked = pinned().iter().find(|(d, _)| *d == dir).map(|(_, id)| *id);
    if checked.is_some_and(|c| c != id) {
        return Err(OutputError::DirChanged {
            path: path.to_path_buf(),
            dir,
        }
        .into());
    }
    let out = OutputDir::holding(&dir, held);
    let staged = stage_in(out.at(), &dir, &name, fill)?;
    staged
        .publish(&out.at().join(&name), existing)
        .map_err(|e| E::from(shown_in(e, &out)))
}

/// The folder `dir`, opened for holding (`O_DIRECTORY`, with `flags` such as `O_NOFOLLOW`).
fn open_folder(dir: &Path, flags: i32) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC | flags)
        .open(dir)
}

/// `e` with a path written [`OutputDir::at`] named as [`OutputDir::shown`] names it.
fn shown_in(e: OutputError, out: &OutputDir) -> OutputError {
    let named = |p: PathBuf| {
        if p.starts_with(out.at()) {
            out.shown(&p)
        } else {
            p
        }
    };
    match e {
        OutputError::Write { path, source } => OutputError::Write {
            path: named(path),
            source,
        },
        OutputError::Exists { path } => OutputError::Exists { path: named(path) },
        OutputError::IsDirectory { path } => OutputError::IsDirectory { path: named(path) },
        OutputError::NotRegularFile { path } => OutputError::NotRegularFile { path: named(path) },
        e => e,
    }
}

/// A complete, synced temporary file waiting for its name; dropped unpublished, it is removed.
#[derive(Debug)]
pub struct Staged {
    /// The temporary file; empty once the file has been given its name.
    tmp: PathBuf,
}

/// Write a file that will be published in `dir` (as `name`, or a name derived from it) to a
/// temporary file there through `fill`, and sync it.
pub fn stage<E>(
    dir: &Path,
    name: &str,
    fill: impl FnOnce(&mut BufWriter<File>) -> Result<(), E>,
) -> Result<Staged, E>
where
    E: From<OutputError>,
{
    stage_in(dir, dir, name, fill)
}

/// [`stage`] in `dir`, its errors naming the file in `shown` (the folder as the user named it,
/// where `dir` is the descriptor joj holds of it).
fn stage_in<E>(
    dir: &Path,
    shown: &Path,
    name: &str,
    fill: impl FnOnce(&mut BufWriter<File>) -> Result<(), E>,
) -> Result<Staged, E>
where
    E: From<OutputError>,
{
    let write_error = |source| OutputError::Write {
        path: shown.join(name),
        source,
    };
    let (file, tmp) = create_temp(dir, name).map_err(write_error)?;
    // From here on, an early return drops `staged`, which removes the temporary file.
    let staged = Staged { tmp };
    let mut w = BufWriter::new(file);
    fill(&mut w)?;
    let file = w.into_inner().map_err(|e| write_error(e.into_error()))?;
    // The name is only as good as the data under it: sync before publishing it.
    file.sync_all().map_err(write_error)?;
    Ok(staged)
}

impl Staged {
    /// Give the file its name `path` (in the directory it was staged in), as `existing` says.
    pub fn publish(mut self, path: &Path, existing: Existing) -> Result<(), OutputError> {
        match existing {
            Existing::Keep => self.take_free_name(path),
            Existing::Replace => {
                if let Ok(m) = fs::metadata(path) {
                    if m.is_dir() {
                        return Err(OutputError::IsDirectory {
                            path: path.to_path_buf(),
                        });
                    }
                    if !m.is_file() {
                        return Err(OutputError::NotRegularFile {
                            path: path.to_path_buf(),
                        });
                    }
                }
                self.rename_to(path)
            }
        }
    }

    /// Take `path` only if no file has it (see the module documentation).
    fn take_free_name(&mut self, path: &Path) -> Result<(), OutputError> {
        let taken = self.take(path)?;
        self.complete(path, taken)
    }

    /// The first half of taking a free name: the name is ours once this returns, but the
    /// temporary file stays until [`Staged::complete`], so the name can still be given back.
    fn take(&self, path: &Path) -> Result<Taken, OutputError> {
        match fs::hard_link(&self.tmp, path) {
            Ok(()) => Ok(Taken::Linked),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => Err(OutputError::Exists {
                path: path.to_path_buf(),
            }),
            // No hard links here (or no permission to make one): claim the name instead.
            Err(_) => claim(path).map(|()| Taken::Claimed),
        }
    }

    /// The second half: the file gets its contents under the name taken.
    fn complete(&mut self, path: &Path, taken: Taken) -> Result<(), OutputError> {
        match taken {
            Taken::Linked => {
                // Best effort: the file is published; the extra name is only a leftover.
                let _ = fs::remove_file(&self.tmp);
                self.tmp = PathBuf::new();
                Ok(())
            }
            Taken::Claimed => self.rename_to(path).inspect_err(|_| {
                let _ = fs::remove_file(path);
            }),
        }
    }

    fn rename_to(&mut self, path: &Path) -> Result<(), OutputError> {
        fs::rename(&self.tmp, path).map_err(|source| OutputError::Write {
            path: path.to_path_buf(),
            source,
        })?;
        self.tmp = PathBuf::new();
        Ok(())
    }
}

/// How a free name was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Taken {
    /// A hard link to the staged file: the name already shows the complete file.
    Linked,
    /// An empty file made with `create_new`; the staged file is renamed over it.
    Claimed,
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            // Best effort: the file may already be gone with its directory.
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// How many stems [`publish_unique`] tries before giving up.
pub const MAX_UNIQUE_STEMS: u32 = 10_000;

/// Publish `files`, each `(suffix, staged file)`, in `dir` as `<stem><suffix>` under the first
/// of `stem`, `stem-2`, `stem-3`, … for which every one of those names is free, taking each name
/// only if it is free so that concurrent callers never share a stem. Returns the paths, in the
/// order of `files`.
pub fn publish_unique<const N: usize>(
    dir: &Path,
    stem: &str,
    mut files: [(&str, Staged); N],
) -> Result<[PathBuf; N], OutputError> {
    for n in 1..=MAX_UNIQUE_STEMS {
        let stem_n = match n {
            1 => stem.to_owned(),
            n => format!("{stem}-{n}"),
        };
        let paths = files
            .each_ref()
            .map(|(suffix, _)| dir.join(format!("{stem_n}{suffix}")));
        let mut taken = Vec::with_capacity(N);
        let mut refused = None;
        for ((_, staged), path) in files.iter().zip(&paths) {
            match staged.take(path) {
                Ok(t) => taken.push(t),
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        }
        if let Some(e) = refused {
            // All or none: give back the names this stem got before one was refused.
            for path in &paths[..taken.len()] {
                let _ = fs::remove_file(path);
            }
            match e {
                OutputError::Exists { .. } => continue,
                e => return Err(e),
            }
        }
        let mut done = Ok(());
        for (((_, staged), path), t) in files.iter_mut().zip(&paths).zip(taken) {
            done = done.and_then(|()| staged.complete(path, t));
        }
        if done.is_err() {
            // All or none, also here: no name of the set is left holding a claim.
            for path in &paths {
                let _ = fs::remove_file(path);
            }
        }
        return done.map(|()| paths);
    }
    Err(OutputError::NoFreeName {
        dir: dir.to_path_buf(),
        stem: stem.to_owned(),
        tried: MAX_UNIQUE_STEMS,
    })
}

/// The directory `path` is in (`.` for a bare name).
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Whether two output paths would write one file: the same file when both exist (device and
/// inode, symlinks followed), else the same name in the same directory (the directory by
/// device and inode, so `out/a`, `./out/a` and a link to `out` agree). A path whose directory
/// cannot be read is taken to differ: writing it fails on its own.
pub fn same_output(a: &Path, b: &Path) -> bool {
    if same_file(a, b) {
        return true;
    }
    let dir_of = |p: &Path| fs::metadata(parent_dir(p)).ok().map(|m| (m.dev(), m.ino()));
    match (a.file_name(), b.file_name()) {
        (Some(x), Some(y)) if x == y => dir_of(a).is_some_and(|d| Some(d) == dir_of(b)),
        _ => false,
    }
}

/// Both paths exist and are the same file (device and inode, symlinks followed).
fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Whether we can create files in `dir`, found by creating (and removing) one: permission
/// bits do not tell root about a read-only mount or an immutable directory.
fn probe_writable(dir: &Path) -> Result<(), OutputError> {
    match create_temp(dir, "joj-probe") {
        Ok((_, probe)) => {
            // Best effort: a leftover hidden probe file is harmless.
            let _ = fs::remove_file(probe);
            Ok(())
        }
        Err(source) => Err(OutputError::NotWritable {
            dir: dir.to_path_buf(),
            source,
        }),
    }
}

/// An empty file claiming `path` (`create_new`: it fails if anything has the name).
fn claim(path: &Path) -> Result<(), OutputError> {
    match OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Err(OutputError::Exists {
            path: path.to_path_buf(),
        }),
        Err(source) => Err(OutputError::Write {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Serial number of this process's temporary files.
static NEXT_TEMP: AtomicU64 = AtomicU64::new(0);

/// A new hidden file `dir/.<name>.tmp.<pid>.<n>` that nobody else has (`create_new`).
fn create_temp(dir: &Path, name: &str) -> io::Result<(File, PathBuf)> {
    loop {
        let n = NEXT_TEMP.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(".{name}.tmp.{}.{n}", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((file, path)),
            // A leftover of an earlier process with our pid: take the next number.
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .expect("ls")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// `--save d/precious.json --force` where someone else may rename `d`: checked before the
    /// run, the folder is given to a link to a folder only root writes while the run goes on;
    /// the write is refused and the file of that name there is left as it was (a probe,
    /// 2026-11-28: root's result replaced it, and without `--force` a new file appeared there).
    #[test]
    fn an_output_whose_folder_was_swapped_after_the_check_is_not_written() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let d = tmp.path().join("d");
        let rootonly = tmp.path().join("rootonly");
        fs::create_dir(&d).expect("mkdir");
        fs::create_dir(&rootonly).expect("mkdir");
        fs::write(rootonly.join("precious.json"), "root's own\n").expect("write");
        let out = d.join("precious.json");
        for existing in [Existing::Replace, Existing::Keep] {
            if fs::symlink_metadata(&d).is_ok_and(|m| m.file_type().is_symlink()) {
                fs::remove_file(&d).expect("rm");
                fs::create_dir(&d).expect("mkdir");
            }
            check_output(&out, existing, &[]).expect("checked");
            fs::remove_dir(&d).expect("rmdir");
            std::os::unix::fs::symlink(&rootonly, &d).expect("ln");
            let e = write_atomically(&out, existing, |w| {
                w.write_all(b"result\n")
                    .map_err(|source| OutputError::Write {
                        path: out.clone(),
                        source,
                    })
            })
            .expect_err("a swapped folder");
            assert!(
                matches!(&e, OutputError::DirChanged { .. })
                    && e.to_string().contains("nothing was written"),
                "{e}"
            );
            assert_eq!(names(&rootonly), ["precious.json"]);
            assert_eq!(
                fs::read_to_string(rootonly.join("precious.json")).expect("read"),
                "root's own\n"
            );
        }
        // The folder as checked takes the file, named as the user named it.
        let fresh = tmp.path().join("fresh");
        fs::create_dir(&fresh).expect("mkdir");
        let out = fresh.join("r.json");
        check_output(&out, Existing::Keep, &[]).expect("checked");
        write_atomically(&out, Existing::Keep, |w| {
            w.write_all(b"ok\n").map_err(|source| OutputError::Write {
                path: out.clone(),
                source,
            })
        })
        .expect("written");
        assert_eq!(names(&fresh), ["r.json"]);
        let again = write_atomically(&out, Existing::Keep, |_| Ok::<(), OutputError>(()))
            .expect_err("taken");
        assert!(
            again.to_string().contains(&out.display().to_string()),
            "{again}"
        );
    }

    /// `--out joj-out` in a folder someone else owns: a link planted at the name is refused
    /// (root's files went wherever it pointed), and a folder swapped for a link after it was
    /// opened still gets the files, not the link's target.
    #[test]
    fn an_output_folder_is_never_reached_through_a_link() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let elsewhere = tmp.path().join("elsewhere");
        fs::create_dir(&elsewhere).expect("mkdir");
        let planted = tmp.path().join("joj-out");
        std::os::unix::fs::symlink(&elsewhere, &planted).expect("symlink");
        for e in [
            check_output_dir(&planted).expect_err("a link"),
            OutputDir::open(&planted).expect_err("a link"),
        ] {
            assert!(
                matches!(&e, OutputError::DirIsLink { .. })
                    && e.to_string().contains("name the folder itself"),
                "{e}"
            );
        }
        fs::remove_file(&planted).expect("rm");

        let out = OutputDir::open(&planted).expect("made");
        fs::rename(&planted, tmp.path().join("moved")).expect("mv");
        std::os::unix::fs::symlink(&elsewhere, &planted).expect("symlink");
        let staged = stage(out.at(), "t.svg", |w| {
            w.write_all(b"<svg/>").map_err(|source| OutputError::Write {
                path: PathBuf::from("t.svg"),
                source,
            })
        })
        .expect("staged");
        let [path] = publish_unique(out.at(), "t", [(".svg", staged)]).expect("published");
        assert_eq!(out.shown(&path), planted.join("t.svg"));
        assert_eq!(names(&tmp.path().join("moved")), ["t.svg"]);
        assert!(names(&elsewhere).is_empty());
    }

    #[test]
    fn a_failed_fill_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.txt");
        fs::write(&path, "old").expect("write");
        let r: Result<(), OutputError> = write_atomically(&path, Existing::Replace, |w| {
            w.write_all(b"partial").expect("buffered");
            Err(OutputError::Write {
                path: path.clone(),
                source: io::Error::other("boom"),
            })
        });
        assert!(r.is_err());
        assert_eq!(fs::read_to_string(&path).expect("read"), "old");
        assert_eq!(names(dir.path()), ["x.txt"]);
    }

    #[test]
    fn replace_replaces_and_keep_keeps() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.txt");
        fs::write(&path, "old").expect("write");
        let kept = write_atomically::<OutputError>(&path, Existing::Keep, |w| {
            w.write_all(b"new").map_err(|source| OutputError::Write {
                path: path.clone(),
                source,
            })
        });
        assert!(matches!(kept, Err(OutputError::Exists { .. })), "{kept:?}");
        assert_eq!(fs::read_to_string(&path).expect("read"), "old");
        assert_eq!(names(dir.path()), ["x.txt"]);
        write_atomically::<OutputError>(&path, Existing::Replace, |w| {
            w.write_all(b"new").map_err(|source| OutputError::Write {
                path: path.clone(),
                source,
            })
        })
        .expect("replace");
        assert_eq!(fs::read_to_string(&path).expect("read"), "new");
        assert_eq!(names(dir.path()), ["x.txt"]);
    }

    fn staged(dir: &Path, text: &str) -> Staged {
        stage::<OutputError>(dir, "t", |w| {
            w.write_all(text.as_bytes())
                .map_err(|source| OutputError::Write {
                    path: dir.join("t"),
                    source,
                })
        })
        .expect("stage")
    }

    #[test]
    fn unique_stems_skip_any_taken_name_and_keep_files_together() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        fs::write(d.join("run.a"), "someone's").expect("write");
        fs::write(d.join("run-2.b"), "someone else's").expect("write");
        let [a, b] = publish_unique(d, "run", [(".a", staged(d, "A")), (".b", staged(d, "B"))])
            .expect("publish");
        assert_eq!((a, b), (d.join("run-3.a"), d.join("run-3.b")));
        assert_eq!(fs::read_to_string(d.join("run-3.b")).expect("read"), "B");
        assert_eq!(
            fs::read_to_string(d.join("run.a")).expect("read"),
            "someone's"
        );
        assert_eq!(names(d), ["run-2.b", "run-3.a", "run-3.b", "run.a"]);
    }

    #[test]
    fn concurrent_publishers_never_share_a_stem() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path().to_path_buf();
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let d = d.clone();
                std::thread::spawn(move || {
                    let file = staged(&d, &i.to_string());
                    let [p] = publish_unique(&d, "run", [(".txt", file)]).expect("publish");
                    (i.to_string(), p)
                })
            })
            .collect();
        let mut seen = std::collections::HashSet::new();
        for t in threads {
            let (text, path) = t.join().expect("thread");
            assert!(seen.insert(path.clone()), "{} given twice", path.display());
            assert_eq!(fs::read_to_string(&path).expect("read"), text);
        }
        assert_eq!(names(&d).len(), 8, "{:?}", names(&d));
    }

    #[test]
    fn an_output_is_checked_against_its_inputs_and_its_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let input = dir.path().join("in.txt");
        fs::write(&input, "data").expect("write");
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&input, &link).expect("symlink");
        let check = |p: &Path, e| check_output(p, e, &[&input]);
        assert!(matches!(
            check(&link, Existing::Replace),
            Err(OutputError::SameAsInput { .. })
        ));
        assert!(matches!(
            check(dir.path(), Existing::Replace),
            Err(OutputError::IsDirectory { .. })
        ));
        assert!(matches!(
            check(&input.join("x"), Existing::Keep),
            Err(OutputError::NotADirectory { .. })
        ));
        assert!(matches!(
            check(&dir.path().join("no/x"), Existing::Keep),
            Err(OutputError::NoDirectory { .. })
        ));
        assert!(matches!(
            check(Path::new("/dev/null"), Existing::Replace),
            Err(OutputError::NotRegularFile { .. })
        ));
        assert!(check(&dir.path().join("out.txt"), Existing::Keep).is_ok());
        assert!(check_output_dir(&dir.path().join("a/b")).is_ok());
        assert!(matches!(
            check_output_dir(&input.join("sub")),
            Err(OutputError::DirBlocked { .. })
        ));
        assert_eq!(names(dir.path()), ["in.txt", "link.txt"]);
    }
}
