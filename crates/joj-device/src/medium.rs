//! The medium contract: program, read and erase physical pages with an OOB area, plus the
//! reserved map area that holds the FTL's mapping checkpoint.
//!
//! A medium enforces the NAND rules (erase before write, pages of a block programmed in order)
//! and reports, for every command, when it completes in simulated time. It knows nothing of
//! logical pages: OOB contents are opaque to it.

use crate::addr::{BlockId, Oob, Ppn};
use crate::config::{DataMode, Geometry};
use crate::error::MediumError;

/// State of a page as the medium can see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageState {
    /// Not programmed since the last erase.
    Erased,
    /// Programmed (possibly torn: only the checksum tells).
    Programmed,
}

/// Result of a page read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRead {
    pub state: PageState,
    pub oob: Oob,
    /// When the data is in the controller.
    pub done_ns: u64,
}

/// The mapping checkpoint as stored in the medium's reserved map area: one entry per logical
/// page (`NO_LPN` = unmapped) and the sequence number up to which it is complete. Every page
/// program with a sequence number `≤ checkpoint_seq` is reflected in `entries`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MapCheckpoint {
    pub entries: Vec<u32>,
    pub checkpoint_seq: u64,
}

/// One entry of the persisted X-L2P commit table (`docs/formats/xftl.md`): a page of a committed
/// transaction whose mapping no L2P checkpoint holds yet. 24 bytes on flash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommitEntry {
    pub lpn: u32,
    pub ppn: u32,
    /// The program sequence number in that page's OOB area.
    pub page_seq: u64,
    /// The device sequence number the commit took.
    pub commit_seq: u64,
}

impl CommitEntry {
    pub const BYTES: u64 = 24;
}

/// Program, read and erase of physical pages; the contract between FTL and flash.
///
/// Times are simulated nanoseconds. `issue_ns` is when the controller issues the command; the
/// medium starts it once the unit (die/plane) and the channel it needs are free and returns when
/// it completes.
pub trait Medium {
    fn geometry(&self) -> &Geometry;
    fn data_mode(&self) -> DataMode;

    /// Mapping units (slots) each page holds: 1 unless the FTL maps sub-page units. A `Ppn`
    /// numbers slots.
    fn slots_per_page(&self) -> u32 {
        1
    }

    /// Slots of each block.
    fn slots_per_block(&self) -> u32 {
        self.geometry().pages_per_block * self.slots_per_page()
    }

    /// Bytes of one slot.
    fn slot_bytes(&self) -> u32 {
        self.geometry().page_bytes / self.slots_per_page()
    }

    /// Program the page whose first slot is `ppn` — the next unprogrammed page of its block —
    /// with one slot per `data[i]`, `oob[i]` (1 to `slots_per_page` of them; each data one slot,
    /// or empty in `DataMode::OobOnly`), padding the slots left: one program of the whole page.
    fn program_page(
        &mut self,
        ppn: Ppn,
        data: &[&[u8]],
        oob: &[Oob],
        issue_ns: u64,
    ) -> Result<u64, MediumError>;

    /// [`Medium::program_page`] with one slot of data.
    fn program(
        &mut self,
        ppn: Ppn,
        data: &[u8],
        oob: Oob,
        issue_ns: u64,
    ) -> Result<u64, MediumError> {
        self.program_page(ppn, &[data], &[oob], issue_ns)
    }

    /// Read slot `ppn` into `buf` (one slot, or empty in `OobOnly` mode).
    fn read(&mut self, ppn: Ppn, buf: &mut [u8], issue_ns: u64) -> Result<PageRead, MediumError>;

    /// Read only the OOB area of `ppn` (a recovery scan), timed like a page read without the
    /// data transfer.
    fn read_oob(&mut self, ppn: Ppn, issue_ns: u64) -> Result<PageRead, MediumError>;

    /// The OOB area of `ppn` as the controller's DRAM copy of the reverse map would give it:
    /// untimed, for GC bookkeeping. `None` if the page is erased.
    fn peek_oob(&self, ppn: Ppn) -> Option<Oob>;

    /// The OOB area of `ppn` if the page is programmed and its checksum verifies against its
    /// data: the ECC check a real read would do, untimed (callers charge the read they model).
    fn peek_valid_oob(&self, ppn: Ppn) -> Option<Oob>;

    /// Erase `block`; all its pages become `Erased`.
    fn erase(&mut self, block: BlockId, issue_ns: u64) -> Result<u64, MediumError>;

    /// Slots programmed in `block` since its last erase (torn ones and padding included; pages
    /// when a slot is the page).
    fn programmed_pages(&self, block: BlockId) -> u32;

    fn erase_count(&self, block: BlockId) -> u32;

    /// Blocks of the reserved map area erased so far (the map log's ring; not in
    /// `erase_count`, which covers the data blocks).
    fn map_erases(&self) -> u64;

    /// Whether the map area erases a block each time its log enters one on a unit (the first
    /// block of each unit is erased at format): `FtlConfig::erase_map_blocks`.
    fn set_map_erases(&mut self, on: bool);

    /// The last complete mapping checkpoint.
    fn checkpoint(&self) -> &MapCheckpoint;

    /// Write a new checkpoint: copy the entries `ranges` (`(first logical page, count)`) from
    /// `source` (the FTL's live mapping) and set `checkpoint_seq`, as `map_pages` page programs
    /// to the reserved map area starting no earlier than `issue_ns`. The new checkpoint takes effect atomically at completion (the
    /// final step is an atomic pointer update in a metadata block, as X-FTL §5.3 assumes); a
    /// power loss before then leaves the previous one.
    fn write_checkpoint(
        &mut self,
        ranges: &[(u32, u32)],
        source: &[u32],
        checkpoint_seq: u64,
        map_pages: u64,
        issue_ns: u64,
    ) -> Result<u64, MediumError>;

    /// The last complete X-L2P commit table (empty on a fresh medium).
    fn commit_table(&self) -> &[CommitEntry];

    /// Write a new commit table as `pages` page programs to the reserved X-L2P area, starting no
    /// earlier than `issue_ns`. Like a checkpoint, it takes effect atomically at completion; a
    /// power loss before then leaves the previous table.
    fn write_commit_table(
        &mut self,
        table: &[CommitEntry],
        pages: u64,
        issue_ns: u64,
    ) -> Result<u64, MediumError>;

    /// Read `map_pages` pages of the map area (loading the checkpoint); returns completion.
    fn read_map_pages(&mut self, map_pages: u64, issue_ns: u64) -> u64;

    /// Size the checkpoint for `logical_pages` entries, all unmapped, `checkpoint_seq` 0 (format).
    fn reset_checkpoint(&mut self, logical_pages: u64);

    /// Forget in-flight bookkeeping for commands complete by `now_ns` (no power loss can undo
    /// them any more).
    fn retire(&mut self, now_ns: u64);

    /// Power is cut at `at_ns`: commands complete by then stand, a program under way is torn, a
    /// command not yet started never happened. Timing state restarts at `at_ns`.
    fn power_loss(&mut self, at_ns: u64, seed: u64);

    /// Heap bytes the model holds besides page data (OOB areas, block tables, checkpoint).
    fn metadata_heap_bytes(&self) -> u64 {
        0
    }

    /// Total time units were busy (summed over units), for the busy-time counter.
    fn busy_ns(&self) -> u64;
}
