//! Preallocation with explicit journaling: the WAL grows by zero-filled (written) blocks made
//! durable by one `fdatasync` before any frame is written into them, by the options' step while
//! the disk has room to spare, by only what the write needs when it is nearly full
//! (docs/formats/waldio.md, "Preallocation" and "Bounded").

use super::{IoOp, WalError, WalState};
use crate::counters::bump;
use crate::io::{AlignedBuf, WalIo};

/// Free space a preallocation leaves on the filesystem (the database, its journal and other
/// programs need room too): 8 MiB, or a quarter of what is free on a small filesystem.
fn prealloc_spare_bytes(free: u64) -> u64 {
    (8 << 20).min(free / 4)
}

/// How far a preallocation extends the WAL, and whether it was cut short.
#[derive(Debug, PartialEq, Eq)]
struct ExtensionPlan {
    /// The new end in bytes, or the bytes the smallest extension needs that the free space
    /// does not hold.
    end: Result<u64, u64>,
    /// The end is `needed`, not `asked`: the disk is nearly full.
    cut: bool,
}

/// The end of the WAL after extending it from `old_len` bytes: `asked` (the options' step) if
/// that leaves the spare free, else only `needed` (the write at hand's end, what stock SQLite's
/// WAL would take for it) if that fits in what is free at all, else refused with what it
/// needs. A preallocation never fills the disk with zeros nobody uses yet, and never refuses a
/// write stock SQLite would make (docs/formats/waldio.md, "Bounded").
fn extension_plan(old_len: u64, asked: u64, needed: u64, free: u64) -> ExtensionPlan {
    let spare = prealloc_spare_bytes(free);
    if asked.saturating_sub(old_len) <= free.saturating_sub(spare) {
        return ExtensionPlan {
            end: Ok(asked),
            cut: false,
        };
    }
    let need = needed.saturating_sub(old_len);
    ExtensionPlan {
        end: if need <= free { Ok(needed) } else { Err(need) },
        cut: need <= free,
    }
}

impl<I: WalIo> WalState<I> {
    /// Preallocation with explicit journaling: grow the file to hold `blocks` blocks with
    /// zero-filled (written) blocks, then one `fdatasync` makes size and extents durable.
    pub(super) fn ensure_capacity(&mut self, blocks: u64) -> Result<(), WalError> {
        if blocks * u64::from(self.block) <= self.known_len_bytes {
            return Ok(());
        }
        let have = self.blocks_on_disk()?;
        if blocks <= have {
            return Ok(());
        }
        let asked = if have <= 1 {
            blocks.max(u64::from(self.opts.prealloc_frames) + 1)
        } else {
            let step = u64::from(self.opts.extend_frames.max(1));
            have + (blocks - have).div_ceil(step) * step
        };
        let p = u64::from(self.block);
        let align = u64::from(self.io.dio_align());
        // `blocks_on_disk` above has just read the length.
        let old_len = self.known_len_bytes;
        let pos = old_len / align * align;
        let free = self
            .io
            .free_bytes()
            .map_err(|e| WalError::io(IoOp::Stat, "statfs of the WAL's filesystem", e))?;
        let target = match free {
            Some(free) => {
                let plan = extension_plan(
                    old_len,
                    asked.saturating_mul(p),
                    blocks.saturating_mul(p),
                    free,
                );
                if plan.cut {
                    bump(&self.counters.short_extensions, 1);
                }
                plan.end.map_err(|need| WalError::NoRoom { need, free })? / p
            }
            None => asked,
        };
        let end = target.saturating_mul(p);
        if self.opts.canary_fallocate {
            self.io
                .preallocate_unwritten(end)
                .map_err(|e| WalError::io(IoOp::Write, "fallocate of the WAL (canary)", e))?;
            self.known_len_bytes = self.known_len_bytes.max(end);
            return Ok(());
        }
        let needed_end = blocks.saturating_mul(p);
        let filled = match self.zero_fill(pos, end) {
            // The free space counted blocks the filesystem would not give (as root, ext4's
            // reserved clusters: root cannot allocate them either): the step is cut to what
            // the write needs, as a nearly full disk's is, and tried once more.
            Err(e) if end > needed_end && is_no_space(&e) => {
                let _ = self.io.set_len(old_len);
                bump(&self.counters.short_extensions, 1);
                self.zero_fill(pos, needed_end).map(|()| needed_end)
            }
            r => r.map(|()| end),
        };
        match filled {
            Ok(end) => {
                self.known_len_bytes = self.known_len_bytes.max(end);
                bump(&self.counters.prealloc_syncs, 1);
                Ok(())
            }
            Err(e) => {
                // Remove what the failed extension made (it holds zeros only, and no frame was
                // written past the old end): a full disk is left as it was found.
                let _ = self.io.set_len(old_len);
                self.known_len_bytes = 0;
                Err(e)
            }
        }
    }

    /// Write zeros from `pos` to `end`, then one `fdatasync`.
    fn zero_fill(&mut self, mut pos: u64, end: u64) -> Result<(), WalError> {
        const CHUNK: u64 = 1 << 20;
        let zeros = AlignedBuf::zeroed(CHUNK as usize);
        // One-time work, not a commit's: `joj trace` reports its block I/O apart.
        joj_vfs::marker::setup_begins("waldio-preallocation");
        let extended = (|| {
            while pos < end {
                let n = (end - pos).min(CHUNK) as usize;
                self.io
                    .write_at(&zeros[..n], pos, false)
                    .map_err(|e| WalError::io(IoOp::Write, "preallocating the WAL", e))?;
                bump(&self.counters.prealloc_bytes, n as u64);
                pos += n as u64;
            }
            self.fdatasync()
                .map_err(|e| WalError::io(IoOp::Sync, "fdatasync after preallocating the WAL", e))
        })();
        joj_vfs::marker::setup_ends();
        extended
    }
}

/// Whether `e` is the filesystem's "no space left" (`WalError::io` makes it `Full`) or a
/// quota's.
fn is_no_space(e: &WalError) -> bool {
    match e {
        WalError::Full(_) => true,
        WalError::Io { source, .. } => source.raw_os_error() == Some(libc::EDQUOT),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_extension_is_cut_to_the_write_when_the_disk_is_nearly_full() {
        const MIB: u64 = 1 << 20;
        // Room for the step and the spare: the step.
        let plan = extension_plan(4 * MIB, 5 * MIB, 4 * MIB + 8192, 100 * MIB);
        assert_eq!((plan.end, plan.cut), (Ok(5 * MIB), false));
        // 512 KiB free: the 1 MiB step would fill the disk, the write's two blocks fit.
        let plan = extension_plan(4 * MIB, 5 * MIB, 4 * MIB + 8192, MIB / 2);
        assert_eq!((plan.end, plan.cut), (Ok(4 * MIB + 8192), true));
        // Not even the write's blocks: refused with what they need.
        let plan = extension_plan(4 * MIB, 5 * MIB, 4 * MIB + 8192, 4096);
        assert_eq!((plan.end, plan.cut), (Err(8192), false));
        // A first preallocation on a small filesystem leaves a quarter of what is free.
        let plan = extension_plan(0, 4 * MIB, 8192, 5 * MIB);
        assert_eq!((plan.end, plan.cut), (Ok(8192), true));
        let plan = extension_plan(0, 4 * MIB, 8192, 6 * MIB);
        assert_eq!((plan.end, plan.cut), (Ok(4 * MIB), false));
    }
}
