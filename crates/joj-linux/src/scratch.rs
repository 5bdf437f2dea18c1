//! A scratch filesystem for one run: sparse image file(s) under a fresh directory in
//! `/run/joj` — on a tmpfs of its own mounted there ([`crate::memory`]), unless the caller
//! puts the images on a disk (`image_dir`; with direct I/O they are then written whole after
//! mkfs, [`crate::written`]) — attached to loop devices, formatted, and mounted inside that
//! directory. The
//! directory and the images carry the process's pid in their names ([`crate::names`]), so that
//! what a killed process leaves is found and removed by the next run ([`crate::leftovers`]).
//!
//! Everything it creates is recorded in the cleanup registry ([`crate::cleanup`]) at the moment
//! it is created, and released by [`ScratchFs::close`], by drop (also when a run fails or
//! panics) or by the signal handler: sync, unmount (retrying; lazily as a last resort, with a
//! warning), detach the loop devices, delete the images and directories.

use std::path::{Path, PathBuf};

use crate::cleanup::{self, CleanupProblem};
use crate::dev::{DevExtent, DevNum};
use crate::fiemap::{self, Extent, FiemapError, Unplaceable};
use crate::fs::{self, FsError, FsKind, ImageOrigin, JournalLayout};
use crate::fs_btrfs::{self, BtrfsMapError};
use crate::loopdev::{LoopDevice, LoopError, LoopOptions};
use crate::memory;
use crate::names;
use crate::prereq::{self, PrereqError};

/// Where scratch directories are made.
pub const RUN_DIR: &str = "/run/joj";
const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

/// How to make a scratch filesystem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScratchOptions {
    /// Size of the main device image. Default 1 GiB; see [`FsKind::min_size_bytes`].
    pub size_bytes: u64,
    /// Size of the external journal device (ext4-extjournal only). Default 64 MiB, the journal
    /// size mkfs.ext4 picks for a 1 GiB filesystem.
    pub journal_size_bytes: u64,
    /// Directory for the image files; `None` puts them in the scratch directory. Images are
    /// sparse: they take host space only as the filesystem writes — except in a directory on a
    /// disk with `loop_options.direct_io`, where they are written whole after mkfs
    /// ([`crate::written`]).
    pub image_dir: Option<PathBuf>,
    /// Parent of the scratch directory.
    pub run_dir: PathBuf,
    /// How the loop devices reach their images.
    pub loop_options: LoopOptions,
    /// Mount options appended to the kind's own (comma-separated), e.g. `noatime`.
    pub extra_mount_options: Option<String>,
}

impl Default for ScratchOptions {
    fn default() -> Self {
        Self {
            size_bytes: GIB,
            journal_size_bytes: 64 * MIB,
            image_dir: None,
            run_dir: PathBuf::from(RUN_DIR),
            loop_options: LoopOptions::default(),
            extra_mount_options: None,
        }
    }
}

/// What a device of a scratch filesystem holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceRole {
    /// The filesystem itself.
    Main,
    /// ext4's external journal.
    Journal,
}

impl DeviceRole {
    /// The role as image names carry it ([`crate::names`]).
    pub fn name(self) -> &'static str {
        match self {
            DeviceRole::Main => "main",
            DeviceRole::Journal => "journal",
        }
    }
}

/// One loop device of a scratch filesystem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScratchDevice {
    pub role: DeviceRole,
    /// `/dev/loopN`.
    pub path: PathBuf,
    pub dev: DevNum,
    /// The image file behind it.
    pub image: PathBuf,
}

/// Creating, using or releasing a scratch filesystem failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScratchError {
    #[error(transparent)]
    Prereq(#[from] PrereqError),
    #[error(transparent)]
    Loop(#[from] LoopError),
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error(
        "an image of {} MiB is too small for {kind}, which needs at least {} MiB; fix: ask \
         for at least {} MiB (joj: --image-mib {})",
        .size_bytes >> 20, .min_bytes.div_ceil(MIB), .min_bytes.div_ceil(MIB), .min_bytes.div_ceil(MIB)
    )]
    TooSmall {
        kind: FsKind,
        size_bytes: u64,
        min_bytes: u64,
    },
    #[error(
        "a {} MiB image written whole (direct I/O on a disk: docs/measurement.md, \"Known \
         limits\") does not fit in the {} MiB free in {dir}; fix: free space there, or ask for \
         at most {} MiB (joj: --image-mib)",
        .size_bytes >> 20, .free_bytes >> 20, .max_bytes >> 20, dir = .dir.display()
    )]
    TooLargeToWrite {
        size_bytes: u64,
        /// The largest main image that fits, with the journal device, if any.
        max_bytes: u64,
        free_bytes: u64,
        dir: PathBuf,
    },
    #[error(
        "a {} MiB image does not fit in {dir}, whose filesystem holds {} MiB in all; fix: ask \
         for at most {} MiB (joj: --image-mib)",
        .size_bytes >> 20, .total_bytes >> 20, .max_bytes >> 20, dir = .dir.display()
    )]
    TooLarge {
        size_bytes: u64,
        /// The largest main image that fits, with the journal device, if any.
        max_bytes: u64,
        total_bytes: u64,
        dir: PathBuf,
    },
    #[error(
        "a {} MiB image is more than joj keeps in memory ({} MiB, half of this machine's \
         memory: the images of a scratch filesystem live in a tmpfs); fix: ask for at most {} \
         MiB (joj: --image-mib), or put the images on a disk (joj bench: --image-dir)",
        .size_bytes >> 20, .limit_bytes >> 20, .max_bytes >> 20
    )]
    TooLargeForMemory {
        size_bytes: u64,
        /// The largest main image that fits, with the journal device, if any.
        max_bytes: u64,
        limit_bytes: u64,
    },
    #[error(
        "--image-dir {}: {why}; fix: give a directory on a disk with room for the images, or \
         leave --image-dir out (the images then live in memory)",
        .path.display()
    )]
    ImageDirNotADirectory { path: PathBuf, why: &'static str },
    #[error("cannot {what} {path}: {source}; fix: check free space and permissions there")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the scratch filesystem was released by the signal handler while being set up; fix: nothing — the process is exiting on SIGINT/SIGTERM"
    )]
    Interrupted,
    #[error(
        "cannot sync {path}: {source}; fix: see `dmesg` — the filesystem or its loop device reported an I/O error"
    )]
    Sync {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path} is not inside the scratch filesystem mounted at {mount}; fix: pass a path under the mount point"
    )]
    NotInside { path: PathBuf, mount: PathBuf },
    #[error(transparent)]
    Fiemap(#[from] FiemapError),
    #[error(transparent)]
    BtrfsMap(#[from] BtrfsMapError),
    #[error("releasing the scratch filesystem left {} problem(s): {}", .0.len(), join(.0))]
    Cleanup(Vec<CleanupProblem>),
    #[error(
        "{device} stayed in use for {waited_s} s after {mount} was unmounted here: a process in \
         another mount namespace (`unshare -m`, a container, a sandbox started while it was \
         mounted) holds a copy of the mount, so the filesystem stays alive and mounting the \
         device again would show that filesystem, not the device's contents; fix: let that \
         process end or stop it (`lsns -t mnt` lists the namespaces, `grep -l {device} \
         /proc/*/mountinfo` finds it), then run again",
        device = .device.display(), mount = .mount.display()
    )]
    HeldElsewhere {
        device: PathBuf,
        mount: PathBuf,
        waited_s: u64,
    },
}

/// The size of the filesystem holding a directory, and what an unprivileged writer may
/// still use of it.
struct Space {
    total_bytes: u64,
    free_bytes: u64,
}

/// The image sizes `options` ask for, checked before anything is made: at least what `kind`
/// needs, at most what the filesystem of the image directory holds (the images are sparse,
/// so more than its free space is allowed, with a warning). Makes the run directory.
fn check_size(kind: FsKind, options: &ScratchOptions) -> Result<(), ScratchError> {
    let min_bytes = kind.min_size_bytes();
    if options.size_bytes < min_bytes {
        return Err(ScratchError::TooSmall {
            kind,
            size_bytes: options.size_bytes,
            min_bytes,
        });
    }
    let io = |what, path: &Path| {
        let path = path.to_path_buf();
        move |source| ScratchError::Io { what, path, source }
    };
    std::fs::create_dir_all(&options.run_dir).map_err(io("create", &options.run_dir))?;
    let needed = needed_bytes(kind, options);
    let Some(image_dir) = options.image_dir.as_deref() else {
        let limit =
            memory::limit_bytes().map_err(io("read the memory size for", &options.run_dir))?;
        if needed > limit {
            return Err(ScratchError::TooLargeForMemory {
                size_bytes: needed,
                max_bytes: limit.saturating_sub(needed - options.size_bytes),
                limit_bytes: limit,
            });
        }
        return Ok(());
    };
    let not_a_dir = |why| ScratchError::ImageDirNotADirectory {
        path: image_dir.to_path_buf(),
        why,
    };
    match std::fs::metadata(image_dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(not_a_dir("not a directory")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(not_a_dir("does not exist"));
        }
        Err(e) => return Err(io("use", image_dir)(e)),
    }
    let space = space(image_dir).map_err(io("check the size of", image_dir))?;
    if needed > space.total_bytes {
        return Err(ScratchError::TooLarge {
            size_bytes: needed,
            max_bytes: space
                .total_bytes
                .saturating_sub(needed - options.size_bytes),
            total_bytes: space.total_bytes,
            dir: image_dir.to_path_buf(),
        });
    }
    if needed > space.free_bytes && writes_whole(options) {
        // Written whole after mkfs (crate::written): the images take all of their size.
        return Err(ScratchError::TooLargeToWrite {
            size_bytes: needed,
            max_bytes: space.free_bytes.saturating_sub(needed - options.size_bytes),
            free_bytes: space.free_bytes,
            dir: image_dir.to_path_buf(),
        });
    }
    if needed > space.free_bytes {
        // The images are sparse: a run takes only what its filesystem writes, usually a few
        // MiB, so a big image on a small free space is allowed — but said.
        eprintln!(
            "joj-linux: warning: the {} MiB image is larger than the {} MiB free in {}: \
                 it is sparse, but a run writing more than that fails with I/O errors on its \
                 loop device",
            needed >> 20,
            space.free_bytes >> 20,
            image_dir.display()
        );
    }
    Ok(())
}

/// Whether the images are written whole after mkfs ([`crate::written`]): on a disk (a directory
/// that is not in memory, where no journal records their extents) and reached with direct I/O.
fn writes_whole(options: &ScratchOptions) -> bool {
    options.loop_options.direct_io
        && options
            .image_dir
            .as_deref()
            .is_some_and(|d| !memory::is_memory(d).unwrap_or(false))
}

/// The bytes of the images `options` ask for: the main image and the journal device's.
fn needed_bytes(kind: FsKind, options: &ScratchOptions) -> u64 {
    options
        .size_bytes
        .saturating_add(if kind.needs_journal_device() {
            options.journal_size_bytes
        } else {
            0
        })
}

fn space(dir: &Path) -> std::io::Result<Space> {
    let st = rustix::fs::statvfs(dir)?;
    Ok(Space {
        total_bytes: st.f_blocks.saturating_mul(st.f_frsize),
        free_bytes: st.f_bavail.saturating_mul(st.f_frsize),
    })
}

fn join(problems: &[CleanupProblem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The sectors a file's data occupies, and the parts that have none of their own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileExtents {
    pub extents: Vec<DevExtent>,
    pub skipped: Vec<(Extent, Unplaceable)>,
}

/// A mounted scratch filesystem on loop devices of its own.
#[derive(Debug)]
pub struct ScratchFs {
    /// Registry entry holding every resource; released exactly once.
    id: u64,
    kind: FsKind,
    dir: PathBuf,
    mount_path: PathBuf,
    devices: Vec<ScratchDevice>,
    journal: JournalLayout,
    /// Mount options beyond the kind's own, for [`ScratchFs::mount`].
    extra_mount_options: Option<String>,
    /// Whether the image is one joj made itself or a foreign one (a crash copy, an image
    /// filled by a caller), which is mounted without symlinks, devices, set-uid or exec.
    origin: ImageOrigin,
    mounted: bool,
}

impl ScratchFs {
    /// Makes, formats and mounts a `kind` filesystem. On error, whatever was made is released.
    pub fn create(kind: FsKind, options: ScratchOptions) -> Result<Self, ScratchError> {
        prereq::check_fs(kind)?;
        check_size(kind, &options)?;
        let io = |what, path: &Path| {
            let path = path.to_path_buf();
            move |source| ScratchError::Io { what, path, source }
        };
        // From here on, drop releases the registry entry, so every early return cleans up.
        let mut me = Self::unmade(kind, &options);
        let memory = options
            .image_dir
            .is_none()
            .then(|| needed_bytes(kind, &options));
        me.make_dirs(
            &names::scratch_dir_prefix(kind, std::process::id()),
            &options,
            memory,
        )?;

        let image_dir = options.image_dir.clone().unwrap_or_else(|| me.dir.clone());
        let mut roles = vec![(DeviceRole::Main, options.size_bytes)];
        if kind.needs_journal_device() {
            roles.push((DeviceRole::Journal, options.journal_size_bytes));
        }
        for (role, size) in roles {
            let name = names::image_prefix(kind, std::process::id(), role.name());
            let image = me.track(|res| {
                let (file, path) = tempfile::Builder::new()
                    .prefix(&name)
                    .suffix(".img")
                    .rand_bytes(names::RANDOM_CHARS)
                    .tempfile_in(&image_dir)
                    .map_err(io("create an image in", &image_dir))?
                    .keep()
                    .map_err(|e| ScratchError::Io {
                        what: "keep",
                        path: image_dir.clone(),
                        source: e.error,
                    })?;
                res.files.push(path.clone());
                file.set_len(size).map_err(io("size", &path))?;
                Ok(path)
            })?;
            let lo = me.attach_loop(role, image, &options)?;
            me.devices.push(lo);
        }

        let main = me.main_device().clone();
        let journal = me.journal_device().cloned();
        fs::mkfs(kind, &main.path, journal.as_ref().map(|j| j.path.as_path()))?;
        if writes_whole(&options) {
            for d in &me.devices {
                // What mkfs wrote through the loop device is on the image before it is mapped.
                std::fs::File::open(&d.path)
                    .and_then(|f| f.sync_all())
                    .map_err(io("sync", &d.path))?;
                let written = crate::written::write_whole(&d.image)
                    .map_err(io("write zeros over the holes of", &d.image))?;
                if written.is_none() {
                    eprintln!(
                        "joj-linux: warning: {} stays sparse: its filesystem does not map \
                         extents (FIEMAP), so a first write to the image may cost that \
                         filesystem's journal at the loop device's next flush \
                         (docs/measurement.md, \"Known limits\")",
                        d.image.display()
                    );
                }
            }
        }
        me.journal = fs::journal_layout(
            kind,
            (&main.path, main.dev),
            journal.as_ref().map(|j| (j.path.as_path(), j.dev)),
        )?;
        me.mount()?;
        Ok(me)
    }

    /// A new registry entry and nothing made yet; dropping it releases the entry.
    fn unmade(kind: FsKind, options: &ScratchOptions) -> Self {
        Self {
            id: cleanup::open_entry(),
            kind,
            dir: PathBuf::new(),
            mount_path: PathBuf::new(),
            devices: Vec::new(),
            journal: JournalLayout::default(),
            extra_mount_options: options.extra_mount_options.clone(),
            origin: ImageOrigin::Made,
            mounted: false,
        }
    }

    /// A loop device over `image`, tracked.
    fn attach_loop(
        &self,
        role: DeviceRole,
        image: PathBuf,
        options: &ScratchOptions,
    ) -> Result<ScratchDevice, ScratchError> {
        self.track(|res| {
            let lo = LoopDevice::attach(&image, &options.loop_options)?;
            let dev = ScratchDevice {
                role,
                path: lo.path().into(),
                dev: lo.dev(),
                image,
            };
            res.loops.push(lo);
            Ok(dev)
        })
    }

    /// The scratch directory (prefix `prefix`) and its mount point, tracked; with
    /// `memory_bytes`, a tmpfs of that many image bytes on the directory ([`memory`]), for
    /// images made in it.
    fn make_dirs(
        &mut self,
        prefix: &str,
        options: &ScratchOptions,
        memory_bytes: Option<u64>,
    ) -> Result<(), ScratchError> {
        let io = |what, path: &Path| {
            let path = path.to_path_buf();
            move |source| ScratchError::Io { what, path, source }
        };
        self.dir = self.track(|res| {
            let dir = tempfile::Builder::new()
                .prefix(prefix)
                .rand_bytes(names::RANDOM_CHARS)
                .tempdir_in(&options.run_dir)
                .map_err(io("create a directory in", &options.run_dir))?
                .keep();
            res.dirs.push(dir.clone());
            Ok(dir)
        })?;
        if let Some(bytes) = memory_bytes {
            let dir = self.dir.clone();
            self.track(|res| {
                memory::mount_on(&dir, bytes).map_err(io("mount a tmpfs on", &dir))?;
                res.memory_mounts.push(dir.clone());
                Ok(())
            })?;
        }
        self.mount_path = self.dir.join("mnt");
        let mnt = self.mount_path.clone();
        self.track(|res| {
            std::fs::create_dir(&mnt).map_err(io("create", &mnt))?;
            res.dirs.push(mnt.clone());
            Ok(())
        })
    }

    /// Mount the filesystem at [`ScratchFs::mount_path`] (done by `create`; a [`crash_copy`]
    /// is mounted by its caller, which is when the kernel replays the filesystem's journal). A
    /// crash copy or an image from [`ScratchFs::from_image`] is foreign: it is mounted
    /// `nosymfollow,nodev,nosuid,noexec` ([`crate::fs::FOREIGN_MOUNT_FLAGS`]).
    ///
    /// [`crash_copy`]: ScratchFs::crash_copy
    pub fn mount(&mut self) -> Result<(), ScratchError> {
        if self.mounted {
            return Ok(());
        }
        let main = self.main_device().path.clone();
        let journal = self.journal_device().map(|j| j.path.clone());
        let mnt = self.mount_path.clone();
        let (kind, extra, origin) = (self.kind, self.extra_mount_options.clone(), self.origin);
        self.track(|res| {
            fs::mount(
                kind,
                &main,
                journal.as_deref(),
                &mnt,
                extra.as_deref(),
                origin,
            )?;
            res.mounts.push(mnt.clone());
            Ok(())
        })?;
        self.mounted = true;
        Ok(())
    }

    /// A copy of this filesystem as a power cut at this instant would leave it: each image
    /// holds exactly what its loop device has written (a write the loop driver completed is in
    /// the image file; data and metadata still dirty in the kernel's caches above it are not),
    /// attached to new loop devices of a new scratch filesystem, not mounted. Call
    /// [`ScratchFs::mount`] to recover it. Copies only the images' data segments (they are
    /// sparse); the original is untouched and stays mounted.
    pub fn crash_copy(&self, options: &ScratchOptions) -> Result<ScratchFs, ScratchError> {
        let mut copy = Self::unmade(self.kind, options);
        copy.origin = ImageOrigin::Foreign;
        let pid = std::process::id();
        let mut image_bytes = 0u64;
        for d in &self.devices {
            let len = std::fs::metadata(&d.image)
                .map_err(|source| ScratchError::Io {
                    what: "read the size of",
                    path: d.image.clone(),
                    source,
                })?
                .len();
            image_bytes = image_bytes.saturating_add(len);
        }
        copy.make_dirs(
            &names::crash_dir_prefix(self.kind, pid),
            options,
            Some(image_bytes),
        )?;
        let mut renamed = Vec::new();
        for d in &self.devices {
            let image = copy.dir.join(format!("{}.img", d.role.name()));
            let target = image.clone();
            copy.track(|res| {
                res.files.push(target.clone());
                copy_sparse(&d.image, &target)
            })?;
            let dev = copy.attach_loop(d.role, image, options)?;
            renamed.push((d.dev.to_string(), dev.dev.to_string()));
            copy.devices.push(dev);
        }
        // The same sectors hold the journal; only the device numbers are new.
        let rename = |dev: &str| {
            renamed
                .iter()
                .find(|(old, _)| old == dev)
                .map_or_else(|| dev.to_string(), |(_, new)| new.clone())
        };
        copy.journal = JournalLayout {
            journal_devs: self
                .journal
                .journal_devs
                .iter()
                .map(|d| rename(d))
                .collect(),
            extents: self
                .journal
                .extents
                .iter()
                .map(|e| DevExtent {
                    dev: rename(&e.dev),
                    ..e.clone()
                })
                .collect(),
        };
        Ok(copy)
    }

    /// A `kind` filesystem on an image that `fill` writes (given the new, empty image file of
    /// `options.size_bytes`), attached to a new loop device, not mounted: a crash state to
    /// check. Call [`ScratchFs::mount`] to recover it, [`ScratchFs::unmount`] and
    /// [`ScratchFs::refill`] to check the next state on the same loop device. Single-device
    /// kinds only.
    pub fn from_image(
        kind: FsKind,
        options: &ScratchOptions,
        fill: impl FnOnce(&std::fs::File) -> std::io::Result<()>,
    ) -> Result<ScratchFs, ScratchError> {
        prereq::check_fs(kind)?;
        // A size from a file (a recorded log's device) is checked as an asked-for one is: a
        // 2^62-byte image would otherwise fail in `ftruncate` as "File too large".
        // The image is made in the scratch directory's tmpfs whatever `image_dir` says: bounded
        // by memory.
        check_size(
            kind,
            &ScratchOptions {
                image_dir: None,
                ..options.clone()
            },
        )?;
        let mut me = Self::unmade(kind, options);
        me.origin = ImageOrigin::Foreign;
        me.make_dirs(
            &names::crash_dir_prefix(kind, std::process::id()),
            options,
            Some(options.size_bytes),
        )?;
        let image = me.dir.join(format!("{}.img", DeviceRole::Main.name()));
        let target = image.clone();
        me.track(|res| {
            res.files.push(target.clone());
            let file = std::fs::File::create_new(&target).map_err(|source| ScratchError::Io {
                what: "create",
                path: target.clone(),
                source,
            })?;
            refill_file(&file, &target, options.size_bytes, fill)
        })?;
        let dev = me.attach_loop(DeviceRole::Main, image, options)?;
        me.devices.push(dev);
        Ok(me)
    }

    /// Replaces the (unmounted) image's content with what `fill` writes into it, emptied and
    /// sized as before, and drops the loop device's cached blocks so the next mount reads it.
    pub fn refill(
        &self,
        fill: impl FnOnce(&std::fs::File) -> std::io::Result<()>,
    ) -> Result<(), ScratchError> {
        assert!(!self.mounted, "refill of a mounted filesystem");
        let main = self.main_device();
        let io = |what, path: &Path| {
            let path = path.to_path_buf();
            move |source| ScratchError::Io { what, path, source }
        };
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&main.image)
            .map_err(io("open", &main.image))?;
        let size = file.metadata().map_err(io("stat", &main.image))?.len();
        refill_file(&file, &main.image, size, fill)?;
        crate::loopdev::flush_buffers(&main.path)
            .map_err(io("drop the cached blocks of", &main.path))
    }

    /// Unmounts the filesystem, keeping its loop devices (to check or refill the image).
    pub fn unmount(&mut self) -> Result<(), ScratchError> {
        if !self.mounted {
            return Ok(());
        }
        let mnt = self.mount_path.clone();
        self.track(|res| {
            cleanup::unmount(&mnt).map_err(|p| ScratchError::Cleanup(vec![p]))?;
            res.mounts.retain(|m| m != &mnt);
            Ok(())
        })?;
        self.mounted = false;
        self.released_everywhere()?;
        crate::loopdev::flush_buffers(&self.main_device().path).map_err(|source| ScratchError::Io {
            what: "drop the cached blocks of",
            path: self.main_device().path.clone(),
            source,
        })
    }

    /// After an unmount: waits (a while) until no mount namespace holds the filesystem any
    /// more. A copy of the mount elsewhere keeps the filesystem alive, and a later mount of the
    /// device would show it — stale — instead of what was written to the image since: a crash
    /// check would then judge the wrong state.
    fn released_everywhere(&self) -> Result<(), ScratchError> {
        const ATTEMPTS: u64 = 200;
        const DELAY: std::time::Duration = std::time::Duration::from_millis(50);
        let device = &self.main_device().path;
        for _ in 0..ATTEMPTS {
            let claimed =
                crate::loopdev::is_claimed(device).map_err(|source| ScratchError::Io {
                    what: "open exclusively",
                    path: device.clone(),
                    source,
                })?;
            if !claimed {
                return Ok(());
            }
            std::thread::sleep(DELAY);
        }
        Err(ScratchError::HeldElsewhere {
            device: device.clone(),
            mount: self.mount_path.clone(),
            waited_s: ATTEMPTS * DELAY.as_millis() as u64 / 1000,
        })
    }

    /// Runs `create` under the registry lock with this filesystem's resources.
    fn track<T>(
        &self,
        create: impl FnOnce(&mut cleanup::Resources) -> Result<T, ScratchError>,
    ) -> Result<T, ScratchError> {
        cleanup::track(self.id, create).unwrap_or(Err(ScratchError::Interrupted))
    }

    pub fn kind(&self) -> FsKind {
        self.kind
    }

    /// Whether `bytes` more could be allocated on the mounted filesystem: an unnamed file
    /// (`O_TMPFILE`, gone when closed) is given them with `fallocate`. Free-space counts do
    /// not say it — ext4 and btrfs refuse data with blocks still counted free (reserved
    /// clusters, metadata chunks) — so it is asked of the filesystem itself. It writes to the
    /// filesystem: call it outside a measured window.
    pub fn has_room_for(&self, bytes: u64) -> std::io::Result<bool> {
        use std::os::unix::fs::OpenOptionsExt;
        let probe = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_TMPFILE)
            .open(self.mount_path())?;
        let len = libc::off_t::try_from(bytes).unwrap_or(libc::off_t::MAX);
        // SAFETY: fallocate on a descriptor this function owns.
        let rc = unsafe { libc::fallocate(std::os::fd::AsRawFd::as_raw_fd(&probe), 0, 0, len) };
        if rc == 0 {
            return Ok(true);
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::ENOSPC | libc::EDQUOT) => Ok(false),
            _ => Err(e),
        }
    }

    /// Where the filesystem is mounted.
    pub fn mount_path(&self) -> &Path {
        &self.mount_path
    }

    /// The scratch directory (holds the mount point and, by default, the images).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The loop devices: the main one first, then the journal device if the kind has one.
    pub fn devices(&self) -> &[ScratchDevice] {
        &self.devices
    }

    /// The device the filesystem lives on.
    pub fn main_device(&self) -> &ScratchDevice {
        // `create` pushes the main device before anything can observe `self`.
        &self.devices[0]
    }

    /// The external journal device, for ext4-extjournal.
    pub fn journal_device(&self) -> Option<&ScratchDevice> {
        self.devices.iter().find(|d| d.role == DeviceRole::Journal)
    }

    /// `major:minor` of every device, as [`crate::BlockTracer::start`] takes them.
    pub fn dev_ids(&self) -> Vec<String> {
        self.devices.iter().map(|d| d.dev.to_string()).collect()
    }

    /// Where the journal lives (found right after mkfs).
    pub fn journal_layout(&self) -> &JournalLayout {
        &self.journal
    }

    /// Writes back everything dirty in this filesystem (`syncfs`).
    pub fn sync(&self) -> Result<(), ScratchError> {
        let sync_err = |source| ScratchError::Sync {
            path: self.mount_path.clone(),
            source,
        };
        let dir = std::fs::File::open(&self.mount_path).map_err(sync_err)?;
        rustix::fs::syncfs(&dir).map_err(|e| sync_err(e.into()))
    }

    /// The device sectors holding the data of `path` (a file in this filesystem). Sync first:
    /// delayed-allocation extents have no sectors yet and come back in `skipped`. On btrfs the
    /// chunk map is read now, so chunks allocated since mkfs are included; each copy of a DUP
    /// chunk is its own extent.
    pub fn file_extents(&self, path: &Path) -> Result<FileExtents, ScratchError> {
        if !path.starts_with(&self.mount_path) {
            return Err(ScratchError::NotInside {
                path: path.into(),
                mount: self.mount_path.clone(),
            });
        }
        let raw = fiemap::fiemap_path(path)?;
        let main = self.main_device();
        let dev = main.dev.to_string();
        if self.kind.fs_type() != "btrfs" {
            let (extents, skipped) = fiemap::to_dev_extents(&raw, &dev);
            return Ok(FileExtents { extents, skipped });
        }
        let chunks = fs_btrfs::read_chunk_map(&main.path)?;
        let mut out = FileExtents::default();
        for e in raw {
            match e.placement() {
                Err(why) => out.skipped.push((e, why)),
                Ok(_) => {
                    for (offset, len) in
                        fs_btrfs::map_logical(&chunks, e.physical_bytes, e.length_bytes)?
                    {
                        let physical = Extent {
                            physical_bytes: offset,
                            length_bytes: len,
                            ..e
                        };
                        let (sector, sectors) =
                            physical.placement().map_err(|_| BtrfsMapError::Unmapped {
                                logical: e.physical_bytes,
                                length: e.length_bytes,
                            })?;
                        out.extents.push(DevExtent {
                            dev: dev.clone(),
                            sector,
                            sectors,
                        });
                    }
                }
            }
        }
        Ok(out)
    }

    /// Unmounts and removes everything, reporting what could not be released.
    pub fn close(self) -> Result<(), ScratchError> {
        // Drop runs next and finds the registry entry already taken: nothing is released twice.
        let problems = self.release();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ScratchError::Cleanup(problems))
        }
    }

    fn release(&self) -> Vec<CleanupProblem> {
        cleanup::release(self.id)
    }
}

/// Empties `file`, sizes it to `size` bytes (sparse) and lets `fill` write it.
fn refill_file(
    file: &std::fs::File,
    path: &Path,
    size: u64,
    fill: impl FnOnce(&std::fs::File) -> std::io::Result<()>,
) -> Result<(), ScratchError> {
    let io = |what| {
        let path = path.to_path_buf();
        move |source| ScratchError::Io { what, path, source }
    };
    file.set_len(0).map_err(io("empty"))?;
    file.set_len(size).map_err(io("size"))?;
    fill(file).map_err(io("write the crash state into"))
}

/// Copy `from` to a new file `to` of the same length, data segments only (`SEEK_DATA` /
/// `SEEK_HOLE`), so a sparse image stays sparse.
fn copy_sparse(from: &Path, to: &Path) -> Result<(), ScratchError> {
    use std::os::unix::fs::FileExt;
    let io = |what, path: &Path| {
        let path = path.to_path_buf();
        move |source: std::io::Error| ScratchError::Io { what, path, source }
    };
    let src = std::fs::File::open(from).map_err(io("open", from))?;
    let len = src.metadata().map_err(io("stat", from))?.len();
    let dst = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)
        .map_err(io("create", to))?;
    dst.set_len(len).map_err(io("size", to))?;
    let mut buf = vec![0u8; 1 << 20];
    let mut pos = 0u64;
    while pos < len {
        let data = match rustix::fs::seek(&src, rustix::fs::SeekFrom::Data(pos)) {
            Ok(d) => d,
            // ENXIO: no data at or after `pos`.
            Err(rustix::io::Errno::NXIO) => break,
            Err(e) => return Err(io("seek in", from)(e.into())),
        };
        let hole = rustix::fs::seek(&src, rustix::fs::SeekFrom::Hole(data))
            .map_err(|e| io("seek in", from)(e.into()))?;
        let mut at = data;
        while at < hole {
            let n = buf.len().min((hole - at) as usize);
            src.read_exact_at(&mut buf[..n], at)
                .map_err(io("read", from))?;
            dst.write_all_at(&buf[..n], at).map_err(io("write", to))?;
            at += n as u64;
        }
        pos = hole;
    }
    dst.sync_all().map_err(io("sync", to))
}

impl Drop for ScratchFs {
    fn drop(&mut self) {
        for p in self.release() {
            eprintln!("joj-linux: warning: releasing {}: {p}", self.dir.display());
        }
    }
}
