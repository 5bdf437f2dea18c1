//! The kernel's coarse clock, which file timestamps come from.

use std::time::Duration;

fn coarse_now() -> rustix::time::Timespec {
    rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse)
}

/// Sleep until `CLOCK_REALTIME_COARSE` has moved (one kernel tick: 4 ms at HZ=250): a write
/// after this return gives its file new timestamps, whatever wrote before it. Checks every
/// half millisecond; returns after at most a second even on a clock that never moves.
pub fn wait_for_coarse_tick() {
    let start = coarse_now();
    for _ in 0..2000 {
        std::thread::sleep(Duration::from_micros(500));
        let now = coarse_now();
        if (now.tv_sec, now.tv_nsec) != (start.tv_sec, start.tv_nsec) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_coarse_clock_has_moved_when_the_wait_returns() {
        let before = coarse_now();
        wait_for_coarse_tick();
        let after = coarse_now();
        assert!(
            (after.tv_sec, after.tv_nsec) > (before.tv_sec, before.tv_nsec),
            "{before:?} then {after:?}"
        );
    }
}
