//! What a sweep reports while it runs: a [`SweepEvent`] when a step starts, with each of the load
//! engine's intervals of the step (about every 100 ms), and when the step has ended. The sweep
//! only sends typed figures; a front end renders them (the binary's live line per step).

use chokepoint_diagnose::what_if::{Emulation, Refusal};
use chokepoint_result::{SpanFigures, Step, Warmup};
use std::time::Duration;

/// What [`crate::sweep`] tells its caller as it goes.
#[derive(Debug, Clone, Copy)]
pub enum SweepEvent<'a> {
    /// A step under way.
    Progress(StepProgress),
    /// A step has ended and is in the result (and saved, when the sweep saves).
    Step(&'a Step),
    /// The warm-up before the first step is under way: its clients, its time so far, and the
    /// mean latency of its last interval (none before the first answer).
    WarmingUp {
        /// The first step's clients.
        clients: u32,
        /// Time since it began.
        elapsed: Duration,
        /// The last interval's mean latency, ms.
        latency_ms: Option<f64>,
    },
    /// The warm-up has ended.
    WarmedUp(&'a Warmup),
    /// The what-if's emulation begins: the mock's delay scaled, the clients to run.
    Emulating(&'a Emulation),
    /// An emulated step has ended (it is not among the sweep's steps).
    EmulatedStep(&'a Step),
    /// The what-if has nothing to predict (the pool found is already that size, ...).
    WhatIfRefused(Refusal),
}

/// A step under way: its clients, where it is, and the measured window so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepProgress {
    /// The step's clients.
    pub clients: u32,
    /// `None` while the clients ramp up (until each has had its first answer: nothing is
    /// measured yet); then everything measured since the step's window began.
    pub so_far: Option<SpanFigures>,
    /// The longest the step measures (`--step`).
    pub ceiling: Duration,
    /// The step may end before its ceiling, once its figures are known well enough (a settling
    /// step); a fixed step always measures the whole ceiling.
    pub may_end_early: bool,
}

impl StepProgress {
    /// Time measured so far (zero during the ramp).
    pub fn elapsed(&self) -> Duration {
        self.so_far.map_or(Duration::ZERO, |s| {
            Duration::from_secs_f64(s.elapsed_s.max(0.0))
        })
    }

    /// Time left until the ceiling: exactly what is left of a fixed step, the most that is left
    /// of one that may end early.
    pub fn left(&self) -> Duration {
        self.ceiling.saturating_sub(self.elapsed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(elapsed_s: f64, ceiling_s: u64) -> StepProgress {
        StepProgress {
            clients: 20,
            so_far: Some(SpanFigures {
                elapsed_s,
                ..SpanFigures::default()
            }),
            ceiling: Duration::from_secs(ceiling_s),
            may_end_early: true,
        }
    }

    #[test]
    fn time_left_counts_down_to_the_ceiling_and_stops_at_zero() {
        // (measured so far in s, ceiling in s, left in ms)
        let table = [
            (0.0, 10, 10_000), // the window just began
            (1.8, 10, 8_200),  // the example of the issue: "≤ 8.2 s left"
            (9.95, 10, 50),    // the last interval
            (10.3, 10, 0),     // the last partial interval can pass the ceiling
        ];
        for (elapsed_s, ceiling_s, left_ms) in table {
            let progress = at(elapsed_s, ceiling_s);
            assert_eq!(
                progress.left().as_millis(),
                left_ms,
                "{elapsed_s} s of {ceiling_s} s"
            );
        }
    }

    #[test]
    fn during_the_ramp_nothing_is_measured_and_the_whole_step_is_left() {
        let ramp = StepProgress {
            so_far: None,
            ..at(0.0, 3)
        };
        assert_eq!(ramp.elapsed(), Duration::ZERO);
        assert_eq!(ramp.left(), Duration::from_secs(3));
    }
}
