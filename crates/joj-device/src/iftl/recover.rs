//! Recovery after a power cut, the paper's Algorithm 1 over the whole logFTL
//! (`docs/formats/iftl.md` §4 "Recovery", and §5 case 9 for why a cut inside it is harmless):
//! every live entry of a transaction that is not committed has its `dataFTL` entry restored to
//! the old location, newest first; then the log is emptied with one cursor store and the
//! transaction slots freed. Then the volatile state is rebuilt from `dataFTL`.

use std::collections::HashSet;

use super::layout::{
    ENTRY_COMMITTED, ENTRY_COMMITTING, ENTRY_DISCARDED, HEADER_BYTES, LOG_ENTRY_BYTES, Layout,
    LogEntry, OFF_CURSOR, TX_COMMITTED, TX_FREE, TX_SLOT_BYTES, pack_cursor, pack_slot,
    unpack_cursor,
};
use super::{IFtl, IftlRecoveryReport};
use crate::config::{FtlConfig, IftlConfig};
use crate::error::FtlError;
use crate::medium::Medium;
use crate::nvm::Nvm;

impl<M: Medium> IFtl<M> {
    /// Mount after power loss: Algorithm 1, then rebuild. `at_ns` is when power returns.
    pub fn recover(
        medium: M,
        mut nvm: Nvm,
        cfg: IftlConfig,
        ftl: &FtlConfig,
        at_ns: u64,
    ) -> Result<(IFtl<M>, IftlRecoveryReport), FtlError> {
        let before = nvm.stats().clone();
        let layout = Layout::read(&nvm)?;
        let mut t = nvm.charge_read(0, HEADER_BYTES, at_ns)?;
        let tx_bytes = TX_SLOT_BYTES * u64::from(layout.tx_slots);
        t = nvm.charge_read(layout.tx_off, tx_bytes, t)?;
        let mut committed = HashSet::new();
        let mut used_slots = Vec::new();
        let mut open = HashSet::new();
        for s in 0..layout.tx_slots {
            let w = nvm.peek_u64(layout.tx_slot(s))?;
            let (tid, state) = (w as u32, (w >> 32) as u32);
            if state != TX_FREE {
                used_slots.push(s);
            }
            if state == TX_COMMITTED {
                committed.insert(tid);
            } else if state != TX_FREE {
                open.insert(tid);
            }
        }
        let (head, tail) = unpack_cursor(nvm.peek_u64(OFF_CURSOR)?);
        let live = tail.wrapping_sub(head);
        if live > layout.log_entries {
            return Err(FtlError::NvmCorrupt {
                reason: format!(
                    "logFTL cursor head {head} tail {tail} beyond its {} entries",
                    layout.log_entries
                ),
            });
        }
        let mut report = IftlRecoveryReport {
            log_entries_scanned: u64::from(live),
            ..IftlRecoveryReport::default()
        };
        if live > 0 {
            t = nvm.charge_read(layout.log_off, LOG_ENTRY_BYTES * u64::from(live), t)?;
        }
        let mut rolled_back = HashSet::new();
        for i in (0..live).rev() {
            let c = head.wrapping_add(i);
            let e = LogEntry::decode(nvm.peek(layout.entry(c), LOG_ENTRY_BYTES)?);
            match e.tx_state {
                ENTRY_COMMITTED | ENTRY_DISCARDED => continue,
                ENTRY_COMMITTING if committed.contains(&e.tid) => continue,
                ENTRY_COMMITTING => {}
                other => {
                    return Err(FtlError::NvmCorrupt {
                        reason: format!("logFTL entry {c} has TX-state {other}"),
                    });
                }
            }
            if e.lpn >= layout.logical_pages {
                return Err(FtlError::NvmCorrupt {
                    reason: format!("logFTL entry {c} names logical page {}", e.lpn),
                });
            }
            t = nvm.store_u32(layout.map(e.lpn), e.old, t)?;
            report.entries_restored += 1;
            rolled_back.insert(e.tid);
        }
        if live > 0 {
            t = nvm.store_u64(OFF_CURSOR, pack_cursor(tail, tail), t)?;
        }
        for s in used_slots {
            t = nvm.store_u64(layout.tx_slot(s), pack_slot(0, TX_FREE), t)?;
        }
        report.algorithm1_ns = t - at_ns;
        t = nvm.charge_read(layout.map_off, layout.map_bytes(), t)?;
        report.txns_rolled_back = rolled_back.union(&open).count() as u64;
        report.modeled_ns = t - at_ns;
        report.nvm_bytes_read = nvm.stats().bytes_read - before.bytes_read;
        report.nvm_bytes_written = nvm.stats().bytes_written - before.bytes_written;
        let f = IFtl::rebuild(medium, nvm, cfg, ftl.gc_free_blocks, layout)?;
        Ok((f, report))
    }
}
