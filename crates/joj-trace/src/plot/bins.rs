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
//! The counters of each axis are a ring: bin `i` lives in slot `((start >> shift) + i) % n`, so
//! a bin's slot is its number (`key >> shift`) modulo `n` whatever `start` is. A key below the
//! bins whose span still fits in `n` bins moves `start` down by whole bins and moves no count:
//! the bins that leave at the top, whose slots the new lowest bins take, lie above every key
//! seen (the span fits), so they are empty. Only widening (a larger `shift`) moves counts, over
//! every counter; `shift` only grows, from 0 to at most 64, so that happens at most 64 times per
//! axis, and the cost of a key does not depend on how the keys move (moving the counts with
//! `start` would cost every counter on every record of a trace whose keys fall a bin at a time).
//!
//! Invariants: a [`Bins`] holds `n` counters and a [`Grid`] `nx × ny`, allocated when the first
//! key arrives and never resized; every key added is counted in exactly one bin (a span of
//! addresses, a discard, adds one to each row it covers when it is added, and rows it covered
//! then keep their counts when they merge); a count saturates rather than wraps; a slot outside
//! the bins' span holds 0.

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

    /// The slot of a ring of `n` counters that bin `i` lives in (see the module header).
    fn slot(&self, i: usize) -> usize {
        assert!(i < self.n, "bin {i} of {}", self.n);
        let slot = self.first_slot() + i;
        if slot >= self.n { slot - self.n } else { slot }
    }

    /// The bin that lives in `slot` of a ring of `n` counters: `slot` undone.
    fn bin(&self, slot: usize) -> usize {
        assert!(slot < self.n, "slot {slot} of {}", self.n);
        let first = self.first_slot();
        if slot >= first {
            slot - first
        } else {
            slot + self.n - first
        }
    }

    /// The slot of bin 0.
    fn first_slot(&self) -> usize {
        // The remainder is below `n`, a `usize`, so it converts back without loss.
        (shr(self.start, self.shift) % self.n as u64) as usize
    }

    /// The slot of a ring of `n` counters that `key` (a key these cuts hold) lives in.
    fn slot_of(&self, key: u64) -> usize {
        self.slot(self.index(key))
    }
}

/// Weights summed per bin of keys (requests, or bytes, per time bin).
#[derive(Debug, Clone)]
pub(crate) struct Bins {
    cuts: Option<Cuts>,
    /// A ring: the sum of bin `i` is `sums[cuts.slot(i)]`.
    sums: Vec<u64>,
    n: usize,
    /// Counters visited to move counts, over every `add` (a test bounds it).
    #[cfg(test)]
    visited: u64,
}

impl Bins {
    pub fn new(n: usize) -> Bins {
        Bins {
            cuts: None,
            sums: Vec::new(),
            n,
            #[cfg(test)]
            visited: 0,
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
                if wide.shift == c.shift {
                    for s in vacated(&c, &wide) {
                        assert_eq!(self.sums[s], 0, "bins {c:?} moved to {wide:?}");
                    }
                } else {
                    let mut sums = vec![0u64; self.n];
                    for (slot, s) in self.sums.iter().enumerate().filter(|(_, s)| **s > 0) {
                        let j = wide.slot(c.moved(c.bin(slot), &wide));
                        sums[j] = sums[j].saturating_add(*s);
                    }
                    self.sums = sums;
                    #[cfg(test)]
                    {
                        self.visited += self.n as u64;
                    }
                }
                wide
            }
        };
        self.cuts = Some(cuts);
        let s = cuts.slot_of(key);
        self.sums[s] = self.sums[s].saturating_add(weight);
    }

    /// The bins holding something, in key order: `(cuts, bin, sum)`.
    pub fn filled(&self) -> impl Iterator<Item = (Cuts, usize, u64)> + '_ {
        self.cuts.into_iter().flat_map(move |c| {
            (0..self.n)
                .map(move |i| (c, i, self.sums[c.slot(i)]))
                .filter(|(_, _, s)| *s > 0)
        })
    }
}

/// Requests counted per cell of two keys (time × address), each axis cut as [`Cuts`] says.
#[derive(Debug, Clone)]
pub(crate) struct Grid {
    x: Option<Cuts>,
    y: Option<Cuts>,
    nx: usize,
    ny: usize,
    /// Row-major, each axis a ring: the count of bin `xi` × `yi` is
    /// `cells[y.slot(yi) * nx + x.slot(xi)]`.
    cells: Vec<u32>,
    /// Cells visited to move counts, over every `add` (a test bounds it).
    #[cfg(test)]
    visited: u64,
}

impl Grid {
    pub fn new(nx: usize, ny: usize) -> Grid {
        Grid {
            x: None,
            y: None,
            nx,
            ny,
            cells: Vec::new(),
            #[cfg(test)]
            visited: 0,
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
        if let (Some(ox), Some(oy)) = (self.x, self.y) {
            if ox.shift == wx.shift && oy.shift == wy.shift {
                self.check_vacated(&ox, &oy, &wx, &wy);
            } else {
                self.regrid(&ox, &oy, &wx, &wy);
            }
        }
        (self.x, self.y) = (Some(wx), Some(wy));
        let xs = wx.slot_of(x);
        for yi in wy.index(y_first)..=wy.index(y_last) {
            let c = &mut self.cells[wy.slot(yi) * self.nx + xs];
            *c = c.saturating_add(1);
        }
    }

    /// Move every count of the cells of `ox` × `oy` to those of `x` × `y`, which hold them.
    fn regrid(&mut self, ox: &Cuts, oy: &Cuts, x: &Cuts, y: &Cuts) {
        let mut cells = vec![0u32; self.nx * self.ny];
        for (k, c) in self.cells.iter().enumerate().filter(|(_, c)| **c > 0) {
            let (ys, xs) = (k / self.nx, k % self.nx);
            let to_y = y.slot(oy.moved(oy.bin(ys), y));
            let to_x = x.slot(ox.moved(ox.bin(xs), x));
            let to = to_y * self.nx + to_x;
            cells[to] = cells[to].saturating_add(*c);
        }
        self.cells = cells;
        #[cfg(test)]
        {
            self.visited += self.cells.len() as u64;
        }
    }

    /// That the columns and rows that moved from the top of `ox` × `oy` to the bottom of `x` ×
    /// `y` (cuts of the same widths) were empty. It costs a row or column per bin moved, so it
    /// is checked in debug builds and tests only.
    fn check_vacated(&self, ox: &Cuts, oy: &Cuts, x: &Cuts, y: &Cuts) {
        if !cfg!(any(test, debug_assertions)) {
            return;
        }
        let empty = |c: &u32| *c == 0;
        for xs in vacated(ox, x) {
            let mut column = self.cells.iter().skip(xs).step_by(self.nx);
            assert!(column.all(empty), "{ox:?} moved to {x:?}");
        }
        for ys in vacated(oy, y) {
            let row = &self.cells[ys * self.nx..(ys + 1) * self.nx];
            assert!(row.iter().all(empty), "{oy:?} moved to {y:?}");
        }
    }

    /// The cells holding something, in row-major order of the bins: `(x cuts, x bin, y cuts,
    /// y bin, count)`.
    pub fn filled(&self) -> impl Iterator<Item = (Cuts, usize, Cuts, usize, u32)> + '_ {
        let axes = self.x.zip(self.y);
        axes.into_iter().flat_map(move |(x, y)| {
            (0..self.ny).flat_map(move |yi| {
                let row = y.slot(yi) * self.nx;
                (0..self.nx)
                    .map(move |xi| (x, xi, y, yi, self.cells[row + x.slot(xi)]))
                    .filter(|f| f.4 > 0)
            })
        })
    }
}

/// The slots of the bins of `old` that lie above the bins of `new`, cuts of the same width
/// whose start moved down by whole bins: the slots that the lowest bins of `new` take, which
/// hold nothing when `new` holds every key seen.
fn vacated(old: &Cuts, new: &Cuts) -> impl Iterator<Item = usize> + use<> {
    assert_eq!(old.shift, new.shift, "{old:?} and {new:?} differ in width");
    let moved = shr(old.start, old.shift) - shr(new.start, new.shift);
    assert!(
        moved < old.n as u64,
        "{old:?} moved by {moved} bins to {new:?}, past the keys it holds"
    );
    let (old, moved) = (*old, moved as usize);
    (old.n - moved..old.n).map(move |i| old.slot(i))
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

    /// A deterministic stream of random numbers (xorshift64) from a seed.
    struct Rng(u64);

    impl Rng {
        fn new(seed: u64) -> Rng {
            Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
        }

        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }

        /// A number in `0..=max`.
        fn upto(&mut self, max: u64) -> u64 {
            match max.checked_add(1) {
                Some(n) => self.next() % n,
                None => self.next(),
            }
        }
    }

    /// How the keys of a test stream move, relative to the bins of `n` that hold them so far.
    #[derive(Debug, Clone, Copy)]
    enum Moves {
        /// Anywhere in a range of a random width.
        Scattered,
        /// Each one bin below the first bin (then anywhere among the keys seen, once the keys
        /// reach 0).
        FallingABin,
        /// Each up to twice `n` bins below the first bin, or anywhere among the keys seen.
        FallingBins,
        /// Each a few bins above the last key.
        Rising,
        /// Falling and rising in turn, now and then at 0 or `u64::MAX`.
        Zigzag,
    }

    const ALL_MOVES: [Moves; 5] = [
        Moves::Scattered,
        Moves::FallingABin,
        Moves::FallingBins,
        Moves::Rising,
        Moves::Zigzag,
    ];

    /// `len` keys that move as `moves` says among bins of `n`, from `seed`.
    fn stream(seed: u64, moves: Moves, len: usize, n: usize) -> Vec<u64> {
        let mut rng = Rng::new(seed);
        let span = 1u64.checked_shl(rng.upto(63) as u32).unwrap_or(u64::MAX);
        let base = rng.upto(u64::MAX - span);
        let mut cuts: Option<Cuts> = None;
        let mut keys = Vec::with_capacity(len);
        for k in 0..len {
            let key = match cuts {
                None => base + rng.upto(span),
                Some(c) => {
                    let width = 1u64.checked_shl(c.shift).unwrap_or(u64::MAX);
                    let among = c.lo + rng.upto(c.hi - c.lo);
                    let down = |bins: u64| c.start.checked_sub(width.saturating_mul(bins));
                    match moves {
                        Moves::Scattered => base + rng.upto(span),
                        Moves::FallingABin => down(1).unwrap_or(among),
                        Moves::FallingBins => down(1 + rng.upto(2 * n as u64)).unwrap_or(among),
                        Moves::Rising => c.hi.saturating_add(width.saturating_mul(rng.upto(3))),
                        Moves::Zigzag if rng.upto(50) == 0 => [0, u64::MAX][k % 2],
                        Moves::Zigzag if k % 2 == 0 => down(1 + rng.upto(3)).unwrap_or(among),
                        Moves::Zigzag => c.hi.saturating_add(width.saturating_mul(rng.upto(3))),
                    }
                }
            };
            cuts = Some(widen(cuts, key, n));
            keys.push(key);
        }
        keys
    }

    /// The cuts of `n` bins that hold `keys`, added one by one.
    fn cuts_of(keys: &[u64], n: usize) -> Cuts {
        keys.iter()
            .fold(None, |c, k| Some(widen(c, *k, n)))
            .expect("some keys")
    }

    /// What `Bins::filled` should give for `(key, weight)`s: the sum of the weights of each
    /// bin of the final cuts, kept as a plain histogram indexed by bin.
    fn bins_reference(added: &[(u64, u64)], n: usize) -> (Cuts, Vec<(usize, u64)>) {
        let keys: Vec<u64> = added.iter().map(|a| a.0).collect();
        let cuts = cuts_of(&keys, n);
        let mut sums = vec![0u64; n];
        for (k, w) in added {
            let i = cuts.index(*k);
            sums[i] = sums[i].saturating_add(*w);
        }
        let filled = sums.into_iter().enumerate().filter(|f| f.1 > 0).collect();
        (cuts, filled)
    }

    #[test]
    fn ring_bins_sum_as_a_plain_histogram_of_the_same_keys() {
        for seed in 1..=40u64 {
            for moves in ALL_MOVES {
                let n = [2, 5, 8, 12, 64][seed as usize % 5];
                let keys = stream(seed, moves, 1500, n);
                let mut rng = Rng::new(seed ^ 0xB175);
                let added: Vec<(u64, u64)> = keys
                    .iter()
                    .map(|k| match rng.upto(100) {
                        0 => (*k, u64::MAX - rng.upto(3)),
                        _ => (*k, rng.upto(1000)),
                    })
                    .collect();
                let mut b = Bins::new(n);
                for (k, w) in &added {
                    b.add(*k, *w);
                }
                let (cuts, want) = bins_reference(&added, n);
                let got: Vec<(usize, u64)> = b.filled().map(|(_, i, s)| (i, s)).collect();
                assert_eq!(b.cuts, Some(cuts), "seed {seed}, {moves:?}, n {n}");
                assert_eq!(got, want, "seed {seed}, {moves:?}, n {n}");
            }
        }
    }

    #[test]
    fn ring_grid_counts_as_a_plain_grid_of_the_same_requests() {
        for seed in 1..=30u64 {
            for (mx, my) in ALL_MOVES
                .into_iter()
                .zip(ALL_MOVES.into_iter().cycle().skip(1))
            {
                let (nx, ny) = [(2, 3), (5, 4), (16, 8), (7, 12)][seed as usize % 4];
                let xs = stream(seed, mx, 800, nx);
                let ys = stream(seed + 1000, my, 800, ny);
                let mut rng = Rng::new(seed ^ 0x6121D);
                let mut g = Grid::new(nx, ny);
                // The reference: each request as the first key of every row it covered when it
                // was added, counted in the final cells.
                let (mut cx, mut cy) = (None, None);
                let mut points = Vec::new();
                for (x, y) in xs.iter().zip(&ys) {
                    let bits = rng.upto(63);
                    let last = match rng.upto(4) {
                        0 => y.saturating_add(rng.upto(1 << bits)),
                        _ => *y,
                    };
                    g.add(*x, *y, last);
                    cx = Some(widen(cx, *x, nx));
                    cy = Some(widen(Some(widen(cy, *y, ny)), last, ny));
                    let c = cy.expect("cuts");
                    for yi in c.index(*y)..=c.index(last) {
                        points.push((*x, (*y).max(c.start + ((yi as u64) << c.shift))));
                    }
                }
                let (cx, cy) = (cx.expect("cuts"), cy.expect("cuts"));
                let mut cells = vec![0u32; nx * ny];
                for (x, y) in points {
                    let c = &mut cells[cy.index(y) * nx + cx.index(x)];
                    *c = c.saturating_add(1);
                }
                let want: Vec<(usize, usize, u32)> = (0..nx * ny)
                    .filter(|k| cells[*k] > 0)
                    .map(|k| (k % nx, k / nx, cells[k]))
                    .collect();
                let got: Vec<(usize, usize, u32)> =
                    g.filled().map(|(_, xi, _, yi, c)| (xi, yi, c)).collect();
                let at = format!("seed {seed}, {mx:?} × {my:?}, {nx} × {ny}");
                assert_eq!((g.x, g.y), (Some(cx), Some(cy)), "{at}");
                assert_eq!(got, want, "{at}");
            }
        }
    }

    #[test]
    fn keys_falling_a_bin_at_a_time_move_counts_only_when_the_bins_widen() {
        // Every key one bin below the bins: the counters are moved once per widening (at most
        // 64 per axis), not once per key that moves the bins down.
        let (n, nx, ny) = (64usize, 64usize, 32usize);
        let keys = stream(7, Moves::FallingABin, 20_000, n);
        let mut b = Bins::new(n);
        for k in &keys {
            b.add(*k, 1);
        }
        let falls = keys.windows(2).filter(|w| w[1] < w[0]).count();
        assert!(falls > 1000, "{falls} keys fell");
        assert!(b.visited <= 64 * n as u64, "{} counters visited", b.visited);
        assert_eq!(b.filled().map(|f| f.2).sum::<u64>(), keys.len() as u64);

        let xs = stream(8, Moves::FallingABin, 20_000, nx);
        let ys = stream(9, Moves::FallingABin, 20_000, ny);
        let mut g = Grid::new(nx, ny);
        for (i, (x, y)) in xs.iter().zip(&ys).enumerate() {
            // One axis at a time, so that (almost) every request moves the grid.
            let (x, y) = if i % 2 == 0 { (*x, ys[0]) } else { (xs[0], *y) };
            g.add(x, y, y);
        }
        let cells = (nx * ny) as u64;
        assert!(g.visited <= 2 * 64 * cells, "{} cells visited", g.visited);
        assert_eq!(
            g.filled().map(|f| u64::from(f.4)).sum::<u64>(),
            xs.len() as u64
        );
    }

    #[test]
    fn the_counts_of_a_stream_do_not_depend_on_its_order() {
        for seed in 1..=20u64 {
            for moves in ALL_MOVES {
                let (n, nx, ny) = (16usize, 8usize, 6usize);
                let keys = stream(seed, moves, 600, n);
                let ys = stream(seed + 77, moves, 600, ny);
                let mut order: Vec<usize> = (0..keys.len()).collect();
                let mut rng = Rng::new(seed);
                let mut seen = None;
                for round in 0..4 {
                    if round > 0 {
                        // Fisher-Yates, from the seed.
                        for i in (1..order.len()).rev() {
                            order.swap(i, rng.upto(i as u64) as usize);
                        }
                    }
                    let mut b = Bins::new(n);
                    let mut g = Grid::new(nx, ny);
                    for i in &order {
                        b.add(keys[*i], 1 + *i as u64);
                        g.add(keys[*i], ys[*i], ys[*i]);
                    }
                    let fb: Vec<_> = b.filled().collect();
                    let fg: Vec<_> = g.filled().collect();
                    match &seen {
                        None => seen = Some((fb, fg)),
                        Some(first) => {
                            assert_eq!(first, &(fb, fg), "seed {seed}, {moves:?}, round {round}")
                        }
                    }
                }
            }
        }
    }
}
