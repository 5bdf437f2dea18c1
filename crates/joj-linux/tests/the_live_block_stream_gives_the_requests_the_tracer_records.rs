//! The pacer's live feed ([`BlockStream`], binary pages of `block_rq_issue`) gives the same
//! requests as the run's own tracer ([`BlockTracer`], the text trace) for the same I/O: device,
//! operation and flags, sectors and the issuing task, in the same order at the same time (within
//! microseconds), drained while the I/O goes on and after it.

mod common;

use std::io::{Seek, SeekFrom, Write};

use joj_linux::{BlockStream, BlockTracer};
use joj_trace::Op;

#[test]
fn the_stream_and_the_tracer_see_the_same_requests() {
    if !common::machine_ready(&[]) {
        return;
    }
    let (_dir, lo, mut f) = common::direct_loop(64 << 20);
    let dev = lo.dev().to_string();
    let tracer = BlockTracer::start(&[dev.as_str()], 1024).unwrap();
    let mut stream = BlockStream::start(&[dev.as_str()], 1024).unwrap();
    let buf = vec![0x5au8; 2 << 20];
    let off = buf.as_ptr().align_offset(4096);
    let mut streamed = Vec::new();
    for i in 0..200u64 {
        let len = 4096 * (1 + (i % 7) as usize);
        f.seek(SeekFrom::Start((i * 37 % 4000) * 4096)).unwrap();
        f.write_all(&buf[off..off + len]).unwrap();
        if i % 10 == 9 {
            f.sync_data().unwrap();
            streamed.extend(stream.drain().unwrap());
        }
    }
    drop(f);
    streamed.extend(stream.drain().unwrap());
    stream.finish().unwrap();
    let traced = tracer.stop().unwrap().requests;

    assert!(
        streamed.iter().any(|r| r.op == Op::Write) && streamed.iter().any(|r| r.op == Op::Flush),
        "writes and flushes were streamed: {streamed:?}"
    );
    // Each instance stamps the event itself: the two stamps of one request differ by a few
    // hundred nanoseconds, and the text keeps microseconds.
    let what = |r: &joj_trace::record::TraceRecord| {
        (
            r.dev.clone(),
            r.op,
            (r.preflush, r.fua, r.sync, r.meta),
            (r.sector, r.sectors),
            r.comm.clone(),
        )
    };
    assert_eq!(
        streamed.len(),
        traced.len(),
        "as many requests streamed as traced"
    );
    for (s, t) in streamed.iter().zip(&traced) {
        assert_eq!(what(s), what(t));
        assert!(
            s.time_ns.abs_diff(t.time_ns) < 5_000,
            "{s:?} at the time of {t:?}"
        );
    }
    lo.detach().unwrap();
}
