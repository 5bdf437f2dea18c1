//! Completions matched to requests as a stream gives them ([`CompletionMatcher`]), in bounded
//! memory: how the blkparse importer and a replay reading blkparse text a line at a time give
//! each request its `complete_ns`.
//!
//! The matching is [`crate::record::attach_completions`]'s: per key (device, operation, first
//! sector, length) the requests in issue order and the completions in the order they came are
//! merged first in, first out, a completion earlier than the request at the head of its key's
//! queue dropped (it ended a request issued before the trace began). That rule depends only on
//! the order of the requests of a key and of its completions, not on how the two interleave, so
//! it can be applied as events arrive: a request is given out once its completion has come or
//! the stream has ended. Two bounds keep what is held finite, and depart from matching the
//! whole trace at once only where a trace is broken:
//!
//! - at most [`MAX_WAITING_REQUESTS`] requests wait, in issue order; past it the oldest is given
//!   out without a completion (a completion more than 65,536 requests after its issue — no
//!   device queue is that deep — was lost, and the request it would have matched was another);
//! - completions that no waiting request of their key takes are kept while a later request
//!   may still take them: blkparse writes events in time order, so once an event a second later
//!   than such a completion has come, no request issued at or before it can follow, and it is
//!   dropped. At most [`MAX_WAITING_COMPLETIONS`] are kept; past it, after that sweep, every
//!   completion no request waits for is dropped.

use std::collections::{HashMap, VecDeque};

use crate::record::{Completion, Op, TraceRecord};

/// The most requests held waiting for their completion.
pub const MAX_WAITING_REQUESTS: usize = 1 << 16;
/// The most completions held that no waiting request has taken.
pub const MAX_WAITING_COMPLETIONS: usize = 1 << 16;
/// How far out of time order blkparse text may be (CPUs' clocks differ by nanoseconds).
const ORDER_SLACK_NS: u64 = 1_000_000_000;

type Key = (String, Op, u64, u64);

/// Per key: the waiting requests (their sequence numbers, in issue order) and the completions
/// not yet matched (their times, in the order they came).
#[derive(Debug, Default)]
struct KeyQueues {
    requests: VecDeque<u64>,
    completions: VecDeque<u64>,
}

/// A request given to the matcher, and whether its matching is over.
#[derive(Debug)]
struct Held {
    record: TraceRecord,
    done: bool,
}

/// See the module header.
#[derive(Debug, Default)]
pub struct CompletionMatcher {
    held: VecDeque<Held>,
    /// The sequence number of `held[0]`.
    first_seq: u64,
    keys: HashMap<Key, KeyQueues>,
    /// Completions in `keys` not matched yet, and the count past which they are swept.
    completions: usize,
    sweep_at: usize,
    /// The latest time of any event so far.
    latest_ns: u64,
}

fn key_of(dev: &str, op: Op, sector: u64, sectors: u64) -> Key {
    (dev.to_owned(), op, sector, sectors)
}

impl CompletionMatcher {
    pub fn new() -> CompletionMatcher {
        CompletionMatcher {
            sweep_at: MAX_WAITING_COMPLETIONS,
            ..CompletionMatcher::default()
        }
    }

    /// The next request, in issue order (its `complete_ns` left as it was if none is found).
    pub fn request(&mut self, record: TraceRecord) {
        self.latest_ns = self.latest_ns.max(record.time_ns);
        let key = key_of(&record.dev, record.op, record.sector, record.sectors);
        let seq = self.first_seq + self.held.len() as u64;
        self.held.push_back(Held {
            record,
            done: false,
        });
        self.keys
            .entry(key.clone())
            .or_default()
            .requests
            .push_back(seq);
        self.resolve(&key);
    }

    /// The next completion, in the order the stream gives them.
    pub fn completion(&mut self, c: &Completion) {
        self.latest_ns = self.latest_ns.max(c.time_ns);
        let key = key_of(&c.dev, c.op, c.sector, c.sectors);
        self.keys
            .entry(key.clone())
            .or_default()
            .completions
            .push_back(c.time_ns);
        self.completions += 1;
        self.resolve(&key);
        if self.completions > self.sweep_at {
            self.sweep();
        }
    }

    /// Match what `key` holds, first in, first out.
    fn resolve(&mut self, key: &Key) {
        let Some(q) = self.keys.get_mut(key) else {
            return;
        };
        while let (Some(&seq), Some(&done_ns)) = (q.requests.front(), q.completions.front()) {
            let i = (seq - self.first_seq) as usize;
            let held = &mut self.held[i];
            q.completions.pop_front();
            self.completions -= 1;
            if done_ns < held.record.time_ns {
                continue;
            }
            held.record.complete_ns = Some(done_ns);
            held.done = true;
            q.requests.pop_front();
        }
        if q.requests.is_empty() && q.completions.is_empty() {
            self.keys.remove(key);
        }
    }

    /// Drop the completions no request can take any more (see the module header).
    fn sweep(&mut self) {
        let before = self.latest_ns.saturating_sub(ORDER_SLACK_NS);
        let mut left = 0;
        for q in self.keys.values_mut().filter(|q| q.requests.is_empty()) {
            q.completions.retain(|&t| t >= before);
            left += q.completions.len();
        }
        let waited_for: usize = self
            .keys
            .values()
            .filter(|q| !q.requests.is_empty())
            .map(|q| q.completions.len())
            .sum();
        if left + waited_for > MAX_WAITING_COMPLETIONS {
            for q in self.keys.values_mut().filter(|q| q.requests.is_empty()) {
                q.completions.clear();
            }
            left = 0;
        }
        self.keys
            .retain(|_, q| !(q.requests.is_empty() && q.completions.is_empty()));
        self.completions = left + waited_for;
        self.sweep_at = MAX_WAITING_COMPLETIONS.max(2 * self.completions);
    }

    /// The oldest request, if its matching is over, or if more than [`MAX_WAITING_REQUESTS`]
    /// wait (then without a completion).
    pub fn ready(&mut self) -> Option<TraceRecord> {
        let front = self.held.front()?;
        if !front.done {
            if self.held.len() <= MAX_WAITING_REQUESTS {
                return None;
            }
            self.give_up_on_front();
        }
        self.pop()
    }

    /// The oldest request once the stream has ended: every request still waiting has no
    /// completion to come.
    pub fn rest(&mut self) -> Option<TraceRecord> {
        if self.held.front().is_some_and(|h| !h.done) {
            self.give_up_on_front();
        }
        self.pop()
    }

    fn give_up_on_front(&mut self) {
        let Some(front) = self.held.front_mut() else {
            return;
        };
        front.done = true;
        let r = &front.record;
        let key = key_of(&r.dev, r.op, r.sector, r.sectors);
        if let Some(q) = self.keys.get_mut(&key) {
            // The oldest waiting request is the oldest of its key.
            assert_eq!(q.requests.front(), Some(&self.first_seq));
            q.requests.pop_front();
            if q.requests.is_empty() && q.completions.is_empty() {
                self.keys.remove(&key);
            }
        }
    }

    fn pop(&mut self) -> Option<TraceRecord> {
        let h = self.held.pop_front()?;
        assert!(h.done, "a request is given out once its matching is over");
        self.first_seq += 1;
        Some(h.record)
    }

    /// Requests held, waiting or matched but behind one that waits.
    pub fn held(&self) -> usize {
        self.held.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::attach_completions;

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

    /// Requests of a few shapes with their completions, some lost, some of requests issued
    /// before the trace, interleaved as blkparse writes them (by time).
    fn events(seed: u64) -> Vec<Result<TraceRecord, Completion>> {
        let mut rng = Rng(seed);
        let mut out: Vec<(u64, Result<TraceRecord, Completion>)> = Vec::new();
        for i in 0..400u64 {
            let t = 1_000 + i * 100 + rng.below(90);
            let sector = rng.below(4) * 8;
            let r = TraceRecord::new(t, "7:0", Op::Write, sector, 8);
            let c = Completion {
                time_ns: t + rng.below(3000),
                dev: "7:0".into(),
                op: Op::Write,
                sector,
                sectors: 8,
            };
            if rng.below(10) > 0 {
                out.push((c.time_ns, Err(c.clone())));
            }
            if rng.below(40) == 0 {
                // The completion of a request issued before tracing began.
                out.push((5, Err(Completion { time_ns: 5, ..c })));
            }
            out.push((t, Ok(r)));
        }
        out.sort_by_key(|(t, _)| *t);
        out.into_iter().map(|(_, e)| e).collect()
    }

    #[test]
    fn matching_as_events_come_gives_what_matching_the_whole_trace_gives() {
        for seed in 1..40 {
            let ev = events(seed);
            let mut whole: Vec<TraceRecord> =
                ev.iter().filter_map(|e| e.as_ref().ok().cloned()).collect();
            let done: Vec<Completion> = ev
                .iter()
                .filter_map(|e| e.as_ref().err().cloned())
                .collect();
            attach_completions(&mut whole, &done);
            let mut m = CompletionMatcher::new();
            let mut streamed = Vec::new();
            for e in ev {
                match e {
                    Ok(r) => m.request(r),
                    Err(c) => m.completion(&c),
                }
                while let Some(r) = m.ready() {
                    streamed.push(r);
                }
            }
            while let Some(r) = m.rest() {
                streamed.push(r);
            }
            assert_eq!(streamed, whole, "seed {seed}");
        }
    }

    #[test]
    fn a_request_whose_completion_never_comes_holds_at_most_the_bound() {
        let mut m = CompletionMatcher::new();
        let mut out = 0usize;
        // The first request's completion is lost; every other completes at once.
        m.request(TraceRecord::new(0, "7:0", Op::Write, 999, 8));
        for i in 1..200_000u64 {
            m.request(TraceRecord::new(i, "7:0", Op::Write, i * 8, 8));
            m.completion(&Completion {
                time_ns: i + 1,
                dev: "7:0".into(),
                op: Op::Write,
                sector: i * 8,
                sectors: 8,
            });
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
    fn completions_no_request_takes_are_dropped_once_too_old() {
        let mut m = CompletionMatcher::new();
        for i in 0..300_000u64 {
            m.completion(&Completion {
                time_ns: i * 1_000_000,
                dev: "7:0".into(),
                op: Op::Read,
                sector: i,
                sectors: 8,
            });
            assert!(m.completions <= 2 * MAX_WAITING_COMPLETIONS + 1);
        }
    }
}
