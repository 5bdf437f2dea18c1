//! The byte layout of i-FTL's NVM region (`docs/formats/iftl.md` §2), repeated here with each
//! offset derived from the previous one:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `"JOJIFTL\0"` (written last by format) |
//! | 8 | 4 | version (1) |
//! | 12 | 4 | page bytes `P` |
//! | 16 | 4 | logical pages `L` |
//! | 20 | 4 | transaction slots `T` |
//! | 24 | 4 | logFTL entries `N` |
//! | 28 | 4 | metadata slots `S` |
//! | 32 | 8 | next transaction id |
//! | 40 | 8 | logFTL cursor: head (low half), tail (high half) |
//! | 48 | 16 | reserved |
//! | 64 | 8·T | transaction table `{tid u32, state u32}` |
//! | TX + 8·T | 16·N | logFTL `{tid u32, tx_state u32, lpn u32, old u32}` |
//! | LOG + 16·N | 4·L rounded up to 8 | dataFTL: one location per logical page |
//! | MAP + ⌈4·L⌉₈ | P·S | metadata slots |

use crate::error::FtlError;
use crate::nvm::Nvm;

pub(crate) const MAGIC: u64 = u64::from_le_bytes(*b"JOJIFTL\0");
pub(crate) const VERSION: u32 = 1;

pub(crate) const OFF_MAGIC: u64 = 0;
pub(crate) const OFF_VERSION: u64 = OFF_MAGIC + 8;
pub(crate) const OFF_PAGE_BYTES: u64 = OFF_VERSION + 4;
pub(crate) const OFF_LOGICAL: u64 = OFF_PAGE_BYTES + 4;
pub(crate) const OFF_TX_SLOTS: u64 = OFF_LOGICAL + 4;
pub(crate) const OFF_LOG_ENTRIES: u64 = OFF_TX_SLOTS + 4;
pub(crate) const OFF_META_SLOTS: u64 = OFF_LOG_ENTRIES + 4;
pub(crate) const OFF_NEXT_TID: u64 = OFF_META_SLOTS + 4;
pub(crate) const OFF_CURSOR: u64 = OFF_NEXT_TID + 8;
pub(crate) const HEADER_BYTES: u64 = OFF_CURSOR + 8 + 16;

const _: () = assert!(HEADER_BYTES == 64);
const _: () = assert!(OFF_NEXT_TID.is_multiple_of(8) && OFF_CURSOR.is_multiple_of(8));

pub(crate) const TX_SLOT_BYTES: u64 = 8;
pub(crate) const LOG_ENTRY_BYTES: u64 = 16;
pub(crate) const MAP_ENTRY_BYTES: u64 = 4;
/// Offset of `old` inside a log entry: 4 bytes inside the entry's second aligned word.
pub(crate) const ENTRY_OLD_OFFSET: u64 = 12;

pub(crate) const TX_FREE: u32 = 0;
pub(crate) const TX_ACTIVE: u32 = 1;
pub(crate) const TX_COMMITTED: u32 = 2;

/// Paper Fig. 4: 0 = committing (not committed yet), 1 = committed.
pub(crate) const ENTRY_COMMITTING: u32 = 0;
pub(crate) const ENTRY_COMMITTED: u32 = 1;
pub(crate) const ENTRY_DISCARDED: u32 = u32::MAX;

/// Location word: unmapped.
pub(crate) const UNMAPPED: u32 = u32::MAX;
/// Location word: a metadata slot in NVM (`META_BIT | slot`).
pub(crate) const META_BIT: u32 = 1 << 31;

/// Where a logical page's contents are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Loc {
    Unmapped,
    Flash(u32),
    Meta(u32),
}

impl Loc {
    pub(crate) fn from_word(w: u32) -> Loc {
        if w == UNMAPPED {
            Loc::Unmapped
        } else if w & META_BIT != 0 {
            Loc::Meta(w & !META_BIT)
        } else {
            Loc::Flash(w)
        }
    }

    pub(crate) fn word(self) -> u32 {
        let w = match self {
            Loc::Unmapped => UNMAPPED,
            Loc::Flash(p) => p,
            Loc::Meta(s) => META_BIT | s,
        };
        assert_eq!(
            Loc::from_word(w),
            self,
            "a location's NVM word {w:#x} reads back as the same location"
        );
        w
    }
}

/// One logFTL entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LogEntry {
    pub(crate) tid: u32,
    pub(crate) tx_state: u32,
    pub(crate) lpn: u32,
    pub(crate) old: u32,
}

impl LogEntry {
    pub(crate) fn encode(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[0..4].copy_from_slice(&self.tid.to_le_bytes());
        b[4..8].copy_from_slice(&self.tx_state.to_le_bytes());
        b[8..12].copy_from_slice(&self.lpn.to_le_bytes());
        b[12..16].copy_from_slice(&self.old.to_le_bytes());
        b
    }

    pub(crate) fn decode(b: &[u8]) -> LogEntry {
        let w = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        LogEntry {
            tid: w(0),
            tx_state: w(4),
            lpn: w(8),
            old: w(12),
        }
    }
}

pub(crate) fn pack_cursor(head: u32, tail: u32) -> u64 {
    u64::from(head) | u64::from(tail) << 32
}

pub(crate) fn unpack_cursor(c: u64) -> (u32, u32) {
    (c as u32, (c >> 32) as u32)
}

pub(crate) fn pack_slot(tid: u32, state: u32) -> u64 {
    u64::from(tid) | u64::from(state) << 32
}

/// Sizes and offsets of one formatted region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    pub(crate) page_bytes: u32,
    pub(crate) logical_pages: u32,
    pub(crate) tx_slots: u32,
    pub(crate) log_entries: u32,
    pub(crate) meta_slots: u32,
    pub(crate) tx_off: u64,
    pub(crate) log_off: u64,
    pub(crate) map_off: u64,
    pub(crate) meta_off: u64,
    pub(crate) end: u64,
}

impl Layout {
    /// The layout of the given sizes; `meta_slots` `None` fills what `nvm_bytes` leaves.
    pub(crate) fn plan(
        page_bytes: u32,
        logical_pages: u32,
        tx_slots: u32,
        log_entries: u32,
        meta_slots: Option<u32>,
        nvm_bytes: u64,
    ) -> Result<Layout, FtlError> {
        let tx_off = HEADER_BYTES;
        let log_off = tx_off + TX_SLOT_BYTES * u64::from(tx_slots);
        let map_off = log_off + LOG_ENTRY_BYTES * u64::from(log_entries);
        let meta_off = map_off + (MAP_ENTRY_BYTES * u64::from(logical_pages)).next_multiple_of(8);
        let slots = match meta_slots {
            Some(s) => s,
            None => (nvm_bytes.saturating_sub(meta_off) / u64::from(page_bytes.max(1)))
                .min(u64::from(META_BIT - 1)) as u32,
        };
        let end = meta_off + u64::from(page_bytes) * u64::from(slots);
        if end > nvm_bytes || tx_slots == 0 || log_entries == 0 {
            return Err(FtlError::NvmExhausted {
                needed_bytes: end.max(meta_off),
                nvm_bytes,
            });
        }
        Ok(Layout {
            page_bytes,
            logical_pages,
            tx_slots,
            log_entries,
            meta_slots: slots,
            tx_off,
            log_off,
            map_off,
            meta_off,
            end,
        })
    }

    /// The layout a formatted region records in its header.
    pub(crate) fn read(nvm: &Nvm) -> Result<Layout, FtlError> {
        let corrupt = |reason: String| FtlError::NvmCorrupt { reason };
        if nvm.size_bytes() < HEADER_BYTES {
            return Err(corrupt(format!(
                "{} bytes hold no header",
                nvm.size_bytes()
            )));
        }
        let magic = nvm.peek_u64(OFF_MAGIC)?;
        if magic != MAGIC {
            return Err(corrupt(format!(
                "magic {magic:#018x}: the region was never formatted for i-FTL"
            )));
        }
        let version = nvm.peek_u32(OFF_VERSION)?;
        if version != VERSION {
            return Err(corrupt(format!(
                "version {version}, this build reads {VERSION}"
            )));
        }
        let l = Layout::plan(
            nvm.peek_u32(OFF_PAGE_BYTES)?,
            nvm.peek_u32(OFF_LOGICAL)?,
            nvm.peek_u32(OFF_TX_SLOTS)?,
            nvm.peek_u32(OFF_LOG_ENTRIES)?,
            Some(nvm.peek_u32(OFF_META_SLOTS)?),
            nvm.size_bytes(),
        )?;
        Ok(l)
    }

    /// The header without its magic (format stores the magic last).
    pub(crate) fn header(&self) -> [u8; 64] {
        let mut h = [0u8; 64];
        let mut put = |off: u64, v: u32| {
            h[off as usize..off as usize + 4].copy_from_slice(&v.to_le_bytes());
        };
        put(OFF_VERSION, VERSION);
        put(OFF_PAGE_BYTES, self.page_bytes);
        put(OFF_LOGICAL, self.logical_pages);
        put(OFF_TX_SLOTS, self.tx_slots);
        put(OFF_LOG_ENTRIES, self.log_entries);
        put(OFF_META_SLOTS, self.meta_slots);
        h[OFF_NEXT_TID as usize..OFF_NEXT_TID as usize + 8].copy_from_slice(&1u64.to_le_bytes());
        h
    }

    pub(crate) fn tx_slot(&self, slot: u32) -> u64 {
        self.tx_off + TX_SLOT_BYTES * u64::from(slot)
    }

    /// Offset of the entry with free-running counter `counter`.
    pub(crate) fn entry(&self, counter: u32) -> u64 {
        self.log_off + LOG_ENTRY_BYTES * u64::from(counter % self.log_entries)
    }

    pub(crate) fn map(&self, lpn: u32) -> u64 {
        self.map_off + MAP_ENTRY_BYTES * u64::from(lpn)
    }

    pub(crate) fn meta(&self, slot: u32) -> u64 {
        self.meta_off + u64::from(self.page_bytes) * u64::from(slot)
    }

    pub(crate) fn map_bytes(&self) -> u64 {
        MAP_ENTRY_BYTES * u64::from(self.logical_pages)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_and_entries_round_trip() {
        for l in [Loc::Unmapped, Loc::Flash(7), Loc::Meta(3)] {
            assert_eq!(Loc::from_word(l.word()), l);
        }
        let e = LogEntry {
            tid: 5,
            tx_state: ENTRY_COMMITTING,
            lpn: 9,
            old: 0xABCD,
        };
        assert_eq!(LogEntry::decode(&e.encode()), e);
        assert_eq!(unpack_cursor(pack_cursor(3, 9)), (3, 9));
    }

    #[test]
    fn too_small_a_region_is_a_clear_error() {
        let e = Layout::plan(4096, 1 << 20, 64, 1024, None, 1 << 20).unwrap_err();
        assert!(matches!(e, FtlError::NvmExhausted { .. }));
        let l = Layout::plan(4096, 1000, 64, 1024, None, 1 << 20).unwrap();
        assert!(l.end <= 1 << 20 && l.meta_slots > 0);
        assert_eq!(l.meta_off % 8, 0);
    }
}
