//! Histograms of a stream whose range is not known in advance, of a fixed size: what a trace
//! plot keeps of a class with more requests than it draws one by one.
//!
//! A [`Cuts`] cuts the keys seen so far (integers: nanoseconds, request numbers, sectors) into
//! at most `n` bins of `2^shift` keys each, every bin starting at a multiple of its width. A key
//! outside the bins widens them: the smallest larger power of two that takes in every key seen
//! in `n` bins. Because the bins are aligned to their width, each old bin lies inside exactly
//! one new bin, so widening merges counts without guessing, and what the bins hold does not
//! depend on the order the keys came in (only on the range they span). At least `n / 2` bins
//! hold the span of the keys seen once there are more than `n` distinct ones.
//!
//! Invariants: a [`Bins`] holds `n` counters and a [`Grid`] `nx × ny`, allocated when the first
//! key arrives and never resized; every key added is counted in exactly one bin (a span of
//! addresses, a discard, adds one to each row it covers when it is added, and rows it covered
//! then keep their counts when they merge); a count saturates rather than wraps.

/// Bins of `2^shift` keys, the first starting at `start` (a multiple of `2^shift`), holding
/// every key from `lo` to `hi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cuts {
    pub start: u64,
    pub shift: u32,
    pub n: usize,
    /// The smallest and largest key seen.
    pub lo: u64,
    pub hi: u64,
}

/// `k >> s`, 0 once every bit is shifted out.
fn shr(k: u64, s: u32) -> u64 {
    k.checked_shr(s).unwrap_or(0)
}

impl Cuts {
    /// Bins of width 1 starting at the first key.
    fn first(key: u64, n: usize) -> Cuts {
        assert!(n >= 2, "a histogram has at least two bins: {n}");
        Cuts {
            start: key,
            shift: 0,
            n,
            lo: key,
            hi: key,
        }
    }

    /// The cuts that also hold `key`: these (with `key` among the keys seen) when one of their
    /// bins holds it, wider ones when none does.
    fn with(&self, key: u64) -> Cuts {
        let (lo, hi) = (self.lo.min(key), self.hi.max(key));
        let fits = |shift: u32, start: u64| shr(hi, shift) - shr(start, shift) < self.n as u64;
        if lo >= self.start && fits(self.shift, self.start) {
            return Cuts { lo, hi, ..*self };
        }
        let mut shift = self.shift;
        while !fits(shift, lo) {
            shift += 1;
        }
        let start = shr(lo, shift).checked_shl(shift).unwrap_or(0);
        Cuts {
            start,
            shift,
            n: self.n,
            lo,
            hi,
        }
    }

    /// Whether `other` cuts the keys as `self` does (only the keys seen may differ).
    fn same_bins(&self, other: &Cuts) -> bool {
        (self.start, self.shift) == (other.start, other.shift)
    }

    /// The bin `key` falls in (a key these cuts hold).
    pub fn index(&self, key: u64) -> usize {
        let i = shr(key, self.shift) - shr(self.start, self.shift);
        assert!(
            (i as usize) < self.n && key >= self.start,
            "key {key} lies in the bins from {} of 2^{} ({} of them)",
            self.start,
            self.shift,
            self.n
        );
        i as usize
    }

    /// The middle key of bin `i` that lies among the keys seen (the first bin and the last may
    /// hold keys on one side only).
    pub fn middle(&self, i: usize) -> u64 {
        let width = 1u64.checked_shl(self.shift).unwrap_or(u64::MAX);
        let first = self.start.saturating_add((i as u64).saturating_mul(width));
        first.saturating_add(width / 2).clamp(self.lo, self.hi)
    }

    /// The last key of bin `i` that lies among the keys seen.
    pub fn last(&self, i: usize) -> u64 {
        let width = 1u64.checked_shl(self.shift).unwrap_or(u64::MAX);
        self.start
            .saturating_add((i as u64).saturating_mul(width))
            .saturating_add(width - 1)
            .clamp(self.lo, self.hi)
    }

    /// Where bin `i` of `self` lies among the bins of `to`, wider cuts that hold its keys.
    fn moved(&self, i: usize, to: &Cuts) -> usize {
        let first = self.start + ((i as u64) << self.shift);
        to.index(first)
    }
}

/// Weights summed per bin of keys (requests, or bytes, per time bin).
#[derive(Debug, Clone)]
pub(crate) struct Bins {
    cuts: Option<Cuts>,
    sums: Vec<u64>,
    n: usize,
}

impl Bins {
    pub fn new(n: usize) -> Bins {
        Bins {
            cuts: None,
            sums: Vec::new(),
            n,
        }
    }

    pub fn add(&mut self, key: u64, weight: u64) {
        let cuts = match self.cuts {
            None => {
                self.sums = vec![0; self.n];
                Cuts::first(key, self.n)
            }
            Some(c) => {
                let wide = c.with(key);
                if !wide.same_bins(&c) {
                    let mut sums = vec![0u64; self.n];
                    for (i, s) in self.sums.iter().enumerate().filter(|(_, s)| **s > 0) {
                        let j = c.moved(i, &wide);
                        sums[j] = sums[j].saturating_add(*s);
                    }
                    self.sums = sums;
                }
                wide
            }
        };
        self.cuts = Some(cuts);
        let i = cuts.index(key);
        self.sums[i] = self.sums[i].saturating_add(weight);
    }

    /// The bins holding something, in key order: `(cuts, bin, sum)`.
    pub fn filled(&self) -> impl Iterator<Item = (Cuts, usize, u64)> + '_ {
        self.sums
            .iter()
            .enumerate()
            .filter(|(_, s)| **s > 0)
            .filter_map(|(i, s)| Some((self.cuts?, i, *s)))
    }
}

/// Requests counted per cell of two keys (time × address), each axis cut as [`Cuts`] says.
#[derive(Debug, Clone)]
pub(crate) struct Grid {
    x: Option<Cuts>,
    y: Option<Cuts>,
    nx: usize,
    ny: usize,
    /// Row-major: `cells[yi * nx + xi]`.
    cells: Vec<u32>,
}

impl Grid {
    pub fn new(nx: usize, ny: usize) -> Grid {
        Grid {
            x: None,
            y: None,
            nx,
            ny,
            cells: Vec::new(),
        }
    }

    /// Count one request at `x` over the addresses `y_first..=y_last` (one cell per row it
    /// covers; a request at one address is one cell).
    pub fn add(&mut self, x: u64, y_first: u64, y_last: u64) {
        assert!(
            y_first <= y_last,
            "a span {y_first}..={y_last} runs upwards"
        );
        if self.cells.is_empty() {
            self.cells = vec![0; self.nx * self.ny];
        }
        let wx = widen(self.x, x, self.nx);
        let wy = widen(Some(widen(self.y, y_first, self.ny)), y_last, self.ny);
        match (self.x, self.y) {
            (Some(ox), Some(oy)) if ox.same_bins(&wx) && oy.same_bins(&wy) => {
                (self.x, self.y) = (Some(wx), Some(wy));
            }
            _ => self.regrid(wx, wy),
        }
        let xi = wx.index(x);
        for yi in wy.index(y_first)..=wy.index(y_last) {
            let c = &mut self.cells[yi * self.nx + xi];
            *c = c.saturating_add(1);
        }
    }

    /// Move every count to the cells of `x` × `y`, which hold the old ones.
    fn regrid(&mut self, x: Cuts, y: Cuts) {
        if let (Some(ox), Some(oy)) = (self.x, self.y) {
            let mut cells = vec![0u32; self.nx * self.ny];
            for (k, c) in self.cells.iter().enumerate().filter(|(_, c)| **c > 0) {
                let (yi, xi) = (k / self.nx, k % self.nx);
                let to = oy.moved(yi, &y) * self.nx + ox.moved(xi, &x);
                cells[to] = cells[to].saturating_add(*c);
            }
            self.cells = cells;
        }
        self.x = Some(x);
        self.y = Some(y);
    }

    /// The cells holding something: `(x cuts, x bin, y cuts, y bin, count)`.
    pub fn filled(&self) -> impl Iterator<Item = (Cuts, usize, Cuts, usize, u32)> + '_ {
        self.cells
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .filter_map(|(k, c)| Some((self.x?, k % self.nx, self.y?, k / self.nx, *c)))
    }
}

/// `cuts` widened to hold `key` (cuts of `n` bins starting there when there are none yet).
fn widen(cuts: Option<Cuts>, key: u64, n: usize) -> Cuts {
    match cuts {
        None => Cuts::first(key, n),
        Some(c) => c.with(key),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widening_merges_aligned_bins_and_keeps_every_count() {
        let mut b = Bins::new(8);
        for k in [100u64, 101, 103, 107] {
            b.add(k, 1);
        }
        // Eight bins of one key from 100 hold 100..=107.
        assert_eq!(b.cuts.unwrap().shift, 0);
        b.add(120, 5);
        let c = b.cuts.unwrap();
        // 100..=120 in eight bins: of 4 keys, from 100 (a multiple of 4).
        assert_eq!((c.start, c.shift), (100, 2));
        let got: Vec<(usize, u64)> = b.filled().map(|(_, i, s)| (i, s)).collect();
        assert_eq!(got, [(0, 3), (1, 1), (5, 5)]);
        assert_eq!(b.filled().map(|f| f.2).sum::<u64>(), 9);
    }

    #[test]
    fn keys_across_the_whole_u64_range_fit() {
        let mut b = Bins::new(4);
        for k in [0, u64::MAX, 1 << 63, 7] {
            b.add(k, 1);
        }
        assert_eq!(b.filled().map(|f| f.2).sum::<u64>(), 4);
        let mut g = Grid::new(4, 4);
        g.add(u64::MAX, 0, u64::MAX);
        g.add(0, u64::MAX, u64::MAX);
        assert_eq!(g.filled().map(|f| u64::from(f.4)).sum::<u64>(), 4 + 1);
    }

    #[test]
    fn the_bins_of_a_stream_do_not_depend_on_its_order() {
        let keys: Vec<u64> = (0..500u64).map(|i| (i * 7919) % 100_003).collect();
        let mut a = Bins::new(64);
        let mut b = Bins::new(64);
        for k in &keys {
            a.add(*k, 1);
        }
        for k in keys.iter().rev() {
            b.add(*k, 1);
        }
        let fa: Vec<_> = a
            .filled()
            .map(|(c, i, s)| (c.start, c.shift, i, s))
            .collect();
        let fb: Vec<_> = b
            .filled()
            .map(|(c, i, s)| (c.start, c.shift, i, s))
            .collect();
        assert_eq!(fa, fb);
        // At least half of the bins hold the span.
        let c = a.cuts.unwrap();
        assert!(c.index(c.hi) - c.index(c.lo) >= 32, "{c:?}");
    }

    #[test]
    fn a_grid_counts_a_span_once_per_row() {
        let mut g = Grid::new(4, 4);
        g.add(10, 0, 0);
        g.add(11, 0, 3);
        let total: u32 = g.filled().map(|f| f.4).sum();
        assert_eq!(total, 1 + 4);
        g.add(1000, 100, 100);
        let total: u32 = g.filled().map(|f| f.4).sum();
        // Widened: the rows merge, so the span covers fewer cells; nothing is lost or made up
        // beyond one per row it covers.
        assert!((3..=6).contains(&total), "{total}");
    }
}
