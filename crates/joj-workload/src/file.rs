//! Mobibench's file workloads: sequential or random writes and reads, and appends, of a fixed
//! record size, made durable by buffered I/O, `O_SYNC`, `fsync`, `fdatasync`, `O_DIRECT` or
//! `O_DIRECT|O_DSYNC`. One file per thread. Files that are read or overwritten at random are
//! written in full and synced before the window (and, for buffered reads, dropped from the
//! page cache) so the window measures the access itself.

use crate::config::bounds::latency_samples;
use crate::config::{FileAccess, FileSync, FileWorkload};
use crate::error::{ConfigError, WorkloadError};
use crate::made::{Made, MadeFile};
use crate::thread_usage::ThreadUsage;
use crate::window::Window;
use joj_vfs::IoCounters;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::fs::OpenOptions;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Alignment of the I/O buffer: enough for O_DIRECT on any device here (4 KiB logical blocks
/// at most).
const BUFFER_ALIGN: usize = 4096;

/// What the measured window produced.
#[derive(Debug, Clone)]
pub struct FileRunOutput {
    pub latencies_ns: Vec<u64>,
    pub elapsed: Duration,
    /// System calls issued in the window (file bytes go to `other_bytes`).
    pub syscalls: IoCounters,
    pub files: Vec<PathBuf>,
    /// Each thread's context switches and CPU time over its operations, in thread order.
    pub threads: Vec<ThreadUsage>,
}

/// A zeroed heap buffer aligned for O_DIRECT; std's Vec cannot promise the alignment.
struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

impl AlignedBuf {
    fn new(len: usize, fill: u8) -> Result<AlignedBuf, WorkloadError> {
        let layout = Layout::from_size_align(len.max(1), BUFFER_ALIGN)
            .map_err(|_| WorkloadError::BufferAlloc { bytes: len })?;
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(WorkloadError::BufferAlloc { bytes: len });
        }
        // SAFETY: ptr is valid for len bytes.
        unsafe { std::ptr::write_bytes(ptr, fill, len) };
        Ok(AlignedBuf { ptr, layout })
    }

    fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for layout.size() initialised bytes while self lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `new`.
        unsafe { dealloc(self.ptr, self.layout) };
    }
}

// SAFETY: the buffer is plain owned memory.
unsafe impl Send for AlignedBuf {}

fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> WorkloadError {
    let what = what.into();
    move |source| {
        if source.kind() == std::io::ErrorKind::StorageFull {
            WorkloadError::DiskFull { what }
        } else {
            WorkloadError::Io { what, source }
        }
    }
}

pub fn file_path(dir: &Path, thread: u32) -> PathBuf {
    dir.join(format!("joj-file-{thread}.dat"))
}

/// Create each thread's file; for reads and random writes write it in full and sync it.
/// Refuses a workload that would not fit in `dir`'s free space; on any error, the files it
/// created are removed again.
pub fn prepare(dir: &Path, w: &FileWorkload) -> Result<(), WorkloadError> {
    prepare_made(dir, w, None)
}

/// [`prepare`], recording in `made` each file it creates and keeps, so that a run in a host
/// directory can remove them at its end.
pub fn prepare_made(
    dir: &Path,
    w: &FileWorkload,
    made: Option<&mut Made>,
) -> Result<(), WorkloadError> {
    w.validate()?;
    check_room(dir, w)?;
    for t in 0..w.threads {
        let path = file_path(dir, t);
        if crate::sqlite::taken(&path)? {
            return Err(ConfigError::FileExists(path).into());
        }
    }
    let mut count = 0;
    create_files(dir, w, &mut count, made).inspect_err(|_| remove_first(dir, count))
}

/// Removes the workload's files (a failed run's), ignoring any that are not there: all of them
/// were made by [`prepare`].
pub fn remove_files(dir: &Path, w: &FileWorkload) {
    remove_first(dir, w.threads);
}

/// Removes the files of threads `0..threads`.
fn remove_first(dir: &Path, threads: u32) {
    for t in 0..threads {
        let _ = std::fs::remove_file(file_path(dir, t));
    }
}

/// The files the workload writes fit in what `dir`'s filesystem has free.
fn check_room(dir: &Path, w: &FileWorkload) -> Result<(), WorkloadError> {
    let st = rustix::fs::statvfs(dir).map_err(|e| WorkloadError::Io {
        what: format!("checking the free space of {}", dir.display()),
        source: e.into(),
    })?;
    let free_bytes = st.f_bavail.saturating_mul(st.f_frsize);
    let needed_bytes = w.file_size_bytes.saturating_mul(w.threads.into());
    if needed_bytes > free_bytes {
        return Err(WorkloadError::NoRoom {
            dir: dir.to_path_buf(),
            needed_bytes,
            free_bytes,
        });
    }
    Ok(())
}

/// Creates each thread's file — new, never one that appeared since [`prepare`] looked, nor
/// through a symbolic link — counting in `count` the files created, which are the only ones a
/// failure removes, and recording each in `made`.
fn create_files(
    dir: &Path,
    w: &FileWorkload,
    count: &mut u32,
    mut made: Option<&mut Made>,
) -> Result<(), WorkloadError> {
    let buf = AlignedBuf::new(w.record_bytes as usize, b'p')?;
    for t in 0..w.threads {
        let path = file_path(dir, t);
        let f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(io_err(format!("creating {}", path.display())))?;
        *count = t + 1;
        if let Some(made) = made.as_deref_mut() {
            made.file(
                MadeFile::of(&path, &f).map_err(io_err(format!("reading {}", path.display())))?,
            );
        }
        if matches!(
            w.access,
            FileAccess::Read | FileAccess::RandRead | FileAccess::RandWrite
        ) {
            for i in 0..w.ops_per_thread() {
                f.write_all_at(buf.as_slice(), i * w.record_bytes)
                    .map_err(io_err(format!("filling {}", path.display())))?;
            }
            f.sync_all().map_err(io_err("syncing the filled file"))?;
            // SAFETY: advisory call on an open descriptor.
            unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        }
    }
    Ok(())
}

fn open_flags(w: &FileWorkload) -> i32 {
    let mut flags = 0;
    match w.sync {
        FileSync::OSync => flags |= libc::O_SYNC,
        FileSync::ODirect => flags |= libc::O_DIRECT,
        FileSync::ODirectDsync => flags |= libc::O_DIRECT | libc::O_DSYNC,
        FileSync::ODirectSync => flags |= libc::O_DIRECT | libc::O_SYNC,
        FileSync::Buffered | FileSync::Fsync | FileSync::Fdatasync => {}
    }
    flags
}

#[derive(Default)]
struct ThreadCounts {
    fsync: u64,
    fdatasync: u64,
    write_calls: u64,
    write_bytes: u64,
    read_calls: u64,
    read_bytes: u64,
}

fn run_thread(
    path: &Path,
    w: &FileWorkload,
    thread: u32,
    progress: Option<&AtomicU64>,
) -> Result<(Vec<u64>, ThreadCounts, ThreadUsage), WorkloadError> {
    let file = OpenOptions::new()
        .read(true)
        .write(w.access.is_write())
        .append(w.access == FileAccess::Append)
        .custom_flags(open_flags(w))
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::EINVAL) && w.sync.is_direct() {
                WorkloadError::DirectIoRefused(path.to_path_buf())
            } else {
                WorkloadError::Io {
                    what: format!("opening {}", path.display()),
                    source: e,
                }
            }
        })?;
    let ops = w.ops_per_thread();
    let mut rng = ChaCha8Rng::seed_from_u64(w.seed ^ (u64::from(thread) << 32));
    let mut buf = AlignedBuf::new(w.record_bytes as usize, b'a' + (thread % 26) as u8)?;
    let mut lat = latency_samples(ops);
    let mut c = ThreadCounts::default();
    let usage_before = ThreadUsage::now()?;
    for i in 0..ops {
        let offset = match w.access {
            FileAccess::RandWrite | FileAccess::RandRead => {
                rng.random_range(0..ops) * w.record_bytes
            }
            _ => i * w.record_bytes,
        };
        let t0 = Instant::now();
        if w.access.is_write() {
            let r = if w.access == FileAccess::Append {
                use std::io::Write;
                (&file).write_all(buf.as_slice())
            } else {
                file.write_all_at(buf.as_slice(), offset)
            };
            r.map_err(io_err(format!("writing {}", path.display())))?;
            c.write_calls += 1;
            c.write_bytes += w.record_bytes;
            match w.sync {
                FileSync::Fsync => {
                    file.sync_all().map_err(io_err("fsync"))?;
                    c.fsync += 1;
                }
                FileSync::Fdatasync => {
                    file.sync_data().map_err(io_err("fdatasync"))?;
                    c.fdatasync += 1;
                }
                _ => {}
            }
        } else {
            file.read_exact_at(buf.as_mut_slice(), offset)
                .map_err(io_err(format!("reading {}", path.display())))?;
            c.read_calls += 1;
            c.read_bytes += w.record_bytes;
        }
        lat.push(t0.elapsed().as_nanos() as u64);
        if let Some(p) = progress {
            p.fetch_add(1, Ordering::Relaxed);
        }
    }
    let usage = ThreadUsage::now()?.since(&usage_before);
    Ok((lat, c, usage))
}

/// Run the file workload, measuring only inside `window`. On an error, the workload's files
/// are removed.
pub fn run(
    dir: &Path,
    w: &FileWorkload,
    window: &dyn Window,
    progress: Option<Arc<AtomicU64>>,
) -> Result<FileRunOutput, WorkloadError> {
    w.validate()?;
    // The files are the run's own ([`prepare`] refuses existing ones): a failed run removes
    // them, so a full disk is not left full.
    run_threads(dir, w, window, progress).inspect_err(|_| remove_files(dir, w))
}

fn run_threads(
    dir: &Path,
    w: &FileWorkload,
    window: &dyn Window,
    progress: Option<Arc<AtomicU64>>,
) -> Result<FileRunOutput, WorkloadError> {
    let n = w.threads as usize;
    let go = Barrier::new(n + 1);
    let done = Barrier::new(n + 1);
    let (results, elapsed, window_result) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..w.threads)
            .map(|t| {
                let (go, done, progress) = (&go, &done, progress.clone());
                s.spawn(move || {
                    go.wait();
                    let r = run_thread(&file_path(dir, t), w, t, progress.as_deref());
                    done.wait();
                    r
                })
            })
            .collect();
        let begun = window.begin();
        let t0 = Instant::now();
        go.wait();
        done.wait();
        let elapsed = t0.elapsed();
        let ended = if begun.is_ok() { window.end() } else { Ok(()) };
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(WorkloadError::ThreadPanicked))
            })
            .collect();
        (results, elapsed, begun.and(ended))
    });
    window_result?;
    let mut latencies = Vec::new();
    let mut sys = IoCounters::default();
    let mut threads = Vec::with_capacity(results.len());
    for r in results {
        let (lat, c, usage) = r?;
        latencies.extend(lat);
        threads.push(usage);
        sys.fsync += c.fsync;
        sys.fdatasync += c.fdatasync;
        sys.write_calls += c.write_calls;
        sys.write_bytes += c.write_bytes;
        sys.other_bytes += c.write_bytes;
        sys.read_calls += c.read_calls;
        sys.read_bytes += c.read_bytes;
    }
    Ok(FileRunOutput {
        latencies_ns: latencies,
        elapsed,
        syscalls: sys,
        files: (0..w.threads).map(|t| file_path(dir, t)).collect(),
        threads,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_full_filesystem_is_reported_as_full_with_its_fix() {
        let full = std::io::Error::from(std::io::ErrorKind::StorageFull);
        let e = io_err("writing f")(full);
        assert!(matches!(e, WorkloadError::DiskFull { .. }), "{e:?}");
        assert!(e.to_string().contains("fix:"), "{e}");
        let other = io_err("writing f")(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
        assert!(matches!(other, WorkloadError::Io { .. }), "{other:?}");
    }

    use super::*;

    #[test]
    fn every_access_pattern_does_size_over_record_operations() {
        for access in [
            FileAccess::Write,
            FileAccess::RandWrite,
            FileAccess::Read,
            FileAccess::RandRead,
            FileAccess::Append,
        ] {
            for sync in [
                FileSync::Buffered,
                FileSync::Fsync,
                FileSync::Fdatasync,
                FileSync::OSync,
            ] {
                let dir = tempfile::tempdir().unwrap();
                let w = FileWorkload {
                    access,
                    sync,
                    file_size_bytes: 64 * 1024,
                    record_bytes: 4096,
                    threads: 2,
                    seed: 1,
                };
                prepare(dir.path(), &w).unwrap();
                let out = run(dir.path(), &w, &crate::window::Unmeasured, None).unwrap();
                assert_eq!(out.latencies_ns.len(), 32, "{access} {sync}");
                if access.is_write() {
                    assert_eq!(out.syscalls.write_bytes, 2 * 64 * 1024);
                    let syncs = out.syscalls.fsync + out.syscalls.fdatasync;
                    let expected = if matches!(sync, FileSync::Fsync | FileSync::Fdatasync) {
                        32
                    } else {
                        0
                    };
                    assert_eq!(syncs, expected, "{access} {sync}");
                } else {
                    assert_eq!(out.syscalls.read_bytes, 2 * 64 * 1024);
                }
                let len = std::fs::metadata(file_path(dir.path(), 0)).unwrap().len();
                assert_eq!(len, 64 * 1024, "{access} {sync}");
            }
        }
    }

    #[test]
    fn misaligned_direct_records_are_refused_before_any_io() {
        let w = FileWorkload {
            sync: FileSync::ODirect,
            record_bytes: 1000,
            ..Default::default()
        };
        assert_eq!(
            w.validate(),
            Err(ConfigError::DirectRecord { record_bytes: 1000 })
        );
    }
}
