//! Reading a tracefs instance's binary ring-buffer pages, one reader per CPU
//! (`per_cpu/cpuN/trace_pipe_raw`, opened non-blocking), for the live readers that decode them
//! ([`crate::syscall_trace`], [`crate::block_stream`]). A read consumes what it returns: a page
//! the writer is still filling comes back as far as it is committed, and the rest with the
//! next read. The pages' layout and records: [`crate::raw_event`].

use std::path::{Path, PathBuf};

use crate::raw_event::parse_page;
use crate::tracefs::TraceError;

/// One CPU's `trace_pipe_raw`.
#[derive(Debug)]
pub(crate) struct CpuReader {
    pub(crate) cpu: usize,
    file: std::fs::File,
    path: PathBuf,
}

/// Open every CPU's reader of the instance at `instance`, in CPU order.
pub(crate) fn open_cpus(instance: &Path) -> Result<Vec<CpuReader>, TraceError> {
    use std::os::unix::fs::OpenOptionsExt;
    let per_cpu = instance.join("per_cpu");
    let entries = std::fs::read_dir(&per_cpu).map_err(|source| TraceError::Read {
        path: per_cpu.clone(),
        source,
    })?;
    let mut cpus = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(cpu) = name
            .to_str()
            .and_then(|n| n.strip_prefix("cpu"))
            .and_then(|n| n.parse().ok())
        else {
            continue;
        };
        let path = e.path().join("trace_pipe_raw");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&path)
            .map_err(|source| TraceError::Read {
                path: path.clone(),
                source,
            })?;
        cpus.push(CpuReader { cpu, file, path });
    }
    cpus.sort_by_key(|c| c.cpu);
    Ok(cpus)
}

impl CpuReader {
    /// Read the next page into `buf`: its length, or `None` when nothing is left for now.
    pub(crate) fn next_page(&mut self, buf: &mut [u8]) -> Result<Option<usize>, TraceError> {
        use std::io::Read;
        loop {
            return match self.file.read(buf) {
                Ok(0) => Ok(None),
                Ok(n) => Ok(Some(n)),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(source) => Err(TraceError::Read {
                    path: self.path.clone(),
                    source,
                }),
            };
        }
    }
}

/// Read every CPU's pages in `page` (a buffer of the instance's page size) and hand each record,
/// its time and its bytes, to `f`. A page whose header says events were lost before it is an
/// error: a live reader that misses events would count wrong.
pub(crate) fn for_each_record(
    cpus: &mut [CpuReader],
    page: &mut [u8],
    buffer_kb: u32,
    mut f: impl FnMut(u64, &[u8]) -> Result<(), TraceError>,
) -> Result<(), TraceError> {
    for c in cpus {
        while let Some(n) = c.next_page(page)? {
            let parsed = parse_page(&page[..n]).map_err(TraceError::Raw)?;
            if let Some(lost) = parsed.missed {
                return Err(TraceError::EventsLost {
                    lost: lost.max(1),
                    buffer_kb,
                });
            }
            for r in &parsed.records {
                f(r.time_ns, r.data)?;
            }
        }
    }
    Ok(())
}

/// Wait until a CPU's buffer holds what the instance's `buffer_percent` asks a reader to be
/// woken for, `wake` is readable, or `at_most` has passed, whichever comes first.
pub(crate) fn wait_for_pages(
    cpus: &[CpuReader],
    wake: std::os::fd::BorrowedFd<'_>,
    at_most: std::time::Duration,
) -> Result<(), TraceError> {
    use rustix::event::{PollFd, PollFlags, Timespec};
    let mut fds: Vec<PollFd<'_>> = cpus
        .iter()
        .map(|c| PollFd::new(&c.file, PollFlags::IN))
        .chain([PollFd::from_borrowed_fd(wake, PollFlags::IN)])
        .collect();
    let timeout = Timespec::try_from(at_most).unwrap_or(Timespec {
        tv_sec: i64::MAX,
        tv_nsec: 0,
    });
    match rustix::event::poll(&mut fds, Some(&timeout)) {
        Ok(_) | Err(rustix::io::Errno::INTR) => Ok(()),
        Err(e) => Err(TraceError::Read {
            path: cpus.first().map_or_else(PathBuf::new, |c| c.path.clone()),
            source: e.into(),
        }),
    }
}

/// A tracefs text file, read in one call of a page or more: `events/header_page` answers a
/// short first read (`read_to_string`'s 32-byte probe) and the next one inconsistently.
pub(crate) fn read_text(path: &Path) -> Result<String, TraceError> {
    use std::io::Read;
    let err = |source| TraceError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut f = std::fs::File::open(path).map_err(err)?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut len = 0;
    while len < buf.len() {
        match f.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(err(e)),
        }
    }
    buf.truncate(len);
    Ok(String::from_utf8_lossy(&buf).into_owned())
}
