//! Which tasks a syscall trace records: the command's, by a filter on each event's
//! `common_pid` that joj rewrites as tasks come and go, not by the instance's `set_event_pid`.
//!
//! Why not `set_event_pid`: with a process filter set, the kernel hooks every context switch and
//! wake-up of every task on the machine (`sched_switch`, `sched_wakeup`) to decide whether the
//! CPU's next events are to be recorded, and a sync sleeps and wakes several times. Measured
//! here (2026-11-30, docs/measurement.md, "Truncates without a stop, and the process filter"):
//! the filter alone, with no event enabled, made a 4 KiB write and `fdatasync` 5.5 µs slower
//! (27.3 → 32.8 µs), as much as the block events. An event filter costs nothing at a switch;
//! it is checked when an event of the enabled calls is about to be recorded.
//!
//! The price is that the kernel no longer adds a child as it forks (`event-fork`): joj adds
//! each new task itself ([`PidFilter::add`]) while ptrace holds it at its first stop, before it
//! has run a single instruction of its own — so none of its calls is missed — and removes each
//! as it is reaped (its id may name another process later). A rewrite is some 45 small writes,
//! and every task waits for joj meanwhile: about 2 ms on this kernel (6.18), but before Linux's
//! fix of June 2025 ("tracing: Fix regression of filter waiting a long time on RCU
//! synchronization") each write waited for an RCU grace period. So the run is handed to the
//! kernel's `set_event_pid` with `event-fork` for good — the filter list stays short and the
//! rewrites stop — when the command has more than [`LISTED_AT_MOST`] live tasks (a build, a
//! server's pool), when it has made [`REWRITES_AT_MOST`] rewrites (a script starting process
//! after process), or when one rewrite took longer than [`REWRITE_SLOW`] (such a kernel). A SQLite
//! app of a few tasks keeps the cheaper filter for its whole run.
//!
//! What this filter leaves out that `event-fork` saw: a child made with `CLONE_UNTRACED`, which
//! ptrace does not follow either. Other processes' calls of the enabled kinds are now checked
//! against the list as they are recorded and dropped, where the process filter dropped them at
//! once; their cost moves from every context switch to those calls.
//!
//! Invariant: from [`PidFilter::add`] of a task until its removal, every enabled event of the
//! task is recorded; an event's own condition (the `fcntl` commands kept) is kept in front.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::tracefs::TraceError;

/// Live tasks listed in the event filters at most; beyond, the kernel's process filter.
pub const LISTED_AT_MOST: usize = 32;
/// Rewrites of the filters at most (each task costs two: added, then reaped).
pub const REWRITES_AT_MOST: u32 = 64;
/// A rewrite slower than this hands the run to the kernel's process filter at once.
pub const REWRITE_SLOW: std::time::Duration = std::time::Duration::from_millis(20);

/// The filters of one syscall trace instance's events, kept to the command's tasks.
#[derive(Debug, Clone)]
pub struct PidFilter {
    instance: PathBuf,
    /// Each enabled event's `filter` file, relative to the instance, and the condition of its
    /// own that the task list is joined to.
    events: Vec<(PathBuf, Option<&'static str>)>,
    pids: BTreeSet<i32>,
    /// Rewrites made.
    rewrites: u32,
    /// Handed to `set_event_pid` (too many tasks to list, too many rewrites, or a slow one).
    by_kernel: bool,
}

impl PidFilter {
    pub(crate) fn new(instance: PathBuf, events: Vec<(PathBuf, Option<&'static str>)>) -> Self {
        PidFilter {
            instance,
            events,
            pids: BTreeSet::new(),
            rewrites: 0,
            by_kernel: false,
        }
    }

    /// Record task `pid`'s events from now on. Call it while the task is held (stopped at its
    /// exec or its first stop), before it runs.
    pub fn add(&mut self, pid: i32) -> Result<(), TraceError> {
        if self.by_kernel {
            // event-fork added it at its fork, its parent being listed — unless the fork came
            // while joj's own write of the list was replacing it (the kernel copies the list,
            // then publishes the copy): said again here, before the task runs.
            return self.write("set_event_pid", &pid.to_string(), true);
        }
        if !self.pids.insert(pid) {
            return Ok(());
        }
        self.rewrite()
    }

    /// Task `pid` is reaped: its id may name another process from now on.
    pub fn remove(&mut self, pid: i32) -> Result<(), TraceError> {
        if self.by_kernel || !self.pids.remove(&pid) {
            return Ok(());
        }
        self.rewrite()
    }

    /// How many rewrites were made (tasks added and removed while listed).
    pub fn rewrites(&self) -> u32 {
        self.rewrites
    }

    /// Whether the kernel's process filter took over (more than [`LISTED_AT_MOST`] tasks).
    pub fn by_kernel(&self) -> bool {
        self.by_kernel
    }

    /// The condition for the listed tasks; one that holds for no event when none is (writing
    /// `0` would clear the filter: every task).
    fn listed(&self) -> String {
        if self.pids.is_empty() {
            return "common_pid == 0 && common_pid != 0".into();
        }
        let any: Vec<String> = self
            .pids
            .iter()
            .map(|p| format!("common_pid == {p}"))
            .collect();
        any.join(" || ")
    }

    /// The list written to every event, or the run handed to the kernel (see the module
    /// header).
    fn rewrite(&mut self) -> Result<(), TraceError> {
        // No task left: nothing is recorded (an empty `set_event_pid` would record every task
        // of the machine).
        let over = self.pids.len() > LISTED_AT_MOST || self.rewrites >= REWRITES_AT_MOST;
        if over && !self.pids.is_empty() {
            return self.hand_to_kernel();
        }
        self.rewrites += 1;
        let began = std::time::Instant::now();
        let listed = self.listed();
        for (file, own) in &self.events {
            let f = match own {
                Some(c) => format!("({c}) && ({listed})"),
                None => listed.clone(),
            };
            self.write_path(file, &f, false)?;
        }
        if began.elapsed() > REWRITE_SLOW {
            return self.hand_to_kernel();
        }
        Ok(())
    }

    /// Every listed task to `set_event_pid` (whose children the kernel adds as they fork), then
    /// each event back to its own condition. Both filters hold meanwhile: nothing is lost.
    fn hand_to_kernel(&mut self) -> Result<(), TraceError> {
        self.write("options/event-fork", "1", false)?;
        let all: Vec<String> = self.pids.iter().map(i32::to_string).collect();
        self.write("set_event_pid", &all.join(" "), false)?;
        self.by_kernel = true;
        for (file, own) in &self.events {
            self.write_path(file, own.unwrap_or("0"), false)?;
        }
        Ok(())
    }

    fn write(&self, file: &str, value: &str, append: bool) -> Result<(), TraceError> {
        self.write_path(&PathBuf::from(file), value, append)
    }

    fn write_path(
        &self,
        file: &std::path::Path,
        value: &str,
        append: bool,
    ) -> Result<(), TraceError> {
        use std::io::Write;
        let path = self.instance.join(file);
        let err = |source| TraceError::Write {
            path: path.clone(),
            value: value.into(),
            source,
        };
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .append(append)
            .truncate(!append)
            .open(&path)
            .map_err(err)?;
        f.write_all(value.as_bytes()).map_err(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(dir: &std::path::Path) -> PidFilter {
        std::fs::create_dir_all(dir.join("events/a")).unwrap();
        std::fs::create_dir_all(dir.join("events/b")).unwrap();
        std::fs::create_dir_all(dir.join("options")).unwrap();
        // tracefs's files exist; joj never creates one.
        for f in [
            "events/a/filter",
            "events/b/filter",
            "options/event-fork",
            "set_event_pid",
        ] {
            std::fs::write(dir.join(f), "").unwrap();
        }
        PidFilter::new(
            dir.to_path_buf(),
            vec![
                (PathBuf::from("events/a/filter"), None),
                (PathBuf::from("events/b/filter"), Some("cmd == 0")),
            ],
        )
    }

    fn read(dir: &std::path::Path, f: &str) -> String {
        std::fs::read_to_string(dir.join(f)).unwrap()
    }

    #[test]
    fn each_event_lists_the_live_tasks_after_its_own_condition() {
        let d = tempfile::tempdir().unwrap();
        let mut f = filter(d.path());
        f.add(10).unwrap();
        f.add(12).unwrap();
        assert_eq!(
            read(d.path(), "events/a/filter"),
            "common_pid == 10 || common_pid == 12"
        );
        assert_eq!(
            read(d.path(), "events/b/filter"),
            "(cmd == 0) && (common_pid == 10 || common_pid == 12)"
        );
        f.remove(10).unwrap();
        f.remove(99).unwrap();
        assert_eq!(read(d.path(), "events/a/filter"), "common_pid == 12");
        f.remove(12).unwrap();
        // No task: no event (an empty list must not mean every task).
        assert_eq!(
            read(d.path(), "events/a/filter"),
            "common_pid == 0 && common_pid != 0"
        );
        assert!(!f.by_kernel());
    }

    #[test]
    fn beyond_the_bound_the_kernel_follows_the_tasks() {
        let d = tempfile::tempdir().unwrap();
        let mut f = filter(d.path());
        for pid in 1..=LISTED_AT_MOST as i32 {
            f.add(pid).unwrap();
        }
        assert!(!f.by_kernel());
        f.add(1000).unwrap();
        assert!(f.by_kernel());
        let listed: Vec<i32> = read(d.path(), "set_event_pid")
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect();
        assert_eq!(listed.len(), LISTED_AT_MOST + 1);
        assert!(listed.contains(&1000));
        assert_eq!(read(d.path(), "options/event-fork"), "1");
        assert_eq!(read(d.path(), "events/a/filter"), "0");
        assert_eq!(read(d.path(), "events/b/filter"), "cmd == 0");
        // From now on the kernel keeps the list: a new task is appended, a reaped one left to
        // the kernel.
        f.add(2000).unwrap();
        f.remove(1).unwrap();
        assert!(read(d.path(), "set_event_pid").ends_with("2000"));
    }

    #[test]
    fn short_lived_tasks_one_after_another_are_handed_to_the_kernel_after_a_bound_of_rewrites() {
        let d = tempfile::tempdir().unwrap();
        let mut f = filter(d.path());
        f.add(1).unwrap();
        let mut pid = 100;
        while !f.by_kernel() {
            f.add(pid).unwrap();
            f.remove(pid).unwrap();
            pid += 1;
            assert!(pid < 200, "never handed over");
        }
        assert_eq!(f.rewrites(), REWRITES_AT_MOST);
        // The live task only; the reaped ones are not the kernel's to follow.
        assert_eq!(read(d.path(), "set_event_pid"), "1");
    }

    #[test]
    fn with_no_task_left_nothing_is_recorded_even_past_the_bound() {
        let d = tempfile::tempdir().unwrap();
        let mut f = filter(d.path());
        f.add(1).unwrap();
        f.rewrites = REWRITES_AT_MOST;
        f.remove(1).unwrap();
        assert!(!f.by_kernel());
        assert_eq!(read(d.path(), "set_event_pid"), "");
        assert_eq!(
            read(d.path(), "events/a/filter"),
            "common_pid == 0 && common_pid != 0"
        );
    }
}
