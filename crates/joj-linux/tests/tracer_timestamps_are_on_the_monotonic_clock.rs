//! Trace timestamps are CLOCK_MONOTONIC: a request issued between two `now_mono_ns()` readings
//! carries a time between them (to the microsecond the text trace keeps).

mod common;

use std::io::Write;

use joj_linux::{BlockTracer, now_mono_ns};
use joj_trace::Op;

#[test]
fn direct_write_to_a_loop_device_is_stamped_between_readings() {
    if !common::machine_ready(&[]) {
        return;
    }
    let (_dir, lo, mut f) = common::direct_loop(16 << 20);
    let dev = lo.dev().to_string();

    let tracer = BlockTracer::start(&[dev.as_str()], 1024).unwrap();
    // O_DIRECT needs an aligned buffer: a 4 KiB-aligned slice of a larger allocation.
    let buf = vec![0x5au8; 8192];
    let off = buf.as_ptr().align_offset(4096);
    let before = now_mono_ns();
    f.write_all(&buf[off..off + 4096]).unwrap();
    let after = now_mono_ns();
    drop(f);
    let trace = tracer.stop().unwrap();

    let writes: Vec<_> = trace
        .requests
        .iter()
        .filter(|r| r.op == Op::Write)
        .collect();
    assert_eq!(writes.len(), 1, "{:#?}", trace.requests);
    let w = writes[0];
    assert_eq!((w.dev.as_str(), w.sector, w.sectors), (dev.as_str(), 0, 8));
    // The text trace keeps microseconds: allow the truncation.
    assert!(
        w.time_ns + 1_000 >= before && w.time_ns <= after,
        "{before} <= {} <= {after}",
        w.time_ns
    );
    assert!(trace.start_ns <= before && after <= trace.stop_ns);
    assert!(
        trace
            .bios
            .iter()
            .any(|b| b.op == Op::Write && b.sector == 0 && b.sectors == 8)
    );
    lo.detach().unwrap();
}
