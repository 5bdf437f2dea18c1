//! The pacer's live feed ([`BlockStream`], binary pages of `block_rq_issue`) gives the same
//! requests as the run's own tracer ([`BlockTracer`], the text trace) for the same I/O: device,
//! operation and flags, sectors and the issuing task, in the same order at the same time (within
//! microseconds), drained while the I/O goes on and after it. The writes move from CPU to CPU,
//! so the per-CPU pages are merged; every drain after a sync call holds that sync's flush,
//! which is what the pacer counts on. Reads are left out of the comparison: a udev probe of
//! the new loop device may fall between the two instances' starts.

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
    let cpus = allowed_cpus();
    let mut streamed = Vec::new();
    for i in 0..200u64 {
        pin_to_cpu(cpus[i as usize % cpus.len()]);
        let len = 4096 * (1 + (i % 7) as usize);
        f.seek(SeekFrom::Start((i * 37 % 4000) * 4096)).unwrap();
        f.write_all(&buf[off..off + len]).unwrap();
        if i % 10 == 9 {
            f.sync_data().unwrap();
            let batch = stream.drain().unwrap();
            assert!(
                batch.iter().any(|r| r.op == Op::Flush),
                "the drain after sync call {i} holds its flush: {batch:?}"
            );
            streamed.extend(batch);
        }
    }
    drop(f);
    streamed.extend(stream.drain().unwrap());
    stream.finish().unwrap();
    let mut traced = tracer.stop().unwrap().requests;
    streamed.retain(|r| r.op != Op::Read);
    traced.retain(|r| r.op != Op::Read);

    assert!(
        streamed.iter().any(|r| r.op == Op::Write) && streamed.iter().any(|r| r.op == Op::Flush),
        "writes and flushes were streamed: {streamed:?}"
    );
    // Each instance stamps the event itself: the two stamps of one request differ by a few
    // hundred nanoseconds (more if an interrupt comes between), and the text keeps microseconds.
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
            s.time_ns.abs_diff(t.time_ns) < 100_000,
            "{s:?} at the time of {t:?}"
        );
    }
    lo.detach().unwrap();
}

/// The CPUs this thread may run on.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity fills the zeroed set it is given with its size; CPU_ISSET reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
            0
        );
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Move this thread to `cpu`.
fn pin_to_cpu(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET and sched_setaffinity get valid
    // pointers to it and its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        assert_eq!(
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
            0,
            "sched_setaffinity to CPU {cpu}"
        );
    }
}
