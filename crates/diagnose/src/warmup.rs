//! When a service has warmed up: the rule that tells a sweep's first step whether it measured a
//! service still warming. A JIT compiling hot paths, caches filling, pools started on demand make
//! a service's first seconds slower than the rest; a step that measures them reads a base
//! latency, stalls or a knee that belong to the warm-up (issue 22: a JVM in front of a pool of
//! 12 came out `connection-limit, stalls every 0.4 s` twice, its first step cut short on its
//! slowest seconds).
//!
//! The sweep feeds the mean latency of each interval of its first step here, and asks [`trend`]
//! until it answers. [`Trend::Level`] lets the step stand: the service was warm, and no
//! separate warm-up costs time (a warm service is the common case; a warm-up of its own cost
//! each sweep two seconds, `docs/performance.md`). [`Trend::Falling`] ends the step and throws
//! it away: the same clients then run unmeasured, the series going on, until it reads
//! [`Trend::Level`], and the first step runs again. A step that ends by itself before the rule
//! can answer (fewer than two windows) stands too: the settle rule ends a step only when the
//! mean latencies of its two halves agree within ±3% (`settle`, rule 4), the same question
//! asked of less time.
//!
//! The rule, on the intervals' mean latencies: with at least two windows of [`WINDOW`], the
//! series is still falling when the last window's mean is lower than the window's before it by
//! more than [`STILL_FALLING`] of it *and* by more than the scatter of the intervals could make
//! (1.96 standard errors of the difference of the two means, the settle rule's 95%); else it is
//! level. Why these numbers:
//! - warming up is a latency that falls and levels off (a decay, as `tests/targets/py-warmup`'s
//!   20 ms + 80 ms × e^(−t/3 s)); comparing the last window with the one before asks "is it
//!   still falling", whatever the level, so it holds for a 2 ms and a 2 s service;
//! - [`STILL_FALLING`] is 5% a window of one second: the settle rule calls a step's throughput
//!   known within ±3% (`settle`), and at one client throughput is 1 / latency, so a fall of
//!   less than that per second moves a step's reading by less than its own tolerance over the
//!   seconds a step lasts; a steady service's one-second means differ by less than 5% when
//!   each holds a few dozen requests;
//! - a window is one second of intervals with an answer: intervals with none are left out, so
//!   for a service slower than the interval a window spans more time and still holds answers;
//! - a rising latency is not a warm-up (nothing to wait for): level at once after two windows;
//! - a fall within the intervals' scatter is not one: a CPU-bound service's one-second means at
//!   one client scatter by more than 5% on a busy machine (py-cpu-gil's first step was thrown
//!   away in `bench/sweep-time.sh` without this), while a warm-up's first seconds fall by far
//!   more than their scatter (py-warmup's second second is 22% below its first).
//!
//! The sweep stops warming at its time limit whatever this says, and the finding says so
//! ([`chokepoint_result::Fact::WarmedUp`] with `settled: false`).
use std::time::Duration;

/// The length of one window the rule compares.
pub const WINDOW: Duration = Duration::from_secs(1);
/// A window whose mean latency is lower than the previous one's by more than this share is
/// still falling.
pub const STILL_FALLING: f64 = 0.05;

/// What the last two windows of a latency series say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trend {
    /// Fewer than two windows: too short to tell.
    Unknown,
    /// The last window's latency is more than [`STILL_FALLING`] below the one before: still
    /// warming up.
    Falling,
    /// Not falling (steady, rising or noise): warm.
    Level,
}

/// Samples in one [`WINDOW`] of intervals of `interval`.
fn per_window(interval: Duration) -> usize {
    let n = WINDOW.as_secs_f64() / interval.as_secs_f64().max(1e-3);
    (n.round() as usize).max(1)
}

/// The trend of a service whose intervals of `interval` had these mean latencies (ms, oldest
/// first; intervals with no answer left out).
pub fn trend(latencies_ms: &[f64], interval: Duration) -> Trend {
    let w = per_window(interval);
    if latencies_ms.len() < 2 * w {
        return Trend::Unknown;
    }
    let n = latencies_ms.len();
    let (last, before) = (&latencies_ms[n - w..], &latencies_ms[n - 2 * w..n - w]);
    let fall = mean(before) - mean(last);
    // The fall the intervals' own scatter could make: 1.96 standard errors of the difference
    // of the two means, as the settle rule's 95% interval.
    let noise = 1.96 * (variance(before) / w as f64 + variance(last) / w as f64).sqrt();
    if fall > STILL_FALLING * mean(before) && fall > noise {
        Trend::Falling
    } else {
        Trend::Level
    }
}

/// The sample variance of `window` (0 for fewer than two samples).
fn variance(window: &[f64]) -> f64 {
    if window.len() < 2 {
        return 0.0;
    }
    let m = mean(window);
    window.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (window.len() - 1) as f64
}

/// Whether the series has stopped warming up ([`Trend::Level`]).
pub fn warmed_up(latencies_ms: &[f64], interval: Duration) -> bool {
    trend(latencies_ms, interval) == Trend::Level
}

/// The mean of the first and of the last window of `latencies_ms`, ms: what the finding says
/// the latency went from and to.
pub fn first_and_last(latencies_ms: &[f64], interval: Duration) -> Option<(f64, f64)> {
    if latencies_ms.is_empty() {
        return None;
    }
    let w = per_window(interval).min(latencies_ms.len());
    Some((
        mean(&latencies_ms[..w]),
        mean(&latencies_ms[latencies_ms.len() - w..]),
    ))
}

fn mean(window: &[f64]) -> f64 {
    window.iter().sum::<f64>() / window.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sampling interval of the tables: the step's timeline bucket.
    const INTERVAL: Duration = Duration::from_millis(100);

    /// The intervals of a service whose latency is `at(t)` ms, over `seconds`.
    fn sampled(seconds: f64, at: impl Fn(f64) -> f64) -> Vec<f64> {
        let dt = INTERVAL.as_secs_f64();
        (0..(seconds / dt).round() as usize)
            .map(|i| at((i as f64 + 0.5) * dt))
            .collect()
    }

    /// The seconds of intervals the rule needs before it calls `at` warm; `None` within 60 s.
    fn warm_after(at: impl Fn(f64) -> f64) -> Option<f64> {
        let all = sampled(60.0, at);
        (1..=all.len())
            .find(|&n| warmed_up(&all[..n], INTERVAL))
            .map(|n| n as f64 * INTERVAL.as_secs_f64())
    }

    #[test]
    fn a_decaying_latency_is_warm_once_it_levels_off_whatever_its_scale() {
        // py-warmup: 20 ms + 80 ms × e^(−t/3 s). Warm once a second's fall is under 5%: at
        // t ≈ 10.5 s the latency is 22.4 ms, 12% above where it levels off (a fall of 0.8 ms
        // a second by then).
        let py_warmup = |t: f64| 20.0 + 80.0 * (-t / 3.0).exp();
        let warm = warm_after(py_warmup).expect("it levels off");
        assert!((7.0..=11.0).contains(&warm), "{warm}");
        assert!(py_warmup(warm) < 1.25 * 20.0, "{}", py_warmup(warm));
        // The same shape a hundred times slower or faster is warm at the same time.
        for scale in [0.01, 100.0] {
            let scaled = warm_after(|t| scale * py_warmup(t)).expect("it levels off");
            assert!((scaled - warm).abs() < 1e-9, "×{scale}: {scaled} vs {warm}");
        }
    }

    #[test]
    fn steady_rising_or_noisy_latencies_are_warm_after_two_windows() {
        let two_windows = 2.0 * WINDOW.as_secs_f64();
        // (why, latency at t)
        type Latency = Box<dyn Fn(f64) -> f64>;
        let table: [(&str, Latency); 3] = [
            ("steady", Box::new(|_| 50.0)),
            ("rising: a queue, not a warm-up", Box::new(|t| 50.0 + t)),
            (
                "±4% noise around a steady 50 ms",
                Box::new(|t| 50.0 * (1.0 + 0.04 * (7.0 * t).sin())),
            ),
        ];
        for (why, at) in table {
            assert_eq!(warm_after(at), Some(two_windows), "{why}");
        }
    }

    /// `at(t)` with a deterministic scatter of ±`share` (uniform) on every interval.
    fn scattered(share: f64, at: impl Fn(f64) -> f64) -> impl Fn(f64) -> f64 {
        move |t| {
            let i = (t / INTERVAL.as_secs_f64()) as u64;
            let u = ((i.wrapping_mul(2_654_435_761) >> 7) % 1000) as f64 / 999.0;
            at(t) * (1.0 + share * (2.0 * u - 1.0))
        }
    }

    #[test]
    fn a_fall_within_the_scatter_is_level_and_a_warm_up_falls_through_it() {
        // A steady 20 ms service with one slow interval (60 ms: a pause, a slow first
        // connection) in its first second: that window's mean is 20% higher, within its scatter.
        let hiccup = |t: f64| if (0.3..0.4).contains(&t) { 60.0 } else { 20.0 };
        assert_eq!(warm_after(hiccup), Some(2.0));
        for share in [0.1, 0.2] {
            // A steady 20 ms service whose intervals scatter by ±share: level at two seconds.
            let steady = scattered(share, |_| 20.0);
            assert_eq!(warm_after(&steady), Some(2.0), "±{share}");
            // py-warmup under the same scatter still falls at two seconds.
            let warming = scattered(share, |t| 20.0 + 80.0 * (-t / 3.0).exp());
            assert_eq!(
                trend(&sampled(2.0, &warming), INTERVAL),
                Trend::Falling,
                "±{share}"
            );
        }
        // Without scatter the 5% alone decides: a 6% fall is a fall, a 4% one is not.
        let step = |to: f64| move |t: f64| if t < 1.0 { 100.0 } else { to };
        assert_eq!(trend(&sampled(2.0, step(94.0)), INTERVAL), Trend::Falling);
        assert_eq!(trend(&sampled(2.0, step(96.0)), INTERVAL), Trend::Level);
    }

    #[test]
    fn a_jit_that_halves_the_latency_over_3_seconds_is_warm_about_a_window_after_that() {
        // A JIT compiling the hot path from the first requests: 40 ms falling to 20 ms over
        // the first 3 s, then steady.
        let warm =
            warm_after(|t| if t < 3.0 { 40.0 - 20.0 * t / 3.0 } else { 20.0 }).expect("warm");
        assert!((4.0..=5.0).contains(&warm), "{warm}");
        assert!(!warmed_up(&[], INTERVAL), "nothing measured is not warm");
    }

    #[test]
    fn a_first_step_is_thrown_away_only_while_the_latency_falls() {
        // What the first step's check reads at two seconds, the first moment it can tell.
        let at_two_seconds = |at: &dyn Fn(f64) -> f64| trend(&sampled(2.0, at), INTERVAL);
        let jit = |t: f64| if t < 3.0 { 40.0 - 20.0 * t / 3.0 } else { 20.0 };
        assert_eq!(at_two_seconds(&jit), Trend::Falling);
        assert_eq!(
            at_two_seconds(&|t| 20.0 + 80.0 * (-t / 3.0).exp()),
            Trend::Falling
        );
        assert_eq!(at_two_seconds(&|_| 50.0), Trend::Level);
        assert_eq!(trend(&sampled(1.9, jit), INTERVAL), Trend::Unknown);
        // The windows are one second whatever the interval: the same series sampled every
        // 250 ms reads the same.
        let coarse: Vec<f64> = (0..8).map(|i| jit((f64::from(i) + 0.5) * 0.25)).collect();
        assert_eq!(trend(&coarse, Duration::from_millis(250)), Trend::Falling);
    }

    #[test]
    fn the_first_and_last_windows_are_what_the_finding_tells() {
        let all = sampled(4.0, |t| if t < 1.0 { 100.0 } else { 25.0 });
        assert_eq!(first_and_last(&all, INTERVAL), Some((100.0, 25.0)));
        assert_eq!(first_and_last(&[], INTERVAL), None);
    }
}
