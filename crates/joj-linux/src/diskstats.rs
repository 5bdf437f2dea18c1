//! A block device's own I/O counters (`/sys/dev/block/<major>:<minor>/stat`, the kernel's
//! `Documentation/block/stat.rst`): a second observer of what the trace sees, kept by the
//! block layer as requests complete.
//!
//! What they count is not quite what `block_rq_issue` shows: `write_ios` counts every write
//! request the block layer made, including the empty ones that only carry a preflush — an
//! `fsync`/`fdatasync` whose file needed no journal commit sends one — which the flush
//! machinery never issues as writes: it issues a flush request for them instead (counted again
//! in `flush_ios`). So `write_ios` = the writes issued + the empty preflush write bios, while
//! sectors and flushes agree one for one.

use std::path::PathBuf;

/// The counters joj compares, from one read of the `stat` file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DiskStats {
    pub read_ios: u64,
    pub write_ios: u64,
    pub write_sectors: u64,
    pub discard_ios: u64,
    pub flush_ios: u64,
}

impl DiskStats {
    /// Read device `dev` (`major:minor`).
    pub fn read(dev: &str) -> std::io::Result<DiskStats> {
        let path = PathBuf::from(format!("/sys/dev/block/{dev}/stat"));
        let text = std::fs::read_to_string(&path)?;
        DiskStats::parse(&text).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{} is not a block device's stat line", path.display()),
            )
        })
    }

    /// The fields of a `stat` line (at least the 11 of every kernel; discards and flushes
    /// are 0 on kernels without them).
    pub fn parse(line: &str) -> Option<DiskStats> {
        let f: Vec<u64> = line
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        if f.len() < 11 {
            return None;
        }
        Some(DiskStats {
            read_ios: f[0],
            write_ios: f[4],
            write_sectors: f[6],
            discard_ios: f.get(11).copied().unwrap_or(0),
            flush_ios: f.get(15).copied().unwrap_or(0),
        })
    }

    /// What happened between `earlier` and `self`.
    pub fn since(&self, earlier: &DiskStats) -> DiskStats {
        DiskStats {
            read_ios: self.read_ios.saturating_sub(earlier.read_ios),
            write_ios: self.write_ios.saturating_sub(earlier.write_ios),
            write_sectors: self.write_sectors.saturating_sub(earlier.write_sectors),
            discard_ios: self.discard_ios.saturating_sub(earlier.discard_ios),
            flush_ios: self.flush_ios.saturating_sub(earlier.flush_ios),
        }
    }

    /// The sum of several devices' counters.
    pub fn sum(all: &[DiskStats]) -> DiskStats {
        all.iter().fold(DiskStats::default(), |a, d| DiskStats {
            read_ios: a.read_ios + d.read_ios,
            write_ios: a.write_ios + d.write_ios,
            write_sectors: a.write_sectors + d.write_sectors,
            discard_ios: a.discard_ios + d.discard_ios,
            flush_ios: a.flush_ios + d.flush_ios,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_gives_writes_sectors_and_flushes() {
        let line = " 4775266     8663 47297297   521167  2534217  1423298 96144679   797429        0   785840  1860343        0        0        0        0  1031316   541746\n";
        let s = DiskStats::parse(line).unwrap();
        assert_eq!(
            (s.write_ios, s.write_sectors, s.flush_ios),
            (2534217, 96144679, 1031316)
        );
        let old = DiskStats::parse("1 0 0 0 2 0 8 0 0 0 0").unwrap();
        assert_eq!(old.flush_ios, 0);
        assert!(DiskStats::parse("1 2 3").is_none());
        assert!(DiskStats::parse("a b c d e f g h i j k").is_none());
    }
}
