//! Device image files: a snapshot of the emulated NAND so a device outlives the process.
//! Layout and crash argument: `docs/formats/device-image.md`.
//!
//! ```text
//! header (96 B): magic "JOJDEVIM" | version u32 | flags u32 | page_bytes u32 |
//!   pages_per_block u32 | blocks_per_plane u32 | planes_per_die u32 | dies_per_channel u32 |
//!   channels u32 | sector_bytes u32 | mapping_unit_bytes u32 (version 1: reserved, 0) |
//!   logical_pages u64 | checkpoint_seq u64 | programmed_pages u64 (slots) | body_bytes u64 |
//!   body_checksum u64 | header_checksum u64
//! body: block table (programmed slots u32, erase_count u32) per block
//!       OOB (lpn u32, checksum u32, seq u64) per programmed slot
//!       checkpoint u32 per logical page (mapping unit)
//!       data page_bytes / slots_per_page per programmed slot (flag bit 0)
//! trailer: "JOJDEND1"
//! ```
//!
//! A slot is the page (version 1) unless the device maps sub-page units (version 2).

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::addr::Oob;
use crate::config::{DataMode, Geometry, Profile};
use crate::emmc::{Emmc, PowerCut};
use crate::error::{DeviceError, FtlError, ImageError};
use crate::ftl::RecoveryReport;
use crate::medium::{MapCheckpoint, Medium};
use crate::nand::NandMedium;

pub const MAGIC: &[u8; 8] = b"JOJDEVIM";
pub const TRAILER: &[u8; 8] = b"JOJDEND1";
/// The newest version this build reads; it writes 1 when a slot is the page, else 2.
pub const VERSION: u32 = 2;
const FLAG_DATA: u32 = 1;

// Header offsets, each derived from the previous field.
const OFF_VERSION: usize = MAGIC.len();
const OFF_FLAGS: usize = OFF_VERSION + 4;
const OFF_GEOMETRY: usize = OFF_FLAGS + 4;
const GEOMETRY_FIELDS: usize = 8; // seven geometry fields + mapping unit (reserved in v1)
const OFF_LOGICAL: usize = OFF_GEOMETRY + 4 * GEOMETRY_FIELDS;
const OFF_CP_SEQ: usize = OFF_LOGICAL + 8;
const OFF_PROGRAMMED: usize = OFF_CP_SEQ + 8;
const OFF_BODY_BYTES: usize = OFF_PROGRAMMED + 8;
const OFF_BODY_SUM: usize = OFF_BODY_BYTES + 8;
const OFF_HEADER_SUM: usize = OFF_BODY_SUM + 8;
pub const HEADER_BYTES: usize = OFF_HEADER_SUM + 8;
const _: () = assert!(HEADER_BYTES == 96);

/// 64-bit FNV-1a.
pub fn hash64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// `joj device inspect --json`: an image's header facts and, when a profile was given, its
/// power-on recovery (`docs/formats/device-image.md`, "What `joj device inspect` prints").
#[derive(Debug, Clone, Serialize)]
pub struct InspectReport {
    pub image: ImageInfo,
    /// `null` without a profile.
    pub recovery: Option<RecoveryReport>,
}

/// What `inspect` reports about an image.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageInfo {
    pub version: u32,
    pub data_stored: bool,
    pub geometry: Geometry,
    /// The mapping unit (the page in a version-1 image).
    #[serde(default)]
    pub mapping_unit_bytes: u32,
    pub logical_pages: u64,
    pub checkpoint_seq: u64,
    pub programmed_pages: u64,
    pub file_bytes: u64,
    pub max_erase_count: u32,
}

/// The geometry fields and the mapping unit as stored: 0 (reserved) when it is the page.
fn geometry_fields(g: &Geometry, slot_bytes: u32) -> [u32; GEOMETRY_FIELDS] {
    [
        g.page_bytes,
        g.pages_per_block,
        g.blocks_per_plane,
        g.planes_per_die,
        g.dies_per_channel,
        g.channels,
        g.sector_bytes,
        if slot_bytes == g.page_bytes {
            0
        } else {
            slot_bytes
        },
    ]
}

fn describe(g: &Geometry) -> String {
    format!(
        "{} B pages × {} per block × {} blocks/plane × {} planes × {} dies × {} channels, {} B sectors",
        g.page_bytes,
        g.pages_per_block,
        g.blocks_per_plane,
        g.planes_per_die,
        g.dies_per_channel,
        g.channels,
        g.sector_bytes
    )
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[off..off + 4]);
    u32::from_le_bytes(w)
}

fn u64_at(b: &[u8], off: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[off..off + 8]);
    u64::from_le_bytes(w)
}

/// Encode `medium` as an image.
pub fn encode(medium: &NandMedium) -> Vec<u8> {
    let g = medium.geometry().clone();
    let parts = medium.parts();
    let ppb = medium.slots_per_block() as usize;
    let slot_bytes = medium.slot_bytes();
    let version = if slot_bytes == g.page_bytes { 1u32 } else { 2 };
    let with_data = medium.data_mode() == DataMode::Full;
    let programmed_pages: u64 = parts.programmed.iter().map(|&p| u64::from(p)).sum();
    let mut body = Vec::new();
    for (p, e) in parts.programmed.iter().zip(parts.erase_counts) {
        body.extend_from_slice(&p.to_le_bytes());
        body.extend_from_slice(&e.to_le_bytes());
    }
    for (b, &n) in parts.programmed.iter().enumerate() {
        for o in &parts.oob[b * ppb..b * ppb + n as usize] {
            body.extend_from_slice(&o.lpn.to_le_bytes());
            body.extend_from_slice(&o.checksum.to_le_bytes());
            body.extend_from_slice(&o.seq.to_le_bytes());
        }
    }
    for e in &parts.checkpoint.entries {
        body.extend_from_slice(&e.to_le_bytes());
    }
    if with_data {
        let pb = slot_bytes as usize;
        for (b, &n) in parts.programmed.iter().enumerate() {
            match &parts.data[b] {
                Some(d) => body.extend_from_slice(&d[..n as usize * pb]),
                None => body.resize(body.len() + n as usize * pb, 0),
            }
        }
    }
    let mut out = Vec::with_capacity(HEADER_BYTES + body.len() + TRAILER.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(if with_data { FLAG_DATA } else { 0 }).to_le_bytes());
    for f in geometry_fields(&g, slot_bytes) {
        out.extend_from_slice(&f.to_le_bytes());
    }
    out.extend_from_slice(&(parts.checkpoint.entries.len() as u64).to_le_bytes());
    out.extend_from_slice(&parts.checkpoint.checkpoint_seq.to_le_bytes());
    out.extend_from_slice(&programmed_pages.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&hash64(&body).to_le_bytes());
    debug_assert_eq!(out.len(), OFF_HEADER_SUM);
    let hs = hash64(&out);
    out.extend_from_slice(&hs.to_le_bytes());
    out.extend_from_slice(&body);
    out.extend_from_slice(TRAILER);
    out
}

struct Header {
    version: u32,
    flags: u32,
    geometry: Geometry,
    /// The mapping unit: the page in version 1.
    slot_bytes: u32,
    logical_pages: u64,
    checkpoint_seq: u64,
    programmed_pages: u64,
    body_bytes: u64,
    body_sum: u64,
}

fn decode_header(bytes: &[u8]) -> Result<Header, ImageError> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(ImageError::BadMagic);
    }
    if bytes.len() < HEADER_BYTES {
        return Err(ImageError::Malformed {
            reason: format!("{} bytes, shorter than the header", bytes.len()),
        });
    }
    let version = u32_at(bytes, OFF_VERSION);
    if version > VERSION {
        return Err(ImageError::NewerVersion {
            found: version,
            supported: VERSION,
        });
    }
    let stored = u64_at(bytes, OFF_HEADER_SUM);
    let computed = hash64(&bytes[..OFF_HEADER_SUM]);
    if stored != computed {
        return Err(ImageError::ChecksumMismatch {
            section: "header",
            expected: stored,
            found: computed,
        });
    }
    let f = |i: usize| u32_at(bytes, OFF_GEOMETRY + 4 * i);
    let slot_bytes = match (version, f(7)) {
        (1, _) | (_, 0) => f(0),
        (_, unit) => unit,
    };
    let fits = slot_bytes > 0
        && f(0).is_multiple_of(slot_bytes)
        && f(0) / slot_bytes <= crate::config::MAX_SLOTS_PER_PAGE;
    if !fits {
        return Err(ImageError::Malformed {
            reason: format!(
                "mapping unit {slot_bytes} B does not divide the {} B page",
                f(0)
            ),
        });
    }
    let h = Header {
        version,
        flags: u32_at(bytes, OFF_FLAGS),
        slot_bytes,
        geometry: Geometry {
            page_bytes: f(0),
            pages_per_block: f(1),
            blocks_per_plane: f(2),
            planes_per_die: f(3),
            dies_per_channel: f(4),
            channels: f(5),
            sector_bytes: f(6),
        },
        logical_pages: u64_at(bytes, OFF_LOGICAL),
        checkpoint_seq: u64_at(bytes, OFF_CP_SEQ),
        programmed_pages: u64_at(bytes, OFF_PROGRAMMED),
        body_bytes: u64_at(bytes, OFF_BODY_BYTES),
        body_sum: u64_at(bytes, OFF_BODY_SUM),
    };
    check_header_facts(&h)?;
    Ok(h)
}

/// The header's facts are a device's: a geometry a profile may have, and no more logical or
/// programmed slots than it has. A checksum holds for any header its writer chose, and
/// `inspect` reports these facts without a profile to compare them with.
fn check_header_facts(h: &Header) -> Result<(), ImageError> {
    let bad = |reason: String| Err(ImageError::Malformed { reason });
    if let Err(e) = h.geometry.validate() {
        return bad(format!("the header's geometry is no device's: {e}"));
    }
    // `validate` bounds the physical pages (in u64) before anything multiplies them in u32.
    let slots = h
        .geometry
        .physical_pages()
        .saturating_mul(u64::from(h.geometry.page_bytes / h.slot_bytes));
    if slots > crate::config::MAX_PHYSICAL_PAGES {
        return bad(format!(
            "the header's geometry has {slots} mapping units, beyond the {} a model may have",
            crate::config::MAX_PHYSICAL_PAGES
        ));
    }
    for (what, n) in [
        ("logical pages", h.logical_pages),
        ("programmed pages", h.programmed_pages),
    ] {
        if n > slots {
            return bad(format!(
                "the header says {n} {what}, more than the {slots} its geometry holds"
            ));
        }
    }
    Ok(())
}

fn check_body<'a>(bytes: &'a [u8], h: &Header) -> Result<&'a [u8], ImageError> {
    let want = (HEADER_BYTES as u64 + TRAILER.len() as u64).saturating_add(h.body_bytes);
    if bytes.len() as u64 != want || &bytes[bytes.len() - TRAILER.len()..] != TRAILER {
        return Err(ImageError::Malformed {
            reason: format!(
                "file is {} bytes, header says {want} with trailer; truncated or overwritten",
                bytes.len()
            ),
        });
    }
    let body = &bytes[HEADER_BYTES..bytes.len() - TRAILER.len()];
    let computed = hash64(body);
    if computed != h.body_sum {
        return Err(ImageError::ChecksumMismatch {
            section: "body",
            expected: h.body_sum,
            found: computed,
        });
    }
    Ok(body)
}

/// Decode an image for `profile`; every check of the format page, in order.
pub fn decode(bytes: &[u8], profile: &Profile) -> Result<NandMedium, ImageError> {
    let h = decode_header(bytes)?;
    let with_data = check_profile(&h, profile)?;
    let body = check_body(bytes, &h)?;
    let sections = split_body(body, &h, with_data)?;
    let g = &h.geometry;
    let spp = (g.page_bytes / h.slot_bytes) as usize;
    let ppb = g.pages_per_block as usize * spp;
    let (programmed, erase_counts) =
        decode_block_table(sections.block_table, ppb, spp, h.programmed_pages)?;
    let oob = decode_oob(sections.oob, &programmed, ppb);
    let checkpoint = MapCheckpoint {
        entries: decode_checkpoint(sections.checkpoint),
        checkpoint_seq: h.checkpoint_seq,
    };
    let data = if with_data {
        decode_data(sections.data, &programmed, ppb, h.slot_bytes as usize)
    } else {
        programmed.iter().map(|_| None).collect()
    };
    Ok(NandMedium::from_parts(
        g.clone(),
        profile.timing.clone(),
        profile.data_mode,
        oob,
        programmed,
        erase_counts,
        data,
        checkpoint,
        h.slot_bytes,
    ))
}

/// Step 4 of the checks: the image is of `profile`'s device — geometry, data mode and logical
/// pages — for an image is never reformatted to fit. Returns whether page data is stored.
fn check_profile(h: &Header, profile: &Profile) -> Result<bool, ImageError> {
    if h.geometry != profile.geometry {
        return Err(ImageError::GeometryMismatch {
            expected: describe(&profile.geometry),
            found: describe(&h.geometry),
        });
    }
    if h.slot_bytes != profile.mapping_unit_bytes() {
        return Err(ImageError::GeometryMismatch {
            expected: format!("a mapping unit of {} B", profile.mapping_unit_bytes()),
            found: format!("a mapping unit of {} B", h.slot_bytes),
        });
    }
    let with_data = h.flags & FLAG_DATA != 0;
    if with_data != (profile.data_mode == DataMode::Full) {
        let name = |d: bool| {
            if d {
                "full (page data stored)"
            } else {
                "oob-only (no page data)"
            }
        };
        return Err(ImageError::DataModeMismatch {
            expected: name(profile.data_mode == DataMode::Full).into(),
            found: name(with_data).into(),
        });
    }
    if h.logical_pages != profile.logical_pages() {
        return Err(ImageError::GeometryMismatch {
            expected: format!("{} logical pages", profile.logical_pages()),
            found: format!(
                "{} logical pages (another over-provisioning)",
                h.logical_pages
            ),
        });
    }
    Ok(with_data)
}

/// The body's sections, in file order.
struct Sections<'a> {
    block_table: &'a [u8],
    oob: &'a [u8],
    checkpoint: &'a [u8],
    /// Empty when no page data is stored.
    data: &'a [u8],
}

/// The body's length the header's geometry and counts need, section by section: block table,
/// OOB, checkpoint, page data. In u64, from a header `check_header_facts` passed (at most
/// 2^28 slots of 64 KiB), so no sum overflows.
fn body_bytes_needed(h: &Header, with_data: bool) -> [u64; 4] {
    let block_table_bytes = 8 * u64::from(h.geometry.blocks());
    let oob_bytes = 16 * h.programmed_pages;
    let checkpoint_bytes = 4 * h.logical_pages;
    let data_bytes = if with_data {
        h.programmed_pages * u64::from(h.slot_bytes)
    } else {
        0
    };
    [block_table_bytes, oob_bytes, checkpoint_bytes, data_bytes]
}

/// Cut the body into its sections, once its length is exactly what the header's counts need.
fn split_body<'a>(body: &'a [u8], h: &Header, with_data: bool) -> Result<Sections<'a>, ImageError> {
    let [block_table_bytes, oob_bytes, checkpoint_bytes, _] =
        body_bytes_needed(h, with_data).map(|n| n as usize);
    let need: u64 = body_bytes_needed(h, with_data).iter().sum();
    if body.len() as u64 != need {
        return Err(ImageError::Malformed {
            reason: format!("body is {} bytes, sections need {need}", body.len()),
        });
    }
    let (block_table, rest) = body.split_at(block_table_bytes);
    let (oob, rest) = rest.split_at(oob_bytes);
    let (checkpoint, data) = rest.split_at(checkpoint_bytes);
    Ok(Sections {
        block_table,
        oob,
        checkpoint,
        data,
    })
}

/// Per block: slots programmed (at most `ppb` slots, whole pages of `spp` slots, summing to
/// the header's count) and erase count.
fn decode_block_table(
    table: &[u8],
    ppb: usize,
    spp: usize,
    programmed_pages: u64,
) -> Result<(Vec<u32>, Vec<u32>), ImageError> {
    let blocks = table.len() / 8;
    let mut programmed = Vec::with_capacity(blocks);
    let mut erase_counts = Vec::with_capacity(blocks);
    for b in 0..blocks {
        let p = u32_at(table, 8 * b);
        if p as usize > ppb || !(p as usize).is_multiple_of(spp) {
            return Err(ImageError::Malformed {
                reason: format!(
                    "block {b} claims {p} programmed slots of {ppb} (pages of {spp} slots)"
                ),
            });
        }
        programmed.push(p);
        erase_counts.push(u32_at(table, 8 * b + 4));
    }
    if programmed.iter().map(|&p| u64::from(p)).sum::<u64>() != programmed_pages {
        return Err(ImageError::Malformed {
            reason: "block table disagrees with the programmed page count".into(),
        });
    }
    Ok((programmed, erase_counts))
}

/// The OOB area of every page: stored ones block by block, the rest empty.
fn decode_oob(section: &[u8], programmed: &[u32], ppb: usize) -> Vec<Oob> {
    let mut oob = vec![Oob::EMPTY; programmed.len() * ppb];
    let mut pos = 0;
    for (b, &n) in programmed.iter().enumerate() {
        for slot in &mut oob[b * ppb..b * ppb + n as usize] {
            *slot = Oob {
                lpn: u32_at(section, pos),
                checksum: u32_at(section, pos + 4),
                seq: u64_at(section, pos + 8),
            };
            pos += 16;
        }
    }
    oob
}

/// The checkpoint's physical page per logical page.
fn decode_checkpoint(section: &[u8]) -> Vec<u32> {
    (0..section.len() / 4)
        .map(|i| u32_at(section, 4 * i))
        .collect()
}

/// Page data per block: the programmed pages stored, the rest of the block zeros; `None` for a
/// block with nothing programmed.
fn decode_data(
    section: &[u8],
    programmed: &[u32],
    ppb: usize,
    page_bytes: usize,
) -> Vec<Option<Box<[u8]>>> {
    let mut pos = 0;
    programmed
        .iter()
        .map(|&n| {
            if n == 0 {
                return None;
            }
            let mut block = vec![0u8; ppb * page_bytes];
            let len = n as usize * page_bytes;
            block[..len].copy_from_slice(&section[pos..pos + len]);
            pos += len;
            Some(block.into_boxed_slice())
        })
        .collect()
}

/// The largest image read: the model keeps a device's pages in memory, and the image holds
/// them all (an `emmc5` image whose every page is written, with its data, is 7.5 GiB).
pub const MAX_IMAGE_BYTES: u64 = 8 << 30;

/// The bytes of the image at `path`: a regular file of at most [`MAX_IMAGE_BYTES`], whose
/// header (magic, checksum, facts) is checked, and checked against `profile` when one is
/// given, and the body's length it states compared with what its geometry and counts need and
/// with the file's size, before the rest is read: a header may state any length, and the file
/// may be sparse.
fn read_image(path: &Path, profile: Option<&Profile>) -> Result<Vec<u8>, ImageError> {
    use std::os::unix::fs::FileExt;
    let input = joj_trace::input::open(path, MAX_IMAGE_BYTES, "a device image")?;
    let mut head = vec![0u8; HEADER_BYTES.min(input.size_bytes as usize)];
    input.file.read_exact_at(&mut head, 0)?;
    let h = decode_header(&head)?;
    if let Some(profile) = profile {
        check_profile(&h, profile)?;
    }
    let need: u64 = body_bytes_needed(&h, h.flags & FLAG_DATA != 0).iter().sum();
    if h.body_bytes != need {
        return Err(ImageError::Malformed {
            reason: format!(
                "the header says the body is {} bytes, but its geometry and counts ({} blocks, \
                 {} programmed and {} logical pages) need {need}; fix: give an image that \
                 `joj device format` or `joj device save` wrote, as it wrote it",
                h.body_bytes,
                h.geometry.blocks(),
                h.programmed_pages,
                h.logical_pages
            ),
        });
    }
    let want = need.saturating_add((HEADER_BYTES + TRAILER.len()) as u64);
    if input.size_bytes != want {
        return Err(ImageError::Malformed {
            reason: format!(
                "file is {} bytes, header says {want} with trailer; truncated or overwritten",
                input.size_bytes
            ),
        });
    }
    Ok(input.read_all()?)
}

/// Header facts of the image at `path` (checks magic, version, header and body checksums).
pub fn inspect(path: &Path) -> Result<ImageInfo, ImageError> {
    let bytes = read_image(path, None)?;
    let h = decode_header(&bytes)?;
    let body = check_body(&bytes, &h)?;
    let blocks = h.geometry.blocks() as usize;
    let max_erase_count = (0..blocks)
        .filter(|b| 8 * b + 8 <= body.len())
        .map(|b| u32_at(body, 8 * b + 4))
        .max()
        .unwrap_or(0);
    Ok(ImageInfo {
        version: h.version,
        data_stored: h.flags & FLAG_DATA != 0,
        mapping_unit_bytes: h.slot_bytes,
        geometry: h.geometry,
        logical_pages: h.logical_pages,
        checkpoint_seq: h.checkpoint_seq,
        programmed_pages: h.programmed_pages,
        file_bytes: bytes.len() as u64,
        max_erase_count,
    })
}

/// Write `medium` to `path` atomically: a temporary file of a name nobody can know before it
/// exists, made with `O_EXCL` beside `path` (a fixed `path.tmp` is a name anybody could plant a
/// symlink at, to have root write the image through it), fsync, rename, fsync of the directory.
/// An image larger than the free space beside `path` (on a filesystem that counts its space) is
/// refused before anything is written (`NoRoom`); a write that fails all the same (space taken
/// meanwhile, a quota) removes the temporary file and names `path` (`Write`).
pub fn save_medium(medium: &NandMedium, path: &Path) -> Result<(), ImageError> {
    let bytes = encode(medium);
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let image_bytes = bytes.len() as u64;
    let failed = |source| ImageError::Write {
        path: path.display().to_string(),
        image_bytes,
        source,
    };
    let st = rustix::fs::statvfs(dir).map_err(|e| failed(e.into()))?;
    let free_bytes = st.f_bavail.saturating_mul(st.f_frsize);
    // A filesystem of no blocks (ramfs) keeps no account of its space: nothing to check.
    if st.f_blocks > 0 && image_bytes > free_bytes {
        return Err(ImageError::NoRoom {
            path: path.display().to_string(),
            image_bytes,
            free_bytes,
        });
    }
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    use std::os::unix::fs::OpenOptionsExt;
    // 0644, as `File::create` made it (tempfile's default is 0600): an image holds no secret,
    // and other users' tools read it. Made through `make_in`, whose errors are the system
    // call's, not wrapped in the temporary's name, which the user never gave.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .make_in(dir, |p| {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o644)
                .open(p)
        })
        .map_err(failed)?;
    tmp.as_file_mut().write_all(&bytes).map_err(failed)?;
    tmp.as_file().sync_all().map_err(failed)?;
    tmp.persist(path).map_err(|e| failed(e.error))?;
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(failed)?;
    Ok(())
}

/// Flush `dev` (a clean shutdown) and save it to `path`.
pub fn save(dev: Emmc<NandMedium>, path: &Path) -> Result<(), ImageError> {
    let medium = dev.close().map_err(|e| ImageError::Malformed {
        reason: format!("flush before save failed: {e}"),
    })?;
    save_medium(&medium, path)
}

/// Format a new device of `profile` and save it at `path`, which must not exist.
pub fn create(path: &Path, profile: &Profile) -> Result<Emmc<NandMedium>, ImageError> {
    if path.exists() {
        return Err(ImageError::Exists {
            path: path.display().to_string(),
        });
    }
    let dev = Emmc::new(profile).map_err(|e| ImageError::Malformed {
        reason: e.to_string(),
    })?;
    let medium = dev.close().map_err(|e| ImageError::Malformed {
        reason: e.to_string(),
    })?;
    save_medium(&medium, path)?;
    open(path, profile).map(|(d, _)| d)
}

/// Format a new device of `profile` at `path` and return its facts. An existing file is
/// refused (`Exists`) unless `replace`; even then only a joj device image is replaced
/// (`NotAnImage` otherwise), atomically, so a crash leaves the old image or the new one.
pub fn format(path: &Path, profile: &Profile, replace: bool) -> Result<ImageInfo, ImageError> {
    if path.exists() {
        if !replace {
            return Err(ImageError::Exists {
                path: path.display().to_string(),
            });
        }
        let mut head = [0u8; MAGIC.len()];
        let is_image = std::fs::File::open(path)
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
            .is_ok()
            && &head == MAGIC;
        if !is_image {
            return Err(ImageError::NotAnImage {
                path: path.display().to_string(),
            });
        }
    }
    let dev = Emmc::new(profile).map_err(|e| ImageError::Malformed {
        reason: e.to_string(),
    })?;
    save(dev, path)?;
    inspect(path)
}

/// Open the image at `path` as a device of `profile`: decode, check, and recover the mapping as
/// after a power loss.
pub fn open(
    path: &Path,
    profile: &Profile,
) -> Result<(Emmc<NandMedium>, RecoveryReport), ImageError> {
    let bytes = read_image(path, Some(profile))?;
    let medium = decode(&bytes, profile)?;
    Emmc::recover(PowerCut { medium, at_ns: 0 }, profile).map_err(|e| match e {
        DeviceError::Ftl(FtlError::CheckpointCorrupt { reason }) => {
            ImageError::CheckpointCorrupt { reason }
        }
        e => ImageError::Malformed {
            reason: format!("recovery failed: {e}"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{BlockDevice, WriteFlags};

    fn small() -> Profile {
        let mut p = Profile::builtin("emmc5").unwrap().with_blocks_per_plane(8);
        p.geometry.pages_per_block = 16;
        p.geometry.page_bytes = 2048;
        p.ftl.over_provisioning_percent = 40.0;
        p
    }

    #[test]
    fn an_image_round_trips_a_device() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev.img");
        let p = small();
        let mut dev = create(&path, &p).unwrap();
        assert!(
            matches!(create(&path, &p), Err(ImageError::Exists { .. })),
            "never reformat an existing image"
        );
        let data: Vec<u8> = (0..8192u32).map(|i| (i * 7) as u8).collect();
        dev.write(4096, &data, WriteFlags::NONE).unwrap();
        dev.write(65536, &data[..512], WriteFlags::FUA).unwrap();
        save(dev, &path).unwrap();
        let info = inspect(&path).unwrap();
        assert_eq!(info.version, 1, "a slot is the page: version 1, as always");
        assert_eq!(info.mapping_unit_bytes, p.geometry.page_bytes);
        assert!(info.programmed_pages >= 5);
        let (mut dev, _report) = open(&path, &p).unwrap();
        let mut buf = vec![0u8; 8192];
        dev.read(4096, &mut buf).unwrap();
        assert_eq!(buf, data);
        dev.read(65536, &mut buf[..512]).unwrap();
        assert_eq!(&buf[..512], &data[..512]);
    }

    /// A header whose checksum holds but whose facts no device has (found by a probe:
    /// `joj device inspect` printed 2^63 logical pages "(0.00 GiB)", the size wrapping).
    #[test]
    fn a_header_with_impossible_facts_is_refused_by_inspect() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev.img");
        save(create(&path, &small()).unwrap(), &path).unwrap();
        let good = std::fs::read(&path).unwrap();
        let forged = |edit: &dyn Fn(&mut Vec<u8>)| {
            let mut b = good.clone();
            edit(&mut b);
            let sum = hash64(&b[..OFF_HEADER_SUM]);
            b[OFF_HEADER_SUM..OFF_HEADER_SUM + 8].copy_from_slice(&sum.to_le_bytes());
            let p = dir.path().join("forged.img");
            std::fs::write(&p, &b).unwrap();
            inspect(&p)
        };
        let set_u64 = |off: usize, v: u64| {
            move |b: &mut Vec<u8>| {
                b[off..off + 8].copy_from_slice(&v.to_le_bytes());
            }
        };
        for (what, r) in [
            ("2^63 logical pages", forged(&set_u64(OFF_LOGICAL, 1 << 63))),
            (
                "2^63 programmed pages",
                forged(&set_u64(OFF_PROGRAMMED, 1 << 63)),
            ),
            (
                "2^32-1 blocks per plane and planes",
                forged(&|b: &mut Vec<u8>| {
                    for i in 1..=5 {
                        let off = OFF_GEOMETRY + 4 * i;
                        b[off..off + 4].copy_from_slice(&u32::MAX.to_le_bytes());
                    }
                }),
            ),
            (
                "no channels",
                forged(&|b: &mut Vec<u8>| {
                    let off = OFF_GEOMETRY + 4 * 5;
                    b[off..off + 4].copy_from_slice(&0u32.to_le_bytes());
                }),
            ),
        ] {
            assert!(
                matches!(r, Err(ImageError::Malformed { .. })),
                "{what}: {r:?}"
            );
        }
        assert!(inspect(&path).is_ok());
    }

    #[test]
    fn a_sub_page_device_round_trips_as_version_2() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev.img");
        let mut p = small();
        p.ftl.mapping_unit_bytes = Some(1024);
        let mut dev = create(&path, &p).unwrap();
        let data: Vec<u8> = (0..6144u32).map(|i| (i * 13) as u8).collect();
        dev.write(1024, &data, WriteFlags::NONE).unwrap();
        dev.write(32768, &data[..1024], WriteFlags::FUA).unwrap();
        save(dev, &path).unwrap();
        let info = inspect(&path).unwrap();
        assert_eq!((info.version, info.mapping_unit_bytes), (2, 1024));
        assert_eq!(info.programmed_pages % 2, 0, "whole pages of two slots");
        let (mut dev, _) = open(&path, &p).unwrap();
        let mut buf = vec![0u8; 6144];
        dev.read(1024, &mut buf).unwrap();
        assert_eq!(buf, data);
        dev.read(32768, &mut buf[..1024]).unwrap();
        assert_eq!(&buf[..1024], &data[..1024]);
        drop(dev);
        assert!(matches!(
            open(&path, &small()),
            Err(ImageError::GeometryMismatch { .. })
        ));
    }

    #[test]
    fn format_refuses_an_existing_file_unless_replacing_an_image() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev.img");
        let p = small();
        let info = format(&path, &p, false).unwrap();
        assert_eq!(info.programmed_pages, 0);
        let mut dev = open(&path, &p).unwrap().0;
        dev.write(0, &[7u8; 2048], WriteFlags::NONE).unwrap();
        save(dev, &path).unwrap();
        let written = std::fs::read(&path).unwrap();
        assert!(matches!(
            format(&path, &p, false),
            Err(ImageError::Exists { .. })
        ));
        assert_eq!(std::fs::read(&path).unwrap(), written, "refused: untouched");
        assert_eq!(format(&path, &p, true).unwrap().programmed_pages, 0);

        let other = dir.path().join("notes.txt");
        std::fs::write(&other, b"keep me").unwrap();
        assert!(matches!(
            format(&other, &p, true),
            Err(ImageError::NotAnImage { .. })
        ));
        assert_eq!(std::fs::read(&other).unwrap(), b"keep me");
    }

    #[test]
    fn wrong_geometry_newer_version_and_corruption_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev.img");
        let p = small();
        let dev = create(&path, &p).unwrap();
        save(dev, &path).unwrap();
        let good = std::fs::read(&path).unwrap();

        let other = p.clone().with_blocks_per_plane(16);
        assert!(matches!(
            open(&path, &other),
            Err(ImageError::GeometryMismatch { .. })
        ));
        let oob = p.clone().with_data_mode(DataMode::OobOnly);
        assert!(matches!(
            open(&path, &oob),
            Err(ImageError::DataModeMismatch { .. })
        ));

        let mut newer = good.clone();
        newer[OFF_VERSION..OFF_VERSION + 4].copy_from_slice(&(VERSION + 1).to_le_bytes());
        std::fs::write(&path, &newer).unwrap();
        assert!(matches!(
            open(&path, &p),
            Err(ImageError::NewerVersion { found, .. }) if found == VERSION + 1
        ));

        let mut flipped = good.clone();
        let mid = HEADER_BYTES + 10;
        flipped[mid] ^= 1;
        std::fs::write(&path, &flipped).unwrap();
        assert!(matches!(
            open(&path, &p),
            Err(ImageError::ChecksumMismatch {
                section: "body",
                ..
            })
        ));

        std::fs::write(&path, &good[..good.len() - 3]).unwrap();
        assert!(matches!(open(&path, &p), Err(ImageError::Malformed { .. })));

        std::fs::write(&path, b"not an image at all").unwrap();
        assert!(matches!(open(&path, &p), Err(ImageError::BadMagic)));
        // The refused file is left as it was.
        assert_eq!(std::fs::read(&path).unwrap(), b"not an image at all");
    }

    #[test]
    fn a_crash_state_saved_as_an_image_recovers_flushed_data() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("crash.img");
        let p = small();
        let mut dev = Emmc::new(&p).unwrap();
        dev.write(0, &[9u8; 2048], WriteFlags::NONE).unwrap();
        dev.flush().unwrap();
        dev.write(2048, &[8u8; 2048], WriteFlags::NONE).unwrap();
        let cut = dev.power_loss(0, 1);
        save_medium(&cut.medium, &path).unwrap();
        let (mut dev, _) = open(&path, &p).unwrap();
        let mut buf = vec![0u8; 2048];
        dev.read(0, &mut buf).unwrap();
        assert_eq!(buf, vec![9u8; 2048]);
    }
}
