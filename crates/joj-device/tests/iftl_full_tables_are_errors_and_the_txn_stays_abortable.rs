//! Every way an i-FTL transaction can run out of room is a clear, structured error — a full
//! logFTL, a full transaction table, no free NVM metadata slot, a transaction that outgrows
//! the reserved log blocks, an NVM too small for the tables — and never corruption: the
//! transaction stays open and abortable, an abort leaves every page as it was, and the
//! device's invariants hold.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

#[path = "common/iftl.rs"]
mod common;

use common::{device, device_with, iftl_config, page, read_all};
use joj_device::{DataMode, FtlError, IFtl, IftlConfig, Lpn, NandMedium, Timing, WriteKind};

fn filled(cfg: IftlConfig) -> (IFtl<NandMedium>, Vec<u64>, u64) {
    let mut f = device_with(cfg, common::LOGICAL_PAGES);
    let mut now = 0;
    for lpn in 0..f.logical_pages() as u32 {
        now = f
            .write(
                None,
                Lpn(lpn),
                WriteKind::Data,
                &page(u64::from(lpn) + 1),
                now,
            )
            .unwrap();
    }
    let before = read_all(&mut f, now).unwrap();
    (f, before, now)
}

#[test]
fn a_full_logftl_is_an_error_and_abort_restores() {
    let cfg = IftlConfig {
        log_entries: 16,
        ..iftl_config()
    };
    let (mut f, before, mut now) = filled(cfg);
    let (t, done) = f.begin(now).unwrap();
    now = done;
    for lpn in 0..16 {
        now = f
            .write(Some(t), Lpn(lpn), WriteKind::Data, &page(900), now)
            .unwrap();
    }
    // Rewriting a page it holds needs no entry.
    now = f
        .write(Some(t), Lpn(3), WriteKind::Data, &page(901), now)
        .unwrap();
    let e = f
        .write(Some(t), Lpn(16), WriteKind::Data, &page(902), now)
        .unwrap_err();
    assert!(matches!(e, FtlError::LogFtlFull { capacity: 16 }), "{e}");
    f.check_invariants();
    now = f.abort(t, now).unwrap();
    assert_eq!(read_all(&mut f, now).unwrap(), before);
    f.check_invariants();
}

#[test]
fn a_full_transaction_table_is_an_error() {
    let (mut f, _, mut now) = filled(iftl_config());
    let mut open = Vec::new();
    for _ in 0..iftl_config().tx_slots {
        let (t, done) = f.begin(now).unwrap();
        now = done;
        open.push(t);
    }
    assert!(matches!(
        f.begin(now),
        Err(FtlError::TxnTableFull { slots: 8 })
    ));
    now = f.commit(open[0], now).unwrap();
    assert!(
        f.begin(now).is_ok(),
        "a committed transaction frees its slot"
    );
}

#[test]
fn no_free_metadata_slot_is_an_error_and_abort_restores() {
    let cfg = IftlConfig {
        metadata_slots: Some(4),
        ..iftl_config()
    };
    let (mut f, before, mut now) = filled(cfg);
    let (t, done) = f.begin(now).unwrap();
    now = done;
    for lpn in 0..4 {
        now = f
            .write(Some(t), Lpn(lpn), WriteKind::Metadata, &page(700), now)
            .unwrap();
    }
    let e = f
        .write(Some(t), Lpn(4), WriteKind::Metadata, &page(701), now)
        .unwrap_err();
    assert!(matches!(e, FtlError::NvmSlotsFull { slots: 4 }), "{e}");
    f.check_invariants();
    now = f.abort(t, now).unwrap();
    assert_eq!(read_all(&mut f, now).unwrap(), before);
    assert_eq!(f.metadata_slots(), (4, 4), "every slot free again");
    f.check_invariants();
}

#[test]
fn a_transaction_that_outgrows_the_log_blocks_is_an_error_and_abortable() {
    let cfg = IftlConfig {
        log_blocks: 1,
        ..iftl_config()
    };
    let (mut f, mut before, mut now) = filled(cfg);
    let (t, done) = f.begin(now).unwrap();
    now = done;
    // The transaction overwrites every other page of a range: the blocks holding their old
    // copies are half retained, half valid.
    // (The fill alternated units page by page, so every fourth page is every other page of a
    // block.)
    for lpn in (0..240u32).step_by(4) {
        now = f
            .write(Some(t), Lpn(lpn), WriteKind::Data, &page(5000), now)
            .unwrap();
    }
    // Plain writes of the other half make those blocks GC victims, whose retained pages lazy
    // GC must copy — more than one log block holds.
    let mut err = None;
    let mut rng = joj_device::rng::SimRng::new(19);
    for i in 0..20_000u64 {
        let lpn = rng.below(common::LOGICAL_PAGES) as u32;
        if lpn.is_multiple_of(4) && lpn < 240 {
            continue;
        }
        match f.write(None, Lpn(lpn), WriteKind::Data, &page(6000 + i), now) {
            Ok(d) => {
                now = d;
                before[lpn as usize] = 6000 + i;
            }
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    let e = err.expect("the transaction outgrew one log block");
    assert!(matches!(e, FtlError::LogBlocksFull { blocks: 1 }), "{e}");
    assert!(f.stats().lazy_gc_copies > 0);
    f.check_invariants();
    now = f.abort(t, now).unwrap();
    assert_eq!(read_all(&mut f, now).unwrap(), before);
    f.check_invariants();
    // With the transaction gone, GC has room again.
    for lpn in 1..40u32 {
        now = f
            .write(None, Lpn(lpn), WriteKind::Data, &page(7000), now)
            .unwrap();
    }
    f.check_invariants();
}

#[test]
fn a_transaction_larger_than_the_spare_space_is_an_error_and_abortable() {
    let (mut f, before, mut now) = filled(iftl_config());
    let (t, done) = f.begin(now).unwrap();
    now = done;
    let mut err = None;
    for lpn in 0..common::LOGICAL_PAGES as u32 {
        match f.write(Some(t), Lpn(lpn), WriteKind::Data, &page(5000), now) {
            Ok(d) => now = d,
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    let e = err.expect("old and new copies of every page do not fit");
    assert!(
        matches!(e, FtlError::NoFreeBlocks | FtlError::LogBlocksFull { .. }),
        "{e}"
    );
    f.check_invariants();
    now = f.abort(t, now).unwrap();
    assert_eq!(read_all(&mut f, now).unwrap(), before);
    f.check_invariants();
}

#[test]
fn an_nvm_too_small_for_the_tables_is_refused_at_format() {
    let cfg = IftlConfig {
        nvm_bytes: 2048,
        metadata_slots: None,
        ..iftl_config()
    };
    let m = NandMedium::new(common::geometry(), Timing::default(), DataMode::Full);
    let e = IFtl::format(m, cfg, &common::ftl_config(), common::LOGICAL_PAGES).unwrap_err();
    assert!(
        matches!(
            e,
            FtlError::NvmExhausted {
                nvm_bytes: 2048,
                ..
            }
        ),
        "{e}"
    );
    let _ = device();
}
