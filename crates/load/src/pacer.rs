//! The open model's schedule as a pure function: given the time since the start and the hits
//! already taken, how long to wait before the next one, or whether to stop (vegeta's pacer).
//!
//! Hit `i` (counting from 0) is due at `i / rate` seconds: the first one at once. A hit is due
//! whatever the service does; a worker that picks a hit up after its due time sends at once and
//! the lateness shows in the corrected latency (wrk2).
use std::time::Duration;

/// A constant arrival rate, optionally bounded by a window length and a hit count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pacer {
    /// Hits per second (> 0).
    pub rate: f64,
    /// No hit is due at or after this offset from the start.
    pub duration: Option<Duration>,
    /// At most this many hits.
    pub hits: Option<u64>,
}

/// What to do about the next hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// Wait this long, then send (zero: send now, it is due or late).
    Wait(Duration),
    /// The schedule is over: send nothing more.
    Stop,
}

impl Pacer {
    /// The offset from the start at which hit number `hit` (from 0) is due.
    pub fn due(&self, hit: u64) -> Duration {
        Duration::from_secs_f64(hit as f64 / self.rate)
    }

    /// Given `elapsed` since the start and `hits` already taken, when the next hit goes out.
    pub fn pace(&self, elapsed: Duration, hits: u64) -> Pace {
        if self.hits.is_some_and(|limit| hits >= limit) {
            return Pace::Stop;
        }
        let due = self.due(hits);
        if self.duration.is_some_and(|window| due >= window) {
            return Pace::Stop;
        }
        Pace::Wait(due.saturating_sub(elapsed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);
    const S: Duration = Duration::from_secs(1);

    #[test]
    fn constant_pacer_table() {
        let per_second = |rate| Pacer {
            rate,
            duration: Some(10 * S),
            hits: None,
        };
        #[rustfmt::skip]
        let table: &[(Pacer, Duration, u64, Pace)] = &[
            // 1 hit/s, nothing sent, 0 s elapsed => the first hit is due now
            (per_second(1.0), Duration::ZERO, 0, Pace::Wait(Duration::ZERO)),
            // 1 hit/s, 1 hit sent, 0 s elapsed => 1 s until the next hit
            (per_second(1.0), Duration::ZERO, 1, Pace::Wait(S)),
            // 1 hit/s, 1 hit sent, 500 ms elapsed => 500 ms until the next hit
            (per_second(1.0), 500 * MS, 1, Pace::Wait(500 * MS)),
            // 1 hit/s, 2 hits sent, 1 s elapsed => 1 s until the next hit
            (per_second(1.0), S, 2, Pace::Wait(S)),
            // 1 hit/s, 1 hit sent, 3 s elapsed => behind schedule: send now
            (per_second(1.0), 3 * S, 1, Pace::Wait(Duration::ZERO)),
            // 2 hits/s, 3 hits sent, 1 s elapsed => hit 3 is due at 1.5 s: 500 ms
            (per_second(2.0), S, 3, Pace::Wait(500 * MS)),
            // 1000 hits/s, 10 hits sent, 5 ms elapsed => hit 10 due at 10 ms: 5 ms
            (per_second(1000.0), 5 * MS, 10, Pace::Wait(5 * MS)),
            // 0.5 hits/s, 1 hit sent, 0 s elapsed => 2 s until the next hit
            (per_second(0.5), Duration::ZERO, 1, Pace::Wait(2 * S)),
            // 1 hit/s for 10 s, 10 hits sent => hit 10 would be due at 10 s, outside: stop
            (per_second(1.0), 9 * S, 10, Pace::Stop),
            // 1 hit/s for 10 s, 9 hits sent, 12 s elapsed => hit 9 (due 9 s) is late: send now
            (per_second(1.0), 12 * S, 9, Pace::Wait(Duration::ZERO)),
            // at most 3 hits, 3 sent => stop, even with time left
            (Pacer { rate: 1.0, duration: None, hits: Some(3) }, Duration::ZERO, 3, Pace::Stop),
            // at most 3 hits, 2 sent, no window => 2 s until hit 2
            (Pacer { rate: 1.0, duration: None, hits: Some(3) }, Duration::ZERO, 2, Pace::Wait(2 * S)),
        ];
        for (row, (pacer, elapsed, hits, want)) in table.iter().enumerate() {
            assert_eq!(
                pacer.pace(*elapsed, *hits),
                *want,
                "row {row}: {pacer:?}, {elapsed:?} elapsed, {hits} hits"
            );
        }
    }

    #[test]
    fn hits_over_a_window_match_the_rate() {
        let pacer = Pacer {
            rate: 250.0,
            duration: Some(4 * S),
            hits: None,
        };
        let scheduled = (0..).take_while(|&i| pacer.pace(Duration::ZERO, i) != Pace::Stop);
        assert_eq!(scheduled.count(), 1000);
    }
}
