//! Garbage-collection victim choice: pure functions over a view of the block table.
//!
//! The FTL carries the decision out (copy the victim's valid pages, erase it); nothing here
//! does I/O, so the policies are tested on hand-made block tables.

use crate::config::GcPolicy;

/// Where a block is in its life cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockState {
    Free,
    /// A write frontier: being programmed.
    Open,
    /// Closed: fully programmed (or closed by recovery); a GC candidate.
    Full,
}

/// What the policies see of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockView {
    pub state: BlockState,
    pub valid_pages: u32,
    /// Sequence number of the last program into the block: its age is `now_seq - this`.
    pub last_write_seq: u64,
}

/// Greedy: the closed block with the fewest valid pages (ties: the lowest index, so a run is
/// deterministic). `None` if no closed block has an invalid page.
pub fn choose_greedy(blocks: &[BlockView], pages_per_block: u32) -> Option<usize> {
    // Branch-free: each block maps to `valid << 32 | index` (or `u64::MAX` if it is no
    // candidate), and the minimum is the fewest valid pages at the lowest index. This loop is
    // the hottest of a GC-bound run, and the compiler vectorizes it.
    let best = blocks
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let candidate = b.state == BlockState::Full && b.valid_pages < pages_per_block;
            let key = (u64::from(b.valid_pages) << 32) | i as u64;
            if candidate { key } else { u64::MAX }
        })
        .min()?;
    (best != u64::MAX).then_some((best & 0xFFFF_FFFF) as usize)
}

/// Cost-benefit: the closed block maximising `(1 - u) · age / (1 + u)`, where `u` is its valid
/// share and `age` the programs since it was last written (Rosenblum & Ousterhout, "The design
/// and implementation of a log-structured file system", SOSP 1991; the `1 + u` cost counts the
/// read and the write of each copied page, as in Kawaguchi et al., USENIX 1995). An empty block
/// always wins.
pub fn choose_cost_benefit(
    blocks: &[BlockView],
    pages_per_block: u32,
    now_seq: u64,
) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, b) in blocks.iter().enumerate() {
        if b.state != BlockState::Full || b.valid_pages >= pages_per_block {
            continue;
        }
        if b.valid_pages == 0 {
            return Some(i);
        }
        let u = f64::from(b.valid_pages) / f64::from(pages_per_block);
        let age = now_seq.saturating_sub(b.last_write_seq) as f64 + 1.0;
        let score = (1.0 - u) * age / (1.0 + u);
        if best.is_none_or(|(_, s)| score > s) {
            best = Some((i, score));
        }
    }
    best.map(|(i, _)| i)
}

/// The victim under `policy`.
pub fn choose_victim(
    policy: GcPolicy,
    blocks: &[BlockView],
    pages_per_block: u32,
    now_seq: u64,
) -> Option<usize> {
    match policy {
        GcPolicy::Greedy => choose_greedy(blocks, pages_per_block),
        GcPolicy::CostBenefit => choose_cost_benefit(blocks, pages_per_block, now_seq),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(valid: u32, last: u64) -> BlockView {
        BlockView {
            state: BlockState::Full,
            valid_pages: valid,
            last_write_seq: last,
        }
    }

    #[test]
    fn greedy_takes_the_fewest_valid_pages_among_closed_blocks() {
        let blocks = [
            full(5, 0),
            BlockView {
                state: BlockState::Open,
                valid_pages: 0,
                last_write_seq: 0,
            },
            BlockView {
                state: BlockState::Free,
                valid_pages: 0,
                last_write_seq: 0,
            },
            full(2, 9),
            full(2, 1),
            full(8, 0),
        ];
        assert_eq!(choose_greedy(&blocks, 8), Some(3));
    }

    #[test]
    fn greedy_finds_nothing_when_every_closed_block_is_fully_valid() {
        assert_eq!(choose_greedy(&[full(8, 0), full(8, 1)], 8), None);
    }

    #[test]
    fn cost_benefit_prefers_old_cold_blocks_over_slightly_emptier_young_ones() {
        // Block 0: 50 % valid, written long ago. Block 1: 40 % valid, written just now.
        let blocks = [full(50, 0), full(40, 9_990)];
        assert_eq!(choose_cost_benefit(&blocks, 100, 10_000), Some(0));
        assert_eq!(choose_greedy(&blocks, 100), Some(1));
    }

    #[test]
    fn cost_benefit_takes_an_empty_block_at_once() {
        assert_eq!(
            choose_cost_benefit(&[full(1, 0), full(0, 100)], 4, 100),
            Some(1)
        );
    }

    #[test]
    fn policy_dispatch() {
        let blocks = [full(3, 0), full(1, 0)];
        assert_eq!(choose_victim(GcPolicy::Greedy, &blocks, 4, 0), Some(1));
        assert_eq!(choose_victim(GcPolicy::CostBenefit, &blocks, 4, 0), Some(1));
    }
}
