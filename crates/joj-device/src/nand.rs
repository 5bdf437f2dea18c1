//! Emulated NAND flash: the timed, fault-injecting implementation of `Medium`.
//!
//! # Model
//! - Geometry: `channels × dies × planes` independent units; block `b` is on unit
//!   `b % units`, unit `u` on channel `u % channels`. A unit does one array operation at a time;
//!   a channel moves one page at a time. Multi-plane commands are modeled as planes working
//!   independently.
//! - Timing, in simulated nanoseconds, never the wall clock: a program holds the channel for the
//!   data transfer and the unit for transfer + tPROG; a read holds the unit for tR + transfer
//!   out and the channel for the transfer; an erase holds the unit for tBERS.
//! - Rules, enforced as errors: a page is programmed only when it is the next one of its block
//!   (in-order programming, which also forbids programming a page twice before an erase).
//! - Slots: a page holds `slots_per_page` mapping units (one unless the FTL maps sub-page
//!   units), each with its own 16-byte OOB area; a `Ppn` numbers slots. A program writes a
//!   whole page at once: the slots it is given, then padding (an OOB with no logical page and
//!   a valid checksum over zeros) in the rest. A read or OOB read concerns one slot.
//! - Storage: per slot a 16-byte OOB area; in `DataMode::Full` also the slot's data (allocated
//!   per block on the first program of a page that is not all zeros).
//!
//! # Fault model
//! Every command is logged with its start and end time until it is retired (complete before
//! the host's "now"). On `power_loss(at)`, walking the log backwards: a program that started
//! before `at` but ends after it is *torn* (data scrambled, every slot's OOB checksum no longer
//! matches); a
//! command that had not started never happened (a program leaves its page erased, an erase
//! leaves its block's old contents); an erase under way leaves every page of its block torn;
//! a checkpoint not complete by `at` leaves the previous checkpoint. The volatile cache lives
//! above this layer and is simply dropped.

use crate::addr::{BlockId, Oob, Ppn};
use crate::config::{DataMode, Geometry, Timing};
use crate::error::MediumError;
use crate::medium::{CommitEntry, MapCheckpoint, Medium, PageRead, PageState};
use crate::rng::SimRng;

#[derive(Debug, Clone)]
enum Inflight {
    Program {
        ppn: u32,
        start_ns: u64,
        end_ns: u64,
    },
    Erase {
        block: u32,
        start_ns: u64,
        end_ns: u64,
        saved_oob: Vec<Oob>,
        saved_data: Option<Box<[u8]>>,
        saved_programmed: u32,
    },
    Checkpoint {
        end_ns: u64,
        /// `(first entry, previous values)` of every range the checkpoint overwrote.
        old_ranges: Vec<(u32, Vec<u32>)>,
        old_seq: u64,
    },
    CommitTable {
        end_ns: u64,
        old: Vec<CommitEntry>,
    },
}

impl Inflight {
    /// When the operation starts changing the medium, if it does so gradually (programs and
    /// erases; map writes take effect at their end).
    fn start_ns(&self) -> Option<u64> {
        match self {
            Inflight::Program { start_ns, .. } | Inflight::Erase { start_ns, .. } => {
                Some(*start_ns)
            }
            Inflight::Checkpoint { .. } | Inflight::CommitTable { .. } => None,
        }
    }

    fn end_ns(&self) -> u64 {
        match self {
            Inflight::Program { end_ns, .. }
            | Inflight::Erase { end_ns, .. }
            | Inflight::Checkpoint { end_ns, .. }
            | Inflight::CommitTable { end_ns, .. } => *end_ns,
        }
    }
}

/// Emulated NAND flash in memory.
#[derive(Debug, Clone)]
pub struct NandMedium {
    geometry: Geometry,
    timing: Timing,
    mode: DataMode,
    /// Slots per block (`pages_per_block × spp`).
    spb: u32,
    /// Slots per page.
    spp: u32,
    /// Bytes of one slot (the mapping unit).
    slot_bytes: usize,
    /// A slot of zeros, for padding checksums (`DataMode::Full`).
    zeros: Vec<u8>,
    oob: Vec<Oob>,
    programmed: Vec<u32>,
    erase_counts: Vec<u32>,
    data: Vec<Option<Box<[u8]>>>,
    unit_free_ns: Vec<u64>,
    channel_free_ns: Vec<u64>,
    page_xfer_ns: u64,
    slot_xfer_ns: u64,
    oob_xfer_ns: u64,
    inflight: Vec<Inflight>,
    inflight_erases: usize,
    retire_at_len: usize,
    checkpoint: MapCheckpoint,
    commit_table: Vec<CommitEntry>,
    /// Map-area pages programmed so far (checkpoints and commit tables), round-robin over the
    /// units: page `i` goes to unit `i % units` as that unit's `i / units`-th map page.
    map_cursor: u64,
    /// Whether the map log erases each block it enters (`Medium::set_map_erases`).
    erase_map_blocks: bool,
    /// Map-area blocks erased so far.
    map_erases: u64,
    /// Completion of the last map-area write (checkpoint or commit table): the next one takes
    /// effect no earlier, so map writes take effect in the order they were issued.
    map_write_done_ns: u64,
    busy_ns: u64,
}

impl NandMedium {
    /// A fresh medium whose slot is the page: every block erased, erase counts zero,
    /// checkpoint empty.
    pub fn new(geometry: Geometry, timing: Timing, mode: DataMode) -> NandMedium {
        let page = geometry.page_bytes;
        NandMedium::with_slots(geometry, timing, mode, page)
    }

    /// A fresh medium for `profile`: its geometry, timing, data mode and mapping unit.
    pub fn for_profile(profile: &crate::config::Profile) -> NandMedium {
        NandMedium::with_slots(
            profile.geometry.clone(),
            profile.timing.clone(),
            profile.data_mode,
            profile.mapping_unit_bytes(),
        )
    }

    /// A fresh medium whose pages hold slots of `slot_bytes` (a divisor of the page).
    pub fn with_slots(
        geometry: Geometry,
        timing: Timing,
        mode: DataMode,
        slot_bytes: u32,
    ) -> NandMedium {
        let blocks = geometry.blocks() as usize;
        let spp = (geometry.page_bytes / slot_bytes.max(1)).max(1);
        let slots = geometry.physical_pages() as usize * spp as usize;
        let slot_bytes = geometry.page_bytes / spp;
        let page_xfer_ns =
            Timing::transfer_ns(u64::from(geometry.page_bytes), timing.channel_bytes_per_s);
        let slot_xfer_ns = Timing::transfer_ns(u64::from(slot_bytes), timing.channel_bytes_per_s);
        let oob_xfer_ns = Timing::transfer_ns(16, timing.channel_bytes_per_s);
        NandMedium {
            spb: geometry.pages_per_block * spp,
            spp,
            slot_bytes: slot_bytes as usize,
            zeros: if mode == DataMode::Full {
                vec![0; slot_bytes as usize]
            } else {
                Vec::new()
            },
            oob: vec![Oob::EMPTY; slots],
            programmed: vec![0; blocks],
            erase_counts: vec![0; blocks],
            data: (0..blocks).map(|_| None).collect(),
            unit_free_ns: vec![0; geometry.units() as usize],
            channel_free_ns: vec![0; geometry.channels as usize],
            page_xfer_ns,
            slot_xfer_ns,
            oob_xfer_ns,
            inflight: Vec::new(),
            inflight_erases: 0,
            retire_at_len: 256,
            checkpoint: MapCheckpoint::default(),
            commit_table: Vec::new(),
            map_cursor: 0,
            erase_map_blocks: false,
            map_erases: 0,
            map_write_done_ns: 0,
            busy_ns: 0,
            geometry,
            timing,
            mode,
        }
    }

    pub fn timing(&self) -> &Timing {
        &self.timing
    }

    /// Erase counts of all blocks (wear statistics).
    pub fn erase_counts(&self) -> &[u32] {
        &self.erase_counts
    }

    /// Every instant at or after `from_ns` at which an operation still in the log starts or
    /// ends, sorted and distinct. Between two neighbours a power cut leaves the same medium, so
    /// cutting at each of them and one nanosecond after reaches every crash state of that span
    /// (crash tests use it to cut at every point inside a command).
    pub fn event_times_ns(&self, from_ns: u64) -> Vec<u64> {
        let mut t: Vec<u64> = self
            .inflight
            .iter()
            .flat_map(|op| [op.start_ns(), Some(op.end_ns())])
            .flatten()
            .filter(|&x| x >= from_ns)
            .collect();
        t.sort_unstable();
        t.dedup();
        t
    }

    /// Heap bytes of stored page data.
    pub fn data_heap_bytes(&self) -> u64 {
        self.data.iter().flatten().map(|b| b.len() as u64).sum()
    }

    pub(crate) fn parts(&self) -> NandParts<'_> {
        NandParts {
            oob: &self.oob,
            programmed: &self.programmed,
            erase_counts: &self.erase_counts,
            data: &self.data,
            checkpoint: &self.checkpoint,
        }
    }

    /// Rebuild a medium from image contents (no command in flight, clocks at zero).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_parts(
        geometry: Geometry,
        timing: Timing,
        mode: DataMode,
        oob: Vec<Oob>,
        programmed: Vec<u32>,
        erase_counts: Vec<u32>,
        data: Vec<Option<Box<[u8]>>>,
        checkpoint: MapCheckpoint,
        slot_bytes: u32,
    ) -> NandMedium {
        let mut m = NandMedium::with_slots(geometry, timing, mode, slot_bytes);
        m.oob = oob;
        m.programmed = programmed;
        m.erase_counts = erase_counts;
        m.data = data;
        m.checkpoint = checkpoint;
        m
    }

    /// Slots of the whole medium.
    fn slots(&self) -> u64 {
        self.geometry.physical_pages() * u64::from(self.spp)
    }

    /// `(block, slot in block)` of `ppn`.
    fn check_ppn(&self, ppn: Ppn) -> Result<(u32, u32), MediumError> {
        if u64::from(ppn.0) >= self.slots() {
            return Err(MediumError::PageOutOfRange {
                ppn: ppn.0,
                pages: self.slots(),
            });
        }
        Ok((ppn.0 / self.spb, ppn.0 % self.spb))
    }

    fn unit_and_channel(&self, block: u32) -> (usize, usize) {
        let unit = self.geometry.unit_of_block(block);
        (unit as usize, self.geometry.channel_of_unit(unit) as usize)
    }

    /// Schedule a read of `xfer_ns` bytes-out on `block`'s unit; returns the end time.
    fn schedule_read(&mut self, block: u32, xfer_ns: u64, issue_ns: u64) -> u64 {
        let (u, c) = self.unit_and_channel(block);
        let start = issue_ns.max(self.unit_free_ns[u]);
        let ready = start + self.timing.read_page_ns;
        let xfer_start = ready.max(self.channel_free_ns[c]);
        let end = xfer_start + xfer_ns;
        self.channel_free_ns[c] = end;
        self.unit_free_ns[u] = end;
        self.busy_ns += end - start;
        end
    }

    /// Schedule a page program on `unit`; returns `(start, end)`.
    fn schedule_program(&mut self, unit: usize, issue_ns: u64) -> (u64, u64) {
        let c = self.geometry.channel_of_unit(unit as u32) as usize;
        let start = issue_ns
            .max(self.unit_free_ns[unit])
            .max(self.channel_free_ns[c]);
        self.channel_free_ns[c] = start + self.page_xfer_ns;
        let end = start + self.page_xfer_ns + self.timing.program_page_ns;
        self.unit_free_ns[unit] = end;
        self.busy_ns += end - start;
        (start, end)
    }

    /// Schedule the next map-area page program (round-robin over the units); returns its end.
    ///
    /// With `erase_map_blocks`, the map area of each unit is written as a log that is reclaimed
    /// by plain erases, never by copies, as the OpenSSD greedy FTL logs its whole map on every
    /// flush: when a unit's log fills a block, the next map page on that unit first waits for
    /// an erase (the first block was erased at format). The timing and the count are modeled;
    /// the checkpoint's contents stay abstract (`MapCheckpoint`), so the erase changes no
    /// recovered state. X-FTL Table 1 counts these "metadata blocks erased by FTL".
    fn schedule_map_program(&mut self, issue_ns: u64) -> u64 {
        let units = u64::from(self.geometry.units());
        let unit = (self.map_cursor % units) as usize;
        let nth = self.map_cursor / units;
        self.map_cursor += 1;
        let pages_per_block = u64::from(self.geometry.pages_per_block);
        if self.erase_map_blocks && nth > 0 && nth.is_multiple_of(pages_per_block) {
            let start = issue_ns.max(self.unit_free_ns[unit]);
            let end = start + self.timing.erase_block_ns;
            self.unit_free_ns[unit] = end;
            self.busy_ns += end - start;
            self.map_erases += 1;
        }
        self.schedule_program(unit, issue_ns).1
    }

    fn block_data(&mut self, block: u32) -> &mut [u8] {
        let len = self.slot_bytes * self.spb as usize;
        self.data[block as usize].get_or_insert_with(|| vec![0u8; len].into_boxed_slice())
    }
}

/// Borrowed contents of a medium, for the image writer.
pub(crate) struct NandParts<'a> {
    pub oob: &'a [Oob],
    pub programmed: &'a [u32],
    pub erase_counts: &'a [u32],
    pub data: &'a [Option<Box<[u8]>>],
    pub checkpoint: &'a MapCheckpoint,
}

impl Medium for NandMedium {
    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn data_mode(&self) -> DataMode {
        self.mode
    }

    fn slots_per_page(&self) -> u32 {
        self.spp
    }

    fn program_page(
        &mut self,
        ppn: Ppn,
        data: &[&[u8]],
        oob: &[Oob],
        issue_ns: u64,
    ) -> Result<u64, MediumError> {
        let (block, slot) = self.check_ppn(ppn)?;
        let n = oob.len();
        if n == 0 || n > self.spp as usize || data.len() != n {
            return Err(MediumError::BadSlotCount {
                found: n,
                slots_per_page: self.spp,
            });
        }
        let expected_len = if self.mode == DataMode::Full {
            self.slot_bytes
        } else {
            0
        };
        if let Some(d) = data.iter().find(|d| d.len() != expected_len) {
            return Err(MediumError::BadDataLength {
                expected: expected_len,
                found: d.len(),
            });
        }
        let next = self.programmed[block as usize];
        if next >= self.spb {
            return Err(MediumError::ProgramNotErased { ppn: ppn.0, block });
        }
        if slot != next {
            return Err(MediumError::ProgramOutOfOrder {
                ppn: ppn.0,
                block,
                expected: next,
            });
        }
        // A block holds no data buffer until a page with a non-zero byte is programmed into it
        // (a block without one reads as zeros): an aged device full of zero pages stays small.
        // Padding slots hold zeros (a fresh buffer, or one cleared by the last erase).
        if self.mode == DataMode::Full
            && (self.data[block as usize].is_some()
                || data.iter().any(|d| d.iter().any(|&b| b != 0)))
        {
            let sb = self.slot_bytes;
            let spp = self.spp as usize;
            let buf = self.block_data(block);
            for i in 0..spp {
                let off = (slot as usize + i) * sb;
                match data.get(i) {
                    Some(d) => buf[off..off + sb].copy_from_slice(d),
                    None => buf[off..off + sb].fill(0),
                }
            }
        }
        let first = ppn.0 as usize;
        // One slot at a time: `n` is small, and a copy of unknown length is a library call.
        for (i, &o) in oob.iter().enumerate() {
            self.oob[first + i] = o;
        }
        if n < self.spp as usize {
            let last_seq = oob[n - 1].seq;
            let pad = Oob {
                lpn: crate::addr::NO_LPN,
                checksum: crate::addr::page_checksum(&self.zeros, crate::addr::NO_LPN, last_seq),
                seq: last_seq,
            };
            for o in &mut self.oob[first + n..first + self.spp as usize] {
                *o = pad;
            }
        }
        self.programmed[block as usize] = next + self.spp;
        let (unit, _) = self.unit_and_channel(block);
        let (start_ns, end_ns) = self.schedule_program(unit, issue_ns);
        self.inflight.push(Inflight::Program {
            ppn: ppn.0,
            start_ns,
            end_ns,
        });
        Ok(end_ns)
    }

    fn read(&mut self, ppn: Ppn, buf: &mut [u8], issue_ns: u64) -> Result<PageRead, MediumError> {
        let (block, page) = self.check_ppn(ppn)?;
        let expected_len = if self.mode == DataMode::Full {
            self.slot_bytes
        } else {
            0
        };
        if buf.len() != expected_len {
            return Err(MediumError::BadDataLength {
                expected: expected_len,
                found: buf.len(),
            });
        }
        let done_ns = self.schedule_read(block, self.slot_xfer_ns, issue_ns);
        if page >= self.programmed[block as usize] {
            buf.fill(0xFF);
            return Ok(PageRead {
                state: PageState::Erased,
                oob: Oob::EMPTY,
                done_ns,
            });
        }
        if self.mode == DataMode::Full {
            let off = page as usize * self.slot_bytes;
            match &self.data[block as usize] {
                Some(d) => buf.copy_from_slice(&d[off..off + self.slot_bytes]),
                None => buf.fill(0),
            }
        }
        Ok(PageRead {
            state: PageState::Programmed,
            oob: self.oob[ppn.0 as usize],
            done_ns,
        })
    }

    fn read_oob(&mut self, ppn: Ppn, issue_ns: u64) -> Result<PageRead, MediumError> {
        let (block, page) = self.check_ppn(ppn)?;
        let done_ns = self.schedule_read(block, self.oob_xfer_ns, issue_ns);
        if page >= self.programmed[block as usize] {
            return Ok(PageRead {
                state: PageState::Erased,
                oob: Oob::EMPTY,
                done_ns,
            });
        }
        Ok(PageRead {
            state: PageState::Programmed,
            oob: self.oob[ppn.0 as usize],
            done_ns,
        })
    }

    fn peek_oob(&self, ppn: Ppn) -> Option<Oob> {
        let block = ppn.0 / self.spb;
        let page = ppn.0 % self.spb;
        (page < *self.programmed.get(block as usize)?).then(|| self.oob[ppn.0 as usize])
    }

    fn peek_valid_oob(&self, ppn: Ppn) -> Option<Oob> {
        let oob = self.peek_oob(ppn)?;
        let (block, page) = (ppn.0 / self.spb, ppn.0 % self.spb);
        let sum = match (&self.data[block as usize], self.mode) {
            (Some(d), DataMode::Full) => {
                let off = page as usize * self.slot_bytes;
                crate::addr::page_checksum(&d[off..off + self.slot_bytes], oob.lpn, oob.seq)
            }
            (None, DataMode::Full) => crate::addr::page_checksum(&self.zeros, oob.lpn, oob.seq),
            (_, DataMode::OobOnly) => crate::addr::page_checksum(&[], oob.lpn, oob.seq),
        };
        (sum == oob.checksum).then_some(oob)
    }

    fn erase(&mut self, block: BlockId, issue_ns: u64) -> Result<u64, MediumError> {
        let b = block.0;
        if b >= self.geometry.blocks() {
            return Err(MediumError::BlockOutOfRange {
                block: b,
                blocks: self.geometry.blocks(),
            });
        }
        let (u, _) = self.unit_and_channel(b);
        let start_ns = issue_ns.max(self.unit_free_ns[u]);
        let end_ns = start_ns + self.timing.erase_block_ns;
        self.unit_free_ns[u] = end_ns;
        self.busy_ns += end_ns - start_ns;
        let range = (b * self.spb) as usize..((b + 1) * self.spb) as usize;
        let saved_oob = self.oob[range].to_vec();
        let saved_data = self.data[b as usize].take();
        let saved_programmed = self.programmed[b as usize];
        self.programmed[b as usize] = 0;
        self.erase_counts[b as usize] += 1;
        self.inflight.push(Inflight::Erase {
            block: b,
            start_ns,
            end_ns,
            saved_oob,
            saved_data,
            saved_programmed,
        });
        self.inflight_erases += 1;
        Ok(end_ns)
    }

    fn programmed_pages(&self, block: BlockId) -> u32 {
        self.programmed[block.0 as usize]
    }

    fn erase_count(&self, block: BlockId) -> u32 {
        self.erase_counts[block.0 as usize]
    }

    fn map_erases(&self) -> u64 {
        self.map_erases
    }

    fn set_map_erases(&mut self, on: bool) {
        self.erase_map_blocks = on;
    }

    fn checkpoint(&self) -> &MapCheckpoint {
        &self.checkpoint
    }

    fn write_checkpoint(
        &mut self,
        ranges: &[(u32, u32)],
        source: &[u32],
        checkpoint_seq: u64,
        map_pages: u64,
        issue_ns: u64,
    ) -> Result<u64, MediumError> {
        let len = self.checkpoint.entries.len();
        let mut old_ranges = Vec::with_capacity(ranges.len());
        for &(first, n) in ranges {
            let (lo, hi) = (first as usize, first as usize + n as usize);
            if hi > len || hi > source.len() {
                return Err(MediumError::MapIndexOutOfRange {
                    index: hi as u32,
                    len,
                });
            }
            old_ranges.push((first, self.checkpoint.entries[lo..hi].to_vec()));
            self.checkpoint.entries[lo..hi].copy_from_slice(&source[lo..hi]);
        }
        let old_seq = self.checkpoint.checkpoint_seq;
        self.checkpoint.checkpoint_seq = checkpoint_seq;
        // The map area is spread over all units, one page after the other round-robin.
        let mut end_ns = issue_ns.max(self.map_write_done_ns);
        for _ in 0..map_pages {
            end_ns = end_ns.max(self.schedule_map_program(issue_ns));
        }
        self.map_write_done_ns = end_ns;
        self.inflight.push(Inflight::Checkpoint {
            end_ns,
            old_ranges,
            old_seq,
        });
        Ok(end_ns)
    }

    fn commit_table(&self) -> &[CommitEntry] {
        &self.commit_table
    }

    fn write_commit_table(
        &mut self,
        table: &[CommitEntry],
        pages: u64,
        issue_ns: u64,
    ) -> Result<u64, MediumError> {
        let old = std::mem::replace(&mut self.commit_table, table.to_vec());
        // The X-L2P area shares the map area's ring and round-robin placement over the units.
        let mut end_ns = issue_ns.max(self.map_write_done_ns);
        for _ in 0..pages {
            end_ns = end_ns.max(self.schedule_map_program(issue_ns));
        }
        self.map_write_done_ns = end_ns;
        self.inflight.push(Inflight::CommitTable { end_ns, old });
        Ok(end_ns)
    }

    fn read_map_pages(&mut self, map_pages: u64, issue_ns: u64) -> u64 {
        // Map pages are spread round-robin over the units, like the writes that made them.
        let units = self.geometry.units();
        let mut end = issue_ns;
        for i in 0..map_pages {
            let block = (i % u64::from(units)) as u32;
            end = end.max(self.schedule_read(block, self.page_xfer_ns, issue_ns));
        }
        end
    }

    fn reset_checkpoint(&mut self, logical_pages: u64) {
        self.checkpoint = MapCheckpoint {
            entries: vec![crate::addr::NO_LPN; logical_pages as usize],
            checkpoint_seq: 0,
        };
        self.commit_table.clear();
    }

    fn retire(&mut self, now_ns: u64) {
        // Amortized: compact only when the log doubled since the last compaction (or holds many
        // erase records, which may own a block of page data each).
        let erase_limit = if self.mode == DataMode::Full {
            8
        } else {
            usize::MAX
        };
        if self.inflight.len() < self.retire_at_len && self.inflight_erases < erase_limit {
            return;
        }
        self.inflight.retain(|op| op.end_ns() > now_ns);
        self.inflight_erases = self
            .inflight
            .iter()
            .filter(|op| matches!(op, Inflight::Erase { .. }))
            .count();
        self.retire_at_len = (2 * self.inflight.len()).max(256);
        if self.mode == DataMode::Full && self.inflight_erases >= erase_limit {
            // Erases still under way: look again after a few more commands, not at every one.
            self.retire_at_len = self.retire_at_len.min(self.inflight.len() + 64);
        }
    }

    fn power_loss(&mut self, at_ns: u64, seed: u64) {
        let mut rng = SimRng::new(seed);
        let log = std::mem::take(&mut self.inflight);
        for op in log.into_iter().rev() {
            if op.end_ns() <= at_ns {
                continue;
            }
            match op {
                Inflight::Program { ppn, start_ns, .. } => {
                    let (block, slot) = (ppn / self.spb, ppn % self.spb);
                    if start_ns >= at_ns {
                        // Never started: the page stays erased. Later pages of the block were
                        // undone first (reverse order), so this is the block's last page.
                        assert_eq!(
                            self.programmed[block as usize],
                            slot + self.spp,
                            "program log out of order"
                        );
                        self.programmed[block as usize] = slot;
                    } else {
                        // Torn: part of the cells hold the new data, part are in between;
                        // every slot of the page fails its checksum.
                        if self.mode == DataMode::Full {
                            let pb = self.slot_bytes * self.spp as usize;
                            let off = slot as usize * self.slot_bytes;
                            let d = &mut self.block_data(block)[off..off + pb];
                            let from = rng.below(pb as u64) as usize;
                            for b in &mut d[from..] {
                                *b = rng.next_u64() as u8;
                            }
                        }
                        for s in ppn..ppn + self.spp {
                            self.oob[s as usize].checksum ^= (rng.next_u64() as u32) | 1;
                        }
                    }
                }
                Inflight::Erase {
                    block,
                    start_ns,
                    saved_oob,
                    saved_data,
                    saved_programmed,
                    ..
                } => {
                    let range = (block * self.spb) as usize..((block + 1) * self.spb) as usize;
                    if start_ns >= at_ns {
                        self.oob[range].copy_from_slice(&saved_oob);
                        self.data[block as usize] = saved_data;
                        self.programmed[block as usize] = saved_programmed;
                        self.erase_counts[block as usize] -= 1;
                    } else {
                        // An interrupted erase leaves cells in between: every page reads back
                        // as a programmed page that fails its checksum until the next erase.
                        for o in &mut self.oob[range] {
                            *o = Oob {
                                lpn: crate::addr::NO_LPN,
                                checksum: 1,
                                seq: 0,
                            };
                        }
                        self.programmed[block as usize] = self.spb;
                    }
                }
                Inflight::Checkpoint {
                    old_ranges,
                    old_seq,
                    ..
                } => {
                    for (first, old) in old_ranges.iter().rev() {
                        let lo = *first as usize;
                        self.checkpoint.entries[lo..lo + old.len()].copy_from_slice(old);
                    }
                    self.checkpoint.checkpoint_seq = old_seq;
                }
                Inflight::CommitTable { old, .. } => {
                    self.commit_table = old;
                }
            }
        }
        self.inflight_erases = 0;
        self.unit_free_ns.fill(at_ns);
        self.channel_free_ns.fill(at_ns);
        self.map_write_done_ns = at_ns;
    }

    fn busy_ns(&self) -> u64 {
        self.busy_ns
    }

    fn metadata_heap_bytes(&self) -> u64 {
        (self.oob.len() * std::mem::size_of::<Oob>()
            + self.programmed.len() * 4
            + self.erase_counts.len() * 4
            + self.data.len() * std::mem::size_of::<Option<Box<[u8]>>>()
            + self.checkpoint.entries.len() * 4
            + self.commit_table.capacity() * std::mem::size_of::<CommitEntry>()) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> NandMedium {
        let g = Geometry {
            page_bytes: 1024,
            pages_per_block: 4,
            blocks_per_plane: 2,
            planes_per_die: 1,
            dies_per_channel: 1,
            channels: 2,
            sector_bytes: 512,
        };
        NandMedium::new(g, Timing::default(), DataMode::Full)
    }

    fn oob(lpn: u32, seq: u64) -> Oob {
        Oob {
            lpn,
            seq,
            checksum: 0,
        }
    }

    #[test]
    fn pages_must_be_programmed_in_order_and_erased_before_reuse() {
        let mut m = small();
        let d = vec![1u8; 1024];
        assert!(matches!(
            m.program(Ppn(1), &d, oob(0, 1), 0),
            Err(MediumError::ProgramOutOfOrder { .. })
        ));
        for p in 0..4 {
            m.program(Ppn(p), &d, oob(p, 1), 0).unwrap();
        }
        assert!(matches!(
            m.program(Ppn(0), &d, oob(0, 1), 0),
            Err(MediumError::ProgramNotErased { .. })
        ));
        m.erase(BlockId(0), 0).unwrap();
        assert_eq!(m.erase_count(BlockId(0)), 1);
        m.program(Ppn(0), &d, oob(0, 2), 0).unwrap();
    }

    #[test]
    fn units_work_in_parallel_and_a_unit_serializes() {
        let mut m = small();
        let d = vec![0u8; 1024];
        let t = m.timing().clone();
        let xfer = Timing::transfer_ns(1024, t.channel_bytes_per_s);
        // Blocks 0 and 1 are on different units and channels: both finish after one program.
        let a = m.program(Ppn(0), &d, oob(0, 1), 0).unwrap();
        let b = m.program(Ppn(4), &d, oob(1, 2), 0).unwrap();
        assert_eq!(a, xfer + t.program_page_ns);
        assert_eq!(b, a);
        // A second program on block 0's unit waits for the first.
        let c = m.program(Ppn(1), &d, oob(2, 3), 0).unwrap();
        assert_eq!(c, 2 * (xfer + t.program_page_ns));
    }

    #[test]
    fn power_loss_tears_the_running_program_and_undoes_the_unstarted_one() {
        let mut m = small();
        let d = vec![9u8; 1024];
        let first_end = m.program(Ppn(0), &d, oob(0, 1), 0).unwrap();
        let second_end = m.program(Ppn(1), &d, oob(1, 2), 0).unwrap();
        let _third = m.program(Ppn(2), &d, oob(2, 3), 0).unwrap();
        // Cut during the second program.
        m.power_loss(first_end + (second_end - first_end) / 2, 7);
        assert_eq!(
            m.programmed_pages(BlockId(0)),
            2,
            "the unstarted third program never happened"
        );
        assert_eq!(
            m.peek_oob(Ppn(0)).unwrap().checksum,
            0,
            "the completed program stands"
        );
        assert_ne!(
            m.peek_oob(Ppn(1)).unwrap().checksum,
            0,
            "the running program is torn"
        );
    }

    #[test]
    fn power_loss_before_an_erase_starts_keeps_the_block() {
        let mut m = small();
        let d = vec![3u8; 1024];
        let end = m.program(Ppn(0), &d, oob(0, 1), 0).unwrap();
        m.retire(end);
        let erase_end = m.erase(BlockId(0), end + 1000).unwrap();
        assert!(erase_end > end);
        m.power_loss(end + 500, 1);
        assert_eq!(m.programmed_pages(BlockId(0)), 1);
        assert_eq!(m.erase_count(BlockId(0)), 0);
        let mut buf = vec![0u8; 1024];
        m.read(Ppn(0), &mut buf, 0).unwrap();
        assert_eq!(buf, d);
    }

    #[test]
    fn interrupted_checkpoint_leaves_the_previous_one() {
        let mut m = small();
        m.reset_checkpoint(4);
        let end = m
            .write_checkpoint(&[(0, 1)], &[5, 0, 0, 0], 10, 1, 0)
            .unwrap();
        m.write_checkpoint(&[(0, 2)], &[6, 7, 0, 0], 20, 1, end)
            .unwrap();
        m.power_loss(end, 0);
        assert_eq!(m.checkpoint().entries[0], 5);
        assert_eq!(m.checkpoint().entries[1], crate::addr::NO_LPN);
        assert_eq!(m.checkpoint().checkpoint_seq, 10);
    }

    #[test]
    fn the_map_log_erases_a_block_each_time_it_enters_one_after_the_first() {
        let units = u64::from(small().geometry().units());
        let ppb = u64::from(small().geometry().pages_per_block);
        let t = small().timing().clone();
        let full = units * ppb;
        for on in [false, true] {
            let mut m = small();
            m.set_map_erases(on);
            m.reset_checkpoint(4);
            // The first block of every unit takes `ppb` pages without an erase.
            let end = m.write_checkpoint(&[], &[], 1, full, 0).unwrap();
            assert_eq!(m.map_erases(), 0);
            m.retire(end);
            // The next page goes to unit 0's second block: erased first when the knob is on.
            let next = m.write_commit_table(&[], 1, end).unwrap();
            let program = Timing::transfer_ns(1024, t.channel_bytes_per_s) + t.program_page_ns;
            if on {
                assert_eq!(m.map_erases(), 1);
                assert_eq!(next, end + t.erase_block_ns + program);
            } else {
                assert_eq!(m.map_erases(), 0);
                assert_eq!(next, end + program);
            }
            // One erase per block entered on each unit, no more.
            m.write_checkpoint(&[], &[], 2, 3 * full - 1, next).unwrap();
            assert_eq!(m.map_erases(), if on { 3 * units } else { 0 });
        }
    }
}
