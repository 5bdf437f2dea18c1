//! Every traced request carries the time the kernel completed it (`block_rq_complete`, the
//! record's `complete_ns`): a direct write that returned has completed, at or after its issue
//! and before the write call returned (to the microsecond the text trace keeps).

mod common;

use std::io::Write;

use joj_linux::{BlockTracer, now_mono_ns};
use joj_trace::Op;

#[test]
fn a_direct_write_completes_between_its_issue_and_the_return_of_the_call() {
    if !common::machine_ready(&[]) {
        return;
    }
    let (_dir, lo, mut f) = common::direct_loop(16 << 20);
    let dev = lo.dev().to_string();

    let tracer = BlockTracer::start(&[dev.as_str()], 1024).unwrap();
    let buf = vec![0x5au8; 8192];
    let off = buf.as_ptr().align_offset(4096);
    f.write_all(&buf[off..off + 4096]).unwrap();
    let after = now_mono_ns();
    drop(f);
    let trace = tracer.stop().unwrap();

    let w = trace
        .requests
        .iter()
        .find(|r| r.op == Op::Write && r.sector == 0)
        .expect("the write was traced");
    let done = w.complete_ns.expect("its completion was traced");
    assert!(
        done >= w.time_ns && done <= after,
        "{} <= {done} <= {after}",
        w.time_ns
    );
    lo.detach().unwrap();
}
