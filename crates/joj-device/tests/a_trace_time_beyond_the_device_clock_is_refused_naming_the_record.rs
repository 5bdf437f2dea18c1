//! A trace whose timestamps run to the end of `u64` nanoseconds (a hostile or corrupt blkparse
//! line, `18446744073.709551615` s) replayed with `--honor-timestamps` is refused naming the
//! record, instead of running the device's nanosecond clock to its end — where the next
//! command's completion wrapped round below its arrival and the model panicked.

mod common;

use common::tiny_profile;
use joj_device::{BlockDevice, DeviceError, Emmc, ReplayError, ReplayOptions, WriteFlags};
use joj_device::{MAX_CLOCK_NS, replay_with};
use joj_trace::{BlockClass, Op, TraceRecord};

fn write_at(time_ns: u64, sector: u64) -> TraceRecord {
    TraceRecord {
        time_ns,
        dev: "8:0".into(),
        op: Op::Write,
        preflush: false,
        fua: false,
        sync: true,
        meta: false,
        sector,
        sectors: 8,
        comm: "x".into(),
        class: BlockClass::Unknown,
        file: None,
        complete_ns: None,
    }
}

#[test]
fn a_trace_time_at_the_end_of_the_clock_is_refused_naming_the_record() {
    let trace = [write_at(0, 0), write_at(u64::MAX, 8)];
    let opts = ReplayOptions {
        honor_timestamps: true,
        ..ReplayOptions::default()
    };
    let e = replay_with(&trace, &tiny_profile(), &opts).unwrap_err();
    assert!(
        matches!(
            e,
            ReplayError::Device {
                index: 1,
                source: DeviceError::ClockBeyond {
                    max_ns: MAX_CLOCK_NS,
                    ..
                }
            }
        ),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.starts_with("trace record 1:") && text.contains("fix:"),
        "{text}"
    );
}

#[test]
fn the_device_clock_runs_to_its_bound_and_no_further() {
    let mut dev = Emmc::new(&tiny_profile()).unwrap();
    dev.advance_to(MAX_CLOCK_NS).unwrap();
    dev.write(0, &[7u8; 2048], WriteFlags::NONE).unwrap();
    assert!(
        dev.now_ns() > MAX_CLOCK_NS,
        "the work after the bound still runs"
    );
    assert!(matches!(
        dev.advance_to(MAX_CLOCK_NS + 1),
        Err(DeviceError::ClockBeyond { t_ns, .. }) if t_ns == MAX_CLOCK_NS + 1
    ));
}
