//! Where a kernel-side run's files live: a host directory (a fresh temporary one when none is
//! named) or a scratch filesystem on loop devices made for the run. Both are removed when the
//! [`Place`] is closed or dropped, whether the run succeeded or not, and on SIGINT / SIGTERM
//! (the temporary directory and the scratch filesystem are in joj-linux's cleanup registry).
//! Before making either, a run removes what dead joj runs left
//! ([`joj_linux::leftovers::sweep_and_report`]). A host directory the user named is made when
//! missing (as `joj trace --dir` makes its own); the run removes at its end only the files it
//! made there, and the directory when it made it and it is empty ([`Place::remove_made`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use joj_linux::{RunTempDir, ScratchFs, ScratchOptions};
use joj_trace::terminal::escaped;
use joj_workload::made::Made;

use crate::error::{ExperimentError, HostDirProblem};
use crate::stack::Storage;

pub(super) struct Place {
    /// The directory the workload's files go in.
    pub(super) dir: PathBuf,
    pub(super) scratch: Option<ScratchFs>,
    /// Mount options of the scratch filesystem.
    pub(super) mount_options: Option<String>,
    tmp: Option<RunTempDir>,
    /// In a directory the user named (`--dir`), the files the run made there, which it removes
    /// at its end ([`Place::remove_made`]), or at SIGINT / SIGTERM (`_on_signal`); `None`
    /// where the whole place goes.
    pub(super) made: Option<Arc<Mutex<Made>>>,
    _on_signal: Option<joj_linux::cleanup::CleanupHook>,
}

impl Place {
    pub(super) fn make(storage: &Storage) -> Result<Place, ExperimentError> {
        joj_linux::leftovers::sweep_and_report();
        match storage {
            Storage::Host(Some(d)) => {
                let mut made = Made::default();
                if let Err(e) = made.make_dirs(d) {
                    let problem = match e.kind() {
                        std::io::ErrorKind::ReadOnlyFilesystem => HostDirProblem::ReadOnly,
                        _ => HostDirProblem::CannotCreate(e),
                    };
                    made.remove();
                    return Err(ExperimentError::HostDir {
                        dir: d.clone(),
                        problem,
                    });
                }
                if let Err(e) = check_host_dir(d) {
                    made.remove();
                    return Err(e);
                }
                if let Err(e) = joj_linux::install_cleanup_handler() {
                    made.remove();
                    return Err(e.into());
                }
                let made = Arc::new(Mutex::new(made));
                // Ctrl-C leaves the directory as the run's end does: the next run in it would
                // otherwise be refused the database this one left.
                let on_signal = joj_linux::cleanup::on_cleanup({
                    let (made, dir) = (Arc::clone(&made), d.clone());
                    move || remove_and_say(&made, &dir)
                });
                Ok(Place {
                    dir: d.clone(),
                    scratch: None,
                    mount_options: None,
                    tmp: None,
                    made: Some(made),
                    _on_signal: Some(on_signal),
                })
            }
            Storage::Host(None) => {
                joj_linux::install_cleanup_handler()?;
                let t = RunTempDir::create().map_err(joj_linux::Error::from)?;
                Ok(Place {
                    dir: t.path().to_path_buf(),
                    scratch: None,
                    mount_options: None,
                    tmp: Some(t),
                    made: None,
                    _on_signal: None,
                })
            }
            Storage::Scratch {
                kind,
                image_bytes,
                image_dir,
                direct_io,
            } => {
                joj_linux::install_cleanup_handler()?;
                let fs = ScratchFs::create(
                    *kind,
                    ScratchOptions {
                        size_bytes: *image_bytes,
                        image_dir: image_dir.clone(),
                        loop_options: joj_linux::LoopOptions {
                            direct_io: *direct_io,
                            ..Default::default()
                        },
                        ..Default::default()
                    },
                )
                .map_err(joj_linux::Error::from)?;
                let dir = fs.mount_path().join("joj");
                std::fs::create_dir_all(&dir).map_err(|source| ExperimentError::Io {
                    what: format!("creating {}", dir.display()),
                    source,
                })?;
                let journal_path = fs.journal_device().map(|d| d.path.clone());
                Ok(Place {
                    dir,
                    mount_options: Some(kind.mount_options(journal_path.as_deref())),
                    scratch: Some(fs),
                    tmp: None,
                    made: None,
                    _on_signal: None,
                })
            }
            Storage::Device(_) => unreachable!("a device run has no kernel filesystem"),
        }
    }

    /// The traced devices (`major:minor`), none for a host directory.
    pub(super) fn devs(&self) -> Vec<String> {
        self.scratch
            .as_ref()
            .map_or_else(Vec::new, |fs| fs.dev_ids())
    }

    /// Each traced device with its image size in bytes.
    pub(super) fn dev_sizes(&self) -> Result<Vec<(String, u64)>, ExperimentError> {
        let Some(fs) = &self.scratch else {
            return Ok(vec![]);
        };
        fs.devices()
            .iter()
            .map(|d| {
                let bytes = std::fs::metadata(&d.image)
                    .map_err(|source| ExperimentError::Io {
                        what: format!("reading the size of {}", d.image.display()),
                        source,
                    })?
                    .len();
                Ok((d.dev.to_string(), bytes))
            })
            .collect()
    }

    /// In a directory the user named, removes the files the run made there — whether it
    /// succeeded or not — so that the next run finds the directory as this one did (a
    /// Mobibench user runs `-p DIR` again and again), and says so on stderr. Only what the run
    /// made is removed ([`Made::remove`]); anything else is named and kept.
    pub(super) fn remove_made(&self) {
        if let Some(made) = &self.made {
            remove_and_say(made, &self.dir);
        }
    }

    /// Unmount and remove the scratch filesystem (or the temporary directory).
    pub(super) fn close(mut self) -> Result<(), ExperimentError> {
        if let Some(fs) = self.scratch.take() {
            fs.close().map_err(joj_linux::Error::from)?;
        }
        if let Some(t) = self.tmp.take() {
            t.close().map_err(joj_linux::Error::from)?;
        }
        Ok(())
    }
}

/// Removes what the run made in `dir` (the user's `--dir`) and says what it removed and kept
/// ([`Place::remove_made`]); a second call finds nothing to do.
fn remove_and_say(made: &Mutex<Made>, dir: &Path) {
    let made = std::mem::take(&mut *made.lock().unwrap_or_else(PoisonError::into_inner));
    if made.is_empty() {
        return;
    }
    let r = made.remove();
    let names = |paths: &mut dyn Iterator<Item = &PathBuf>| -> String {
        paths
            .map(|p| {
                let name = p.file_name().unwrap_or_else(|| p.as_os_str());
                escaped(&name.to_string_lossy()).into_owned()
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let dir = escaped(&dir.display().to_string()).into_owned();
    if !r.removed.is_empty() {
        eprintln!(
            "joj: note: the run removed the files it made in {dir}: {} (a --dir run leaves \
             the directory as it found it)",
            names(&mut r.removed.iter())
        );
    }
    if !r.removed_dirs.is_empty() {
        let dirs: Vec<String> = r
            .removed_dirs
            .iter()
            .map(|d| escaped(&d.display().to_string()).into_owned())
            .collect();
        eprintln!(
            "joj: note: the run removed the directories it made: {} (a --dir that was \
             missing is made, and removed at the end when empty)",
            dirs.join(", ")
        );
    }
    for (path, why) in &r.kept {
        eprintln!(
            "joj: warning: kept {} in {dir}: {why}",
            names(&mut std::iter::once(path))
        );
    }
}

/// `dir` (made if missing) is a directory and takes a new file — checked before the run, so a bad
/// `--dir` is named as such instead of as SQLite's "unable to open database file".
fn check_host_dir(dir: &std::path::Path) -> Result<(), ExperimentError> {
    let problem = match std::fs::metadata(dir) {
        Err(e) => Some(HostDirProblem::NotWritable(e)),
        Ok(m) if !m.is_dir() => Some(HostDirProblem::NotDirectory),
        Ok(_) => match probe_write(dir) {
            Ok(()) => None,
            Err(e) if e.kind() == std::io::ErrorKind::ReadOnlyFilesystem => {
                Some(HostDirProblem::ReadOnly)
            }
            Err(e) => Some(HostDirProblem::NotWritable(e)),
        },
    };
    problem.map_or(Ok(()), |problem| {
        Err(ExperimentError::HostDir {
            dir: dir.to_path_buf(),
            problem,
        })
    })
}

/// Creates and removes a file of this process's own name in `dir`.
fn probe_write(dir: &std::path::Path) -> std::io::Result<()> {
    let probe = dir.join(format!(".joj-probe-{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)?;
    std::fs::remove_file(&probe)
}
