//! `IftlDevice` behind `BlockDevice` and `TransactionalDevice` — what the flash file layer is
//! written against — matches a byte-array model: sector-aligned plain writes of any length
//! (partial pages merged), reads, discards, transactions committed and aborted through the
//! traits; and after a power cut every plain write and every committed transaction is there.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_device::{BlockDevice, IftlDevice, Profile, TransactionalDevice, WriteFlags, rng::SimRng};

fn profile() -> Profile {
    let mut p = Profile::builtin("openssd-iftl")
        .unwrap()
        .with_blocks_per_plane(16);
    p.ftl.over_provisioning_percent = 40.0;
    p
}

#[test]
fn the_device_matches_a_byte_model_through_the_traits() {
    let p = profile();
    let mut d = IftlDevice::new(&p).unwrap();
    let pb = 4096u64;
    let span = 64 * pb;
    let mut model = vec![0u8; span as usize];
    let mut rng = SimRng::new(3);
    for i in 0..400u32 {
        let v = (i % 250 + 1) as u8;
        match rng.below(10) {
            0..=4 => {
                let off = rng.below(span / 512 - 16) * 512;
                let len = (1 + rng.below(16)) * 512;
                let data = vec![v; len as usize];
                BlockDevice::write(&mut d, off, &data, WriteFlags::NONE).unwrap();
                model[off as usize..(off + len) as usize].fill(v);
            }
            5 => {
                let page = rng.below(span / pb);
                d.discard(page * pb, pb).unwrap();
                model[(page * pb) as usize..((page + 1) * pb) as usize].fill(0);
            }
            6..=8 => {
                let t = d.begin_txn().unwrap();
                let first = rng.below(span / pb - 4);
                let n = 1 + rng.below(4);
                let data = vec![v; (n * pb) as usize];
                d.write_txn(t, first * pb, &data).unwrap();
                let mut back = vec![0u8; (n * pb) as usize];
                d.read_txn(t, first * pb, &mut back).unwrap();
                assert_eq!(back, data, "a transaction reads its own writes");
                if rng.below(3) == 0 {
                    d.abort_txn(t).unwrap();
                } else {
                    d.commit_txn(t).unwrap();
                    model[(first * pb) as usize..((first + n) * pb) as usize].fill(v);
                }
            }
            _ => d.flush().unwrap(),
        }
    }
    let mut got = vec![0u8; span as usize];
    BlockDevice::read(&mut d, 0, &mut got).unwrap();
    assert_eq!(got, model);
    let c = d.counters();
    assert!(c.host_write_requests > 0 && c.txn_commits > 0 && c.map_page_programs == 0);
    assert!(matches!(
        BlockDevice::write(&mut d, 1, &[0u8; 512], WriteFlags::NONE),
        Err(joj_device::DeviceError::Misaligned { .. })
    ));

    let at = d.now_ns();
    let (mut d, _) = IftlDevice::recover(d.power_cut(at, 1), &p).unwrap();
    BlockDevice::read(&mut d, 0, &mut got).unwrap();
    assert_eq!(
        got, model,
        "every plain write and committed transaction survives the cut"
    );
    d.ftl().check_invariants();
}
