//! [`RecordingDisk`]: the FUSE filesystem of [`super::fusefs`] mounted on a fresh directory
//! `<run_dir>/rec-<pid>-XXXXXX` ([`crate::names`]), where a [`crate::ScratchFs`] puts its
//! images (`ScratchOptions::image_dir`), so that its loop device's every write and flush
//! reaches this process.
//!
//! The mount and its directory are recorded in the cleanup registry as they are made. The
//! mount is a *recording mount*: released after every loop device, whoever releases
//! ([`crate::cleanup::cleanup_all`] on a signal, the sweep after `kill -9`), because the loop
//! devices above it need it to finish their writes. Closing the disk while a scratch
//! filesystem still uses it is a caller's mistake: the unmount then falls back to a lazy one
//! and the daemon goes on serving until that filesystem is released.
//!
//! Known limit (checked): `kill -9` while a thread of the process waits in `fsync` on the
//! filesystem above leaves the process stuck — the daemon thread is gone, the waiting thread
//! is in uninterruptible sleep for a write only the daemon could answer, and `/dev/fuse` stays
//! open until that thread exits. The sweep then sees a live process and keeps its things.
//! Aborting the connection frees it (`mount -t fusectl none /sys/fs/fuse/connections`, then
//! `echo 1 > /sys/fs/fuse/connections/<minor of the FUSE mount>/abort`); the next sweep
//! removes the rest. A stop by SIGINT/SIGTERM with the cleanup handler has no such problem.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fuser::{BackgroundSession, Config, MountOption, Session, SessionACL};

use super::fusefs::{self, LogRefusal, MemFs, SharedStore, Store};
use super::log::{BlockLog, Mark, SparseImage};
use crate::cleanup::{self, CleanupProblem};
use crate::names;
use crate::prereq::{self, PrereqError};

/// How long close waits for the daemon thread to end after the unmount.
const DAEMON_EXIT_WAIT: Duration = Duration::from_secs(5);

/// How a recording disk serves its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordOptions {
    /// Open files with `FOPEN_DIRECT_IO`: the kernel keeps no FUSE page cache for them and
    /// sends each read and write to the daemon. Default on; the loop device works either way
    /// (and, without FUSE's writeback cache, each write reaches the daemon before the loop
    /// device completes it either way).
    pub direct_io: bool,
}

impl Default for RecordOptions {
    fn default() -> Self {
        Self { direct_io: true }
    }
}

/// Making, using or releasing a recording disk failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    #[error(transparent)]
    Prereq(#[from] PrereqError),
    #[error("cannot {what} {path}: {source}; fix: check that {path} is writable (as root)", path = .path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "cannot mount the recording disk's FUSE filesystem on {path}: {source}; fix: `modprobe fuse` and run as root (/dev/fuse must exist)", path = .path.display()
    )]
    Mount {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path} is not a file on the recording disk {dir}; fix: make the scratch filesystem with ScratchOptions::image_dir = the disk's dir()", path = .path.display(), dir = .dir.display()
    )]
    NotOnDisk { path: PathBuf, dir: PathBuf },
    #[error("the recording disk is already logging; fix: take_log before starting another log")]
    AlreadyLogging,
    #[error("the recording disk is not logging; fix: start_log first")]
    NotLogging,
    #[error(
        "{path} is {size_bytes} bytes, not a whole number of 4 KiB blocks, so it cannot be a logged device; fix: size images in whole blocks", path = .path.display()
    )]
    NotBlockMultiple { path: PathBuf, size_bytes: u64 },
    #[error(
        "the recording disk was released by the signal handler while being set up; fix: nothing — the process is exiting on SIGINT/SIGTERM"
    )]
    Interrupted,
    #[error(
        "the recording disk's daemon did not stop within {}s of the unmount: a loop device still uses one of its files; fix: close the scratch filesystem before the recording disk", DAEMON_EXIT_WAIT.as_secs()
    )]
    DaemonStillServing,
    #[error("the recording disk's daemon failed: {0}")]
    Daemon(std::io::Error),
    #[error("releasing the recording disk left {} problem(s): {}", .0.len(), .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Cleanup(Vec<CleanupProblem>),
}

/// Memory a recording disk holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldBytes {
    /// Non-zero blocks of its files.
    pub file_bytes: u64,
    /// The running log: its base image and the data of its writes.
    pub log_bytes: u64,
}

/// A FUSE filesystem served by this process whose files back loop devices, logging what the
/// device of one of them receives.
#[derive(Debug)]
pub struct RecordingDisk {
    /// Registry entry: the FUSE mount and the directory.
    id: u64,
    dir: PathBuf,
    store: SharedStore,
    session: Option<BackgroundSession>,
}

impl RecordingDisk {
    /// Mounts an empty recording disk on a new directory in `run_dir` (usually
    /// [`crate::scratch::RUN_DIR`]), with the default [`RecordOptions`].
    pub fn create(run_dir: &Path) -> Result<Self, RecordError> {
        Self::create_with(run_dir, &RecordOptions::default())
    }

    /// As [`RecordingDisk::create`], with `options`.
    pub fn create_with(run_dir: &Path, options: &RecordOptions) -> Result<Self, RecordError> {
        prereq::check_root()?;
        let io = |what, path: &Path| {
            let path = path.to_path_buf();
            move |source| RecordError::Io { what, path, source }
        };
        std::fs::create_dir_all(run_dir).map_err(io("create", run_dir))?;
        let store = Store::new();
        let mut me = Self {
            id: cleanup::open_entry(),
            dir: PathBuf::new(),
            store: store.clone(),
            session: None,
        };
        me.dir = me.track(|res| {
            let dir = tempfile::Builder::new()
                .prefix(&names::recording_dir_prefix(std::process::id()))
                .rand_bytes(names::RANDOM_CHARS)
                .tempdir_in(run_dir)
                .map_err(io("create a directory in", run_dir))?
                .keep();
            res.dirs.push(dir.clone());
            Ok(dir)
        })?;
        let dir = me.dir.clone();
        let mut config = Config::default();
        config.mount_options = vec![
            MountOption::FSName("joj-recording-disk".into()),
            MountOption::Subtype("joj".into()),
        ];
        config.acl = SessionACL::Owner;
        // One thread: the daemon answers requests in the order it reads them, so the log
        // order is the order requests reached it.
        config.n_threads = Some(1);
        let fs = MemFs::new(store, options.direct_io);
        let session = me.track(|res| {
            let mount_err = |source| RecordError::Mount {
                path: dir.clone(),
                source,
            };
            let session = Session::new(fs, &dir, &config).map_err(mount_err)?;
            res.recording_mounts.push(dir.clone());
            session.spawn().map_err(RecordError::Daemon)
        })?;
        me.session = Some(session);
        Ok(me)
    }

    /// Runs `create` under the registry lock with this disk's resources.
    fn track<T>(
        &self,
        create: impl FnOnce(&mut cleanup::Resources) -> Result<T, RecordError>,
    ) -> Result<T, RecordError> {
        cleanup::track(self.id, create).unwrap_or(Err(RecordError::Interrupted))
    }

    /// Where the disk is mounted: the directory to make images in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The name of `image` on this disk, if it is directly in [`RecordingDisk::dir`].
    fn name_of<'a>(&self, image: &'a Path) -> Result<&'a std::ffi::OsStr, RecordError> {
        image
            .parent()
            .filter(|p| *p == self.dir)
            .and(image.file_name())
            .ok_or_else(|| RecordError::NotOnDisk {
                path: image.into(),
                dir: self.dir.clone(),
            })
    }

    /// Starts logging the device whose backing file is `image` (a file on this disk): its
    /// current content becomes the log's base image, and from now on every write to it and
    /// every flush (`fsync`) of it is appended to the log. Sync the filesystem on it first,
    /// so that nothing is in flight.
    pub fn start_log(&self, image: &Path) -> Result<(), RecordError> {
        let name = self.name_of(image)?;
        fusefs::lock(&self.store)
            .start_log(name)
            .map_err(|r| match r {
                LogRefusal::NoSuchFile => RecordError::NotOnDisk {
                    path: image.into(),
                    dir: self.dir.clone(),
                },
                LogRefusal::AlreadyLogging => RecordError::AlreadyLogging,
                LogRefusal::NotLogging => RecordError::NotLogging,
                LogRefusal::NotBlockMultiple(size_bytes) => RecordError::NotBlockMultiple {
                    path: image.into(),
                    size_bytes,
                },
            })
    }

    /// Appends a workload mark to the log, after everything the daemon has received so far
    /// (the daemon appends under the same lock). Without a log running it is dropped.
    pub fn mark(&self, m: Mark) {
        fusefs::lock(&self.store).mark(m);
    }

    /// Stops logging and hands over the log.
    pub fn take_log(&self) -> Result<BlockLog, RecordError> {
        fusefs::lock(&self.store)
            .take_log()
            .map_err(|_| RecordError::NotLogging)
    }

    /// The current content of `image` as the daemon holds it (every write it received).
    pub fn content(&self, image: &Path) -> Result<SparseImage, RecordError> {
        let name = self.name_of(image)?;
        fusefs::lock(&self.store)
            .content(name)
            .ok_or_else(|| RecordError::NotOnDisk {
                path: image.into(),
                dir: self.dir.clone(),
            })
    }

    /// Memory held now by the files and the running log.
    pub fn held_bytes(&self) -> HeldBytes {
        let (file_bytes, log_bytes) = fusefs::lock(&self.store).held_bytes();
        HeldBytes {
            file_bytes,
            log_bytes,
        }
    }

    /// Unmounts the disk, waits for its daemon to end and removes its directory. Release
    /// every scratch filesystem on it first.
    pub fn close(mut self) -> Result<(), RecordError> {
        self.release()
    }

    fn release(&mut self) -> Result<(), RecordError> {
        let problems = cleanup::release(self.id);
        let daemon = match self.session.take() {
            None => Ok(()),
            Some(session) => {
                let deadline = Instant::now() + DAEMON_EXIT_WAIT;
                while !session.guard.is_finished() && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(5));
                }
                if session.guard.is_finished() {
                    match session.join() {
                        // The daemon's read of /dev/fuse ends with ENODEV once the disk is
                        // unmounted (fuser's normal end), or ECONNABORTED when the connection
                        // was aborted (fusectl, the kernel): either way the connection is gone,
                        // which is what closing wants. Seen once in CI at the end of
                        // `ext4_on_a_recording_disk_costs_what_it_writes`, its figures taken.
                        Err(e) if e.kind() == std::io::ErrorKind::ConnectionAborted => Ok(()),
                        r => r.map_err(RecordError::Daemon),
                    }
                } else {
                    // Left running (detached): it serves the loop device until that goes.
                    Err(RecordError::DaemonStillServing)
                }
            }
        };
        if !problems.is_empty() {
            return Err(RecordError::Cleanup(problems));
        }
        daemon
    }
}

impl Drop for RecordingDisk {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            eprintln!("joj-linux: warning: releasing {}: {e}", self.dir.display());
        }
    }
}
