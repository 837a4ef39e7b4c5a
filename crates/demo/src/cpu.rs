//! Real CPU work for `/cpu` (seed 003): spin on integer arithmetic until the calling thread has
//! used a given amount of CPU time.
//!
//! The budget is counted in the thread's own CPU time (`CLOCK_THREAD_CPUTIME_ID`), not wall
//! time, so every request costs the same CPU however many others compete for the cores: with
//! `cpu_ms` per request the service tops out near `cores × 1000 / cpu_ms` requests per second,
//! and beyond that latency grows while throughput stays flat, the cpu-bound signature.
use std::hint::black_box;
use std::time::Duration;

/// CPU time the calling thread has used so far.
pub fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec we pass, which lives on our stack.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        now.tv_sec.max(0) as u64,
        now.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// Burns `budget` of the calling thread's CPU time and returns a checksum of the work (so the
/// optimiser cannot remove it).
pub fn burn(budget: Duration) -> u64 {
    let start = thread_cpu_time();
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    loop {
        // A few microseconds of work between clock reads keeps the clock's cost negligible.
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
        }
        state = black_box(state);
        let used = thread_cpu_time().saturating_sub(start);
        if used >= budget || (used.is_zero() && thread_cpu_time().is_zero()) {
            return state;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burns_at_least_the_budget_of_thread_cpu_time() {
        let before = thread_cpu_time();
        burn(Duration::from_millis(20));
        let used = thread_cpu_time() - before;
        assert!(used >= Duration::from_millis(20), "used {used:?}");
    }

    #[test]
    fn thread_cpu_time_ignores_sleep() {
        let before = thread_cpu_time();
        std::thread::sleep(Duration::from_millis(50));
        let used = thread_cpu_time() - before;
        assert!(used < Duration::from_millis(25), "sleeping used {used:?}");
    }
}
