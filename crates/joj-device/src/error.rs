//! Error types, one per layer; each layer wraps the one below.

/// Errors of a medium: misuse of the NAND command set, which the FTL must never commit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MediumError {
    #[error("physical page {ppn} is beyond the medium ({pages} pages)")]
    PageOutOfRange { ppn: u32, pages: u64 },
    #[error("block {block} is beyond the medium ({blocks} blocks)")]
    BlockOutOfRange { block: u32, blocks: u32 },
    #[error("program of page {ppn} out of order: block {block} expects page {expected} next")]
    ProgramOutOfOrder { ppn: u32, block: u32, expected: u32 },
    #[error("program of page {ppn}: block {block} is full and must be erased first")]
    ProgramNotErased { ppn: u32, block: u32 },
    #[error("data of {found} bytes where a page holds {expected}")]
    BadDataLength { expected: usize, found: usize },
    #[error("a page program of {found} slots where a page holds 1 to {slots_per_page}")]
    BadSlotCount { found: usize, slots_per_page: u32 },
    #[error("checkpoint update has index {index} beyond the mapping of {len} entries")]
    MapIndexOutOfRange { index: u32, len: usize },
}

/// Errors of the NVM: an access beyond the region. The FTL must never commit one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NvmError {
    #[error("NVM access at byte {offset} of {len} bytes goes beyond the region ({size} bytes)")]
    OutOfRange { offset: u64, len: u64, size: u64 },
    /// An access whose end would pass the `u64` nanosecond clock (a latency beyond what the
    /// profile bounds, or a clock already near its end).
    #[error(
        "an NVM access starting at {start_ns} ns and taking {cost_ns} ns would end beyond the \
         model's nanosecond clock; fix: give iftl.nvm latencies of at most 10 s (an STT-MRAM \
         access takes some 100 ns)"
    )]
    ClockOverflow { start_ns: u64, cost_ns: u64 },
}

/// Errors of the page-mapping FTL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FtlError {
    #[error(transparent)]
    Medium(#[from] MediumError),
    #[error("checksum mismatch on page {ppn}: OOB says {expected:#010x}, data gives {found:#010x}")]
    ChecksumMismatch { ppn: u32, expected: u32, found: u32 },
    #[error("logical page {lpn} is beyond the device ({logical_pages} pages)")]
    LpnOutOfRange { lpn: u32, logical_pages: u64 },
    #[error("geometry too small: {reason}")]
    GeometryTooSmall { reason: String },
    #[error(
        "i-FTL maps whole NAND pages; this profile maps {unit_bytes}-byte units of \
         {page_bytes}-byte pages: drop `ftl.mapping_unit_bytes` for an i-FTL device"
    )]
    IftlNeedsPageMapping { unit_bytes: u32, page_bytes: u32 },
    #[error("no free block left for the write frontier (garbage collection found no victim)")]
    NoFreeBlocks,
    #[error("mapping checkpoint corrupt: {reason}")]
    CheckpointCorrupt { reason: String },
    #[error(
        "the X-L2P table is full ({capacity} entries, one for each page an open transaction or a \
         reliable write changes): a transaction changes more pages than the table holds; fix: \
         commit or abort transactions sooner, or give the profile a larger `ftl.xl2p_entries`"
    )]
    XL2PFull { capacity: u32 },
    #[error(
        "logical page {lpn} is being written by transaction {holder}: a write by {by} must wait \
         until it commits or aborts"
    )]
    TxnConflict { lpn: u32, holder: u32, by: String },
    #[error("transaction {tid} is not active (never begun, or already committed or aborted)")]
    NoSuchTxn { tid: u32 },
    #[error(transparent)]
    Nvm(#[from] NvmError),
    #[error(
        "i-FTL's tables need {needed_bytes} bytes of NVM but the device has {nvm_bytes}: give it \
         more NVM (`iftl.nvm_bytes`) or fewer logical pages"
    )]
    NvmExhausted { needed_bytes: u64, nvm_bytes: u64 },
    #[error(
        "no NVM metadata slot is free ({slots} slots): commit or abort a transaction, or give the \
         device more NVM"
    )]
    NvmSlotsFull { slots: u32 },
    #[error(
        "the logFTL is full ({capacity} entries live): commit or abort the open transactions, or \
         give the device a larger `iftl.log_entries`"
    )]
    LogFtlFull { capacity: u32 },
    #[error(
        "lazy GC needs a log block but all {blocks} reserved log blocks hold pages open \
         transactions still need: commit or abort a transaction (`iftl.log_blocks`)"
    )]
    LogBlocksFull { blocks: u32 },
    #[error(
        "the transaction table is full ({slots} transactions open): commit or abort one, or give \
         the device more `iftl.tx_slots`"
    )]
    TxnTableFull { slots: u32 },
    #[error("NVM region not usable: {reason}")]
    NvmCorrupt { reason: String },
}

impl FtlError {
    /// A command the FTL refused without changing anything (the device stays usable).
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            FtlError::XL2PFull { .. }
                | FtlError::TxnConflict { .. }
                | FtlError::NoSuchTxn { .. }
                | FtlError::LpnOutOfRange { .. }
                | FtlError::NvmSlotsFull { .. }
                | FtlError::LogFtlFull { .. }
                | FtlError::TxnTableFull { .. }
                | FtlError::LogBlocksFull { .. }
        )
    }
}

/// Errors of the block-device interface (the emulated eMMC).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DeviceError {
    #[error(transparent)]
    Ftl(#[from] FtlError),
    #[error(
        "request at byte {offset_bytes} of {len_bytes} bytes goes beyond the device ({capacity_bytes} bytes)"
    )]
    BeyondDevice {
        offset_bytes: u64,
        len_bytes: u64,
        capacity_bytes: u64,
    },
    #[error(
        "request at byte {offset_bytes} of {len_bytes} bytes is not aligned to {sector_bytes}-byte sectors"
    )]
    Misaligned {
        offset_bytes: u64,
        len_bytes: u64,
        sector_bytes: u32,
    },
    #[error("empty request")]
    EmptyRequest,
    /// A device whose model would take more memory than the process may allocate
    /// ([`crate::memory_budget`]).
    #[error(
        "a device of profile {profile} ({pages} NAND pages) would hold {} MiB of model state \
         from the start, and this process may allocate {} MiB more (half the machine's memory, \
         less what `ulimit -v` and the cgroup's memory.max leave); fix: a smaller device \
         (fewer geometry.blocks_per_plane in the profile, or --raw-gib where the command has it)",
        model_bytes >> 20,
        limit_bytes >> 20
    )]
    TooLargeForMemory {
        profile: String,
        pages: u64,
        model_bytes: u64,
        limit_bytes: u64,
    },
    /// A workload's issuers (`--iodepth`) outside 1 to the deepest command queue.
    #[error(
        "{issuers} issuers; fix: give 1 to {max} (the deepest command queue a profile may have)"
    )]
    Issuers { issuers: u32, max: u32 },
    #[error("the device failed an earlier command and refuses I/O until reopened")]
    Failed,
    #[error("cannot age the device: {0}")]
    Aging(String),
    /// Idle time that would run the device's nanosecond clock beyond [`crate::MAX_CLOCK_NS`]
    /// (a trace's timestamps, `--honor-timestamps`).
    #[error(
        "idle until {t_ns} ns would run the device's clock beyond {max_ns} ns (146 years), past \
         which its nanosecond sums overflow; no trace spans that long; fix: check the trace's \
         timestamps (a blkparse time is seconds since the trace began), or replay it without \
         --honor-timestamps"
    )]
    ClockBeyond { t_ns: u64, max_ns: u64 },
    /// A device in another process (over a connection) refused a command or failed, or the
    /// connection to it broke; the message is the device's or the connection's.
    #[error("remote device: {0}")]
    Remote(String),
}

/// Errors loading a profile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    #[error(
        "unknown device profile `{name}` (built in: {known}; or give a path to a profile JSON file)"
    )]
    Unknown { name: String, known: String },
    #[error("cannot read profile {path}: {message}")]
    Io { path: String, message: String },
    #[error("profile does not parse: {message}")]
    Parse { message: String },
    #[error(
        "{path} is not a device profile: {message}; fix: give a profile JSON file (the fields \
         of docs/formats/profile.md) or a built-in name ({known})"
    )]
    ParseFile {
        path: String,
        message: String,
        known: String,
    },
    /// A profile file that cannot be read ([`joj_trace::InputError`]'s message: not a regular
    /// file, too large, unreadable), kept as text so the error stays `Clone` and `Eq`.
    #[error("{0}")]
    Input(String),
    #[error("invalid profile: {reason}")]
    Invalid { reason: String },
    /// A raw size (`--raw-gib`) that gives no block per plane, or more than fit a `u32`.
    #[error(
        "--raw-gib {gib} is less than one block per plane of {profile} ({block_row_mib} MiB); \
         fix: give at least {min_gib} GiB"
    )]
    RawSize {
        gib: u64,
        profile: String,
        block_row_mib: u64,
        min_gib: u64,
    },
    #[error(
        "the device has {pages} physical pages; the model keeps 16 B or more per page in \
         memory and takes at most {max_pages} (a 2 TiB device of 8 KiB pages); fix: fewer \
         blocks (--blocks-per-plane, --raw-gib, or the profile's geometry)"
    )]
    TooLarge { pages: u64, max_pages: u64 },
    #[error(
        "invalid profile: {field} is 0, which would model that step as taking no time \
         (an infinitely fast device under the profile's name); fix: give the part's value, \
         e.g. {example}"
    )]
    ZeroTiming {
        field: &'static str,
        example: &'static str,
    },
    /// A size or speed beyond what any device has, which the model would allocate or divide
    /// by (`docs/robustness.md`, "Device profiles and pipes").
    #[error(
        "invalid profile: {field} is {value} {unit}, outside {min}..={max}: {reason}; fix: give \
         the part's value, e.g. {example}"
    )]
    OutOfRange {
        field: &'static str,
        value: u64,
        min: u64,
        max: u64,
        unit: &'static str,
        reason: &'static str,
        example: &'static str,
    },
    /// A bandwidth below [`crate::config::MIN_BYTES_PER_S`].
    #[error(
        "invalid profile: {field} is {value} bytes/s, below the floor of {min} bytes/s: slower \
         than any bus of a real part (eMMC's slowest, 1 bit at 26 MHz, moves 3.25 MB/s), and a \
         whole run's transfers at that speed would overflow the model's nanosecond clock; fix: \
         give the part's value, e.g. {example}"
    )]
    TooSlow {
        field: &'static str,
        value: u64,
        min: u64,
        example: &'static str,
    },
    /// Blocks too few for the logical pages the over-provisioning leaves plus the FTL's spare
    /// blocks (a write frontier per unit, the GC reserve, two for GC and checkpoints, and
    /// i-FTL's log blocks): no write could ever be placed.
    #[error(
        "invalid profile: its {blocks} blocks cannot hold the {user_blocks} blocks of logical \
         pages that over_provisioning_percent {op_percent} leaves plus {spare} spare ({units} \
         write frontiers, {gc_free_blocks} ftl.gc_free_blocks, 2 for GC{log}); fix: more blocks \
         (geometry.blocks_per_plane, --raw-gib){larger_op}"
    )]
    SpareBlocks {
        blocks: u64,
        user_blocks: u64,
        spare: u64,
        units: u32,
        gc_free_blocks: u32,
        log: String,
        op_percent: String,
        /// ", or over_provisioning_percent N or more" where more over-provisioning suffices.
        larger_op: String,
    },
    /// A host sector that is neither 512 nor 4096 bytes.
    #[error(
        "invalid profile: geometry.sector_bytes is {value}; a device addresses 512-byte sectors \
         (eMMC, JESD84-B51; SATA, SCSI and NVMe's 512-byte logical blocks) or 4096-byte ones \
         (eMMC's large-sector mode, EXT_CSD DATA_SECTOR_SIZE; 4Kn disks), nothing else; fix: \
         give 512 (every built-in profile) or 4096"
    )]
    SectorSize { value: u32 },
    #[error(
        "invalid profile: {field} is {value}, outside 1..={max}; fix: give a value in that \
         range, e.g. {example}"
    )]
    IftlField {
        field: &'static str,
        value: u64,
        max: u64,
        example: &'static str,
    },
    /// Free text holding a character that acts on a terminal rather than shows
    /// ([`crate::profile_text`]); the character itself is never repeated, only its code.
    #[error(
        "invalid profile: {field} holds U+{code:04X} at character {at}, a control or \
         bidirectional-formatting character: printed, it would act on the terminal (an escape \
         sequence, a carriage return, a forged line) or reorder the text instead of showing; \
         fix: write {field} as plain text on one line, without control characters (ESC, CR, \
         newline, tab, …) or bidi controls (U+202A–U+202E, U+2066–U+2069)"
    )]
    TextControl { field: String, code: u32, at: usize },
    /// Free text shorter or longer than its field takes ([`crate::profile_text`]).
    #[error(
        "invalid profile: {field} is {chars} characters long, outside {min}..={max}; fix: {fix}"
    )]
    TextLength {
        field: String,
        chars: usize,
        min: usize,
        max: usize,
        fix: &'static str,
    },
}

/// Errors reading or writing a device image file (`docs/formats/device-image.md`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImageError {
    #[error("image I/O: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Input(#[from] joj_trace::InputError),
    #[error("not a joj device image (bad magic); fix: give an image `joj device format` wrote")]
    BadMagic,
    #[error(
        "image format version {found} is newer than this build reads ({supported}); not touching it"
    )]
    NewerVersion { found: u32, supported: u32 },
    #[error("image geometry {found} differs from the profile's {expected}; refusing to reformat")]
    GeometryMismatch { expected: String, found: String },
    #[error(
        "image checksum mismatch in {section}: stored {expected:#018x}, computed {found:#018x}"
    )]
    ChecksumMismatch {
        section: &'static str,
        expected: u64,
        found: u64,
    },
    #[error("image truncated or malformed: {reason}")]
    Malformed { reason: String },
    /// An image whose sections check out but whose mapping checkpoint no device wrote: a
    /// pointer past the device, or to a page holding another logical page.
    #[error(
        "image's mapping checkpoint is corrupt: {reason}; fix: give an image that `joj device \
         format` or `joj device save` wrote, unaltered, or format a new one (`joj device format \
         --force`)"
    )]
    CheckpointCorrupt { reason: String },
    #[error(
        "{path} exists; refusing to format over it (choose another path, or replace it \
         explicitly: `joj device format --force`)"
    )]
    Exists { path: String },
    #[error("{path} is not a joj device image; refusing to replace it, even when forced")]
    NotAnImage { path: String },
    #[error("image data mode differs: image is {found}, profile wants {expected}")]
    DataModeMismatch { expected: String, found: String },
    /// The filesystem an image is to be written on has less free space than the image takes:
    /// refused before anything is written.
    #[error(
        "the device image {path} takes {}, more than the {} free on its filesystem; nothing was \
         written; {IMAGE_ROOM_FIX}",
        mib(*.image_bytes), mib(*.free_bytes)
    )]
    NoRoom {
        path: String,
        image_bytes: u64,
        free_bytes: u64,
    },
    /// Writing an image failed; its temporary file is removed, and `path` holds what it held
    /// before (unless only the final sync of its directory failed).
    #[error(
        "cannot write the device image {path} ({}): {source}{}",
        mib(*.image_bytes), full_fix(.source)
    )]
    Write {
        path: String,
        image_bytes: u64,
        #[source]
        source: std::io::Error,
    },
}

/// The fix for an image that does not fit where it is to be written.
const IMAGE_ROOM_FIX: &str = "fix: free space there, or give an image path on a filesystem \
     with more free space (a profile with fewer blocks makes a smaller image)";

/// `bytes` in MiB with one decimal, as a message shows a size.
fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

/// The fix after an image's error when `e` says the filesystem (or the user's quota) is full.
fn full_fix(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded => {
            format!("; {IMAGE_ROOM_FIX}")
        }
        _ => String::new(),
    }
}

/// Errors replaying a block trace.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    #[error("cannot read trace {path}: {source}")]
    Trace {
        path: String,
        #[source]
        source: joj_trace::TraceError,
    },
    #[error(
        "{path} holds no block request to replay: it is neither a joj-trace file (its first line \
         is not a joj-trace header) nor blkparse text with D or Q events; capture one with \
         `joj bench --trace` or `blkparse -i <dev>`"
    )]
    NoRequests { path: String },
    #[error(
        "trace has no request for device {dev} (devices in the trace: {devices}); fix: name one \
         of those devices, as `major:minor`"
    )]
    NoSuchDevice { dev: String, devices: String },
    #[error("trace record {index}: {source}")]
    Device { index: usize, source: DeviceError },
    /// The emulated device could not be made (or aged) before the first record: the profile's
    /// fault, not the trace's.
    #[error("making the emulated device: {0}")]
    MakeDevice(DeviceError),
    #[error(
        "trace has requests for several devices ({devices}); choose one (`--dev major:minor`) or \
         replay them as partitions of one device (`--partitions`)"
    )]
    SeveralDevices { devices: String },
    #[error(
        "trace record {index}: {sectors} sectors at sector {sector} end beyond the emulated \
         device's {capacity_bytes} bytes or exceed the 64 MiB a replayed read or write may \
         carry; fix: check the trace (a block request is at most a few MiB), or replay it on a \
         profile with a bigger capacity"
    )]
    BeyondDevice {
        index: usize,
        sector: u64,
        sectors: u64,
        capacity_bytes: u64,
    },
    #[error(
        "device {dev} of the trace has no profile (devices in the trace: {devices}); fix: give \
         each device one, e.g. `--device-for {dev}=galaxy-s5`"
    )]
    DeviceWithoutProfile { dev: String, devices: String },
    #[error(
        "no single device of the trace is called {name} (the header lists: {devices}); fix: name \
         a device by `major:minor`, or by `main` or `journal` when the trace's header lists one"
    )]
    UnknownDeviceName { name: String, devices: String },
    #[error("device {dev} is given a profile twice; fix: give each device one profile")]
    DeviceProfiledTwice { dev: String },
    #[error(
        "the devices' models would hold {total} pages (or mapping units) together, beyond the \
         {max} one replay may hold (each keeps some 24 B of state per page in memory, so \
         together they would need about {gib} GiB); fix: give smaller devices (the profiles' \
         geometry: blocks_per_plane), or replay the devices one at a time", gib = total.saturating_mul(24) >> 30
    )]
    DevicesTooLarge { total: u64, max: u64 },
    #[error(
        "devices {first} and {second} are both given profile {profile}: each device is its own \
         emulated device; if two devices of that kind are meant, say so with \
         `--same-device-ok`, or replay them as partitions of one device with `--partitions`"
    )]
    SharedProfile {
        profile: String,
        first: String,
        second: String,
    },
    #[error(
        "trace record {index}: a {op} request of zero sectors; a read, write or discard carries \
         at least one (an empty write with a preflush, blkparse's `FWS 0 + 0`, is a flush and \
         is replayed as one); fix: give the record its length, or drop it"
    )]
    EmptyRequest { index: usize, op: String },
    #[error(
        "the trace changed while it was replayed: its first reading found {scanned} requests, \
         the second {applied}; fix: replay a copy of the trace that nothing writes to"
    )]
    ChangedWhileReplayed { scanned: u64, applied: u64 },
    #[error(
        "{path} holds {records} requests, more than joj holds in memory for {what} ({limit}, \
         some 210 bytes each with the transformation); fix: replay it without \
         --emmc-journal (a plain replay reads any number from the file), or replay a part of \
         it (`head -n` of a joj-trace file, with its header's `records` set to match)"
    )]
    TooManyToHold {
        path: String,
        records: u64,
        limit: u64,
        what: &'static str,
    },
    #[error(transparent)]
    Profile(#[from] ProfileError),
}
