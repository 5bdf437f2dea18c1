//! CPUs held awake for a run (`--cpus-awake`): a PM QoS CPU latency request of 0 µs, made as
//! the kernel's interface defines it (Documentation/power/pm_qos_interface.rst): open
//! `/dev/cpu_dma_latency`, write the value as a 32-bit integer, keep the descriptor open. While
//! any such request of 0 is held, the cpuidle governor picks no idle state with an exit
//! latency, so an idle CPU polls instead of sleeping and a completion or wake-up never waits
//! for a CPU to come back. The kernel drops the request when the descriptor is closed, so a
//! joj that is killed leaves nothing behind.
//!
//! Why a run wants it (docs/device-model.md, "CPUs held awake"): on a VM whose idle vCPUs halt
//! at once, each halt is a VM exit, and an I/O-bound SQLite run then spends much of its time
//! waiting for CPUs to wake, a share that varies from run to run.

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// The kernel's PM QoS CPU latency device.
pub const CPU_LATENCY_DEV: &str = "/dev/cpu_dma_latency";

/// Why the CPUs could not be held awake.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CpuLatencyError {
    /// The device is missing (`source`) or is not a character device (no source).
    #[error(
        "cannot hold the CPUs awake: {} is {}; fix: a kernel with PM QoS \
         (CONFIG_CPU_IDLE, /dev/cpu_dma_latency), or run without --cpus-awake",
        .path.display(),
        if .source.is_some() { "not there" } else { "not a character device" }
    )]
    NoDevice {
        path: PathBuf,
        #[source]
        source: Option<std::io::Error>,
    },
    /// Opening, writing or reading it failed.
    #[error(
        "cannot hold the CPUs awake: {what} {}: {source}; fix: run as root, or without \
         --cpus-awake", .path.display()
    )]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A held request: every CPU stays out of idle states with an exit latency until this is
/// dropped.
#[derive(Debug)]
pub struct CpusAwake {
    // The request lives as long as this descriptor.
    _request: File,
}

impl CpusAwake {
    /// Hold a CPU latency request of 0 µs.
    pub fn hold() -> Result<CpusAwake, CpuLatencyError> {
        Self::hold_at(Path::new(CPU_LATENCY_DEV))
    }

    fn hold_at(path: &Path) -> Result<CpusAwake, CpuLatencyError> {
        check_device(path)?;
        let io = |what| {
            move |source| CpuLatencyError::Io {
                what,
                path: path.to_path_buf(),
                source,
            }
        };
        let mut f = File::options()
            .write(true)
            .open(path)
            .map_err(io("opening"))?;
        // The interface reads a native-endian s32 (or an ASCII hex string); 0 µs.
        f.write_all(&0i32.to_ne_bytes())
            .map_err(io("writing 0 to"))?;
        Ok(CpusAwake { _request: f })
    }
}

/// The CPU latency the kernel enforces now, in µs: the smallest request held by anyone
/// (2,000,000,000 when nobody holds one).
pub fn current_limit_us() -> Result<i32, CpuLatencyError> {
    let path = Path::new(CPU_LATENCY_DEV);
    check_device(path)?;
    let io = |source| CpuLatencyError::Io {
        what: "reading",
        path: path.to_path_buf(),
        source,
    };
    let mut buf = [0u8; 4];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut buf))
        .map_err(io)?;
    Ok(i32::from_ne_bytes(buf))
}

fn check_device(path: &Path) -> Result<(), CpuLatencyError> {
    let no = |source| CpuLatencyError::NoDevice {
        path: path.to_path_buf(),
        source,
    };
    match std::fs::metadata(path) {
        Ok(m) if m.file_type().is_char_device() => Ok(()),
        Ok(_) => Err(no(None)),
        Err(e) => Err(no(Some(e))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_that_is_not_the_device_is_refused_before_it_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("cpu_dma_latency");
        std::fs::write(&plain, b"keep").unwrap();
        let e = CpusAwake::hold_at(&plain).unwrap_err();
        assert!(matches!(e, CpuLatencyError::NoDevice { .. }), "{e}");
        assert!(e.to_string().contains("not a character device"), "{e}");
        assert_eq!(std::fs::read(&plain).unwrap(), b"keep");
        let e = CpusAwake::hold_at(&dir.path().join("missing")).unwrap_err();
        assert!(e.to_string().contains("not there"), "{e}");
    }
}
