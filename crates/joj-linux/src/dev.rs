//! Block device numbers and sector extents, named the way tracefs and `joj-trace` name them:
//! `"major:minor"`, 512-byte sectors.

use std::fmt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::str::FromStr;

/// Bits of the minor number in the kernel's internal `dev_t` (`MINORBITS`), which is what
/// tracefs event filters on a `dev` field compare against. Userspace `st_rdev` uses a different
/// encoding, so the two must never be mixed.
const KERNEL_MINOR_BITS: u32 = 20;

/// A block device's number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DevNum {
    pub major: u32,
    pub minor: u32,
}

impl DevNum {
    pub fn new(major: u32, minor: u32) -> Self {
        Self { major, minor }
    }

    /// The kernel-internal `dev_t` (`major << 20 | minor`), as tracefs filters see the `dev`
    /// field of block events.
    pub fn kernel_dev_t(self) -> u64 {
        (u64::from(self.major) << KERNEL_MINOR_BITS) | u64::from(self.minor)
    }

    /// Decode a userspace `st_rdev` / `st_dev`.
    pub fn from_rdev(rdev: u64) -> Self {
        Self {
            major: libc::major(rdev),
            minor: libc::minor(rdev),
        }
    }

    /// The device number of the block device node at `path`.
    pub fn of_block_device(path: &Path) -> std::io::Result<Self> {
        let meta = std::fs::metadata(path)?;
        if !meta.file_type().is_block_device() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{} is not a block device", path.display()),
            ));
        }
        Ok(Self::from_rdev(meta.rdev()))
    }
}

impl fmt::Display for DevNum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.major, self.minor)
    }
}

/// A device name that is neither `major:minor` nor `major,minor`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a device number; write it as major:minor, e.g. 7:0")]
pub struct BadDevNum(pub String);

impl FromStr for DevNum {
    type Err = BadDevNum;

    /// Accepts `"7:0"` (sysfs, `joj-trace`) and `"7,0"` (tracefs, blkparse).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BadDevNum(s.to_string());
        let (major, minor) = s.split_once([':', ',']).ok_or_else(bad)?;
        Ok(Self {
            major: major.trim().parse().map_err(|_| bad())?,
            minor: minor.trim().parse().map_err(|_| bad())?,
        })
    }
}

/// A run of sectors on one device. Mirrors `joj_trace::classify::DevExtent` field for field so
/// the integrator can convert one into the other without arithmetic.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct DevExtent {
    /// Device as `major:minor`.
    pub dev: String,
    /// First sector (512-byte units).
    pub sector: u64,
    /// Length in sectors.
    pub sectors: u64,
}

impl DevExtent {
    /// Whether the request `[sector, sector + sectors)` on `dev` overlaps this extent.
    pub fn overlaps(&self, dev: &str, sector: u64, sectors: u64) -> bool {
        self.dev == dev && sector < self.sector + self.sectors && self.sector < sector + sectors
    }

    /// Whether `[sector, sector + sectors)` on `dev` lies entirely inside this extent.
    pub fn contains(&self, dev: &str, sector: u64, sectors: u64) -> bool {
        self.dev == dev && sector >= self.sector && sector + sectors <= self.sector + self.sectors
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_numbers_parse_in_both_notations_and_encode_for_tracefs() {
        let d: DevNum = "7:3".parse().unwrap();
        assert_eq!(d, "7,3".parse().unwrap());
        assert_eq!(d.to_string(), "7:3");
        assert_eq!(d.kernel_dev_t(), 7 << 20 | 3);
        assert!("7".parse::<DevNum>().is_err());
        assert!("a:b".parse::<DevNum>().is_err());
    }

    #[test]
    fn extents_overlap_and_contain_by_half_open_ranges() {
        let e = DevExtent {
            dev: "7:0".into(),
            sector: 100,
            sectors: 10,
        };
        assert!(e.overlaps("7:0", 109, 8));
        assert!(!e.overlaps("7:0", 110, 8));
        assert!(!e.overlaps("7:1", 100, 8));
        assert!(e.contains("7:0", 100, 10));
        assert!(!e.contains("7:0", 101, 10));
    }
}
