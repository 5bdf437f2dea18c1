//! The kernel's coarse clock, which file timestamps come from.

use std::time::{Duration, Instant};

fn coarse_now() -> rustix::time::Timespec {
    rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse)
}

/// Sleep until `CLOCK_REALTIME_COARSE` has moved (one kernel tick: 4 ms at HZ=250): on a
/// filesystem that keeps timestamps to the nanosecond and updates them at each write (ext4,
/// xfs, btrfs, tmpfs; not under `lazytime`, nor where the granularity is coarser than a tick), a
/// write after this returns `true` gives its file new timestamps, whatever wrote before it.
/// Checks every half millisecond; `false` if the clock did not move within a second.
pub fn wait_for_coarse_tick() -> bool {
    let start = coarse_now();
    let deadline = Instant::now() + Duration::from_secs(1);
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_micros(500));
        if coarse_now() != start {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_coarse_clock_has_moved_when_the_wait_returns() {
        let before = coarse_now();
        assert!(
            wait_for_coarse_tick(),
            "the coarse clock did not move in a second"
        );
        assert_ne!(coarse_now(), before);
    }
}
