//! TPC-C's cardinalities (at a tenth of the specification's) and its random strings and
//! numbers (clause 4.3.2).

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

pub const DISTRICTS: i64 = 10;
pub const CUSTOMERS: i64 = 300;
pub const ITEMS: i64 = 10_000;
pub const ORDERS: i64 = 300;
pub const NEW_ORDERS: i64 = 90;
pub(super) const NURAND_A_CUSTOMER: i64 = 127;
pub(super) const NURAND_A_ITEM: i64 = 1023;
pub(super) const NURAND_A_LAST: i64 = 255;

/// TPC-C's random strings and numbers (clause 4.3.2).
pub(super) struct Gen(pub(super) ChaCha8Rng);

impl Gen {
    pub(super) fn int(&mut self, lo: i64, hi: i64) -> i64 {
        self.0.random_range(lo..=hi)
    }

    pub(super) fn percent(&mut self, p: i64) -> bool {
        self.int(1, 100) <= p
    }

    /// a-string of `lo..=hi` characters (letters and digits).
    pub(super) fn astring(&mut self, lo: usize, hi: usize) -> String {
        const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        let len = self.0.random_range(lo..=hi);
        (0..len)
            .map(|_| char::from(CHARS[self.0.random_range(0..CHARS.len())]))
            .collect()
    }

    /// n-string of `len` digits.
    pub(super) fn nstring(&mut self, len: usize) -> String {
        (0..len)
            .map(|_| char::from(b'0' + self.0.random_range(0..10u8)))
            .collect()
    }

    pub(super) fn zip(&mut self) -> String {
        self.nstring(4) + "11111"
    }

    /// i_data / s_data: 26..=50 characters, 10 % holding "ORIGINAL".
    pub(super) fn data(&mut self) -> String {
        let mut s = self.astring(26, 50);
        if self.percent(10) {
            let at = self.0.random_range(0..=s.len() - 8);
            s.replace_range(at..at + 8, "ORIGINAL");
        }
        s
    }

    /// NURand(A, x, y) with run constant `c` (clause 2.1.6).
    pub(super) fn nurand(&mut self, a: i64, x: i64, y: i64, c: i64) -> i64 {
        (((self.int(0, a) | self.int(x, y)) + c) % (y - x + 1)) + x
    }
}

/// TPC-C's customer last name for `n` in 0..=999 (clause 4.3.2.3).
pub fn last_name(n: i64) -> String {
    const SYLLABLES: [&str; 10] = [
        "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
    ];
    let n = n as usize;
    [n / 100, (n / 10) % 10, n % 10]
        .iter()
        .map(|&i| SYLLABLES[i])
        .collect()
}
