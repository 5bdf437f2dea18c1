//! Addresses and the out-of-band (OOB) area of a NAND page.

use serde::{Deserialize, Serialize};

/// Logical page number: the FTL's mapping unit, one NAND page of host data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Lpn(pub u32);

/// Physical page number: `block * pages_per_block + page_in_block` over the whole medium.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Ppn(pub u32);

/// Erase-block number over the whole medium.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BlockId(pub u32);

/// Marker for "no logical page" in an OOB area and "unmapped" in mapping tables.
pub const NO_LPN: u32 = u32::MAX;

/// The out-of-band area the FTL writes with every page program: which logical page the data
/// belongs to, a device-wide program sequence number (newer versions have larger numbers), and a
/// checksum over data, `lpn` and `seq` that exposes torn pages after a power loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Oob {
    pub lpn: u32,
    pub checksum: u32,
    pub seq: u64,
}

impl Oob {
    /// The OOB area of a page that holds nothing.
    pub const EMPTY: Oob = Oob {
        lpn: NO_LPN,
        checksum: 0,
        seq: 0,
    };
}

// The per-page metadata is the largest per-page cost of the model; keep it at 16 bytes.
const _: () = assert!(std::mem::size_of::<Oob>() == 16);

/// Checksum of a page as stored in its OOB area: a 64-bit multiply-xorshift hash over the data
/// (8 bytes at a time) and the OOB fields, folded to 32 bits. Not cryptographic; it only has to
/// tell a completed program from a torn one. With no data stored (`data` empty) it covers the
/// OOB fields alone.
pub fn page_checksum(data: &[u8], lpn: u32, seq: u64) -> u32 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h: u64 = (u64::from(lpn) << 32 ^ seq).wrapping_mul(K) ^ 0x5851_F42D_4C95_7F2D;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(K);
        h ^= h >> 29;
    }
    for &b in chunks.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(K);
    }
    h ^= seq.rotate_left(17);
    h = h.wrapping_mul(K);
    h ^= h >> 32;
    h as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_depends_on_data_lpn_and_seq() {
        let a = vec![7u8; 4096];
        let mut b = a.clone();
        b[4000] ^= 1;
        let base = page_checksum(&a, 3, 9);
        assert_ne!(base, page_checksum(&b, 3, 9));
        assert_ne!(base, page_checksum(&a, 4, 9));
        assert_ne!(base, page_checksum(&a, 3, 10));
        assert_eq!(base, page_checksum(&a, 3, 9));
    }
}
