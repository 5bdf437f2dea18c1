//! Completions matched to requests as a stream gives them ([`CompletionMatcher`]), in bounded
//! memory: how the blkparse importer, a replay reading blkparse text a line at a time, and a
//! trace joj captured ([`attach_completions`]) give each request its `complete_ns`.
//!
//! The events come in the order the kernel logged them (blkparse writes them in time order; a
//! whole trace is merged by time, an issue before a completion of the same instant). Per key
//! (device, operation, first sector, length):
//!
//! - **a completion goes to the newest request of its key that waits and was issued at or
//!   before it**, the choice of blkparse's own request tracking (`blkparse -t` keeps one
//!   request per device and sector; a later issue there replaces it, a completion ends it). A
//!   completion that no such request waits for is dropped: it ended a request issued before
//!   the trace began, or one whose issue was lost. Matching the oldest instead (first in, first
//!   out) gives every later request of the key its predecessor's completion once one
//!   completion is lost, as `blktrace` loses events under load (robustness.md H107); the newest
//!   leaves only the request whose completion was lost without one. Two requests of one key in
//!   flight together and completed in order get each other's completions: their latencies swap,
//!   their sum does not change, and no request is ordered before an issue it followed.
//! - **a request of a key whose newer request has completed while it still waits lost its
//!   completion**: it is given out without one when the next request of its key is issued (a
//!   device does not hold a request while another of the same place and size is issued,
//!   completed and followed by a third).
//! - **a requeue (`R`) makes the next issue of its key no request** ([`Requeues`]): the driver
//!   issues the request again (a second `D`), and the request keeps the time of its first
//!   issue (what the host waited from). Decided as the text is read, the same way in every
//!   reading, whatever the completions.
//! - **a request of an operation its device never completes in the trace waits for nothing**
//!   ([`Completing`], from the whole trace or from a first reading of it): this kernel reports no
//!   completion of a pure flush (joj-trace.md), and a trace may hold no completion at all.
//!
//! Requests are given out in issue order, each once its matching is over. At most
//! [`MAX_WAITING_REQUESTS`] are held, and at most [`MAX_HELD_BYTES`] of their text; past either
//! the oldest waiting one is given out without a completion (a completion more than 65,536
//! requests after its issue was lost: no device queue is that deep). Nothing else is held: a
//! completion is matched or dropped when it comes.
//!
//! Issue times of a key are taken to be in order but for CPUs' clocks: the newest request at or
//! before a completion is looked for among the last [`BACK_SCAN`] waiting ones, then by
//! bisection (so a hostile order costs a logarithm, and may give a completion to an older
//! request than the newest).

use std::collections::{HashMap, VecDeque};

use crate::format::MAX_TRACE_DEVICES;
use crate::record::{Completion, Op, TraceRecord};

/// The most requests held waiting for their completion.
pub const MAX_WAITING_REQUESTS: usize = 1 << 16;
/// The most bytes of text (device and command names) the held requests may carry: a line may
/// be a MiB long, and 65,536 of them would be 64 GiB.
pub const MAX_HELD_BYTES: usize = 32 << 20;
/// How many of a key's newest waiting requests are looked through before bisection.
const BACK_SCAN: usize = 64;
/// The most keys with a requeue whose next issue has not come ([`Requeues`]).
const MAX_REQUEUED_KEYS: usize = 1 << 16;
/// The most (device, operation) pairs [`Completing`] lists before it stops telling them apart.
const MAX_COMPLETING_PAIRS: usize = 8 * MAX_TRACE_DEVICES;

type Key = (String, Op, u64, u64);

fn key_of(dev: &str, op: Op, sector: u64, sectors: u64) -> Key {
    (dev.to_owned(), op, sector, sectors)
}

/// Which (device, operation) pairs a trace completes anywhere: a request of any other pair
/// has no completion to wait for. Bounded: past [`MAX_COMPLETING_PAIRS`] distinct pairs (a
/// trace of that many devices is refused anyway) every request may complete.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completing {
    /// Per device, the operations it completes as bits (`1 << op`): looked up by `&str`, so
    /// neither noting a completion nor asking about a request allocates.
    ops: HashMap<String, u8>,
    pairs: usize,
    every: bool,
}

impl Completing {
    /// Nothing known: every request may complete.
    pub fn every() -> Completing {
        Completing {
            ops: HashMap::new(),
            pairs: 0,
            every: true,
        }
    }

    /// Note a completion of the trace.
    pub fn see(&mut self, c: &Completion) {
        let bit = op_bit(c.op);
        if self.every
            || self
                .ops
                .get(c.dev.as_str())
                .is_some_and(|ops| ops & bit != 0)
        {
            return;
        }
        if self.pairs == MAX_COMPLETING_PAIRS {
            *self = Completing::every();
            return;
        }
        *self.ops.entry(c.dev.clone()).or_default() |= bit;
        self.pairs += 1;
    }

    /// Whether a request of `dev` and `op` may get a completion.
    pub fn may_complete(&self, dev: &str, op: Op) -> bool {
        self.every || self.ops.get(dev).is_some_and(|ops| ops & op_bit(op) != 0)
    }

    /// How many pairs it lists (0 once it no longer tells them apart).
    pub fn pairs(&self) -> usize {
        self.pairs
    }
}

fn op_bit(op: Op) -> u8 {
    1 << (op as u8)
}

/// The requeues (`R`) whose request has not been issued again yet, per key: the next issue
/// of such a key is the same request, not another. Bounded: past [`MAX_REQUEUED_KEYS`] keys a
/// requeue is not noted (both readings of a text do the same, so they agree).
#[derive(Debug, Default)]
pub struct Requeues {
    pending: HashMap<Key, u32>,
}

impl Requeues {
    /// Note a requeue.
    pub fn requeue(&mut self, c: &Completion) {
        let key = key_of(&c.dev, c.op, c.sector, c.sectors);
        if self.pending.len() < MAX_REQUEUED_KEYS || self.pending.contains_key(&key) {
            let n = self.pending.entry(key).or_default();
            *n = n.saturating_add(1);
        }
    }

    /// Whether an issue of `r`'s key is a requeued request issued again (then it is noted as
    /// come, and is no request).
    pub fn is_reissue(&mut self, r: &TraceRecord) -> bool {
        if self.pending.is_empty() {
            return false;
        }
        let key = key_of(&r.dev, r.op, r.sector, r.sectors);
        match self.pending.get_mut(&key) {
            Some(n) if *n > 1 => {
                *n -= 1;
                true
            }
            Some(_) => {
                self.pending.remove(&key);
                true
            }
            None => false,
        }
    }
}

/// A request's matching.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Its completion may still come.
    Waiting,
    /// Over, with or without a completion.
    Done,
}

/// A request given to the matcher, and where its matching stands.
#[derive(Debug)]
struct Held {
    record: TraceRecord,
    state: State,
}

/// Per key: the requests waiting (their sequence numbers, in issue order), and the newest
/// request of the key matched while older ones waited.
#[derive(Debug, Default)]
struct KeyQueue {
    waiting: VecDeque<u64>,
    overtaken_by: Option<u64>,
}

/// See the module header.
#[derive(Debug)]
pub struct CompletionMatcher {
    held: VecDeque<Held>,
    /// The sequence number of `held[0]`.
    first_seq: u64,
    keys: HashMap<Key, KeyQueue>,
    completing: Completing,
    /// The text the held requests carry, in bytes ([`MAX_HELD_BYTES`]).
    held_bytes: usize,
}

/// The bytes of text a record carries.
fn text_bytes(r: &TraceRecord) -> usize {
    r.dev.len() + r.comm.len()
}

impl CompletionMatcher {
    /// A matcher for a trace whose completions are those `completing` lists
    /// ([`Completing::every`] when that is not known).
    pub fn new(completing: Completing) -> CompletionMatcher {
        CompletionMatcher {
            held: VecDeque::new(),
            first_seq: 0,
            keys: HashMap::new(),
            completing,
            held_bytes: 0,
        }
    }

    /// The next request, in issue order (its `complete_ns` left as it was if none is found).
    pub fn request(&mut self, record: TraceRecord) {
        let seq = self.first_seq + self.held.len() as u64;
        self.held_bytes += text_bytes(&record);
        if !self.completing.may_complete(&record.dev, record.op) {
            self.held.push_back(Held {
                record,
                state: State::Done,
            });
            return;
        }
        let key = key_of(&record.dev, record.op, record.sector, record.sectors);
        self.held.push_back(Held {
            record,
            state: State::Waiting,
        });
        let q = self.keys.entry(key).or_default();
        if let Some(newer) = q.overtaken_by.take() {
            // Older requests of the key still wait although a newer one completed, and now
            // another is issued: their completions were lost.
            while let Some(&s) = q.waiting.front().filter(|&&s| s < newer) {
                q.waiting.pop_front();
                self.held[(s - self.first_seq) as usize].state = State::Done;
            }
        }
        q.waiting.push_back(seq);
    }

    /// The next completion, in the order the stream gives them.
    pub fn completion(&mut self, c: &Completion) {
        if let Some((s, older)) = self.take_newest(c) {
            let held = &mut self.held[(s - self.first_seq) as usize];
            held.record.complete_ns = Some(c.time_ns);
            held.state = State::Done;
            if older {
                let key = key_of(&c.dev, c.op, c.sector, c.sectors);
                if let Some(q) = self.keys.get_mut(&key) {
                    q.overtaken_by = Some(q.overtaken_by.map_or(s, |o| o.max(s)));
                }
            }
        }
    }

    /// Take the newest waiting request of `c`'s key issued at or before `c`, and whether
    /// older requests of the key still wait.
    fn take_newest(&mut self, c: &Completion) -> Option<(u64, bool)> {
        let key = key_of(&c.dev, c.op, c.sector, c.sectors);
        let q = self.keys.get_mut(&key)?;
        let (held, first) = (&self.held, self.first_seq);
        let time_of = |s: u64| held[(s - first) as usize].record.time_ns;
        // Issue times of a key are in order but for CPUs' clocks: the newest at or before `c`
        // among the last few, else by bisection, checked (a hostile order cannot give a later
        // one, only an older one than the newest).
        let n = q.waiting.len();
        let i = match (n.saturating_sub(BACK_SCAN)..n)
            .rev()
            .find(|&i| time_of(q.waiting[i]) <= c.time_ns)
        {
            Some(i) => i,
            None => q
                .waiting
                .partition_point(|&s| time_of(s) <= c.time_ns)
                .checked_sub(1)
                .filter(|&i| time_of(q.waiting[i]) <= c.time_ns)?,
        };
        let s = q.waiting.remove(i)?;
        let older = i > 0;
        if q.waiting.is_empty() {
            self.keys.remove(&key);
        }
        Some((s, older))
    }

    /// The oldest request, if its matching is over, or if more than [`MAX_WAITING_REQUESTS`]
    /// or [`MAX_HELD_BYTES`] are held (then without a completion).
    pub fn ready(&mut self) -> Option<TraceRecord> {
        let front = self.held.front()?;
        if front.state == State::Waiting {
            if self.held.len() <= MAX_WAITING_REQUESTS && self.held_bytes <= MAX_HELD_BYTES {
                return None;
            }
            self.give_up_on_front();
        }
        self.pop()
    }

    /// The oldest request once the stream has ended: every request still waiting has no
    /// completion to come.
    pub fn rest(&mut self) -> Option<TraceRecord> {
        if self.held.front().is_some_and(|h| h.state == State::Waiting) {
            self.give_up_on_front();
        }
        self.pop()
    }

    fn give_up_on_front(&mut self) {
        let Some(front) = self.held.front_mut() else {
            return;
        };
        front.state = State::Done;
        let r = &front.record;
        let key = key_of(&r.dev, r.op, r.sector, r.sectors);
        if let Some(q) = self.keys.get_mut(&key) {
            // The oldest waiting request is the oldest of its key.
            assert_eq!(q.waiting.front(), Some(&self.first_seq));
            q.waiting.pop_front();
            if q.waiting.is_empty() {
                self.keys.remove(&key);
            }
        }
    }

    fn pop(&mut self) -> Option<TraceRecord> {
        let h = self.held.pop_front()?;
        assert_eq!(
            h.state,
            State::Done,
            "a request is given out once its matching is over"
        );
        self.first_seq += 1;
        self.held_bytes -= text_bytes(&h.record);
        Some(h.record)
    }

    /// Requests held, waiting or matched but behind one that waits.
    pub fn held(&self) -> usize {
        self.held.len()
    }
}

/// Give each of `records` (in issue order) the time of its completion among `completions` (in
/// time order), as [`CompletionMatcher`] matches them with the two merged by time, an issue
/// before a completion of the same instant. A record without one keeps `complete_ns` as it
/// was. Returns how many records got a completion.
pub fn attach_completions(records: &mut [TraceRecord], completions: &[Completion]) -> usize {
    let mut completing = Completing::default();
    completions.iter().for_each(|c| completing.see(c));
    let mut m = CompletionMatcher::new(completing);
    let issued: Vec<TraceRecord> = records
        .iter()
        .map(|r| TraceRecord {
            complete_ns: None,
            ..r.clone()
        })
        .collect();
    let mut slots = records.iter_mut();
    let mut matched = 0;
    let mut give = |r: TraceRecord| {
        let slot = slots
            .next()
            .expect("the matcher gives back each record it is given");
        if let Some(t) = r.complete_ns {
            slot.complete_ns = Some(t);
            matched += 1;
        }
    };
    let mut done = completions.iter().peekable();
    for r in issued {
        while let Some(c) = done.next_if(|c| c.time_ns < r.time_ns) {
            m.completion(c);
        }
        m.request(r);
        while let Some(r) = m.ready() {
            give(r);
        }
    }
    done.for_each(|c| m.completion(c));
    while let Some(r) = m.rest() {
        give(r);
    }
    matched
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic stream of numbers (xorshift).
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    fn done(t: u64, dev: &str, op: Op, sector: u64, sectors: u64) -> Completion {
        Completion {
            time_ns: t,
            dev: dev.into(),
            op,
            sector,
            sectors,
        }
    }

    /// Feed `events` (text order) to a matcher; the records it gives out.
    fn stream(
        events: Vec<Result<TraceRecord, Completion>>,
        completing: Completing,
    ) -> Vec<TraceRecord> {
        let mut m = CompletionMatcher::new(completing);
        let mut out = Vec::new();
        for e in events {
            match e {
                Ok(r) => m.request(r),
                Err(c) => m.completion(&c),
            }
            while let Some(r) = m.ready() {
                out.push(r);
            }
        }
        while let Some(r) = m.rest() {
            out.push(r);
        }
        out
    }

    /// Requests of eight shapes, a shape issued again only once its last request would have
    /// completed (as a filesystem waits on a block's write before it writes it again), other
    /// shapes in flight meanwhile; one completion in five lost. The events in time order, an
    /// issue before a completion of the same instant, and each request's own completion.
    #[allow(clippy::type_complexity)]
    fn sequential_per_shape(seed: u64) -> (Vec<Result<TraceRecord, Completion>>, Vec<Option<u64>>) {
        let mut rng = Rng(seed);
        let mut busy_until = [0u64; 8];
        let mut out: Vec<(u64, bool, Result<TraceRecord, Completion>)> = Vec::new();
        let mut own = Vec::new();
        for i in 0..2_000u64 {
            let t = 1_000 + i * 100;
            let k = rng.below(8) as usize;
            if busy_until[k] >= t {
                continue;
            }
            let (op, sector, sectors) = match k {
                0 => (Op::Flush, 0, 0),
                1 => (Op::Read, 64, 8),
                _ => (Op::Write, k as u64 * 8, 8),
            };
            let c = done(t + 1 + rng.below(3_000), "7:0", op, sector, sectors);
            busy_until[k] = c.time_ns;
            out.push((
                t,
                false,
                Ok(TraceRecord::new(t, "7:0", op, sector, sectors)),
            ));
            if rng.below(5) == 0 {
                own.push(None);
            } else {
                own.push(Some(c.time_ns));
                out.push((c.time_ns, true, Err(c)));
            }
        }
        out.sort_by_key(|(t, completion, _)| (*t, *completion));
        (out.into_iter().map(|(_, _, e)| e).collect(), own)
    }

    #[test]
    fn a_lost_completion_leaves_only_its_own_request_without_one() {
        for seed in 1..40 {
            let (events, own) = sequential_per_shape(seed);
            let got: Vec<Option<u64>> = stream(events, Completing::every())
                .iter()
                .map(|r| r.complete_ns)
                .collect();
            assert_eq!(got, own, "seed {seed}");
        }
    }

    #[test]
    fn the_first_write_s_lost_completion_is_not_passed_on() {
        // robustness.md H107: a write to sector 0 and a read, again and again; the first
        // write's completion is lost.
        let mut events = Vec::new();
        for i in 0..1_000u64 {
            let t = i * 1_000;
            events.push(Ok(TraceRecord::new(t, "7:0", Op::Write, 0, 512)));
            if i > 0 {
                events.push(Err(done(t + 400, "7:0", Op::Write, 0, 512)));
            }
            events.push(Ok(TraceRecord::new(t + 500, "7:0", Op::Read, 8, 8)));
            events.push(Err(done(t + 550, "7:0", Op::Read, 8, 8)));
        }
        // The first write is given out once the third is issued: nothing piles up behind it.
        let mut m = CompletionMatcher::new(Completing::every());
        let mut most_held = 0;
        for e in events.iter().cloned() {
            match e {
                Ok(r) => m.request(r),
                Err(c) => m.completion(&c),
            }
            while m.ready().is_some() {}
            most_held = most_held.max(m.held());
        }
        assert!(most_held <= 4, "{most_held} requests held");
        let out = stream(events, Completing::every());
        let latencies: Vec<Option<u64>> = out
            .iter()
            .map(|r| r.complete_ns.map(|c| c - r.time_ns))
            .collect();
        assert_eq!(latencies[0], None);
        assert_eq!(latencies[1], Some(50));
        for (i, l) in latencies.iter().enumerate().skip(2) {
            assert_eq!(*l, Some(if i % 2 == 0 { 400 } else { 50 }), "request {i}");
        }
    }

    #[test]
    fn two_in_flight_of_one_shape_both_complete_and_a_requeued_issue_is_not_a_request() {
        let w = |t| TraceRecord::new(t, "7:0", Op::Write, 8, 8);
        let c = |t| done(t, "7:0", Op::Write, 8, 8);
        // Both in flight, completed in order: the latencies swap, both are matched.
        let out = stream(
            vec![Ok(w(10)), Ok(w(20)), Err(c(50)), Err(c(60))],
            Completing::every(),
        );
        let got: Vec<_> = out.iter().map(|r| (r.time_ns, r.complete_ns)).collect();
        assert_eq!(got, [(10, Some(60)), (20, Some(50))]);

        // D, R, D, C: one request, with the completion, at the time of its first issue.
        let mut requeues = Requeues::default();
        let mut m = CompletionMatcher::new(Completing::every());
        for e in [Ok(w(10)), Err(Some(c(15))), Ok(w(30)), Err(None)] {
            match e {
                Ok(r) if requeues.is_reissue(&r) => {}
                Ok(r) => m.request(r),
                Err(Some(r)) => requeues.requeue(&r),
                Err(None) => m.completion(&c(90)),
            }
        }
        let mut out = Vec::new();
        while let Some(r) = m.ready().or_else(|| m.rest()) {
            out.push((r.time_ns, r.complete_ns));
        }
        assert_eq!(out, [(10, Some(90))]);
    }

    #[test]
    fn a_completion_before_every_waiting_request_is_dropped() {
        let out = stream(
            vec![
                Err(done(5, "7:0", Op::Write, 8, 8)),
                Ok(TraceRecord::new(10, "7:0", Op::Write, 8, 8)),
                Err(done(12, "7:0", Op::Write, 16, 8)),
                Err(done(25, "7:0", Op::Write, 8, 8)),
            ],
            Completing::every(),
        );
        let got: Vec<_> = out.iter().map(|r| r.complete_ns).collect();
        assert_eq!(got, [Some(25)]);
    }

    #[test]
    fn a_request_of_an_operation_never_completed_waits_for_nothing() {
        // This kernel completes no pure flush: a flush is given out as it comes.
        let mut completing = Completing::default();
        completing.see(&done(1, "7:0", Op::Write, 8, 8));
        let mut m = CompletionMatcher::new(completing);
        m.request(TraceRecord::new(10, "7:0", Op::Flush, 0, 0));
        assert_eq!(m.ready().map(|r| r.op), Some(Op::Flush));
        m.request(TraceRecord::new(20, "7:0", Op::Write, 8, 8));
        assert!(m.ready().is_none(), "a write waits for its completion");
        m.request(TraceRecord::new(30, "7:1", Op::Write, 8, 8));
        m.completion(&done(40, "7:0", Op::Write, 8, 8));
        assert_eq!(m.ready().and_then(|r| r.complete_ns), Some(40));
        assert_eq!(m.ready().map(|r| r.dev), Some("7:1".to_owned()));
        assert_eq!(m.held(), 0);
    }

    /// Requests of a few shapes, several of a shape in flight at once, with their completions,
    /// some lost, some of requests issued before the trace, interleaved as blkparse writes them
    /// (by time, an issue before a completion of the same instant).
    fn events(seed: u64) -> Vec<Result<TraceRecord, Completion>> {
        let mut rng = Rng(seed);
        let mut out: Vec<(u64, bool, Result<TraceRecord, Completion>)> = Vec::new();
        for i in 0..400u64 {
            let t = 1_000 + i * 100 + rng.below(90);
            let sector = rng.below(4) * 8;
            let r = TraceRecord::new(t, "7:0", Op::Write, sector, 8);
            let c = done(t + rng.below(3000), "7:0", Op::Write, sector, 8);
            if rng.below(10) > 0 {
                out.push((c.time_ns, true, Err(c.clone())));
            }
            if rng.below(40) == 0 {
                // The completion of a request issued before tracing began.
                out.push((5, true, Err(Completion { time_ns: 5, ..c })));
            }
            out.push((t, false, Ok(r)));
        }
        out.sort_by_key(|(t, completion, _)| (*t, *completion));
        out.into_iter().map(|(_, _, e)| e).collect()
    }

    #[test]
    fn matching_as_events_come_gives_what_matching_the_whole_trace_gives() {
        for seed in 1..40 {
            let ev = events(seed);
            let mut whole: Vec<TraceRecord> =
                ev.iter().filter_map(|e| e.as_ref().ok().cloned()).collect();
            let completions: Vec<Completion> = ev
                .iter()
                .filter_map(|e| e.as_ref().err().cloned())
                .collect();
            let matched = attach_completions(&mut whole, &completions);
            assert!(matched > whole.len() / 2, "seed {seed}: {matched} matched");
            let mut completing = Completing::default();
            completions.iter().for_each(|c| completing.see(c));
            assert_eq!(stream(ev, completing), whole, "seed {seed}");
        }
    }

    #[test]
    fn a_request_whose_completion_never_comes_holds_at_most_the_bound() {
        let mut m = CompletionMatcher::new(Completing::every());
        let mut out = 0usize;
        // The first request's completion is lost; every other completes at once.
        m.request(TraceRecord::new(0, "7:0", Op::Write, 999, 8));
        for i in 1..200_000u64 {
            m.request(TraceRecord::new(i, "7:0", Op::Write, i * 8, 8));
            m.completion(&done(i + 1, "7:0", Op::Write, i * 8, 8));
            while m.ready().is_some() {
                out += 1;
            }
            assert!(m.held() <= MAX_WAITING_REQUESTS + 1, "{} held", m.held());
        }
        while m.rest().is_some() {
            out += 1;
        }
        assert_eq!(out, 200_000);
    }

    #[test]
    fn requests_carrying_much_text_are_held_to_the_byte_bound() {
        // Long command names, none completed (one completion of the pair exists elsewhere).
        let mut m = CompletionMatcher::new(Completing::every());
        let comm = "x".repeat(8 << 10);
        for i in 0..20_000u64 {
            let mut r = TraceRecord::new(i, "7:0", Op::Write, i * 8, 8);
            r.comm = comm.clone();
            m.request(r);
            while m.ready().is_some() {}
            assert!(
                m.held_bytes <= MAX_HELD_BYTES + comm.len() + 3,
                "{}",
                m.held_bytes
            );
        }
        while m.rest().is_some() {}
        assert_eq!(m.held_bytes, 0);
    }

    #[test]
    fn issue_times_a_little_out_of_order_still_give_the_newest_its_completion() {
        let w = |t| Ok(TraceRecord::new(t, "7:0", Op::Write, 8, 8));
        // Issued (in text order) at 10, 100, 20; completed at 30: the one issued at 20.
        let out = stream(
            vec![w(10), w(100), w(20), Err(done(30, "7:0", Op::Write, 8, 8))],
            Completing::every(),
        );
        let got: Vec<_> = out.iter().map(|r| (r.time_ns, r.complete_ns)).collect();
        assert_eq!(got, [(10, None), (100, None), (20, Some(30))]);
    }

    #[test]
    fn completions_no_request_takes_are_not_held() {
        let mut m = CompletionMatcher::new(Completing::every());
        for i in 0..300_000u64 {
            m.completion(&done(i * 1_000_000, "7:0", Op::Read, i, 8));
        }
        assert!(m.keys.is_empty() && m.held.is_empty());
    }

    #[test]
    fn completing_stops_telling_pairs_apart_past_its_bound() {
        let mut c = Completing::default();
        for i in 0..=MAX_COMPLETING_PAIRS as u64 {
            c.see(&done(0, &format!("8:{i}"), Op::Read, 0, 8));
        }
        assert!(c.may_complete("9:9", Op::Flush));
        assert_eq!(c.pairs(), 0);
    }
}
