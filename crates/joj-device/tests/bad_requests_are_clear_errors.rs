//! Requests beyond the device, misaligned or empty requests, and malformed traces give
//! structured errors; the device keeps working after a refused request.

mod common;

use common::tiny_profile;
use joj_device::{BlockDevice, DeviceError, Emmc, ReplayError, WriteFlags, replay};
use joj_trace::{Op, TraceRecord};

#[test]
fn beyond_misaligned_and_empty_requests_are_refused() {
    let mut dev = Emmc::new(&tiny_profile()).unwrap();
    let cap = dev.geometry().capacity_bytes;
    let page = vec![0u8; 2048];
    assert!(matches!(
        dev.write(cap, &page[..512], WriteFlags::NONE),
        Err(DeviceError::BeyondDevice { .. })
    ));
    assert!(matches!(
        dev.write(cap - 512, &page[..1024], WriteFlags::NONE),
        Err(DeviceError::BeyondDevice { .. })
    ));
    assert!(matches!(
        dev.write(u64::MAX - 511, &page[..512], WriteFlags::NONE),
        Err(DeviceError::BeyondDevice { .. })
    ));
    assert!(matches!(
        dev.write(100, &page[..512], WriteFlags::NONE),
        Err(DeviceError::Misaligned { .. })
    ));
    assert!(matches!(
        dev.write(0, &page[..100], WriteFlags::NONE),
        Err(DeviceError::Misaligned { .. })
    ));
    assert!(matches!(
        dev.write(0, &[], WriteFlags::NONE),
        Err(DeviceError::EmptyRequest)
    ));
    let mut buf = vec![0u8; 512];
    assert!(matches!(
        dev.read(cap, &mut buf),
        Err(DeviceError::BeyondDevice { .. })
    ));
    assert!(matches!(
        dev.discard(0, 3),
        Err(DeviceError::Misaligned { .. })
    ));
    // Refused requests change nothing; the device still works.
    dev.write(0, &page, WriteFlags::NONE).unwrap();
    assert_eq!(dev.counters().host_write_requests, 1);
}

fn rec(op: Op, sector: u64, sectors: u64, dev: &str) -> TraceRecord {
    TraceRecord::new(0, dev, op, sector, sectors)
}

#[test]
fn replay_names_the_offending_record() {
    let p = tiny_profile();
    let sectors = p.capacity_bytes() / 512;
    let trace = vec![
        rec(Op::Write, 0, 8, "7:0"),
        rec(Op::Write, sectors - 4, 8, "7:0"),
    ];
    match replay(&trace, &p) {
        Err(ReplayError::BeyondDevice { index: 1, .. }) => {}
        other => panic!("expected a beyond-device error on record 1, got {other:?}"),
    }
    // A length that would need terabytes of buffer is refused before anything is allocated.
    let huge = vec![rec(Op::Read, 0, u64::from(u32::MAX), "7:0")];
    assert!(matches!(
        replay(&huge, &p),
        Err(ReplayError::BeyondDevice { index: 0, .. })
    ));
    // Inside the device but more than one replayed request may carry (64 MiB).
    let p_big = joj_device::Profile::builtin("emmc5").unwrap();
    let oversized = vec![rec(Op::Read, 0, (65 << 20) / 512, "7:0")];
    assert!(matches!(
        replay(&oversized, &p_big),
        Err(ReplayError::BeyondDevice { index: 0, .. })
    ));
    let overflowing = vec![rec(Op::Write, u64::MAX / 2, 8, "7:0")];
    assert!(matches!(
        replay(&overflowing, &p),
        Err(ReplayError::BeyondDevice { index: 0, .. })
    ));
    let empty = vec![rec(Op::Write, 0, 0, "7:0")];
    assert!(matches!(
        replay(&empty, &p),
        Err(ReplayError::EmptyRequest { index: 0, .. })
    ));
    let two = vec![rec(Op::Write, 0, 8, "7:0"), rec(Op::Write, 0, 8, "7:1")];
    assert!(matches!(
        replay(&two, &p),
        Err(ReplayError::SeveralDevices { .. })
    ));
}
