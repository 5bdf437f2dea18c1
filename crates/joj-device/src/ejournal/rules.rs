//! The eMMC paper's optimized-journal rules, once: which journal writes form each jbd2
//! transaction's group (one packed command of reliable writes, durable on return), which
//! flushes the group makes unnecessary, and where an ordering flush goes. A pure function over
//! journal events ([`decide`]); its two adapters read a block trace (`ejournal::transform`, the
//! replay mode) and a recorded block log (joj-experiment's `kernel_crash_states::coalition`,
//! the crash states). The rules, each with its reason: `docs/device-model.md`, "The optimized
//! journal (eMMC journal coalition)".
//!
//! Invariants of a decision list: every journal write is a `Member` or the `Commit` of exactly
//! one transaction, or `Unfinished` (after the last commit); transactions are numbered in commit
//! order; only `Flush` events are dropped; a dropped preflush comes right before its commit.

/// One request of a recorded run, as the rules see it (reads, marks and the like are left out
/// by the adapters, or given as a `Request` that caches nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A write of the filesystem journal (not its superblock). `commit`: it holds the
    /// transaction's commit block; `fua`: it was written with FUA (else, on a device without
    /// FUA, the block layer follows it with a flush).
    Journal { commit: bool, fua: bool },
    /// A cache flush request.
    Flush,
    /// Any other request. `preflush`: it empties the cache before it runs; `cached`: it leaves a
    /// write in the device's volatile cache that a later commit must be ordered after (file
    /// data in ordered mode).
    Request { preflush: bool, cached: bool },
}

/// What the optimized journal does with one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Issued as recorded, where recorded.
    Keep,
    /// A journal write of transaction `txn`: issued in its group, at its commit.
    Member { txn: usize },
    /// Transaction `txn`'s commit: the group (its members, then this write) is issued here as
    /// one packed command of reliable writes; with `ordering_flush`, after one flush, because
    /// writes other than the journal's were cached since the last flush.
    Commit { txn: usize, ordering_flush: bool },
    /// The commit's preflush: the flush right before a commit that a flush follows. The group
    /// orders nothing else (or the ordering flush does that).
    DropPreflush,
    /// The flush right after a commit written without FUA (the block layer's emulation of
    /// FUA): the packed reliable write is durable on return.
    DropPostflush,
    /// A journal write after the last commit: no group ends it; issued as recorded.
    Unfinished,
}

/// The optimized journal's decision for each of `events`. Pure.
pub fn decide(events: &[Event]) -> Vec<Decision> {
    let mut decisions = transactions(events);
    let is_flush = |i: usize| events.get(i) == Some(&Event::Flush);
    // Whether writes other than the journal's were cached since the last flush that stays.
    let mut cached = false;
    // Whether a member of the next transaction has been written.
    let mut under_way = false;
    for (i, e) in events.iter().enumerate() {
        match (*e, decisions[i]) {
            (_, Decision::Member { .. }) => under_way = true,
            (Event::Journal { fua, .. }, Decision::Commit { txn, .. }) => {
                decisions[i] = Decision::Commit {
                    txn,
                    ordering_flush: cached,
                };
                (cached, under_way) = (false, false);
                if !fua && is_flush(i + 1) {
                    decisions[i + 1] = Decision::DropPostflush;
                }
            }
            (Event::Flush, Decision::Keep) => {
                let preflush = under_way
                    && matches!(events.get(i + 1), Some(Event::Journal { .. }))
                    && is_flush(i + 2);
                if preflush {
                    decisions[i] = Decision::DropPreflush;
                } else {
                    cached = false;
                }
            }
            (
                Event::Request {
                    preflush,
                    cached: c,
                },
                _,
            ) => {
                cached = (cached && !preflush) || c;
            }
            _ => {}
        }
    }
    decisions
}

/// Pass 1: each commit closes the journal writes since the previous commit into a transaction;
/// journal writes after the last commit are unfinished. Everything else is kept for now.
fn transactions(events: &[Event]) -> Vec<Decision> {
    let mut decisions = vec![Decision::Keep; events.len()];
    let mut pending = Vec::new();
    let mut txn = 0;
    for (i, e) in events.iter().enumerate() {
        let Event::Journal { commit, .. } = *e else {
            continue;
        };
        if !commit {
            pending.push(i);
            continue;
        }
        for p in pending.drain(..) {
            decisions[p] = Decision::Member { txn };
        }
        decisions[i] = Decision::Commit {
            txn,
            ordering_flush: false,
        };
        txn += 1;
    }
    for p in pending {
        decisions[p] = Decision::Unfinished;
    }
    decisions
}

#[cfg(test)]
mod tests {
    use super::Decision::*;
    use super::*;

    const J: Event = Event::Journal {
        commit: false,
        fua: false,
    };
    const C: Event = Event::Journal {
        commit: true,
        fua: false,
    };
    const DATA: Event = Event::Request {
        preflush: false,
        cached: true,
    };
    const F: Event = Event::Flush;

    #[test]
    fn a_commit_after_data_keeps_one_ordering_flush_and_drops_its_own() {
        let d = decide(&[DATA, J, F, C, F, J, F, C, F]);
        assert_eq!(
            d,
            vec![
                Keep,
                Member { txn: 0 },
                DropPreflush,
                Commit {
                    txn: 0,
                    ordering_flush: true
                },
                DropPostflush,
                Member { txn: 1 },
                DropPreflush,
                Commit {
                    txn: 1,
                    ordering_flush: false
                },
                DropPostflush,
            ]
        );
    }

    #[test]
    fn a_flush_that_is_not_the_commits_stays_and_orders_what_came_before() {
        let d = decide(&[J, DATA, F, DATA, F, C, F]);
        assert_eq!(d[2], Keep, "an fdatasync's own flush");
        assert_eq!(d[4], DropPreflush);
        assert_eq!(
            d[5],
            Commit {
                txn: 0,
                ordering_flush: true
            }
        );
    }

    #[test]
    fn a_fua_commit_has_no_flush_to_drop_after_it_and_the_tail_is_unfinished() {
        let fua = Event::Journal {
            commit: true,
            fua: true,
        };
        let d = decide(&[J, fua, F, J]);
        assert_eq!(d[2], Keep);
        assert_eq!(d[3], Unfinished);
        let preflushed = Event::Request {
            preflush: true,
            cached: false,
        };
        let d = decide(&[DATA, preflushed, J, fua]);
        assert_eq!(
            d[3],
            Commit {
                txn: 0,
                ordering_flush: false
            },
            "a preflush request ordered the data"
        );
    }
}
