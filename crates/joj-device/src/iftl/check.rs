//! `IFtl::check_invariants`: the volatile bookkeeping against the NVM tables and the medium,
//! for tests and after recovery. Every violation is a bug, so it panics.

use super::IFtl;
use super::layout::{self, Loc};
use crate::addr::Ppn;
use crate::medium::Medium;

impl<M: Medium> IFtl<M> {
    /// Check the volatile bookkeeping against NVM and the medium (tests). Panics on a bug.
    pub fn check_invariants(&self) {
        let mut live = vec![0u32; self.table.len()];
        let mut slots = vec![0u32; self.layout.meta_slots as usize];
        for lpn in 0..self.layout.logical_pages {
            match self.map_get(lpn).expect("dataFTL readable") {
                Loc::Flash(p) => {
                    live[(p / self.ppb) as usize] += 1;
                    let oob = self.medium.peek_valid_oob(Ppn(p));
                    assert_eq!(oob.map(|o| o.lpn), Some(lpn), "dataFTL[{lpn}] = {p}");
                }
                Loc::Meta(s) => slots[s as usize] += 1,
                Loc::Unmapped => {}
            }
        }
        for (&lpn, h) in &self.held {
            let Some(c) = h.entry else { continue };
            assert!(c.wrapping_sub(self.head) < self.log_len(), "entry {c} live");
            let b = self.nvm.peek(self.layout.entry(c), 16).expect("entry");
            let e = layout::LogEntry::decode(b);
            assert_eq!(
                (e.tid, e.lpn, e.old),
                (h.tid, lpn, h.old.word()),
                "entry {c}"
            );
            match h.old {
                Loc::Flash(p) => {
                    live[(p / self.ppb) as usize] += 1;
                    assert_eq!(self.retained.get(&p), Some(&lpn), "retained page {p}");
                    let oob = self.medium.peek_valid_oob(Ppn(p));
                    assert_eq!(oob.map(|o| o.lpn), Some(lpn), "retained page {p} intact");
                }
                Loc::Meta(s) => slots[s as usize] += 1,
                Loc::Unmapped => {}
            }
        }
        assert_eq!(self.retained.len(), {
            let n = self.held.values();
            n.filter(|h| h.entry.is_some() && matches!(h.old, Loc::Flash(_)))
                .count()
        });
        for &s in &self.free_slots {
            slots[s as usize] += 1;
        }
        assert!(
            slots.iter().all(|&n| n == 1),
            "every slot used once or free"
        );
        self.table.check(&live, &self.medium);
        let mut retained_in = vec![0u32; self.table.len()];
        for &p in self.retained.keys() {
            retained_in[(p / self.ppb) as usize] += 1;
        }
        assert_eq!(retained_in, self.retained_in, "retained pages per block");
        let log_blocks = self.log_role.iter().filter(|&&l| l).count() as u32;
        assert_eq!(log_blocks, self.log_blocks_used, "log blocks in use");
        assert!(self.log_blocks_used <= self.cfg.log_blocks);
        let cursor = self.nvm.peek_u64(layout::OFF_CURSOR).expect("cursor");
        assert_eq!(layout::unpack_cursor(cursor), (self.head, self.tail));
    }
}
