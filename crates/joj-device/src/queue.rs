//! The device's command queue (eMMC 5.1 CMDQ): when a host command arrives and when it starts,
//! given who issued it and what is in flight; and the two resources every command holds in
//! turn, the controller and the host bus. Rules and sources: `docs/device-model.md`, "Command
//! queue".
//!
//! [`admit`] is the policy, a pure function. [`CommandQueue`] keeps the state it needs: each
//! issuer's readiness, the completion times of the tasks in flight, the last arrival and start
//! (commands arrive and start in the order the host gives them), the last barrier's completion.
//!
//! What stays true: starts never go backwards (so a power cut at or after the last start is
//! after every command's start); with depth 1 and one issuer a command starts exactly when the
//! previous one completed, with controller and bus free — the device without a queue.

/// Most tasks an eMMC queue holds (JESD84-B51: `CMDQ_DEPTH` is five bits, plus one).
pub const MAX_QUEUE_DEPTH: u32 = 32;

/// How a command stands in the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandKind {
    /// A queued task (read, write — FUA and reliable included —, transactional commands):
    /// starts once a task slot is free.
    Queued,
    /// A barrier (flush, discard): starts once every task in flight completed, and every
    /// later command arrives after it completes.
    Barrier,
}

/// The start time of a command that arrives at `arrival_ns` (rules 2 and 3): not before
/// `after_ns` (the previous command's start), and for a queued task once fewer than `depth`
/// of the tasks in flight (their completion times in `inflight_done`) are still running, for a
/// barrier once all of them completed.
pub fn admit(
    arrival_ns: u64,
    after_ns: u64,
    inflight_done: &[u64],
    depth: usize,
    kind: CommandKind,
) -> u64 {
    let t = arrival_ns.max(after_ns);
    match kind {
        CommandKind::Barrier => inflight_done.iter().copied().fold(t, u64::max),
        CommandKind::Queued => {
            let depth = depth.max(1);
            if inflight_done.iter().filter(|&&d| d > t).count() < depth {
                return t;
            }
            let mut running: Vec<u64> = inflight_done.iter().copied().filter(|&d| d > t).collect();
            running.sort_unstable();
            // `len - depth + 1` of them must have completed: the earliest instant that holds.
            running[running.len() - depth]
        }
    }
}

/// When a command arrived and when it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admitted {
    pub arrival_ns: u64,
    pub start_ns: u64,
}

/// When a command arrived, started and completed (the last one's, for callers that time each
/// request: a replay).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CommandTimes {
    pub arrival_ns: u64,
    pub start_ns: u64,
    pub done_ns: u64,
}

/// The queue of one device.
#[derive(Debug, Clone)]
pub struct CommandQueue {
    depth: usize,
    /// When each issuer may issue its next command (its last command's completion): a few
    /// threads, looked up on every command.
    ready: Vec<(u32, u64)>,
    issuer: u32,
    /// Arrival of the next command, when the host says (a replay that knows it).
    explicit_ns: Option<u64>,
    /// No command arrives before this (`advance_to`, the device's power-on).
    floor_ns: u64,
    last_arrival_ns: u64,
    last_start_ns: u64,
    /// Completion times of tasks that started and may still be running.
    inflight: Vec<u64>,
    barrier_done_ns: u64,
    controller_free_ns: u64,
    bus_free_ns: u64,
}

impl CommandQueue {
    /// An empty queue of `depth` tasks (at least 1) whose first command arrives no earlier
    /// than `now_ns`.
    pub fn new(depth: u32, now_ns: u64) -> CommandQueue {
        CommandQueue {
            depth: depth.clamp(1, MAX_QUEUE_DEPTH) as usize,
            ready: Vec::new(),
            issuer: 0,
            explicit_ns: None,
            floor_ns: now_ns,
            last_arrival_ns: now_ns,
            last_start_ns: now_ns,
            inflight: Vec::new(),
            barrier_done_ns: now_ns,
            controller_free_ns: now_ns,
            bus_free_ns: now_ns,
        }
    }

    pub fn depth(&self) -> u32 {
        self.depth as u32
    }

    /// The next commands come from `issuer` (a host thread): each arrives when that issuer's
    /// previous command completed.
    pub fn set_issuer(&mut self, issuer: u32) {
        self.issuer = issuer;
    }

    /// The next command arrives at `t_ns` (or as soon after as rule 1 allows), whoever issued
    /// it: a replay that knows what the request waited for.
    pub fn arrive_at(&mut self, t_ns: u64) {
        self.explicit_ns = Some(t_ns);
    }

    /// No command arrives before `t_ns` (host idle time).
    pub fn hold_until(&mut self, t_ns: u64) {
        self.floor_ns = self.floor_ns.max(t_ns);
    }

    /// When `issuer` may issue its next command: its last command's completion, not before the
    /// floor.
    pub fn ready_ns(&self, issuer: u32) -> u64 {
        self.ready_of(issuer).max(self.floor_ns)
    }

    fn ready_of(&self, issuer: u32) -> u64 {
        self.ready
            .iter()
            .find(|(i, _)| *i == issuer)
            .map_or(0, |&(_, t)| t)
    }

    /// When the next command arrives (rule 1).
    pub fn next_arrival_ns(&self) -> u64 {
        let own = match self.explicit_ns {
            Some(t) => t,
            None => self.ready_of(self.issuer),
        };
        own.max(self.floor_ns)
            .max(self.last_arrival_ns)
            .max(self.barrier_done_ns)
    }

    /// Admit the next command: its arrival and start.
    pub fn begin(&mut self, kind: CommandKind) -> Admitted {
        let arrival_ns = self.next_arrival_ns();
        let start_ns = admit(
            arrival_ns,
            self.last_start_ns,
            &self.inflight,
            self.depth,
            kind,
        );
        self.explicit_ns = None;
        self.last_arrival_ns = arrival_ns;
        self.last_start_ns = start_ns;
        // Tasks done by now can hold no later command back: starts never go backwards.
        self.inflight.retain(|&d| d > start_ns);
        Admitted {
            arrival_ns,
            start_ns,
        }
    }

    /// The command's firmware work: the controller serves one command at a time. Returns when
    /// `overhead_ns` of it, begun no earlier than `t_ns`, is done.
    pub fn controller(&mut self, t_ns: u64, overhead_ns: u64) -> u64 {
        let end = t_ns.max(self.controller_free_ns) + overhead_ns;
        self.controller_free_ns = end;
        end
    }

    /// A data transfer of `xfer_ns` on the host bus, begun no earlier than `t_ns`; returns its
    /// end.
    pub fn bus(&mut self, t_ns: u64, xfer_ns: u64) -> u64 {
        let end = t_ns.max(self.bus_free_ns) + xfer_ns;
        self.bus_free_ns = end;
        end
    }

    /// The admitted command of `kind` completed at `done_ns`: its issuer may go on, it no
    /// longer holds a task slot after then, and after a barrier every command waits for it.
    pub fn end(&mut self, kind: CommandKind, done_ns: u64) {
        self.inflight.push(done_ns);
        match self.ready.iter_mut().find(|(i, _)| *i == self.issuer) {
            Some(r) => r.1 = done_ns,
            None => self.ready.push((self.issuer, done_ns)),
        }
        if kind == CommandKind::Barrier {
            self.barrier_done_ns = self.barrier_done_ns.max(done_ns);
        }
    }

    /// When the last command started.
    pub fn last_start_ns(&self) -> u64 {
        self.last_start_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use CommandKind::{Barrier, Queued};

    #[test]
    fn a_task_waits_for_a_free_slot_and_a_barrier_for_all() {
        // Two tasks running until 10 and 20.
        let running = [10, 20];
        assert_eq!(admit(5, 0, &running, 1, Queued), 20);
        assert_eq!(admit(5, 0, &running, 2, Queued), 10);
        assert_eq!(admit(5, 0, &running, 3, Queued), 5);
        assert_eq!(admit(5, 0, &running, 32, Barrier), 20);
        // Finished tasks hold nothing; starts keep their order.
        assert_eq!(admit(25, 0, &running, 1, Queued), 25);
        assert_eq!(admit(5, 7, &[], 4, Queued), 7);
    }

    #[test]
    fn depth_one_and_one_issuer_is_one_command_after_the_other() {
        let mut q = CommandQueue::new(1, 0);
        let a = q.begin(Queued);
        assert_eq!(a.start_ns, 0);
        let t = q.controller(a.start_ns, 30);
        let t = q.bus(t, 20);
        q.end(Queued, t + 100);
        let b = q.begin(Queued);
        assert_eq!((b.arrival_ns, b.start_ns), (150, 150));
        assert_eq!(q.controller(b.start_ns, 30), 180, "controller free again");
    }

    #[test]
    fn two_issuers_overlap_up_to_the_depth() {
        for (depth, second_start) in [(1u32, 1_000u64), (2, 0)] {
            let mut q = CommandQueue::new(depth, 0);
            q.set_issuer(1);
            let a = q.begin(Queued);
            q.end(Queued, 1_000);
            q.set_issuer(2);
            let b = q.begin(Queued);
            assert_eq!(b.arrival_ns, a.arrival_ns, "issuer 2 was ready at once");
            assert_eq!(b.start_ns, second_start, "depth {depth}");
        }
    }

    #[test]
    fn commands_after_a_barrier_arrive_after_it_completes() {
        let mut q = CommandQueue::new(32, 0);
        q.set_issuer(1);
        q.begin(Barrier);
        q.end(Barrier, 500);
        q.set_issuer(2);
        assert_eq!(q.begin(Queued).arrival_ns, 500);
    }
}
