//! When a step knows enough: the rule that ends a sweep step early, pure over the timeline the
//! step has measured so far.
//!
//! The sweep asks [`assess`] after every timeline bucket; the step goes on until it says
//! [`Settling::Settled`] or `--step` (the ceiling) runs out. A step is settled when all of these
//! hold:
//!
//! 1. **Floor.** At least [`SettleRule::floor_s`] measured and [`SettleRule::min_per_client`]
//!    completions per client: a stall of seed 001 (connections handed back every 0.5 s) has had
//!    time to show, and every client has cycled a few times.
//! 2. **No stall.** No run of quiet buckets (the diagnosis' stall definition,
//!    `stalls::quiet_runs`): a stalling step is measured to its ceiling, because its stalls are
//!    the evidence and their period needs the whole window.
//! 3. **A narrow confidence interval.** The step's throughput is estimated per batch of
//!    [`SettleRule::batch_s`] through the response-time law of a closed loop, X = clients ÷ mean
//!    latency, and the 95% confidence interval of the mean over the batches (Student's t) is
//!    within ±[`SettleRule::max_half_width`] of it. Counting completions per 100 ms bucket would be
//!    the obvious estimator, but it carries an edge error of up to one completion per client per
//!    bucket: one client at 55 ms completes 1 or 2 requests a bucket for reasons of phase alone
//!    (`tests/data/demo-run-1/actors.json`), a spread of about 28% a bucket that only many
//!    seconds of buckets average away. The mean latency has no such error.
//! 4. **No drift.** The mean latencies of the first and second half differ by no more than
//!    ±[`SettleRule::max_half_width`], or by no more than twice the interval's half-width: a
//!    service still warming up is measured on.
//! 5. **The counted figure agrees.** The throughput the step reports is completions ÷ window,
//!    whose edge error shrinks only with time: with clients whose phases are independent it is
//!    about 1.96 · L / (T · √(6c)) at 95%, so the window must be long enough for that to be
//!    within the same ±3%.
//!
//! A step where more than [`SettleRule::error_share`] of the completions failed (a server that
//! sheds, or callers that time out) is judged on its *successful* throughput, the figure the
//! diagnosis reads there: counted per batch (the law would read the mix of fast errors and slow
//! successes, which swings from batch to batch), with the same interval and a drift check on
//! the halves' successful throughput. The batches' counts carry their own edge error, so the
//! interval covers rule 5.
//!
//! The rule holds for the closed model only (the sweep's); an open-model run has no clients whose
//! cycle the law could read.
use crate::stalls::quiet_runs;
use chokepoint_result::TimelinePoint;

/// The thresholds of the stopping rule (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SettleRule {
    /// Shortest measured time before a step may end early, seconds.
    pub floor_s: f64,
    /// Fewest completions per client before a step may end early.
    pub min_per_client: f64,
    /// Largest relative half-width of the throughput's 95% confidence interval (0.03 = ±3%).
    pub max_half_width: f64,
    /// Length of one batch of the batch means, seconds (rounded up to whole buckets).
    pub batch_s: f64,
    /// Fewest batches the interval is computed over.
    pub min_batches: usize,
    /// Share of failed completions above which the successful throughput is judged (the
    /// diagnosis' error-bound share).
    pub error_share: f64,
}

impl Default for SettleRule {
    fn default() -> Self {
        SettleRule {
            floor_s: 1.5,
            min_per_client: 3.0,
            max_half_width: 0.03,
            batch_s: 0.2,
            min_batches: 4,
            error_share: 0.05,
        }
    }
}

/// Why a step goes on, or the figures with which it settled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Settling {
    /// Below the floor: too short, or too few completions per client.
    Floor,
    /// The timeline stalled: the step runs to its ceiling.
    Stalling,
    /// The interval is still wider than the rule allows (relative half-width).
    Wide {
        /// The relative half-width now (0.05 = ±5%).
        half_width: f64,
    },
    /// The second half's latency moved away from the first's.
    Drifting {
        /// Relative change of the mean latency, second half against first (+0.1 = 10% slower).
        change: f64,
    },
    /// The counted throughput's edge error is still wider than the rule allows.
    EdgeError {
        /// The relative edge error now.
        edge: f64,
    },
    /// Known well enough.
    Settled {
        /// Throughput by the response-time law, requests per second.
        throughput_rps: f64,
        /// The relative half-width of its 95% confidence interval.
        half_width: f64,
    },
}

impl Settling {
    /// Whether the step may end now.
    pub fn is_settled(&self) -> bool {
        matches!(self, Settling::Settled { .. })
    }
}

/// Judges the timeline a step with `clients` closed-loop clients has measured so far (buckets of
/// `bucket_s` seconds from the start of the measured window; a partial last bucket should be left
/// out by the caller).
pub fn assess(
    timeline: &[TimelinePoint],
    bucket_s: f64,
    clients: u32,
    rule: &SettleRule,
) -> Settling {
    let c = f64::from(clients.max(1));
    let measured_s = timeline.len() as f64 * bucket_s;
    let completed: u64 = timeline.iter().map(|p| p.completed).sum();
    if bucket_s.is_nan()
        || bucket_s <= 0.0
        || measured_s < rule.floor_s
        || (completed as f64) < rule.min_per_client * c
    {
        return Settling::Floor;
    }
    let mean_ms = mean_latency_ms(timeline);
    if mean_ms <= 0.0 {
        return Settling::Floor;
    }
    // As in the diagnosis, a stall outlasts 1.5 request latencies, so the gaps between the waves
    // of a pool with a fixed delay are not stalls; the fastest bucket stands for that latency
    // (a stalling step's mean includes the waits of the stalls).
    let fastest_ms = timeline
        .iter()
        .filter(|p| p.completed > 0 && p.mean_latency_ms > 0.0)
        .map(|p| p.mean_latency_ms)
        .fold(f64::INFINITY, f64::min);
    if !quiet_runs(timeline, bucket_s, 1.5 * fastest_ms / 1000.0).is_empty() {
        return Settling::Stalling;
    }
    let per_batch = ((rule.batch_s / bucket_s).round() as usize).max(1);
    let ok: u64 = timeline.iter().map(|p| p.ok.min(p.completed)).sum();
    if (completed - ok) as f64 > rule.error_share * completed as f64 {
        return assess_successes(timeline, bucket_s, per_batch, rule);
    }
    let batches: Vec<f64> = timeline
        .chunks_exact(per_batch)
        .map(mean_latency_ms)
        .filter(|&ms| ms > 0.0)
        .map(|ms| c / (ms / 1000.0))
        .collect();
    let (first, second) = timeline.split_at(timeline.len() / 2);
    let (first_ms, second_ms) = (mean_latency_ms(first), mean_latency_ms(second));
    let change = if first_ms > 0.0 {
        second_ms / first_ms - 1.0
    } else {
        0.0
    };
    let (x, half_width) = match interval_and_drift(&batches, change, rule) {
        Ok(known) => known,
        Err(not_yet) => return not_yet,
    };
    let edge = 1.96 * (mean_ms / 1000.0) / (measured_s * (6.0 * c).sqrt());
    if edge > rule.max_half_width {
        return Settling::EdgeError { edge };
    }
    Settling::Settled {
        throughput_rps: x,
        half_width,
    }
}

/// Rules 3 and 4 over the throughput of each batch and the change of latency between the
/// step's halves: the mean throughput and its relative half-width, or why the step goes on.
fn interval_and_drift(
    batches: &[f64],
    change: f64,
    rule: &SettleRule,
) -> Result<(f64, f64), Settling> {
    if batches.len() < rule.min_batches.max(2) {
        return Err(Settling::Floor);
    }
    let (x, half) = mean_and_half_width(batches);
    if x <= 0.0 {
        return Err(Settling::Floor);
    }
    let half_width = half / x;
    if half_width > rule.max_half_width {
        return Err(Settling::Wide { half_width });
    }
    if change.abs() > rule.max_half_width && change.abs() > 2.0 * half_width {
        return Err(Settling::Drifting { change });
    }
    Ok((x, half_width))
}

/// Rules 3 and 4 on the successful throughput counted per batch, for a step with errors.
fn assess_successes(
    timeline: &[TimelinePoint],
    bucket_s: f64,
    per_batch: usize,
    rule: &SettleRule,
) -> Settling {
    let rate = |buckets: &[TimelinePoint]| {
        let ok: u64 = buckets.iter().map(|p| p.ok.min(p.completed)).sum();
        ok as f64 / (buckets.len() as f64 * bucket_s)
    };
    let batches: Vec<f64> = timeline.chunks_exact(per_batch).map(rate).collect();
    let (first, second) = timeline.split_at(timeline.len() / 2);
    let (first_x, second_x) = (rate(first), rate(second));
    // As a change of latency: successes that came faster are a latency that fell.
    let change = if second_x > 0.0 {
        first_x / second_x - 1.0
    } else {
        0.0
    };
    let (x, half_width) = match interval_and_drift(&batches, change, rule) {
        Ok(known) => known,
        Err(not_yet) => return not_yet,
    };
    Settling::Settled {
        throughput_rps: x,
        half_width,
    }
}

/// Mean latency of the completions of some buckets, weighted by their counts (0 when none).
fn mean_latency_ms(buckets: &[TimelinePoint]) -> f64 {
    let n: u64 = buckets.iter().map(|p| p.completed).sum();
    if n == 0 {
        return 0.0;
    }
    let sum: f64 = buckets
        .iter()
        .map(|p| p.completed as f64 * p.mean_latency_ms)
        .sum();
    sum / n as f64
}

/// The mean of `values` and the half-width of its 95% confidence interval (Student's t).
fn mean_and_half_width(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, t_975(values.len() - 1) * (var / n).sqrt())
}

/// The 97.5th percentile of Student's t with `df` degrees of freedom (two-sided 95%), from the
/// standard table; 1.96 past 30.
fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        _ => 1.96,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeline(buckets: &[(u64, f64)]) -> Vec<TimelinePoint> {
        buckets
            .iter()
            .enumerate()
            .map(|(i, &(completed, mean_latency_ms))| TimelinePoint {
                t_s: i as f64 * 0.1,
                completed,
                ok: completed,
                mean_latency_ms,
                in_flight: 0,
            })
            .collect()
    }

    #[test]
    fn t_table_ends_at_the_normal_quantile() {
        assert_eq!(t_975(0), f64::INFINITY);
        assert_eq!(t_975(3), 3.182);
        assert_eq!(t_975(30), 2.042);
        assert_eq!(t_975(31), 1.96);
    }

    #[test]
    fn below_the_floor_a_step_goes_on() {
        let rule = SettleRule::default();
        // 1.4 s of a steady 8-client step: too short.
        let tl = timeline(&[(80, 100.0); 14]);
        assert_eq!(assess(&tl, 0.1, 8, &rule), Settling::Floor);
        // 2 s, but 1 s latency: fewer than 3 completions per client.
        let tl = timeline(&[(2, 1000.0); 20]);
        assert_eq!(assess(&tl, 0.1, 20, &rule), Settling::Floor);
    }

    #[test]
    fn a_steady_step_settles_at_the_floor() {
        let tl = timeline(&[(80, 100.0); 15]);
        match assess(&tl, 0.1, 8, &SettleRule::default()) {
            Settling::Settled {
                throughput_rps,
                half_width,
            } => {
                assert!((throughput_rps - 80.0).abs() < 1e-9, "{throughput_rps}");
                assert_eq!(half_width, 0.0);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_gap_of_quiet_buckets_longer_than_the_latency_is_a_stall() {
        let mut buckets = vec![(40, 50.0); 20];
        buckets[8] = (0, 0.0);
        buckets[9] = (0, 0.0);
        assert_eq!(
            assess(&timeline(&buckets), 0.1, 2, &SettleRule::default()),
            Settling::Stalling
        );
    }

    #[test]
    fn a_latency_that_keeps_falling_is_drift() {
        // Warming up: latency falls from 130 to 100 ms over 2 s, in small steps.
        let buckets: Vec<(u64, f64)> = (0..20).map(|i| (20, 130.0 - 1.5 * i as f64)).collect();
        let verdict = assess(&timeline(&buckets), 0.1, 2, &SettleRule::default());
        assert!(
            matches!(verdict, Settling::Drifting { change } if change < -0.1)
                || matches!(verdict, Settling::Wide { .. }),
            "{verdict:?}"
        );
    }

    fn with_errors(buckets: &[(u64, u64, f64)]) -> Vec<TimelinePoint> {
        buckets
            .iter()
            .enumerate()
            .map(|(i, &(completed, ok, mean_latency_ms))| TimelinePoint {
                t_s: i as f64 * 0.1,
                completed,
                ok,
                mean_latency_ms,
                in_flight: 0,
            })
            .collect()
    }

    #[test]
    fn a_shedding_step_is_judged_on_its_successes() {
        // 32 clients against 30 permits held 100 ms: 30 successes a bucket, and a mix of fast
        // 503s that swings (40 to 400 a bucket): the law over the mix is wide, the successes
        // are not.
        let buckets: Vec<(u64, u64, f64)> = (0..20)
            .map(|i| {
                let errors = if i % 2 == 0 { 40 } else { 400 };
                let mean = (30.0 * 100.0 + errors as f64 * 1.0) / (30 + errors) as f64;
                (30 + errors, 30, mean)
            })
            .collect();
        match assess(&with_errors(&buckets), 0.1, 32, &SettleRule::default()) {
            Settling::Settled { throughput_rps, .. } => {
                assert!((throughput_rps - 300.0).abs() < 1e-9, "{throughput_rps}")
            }
            other => panic!("{other:?}"),
        }
        // The same successes falling by a third in the second second: drift, measured on.
        let falling: Vec<(u64, u64, f64)> = buckets
            .iter()
            .enumerate()
            .map(|(i, &(c, ok, ms))| {
                if i >= 10 {
                    (c - 10, ok - 10, ms)
                } else {
                    (c, ok, ms)
                }
            })
            .collect();
        let verdict = assess(&with_errors(&falling), 0.1, 32, &SettleRule::default());
        assert!(
            matches!(verdict, Settling::Drifting { .. } | Settling::Wide { .. }),
            "{verdict:?}"
        );
    }

    #[test]
    fn one_client_needs_time_for_the_counted_figure_to_agree() {
        // 1 client at 100 ms: the law's interval is narrow at once, the edge error is not.
        let tl = timeline(&[(1, 100.0); 15]);
        assert!(matches!(
            assess(&tl, 0.1, 1, &SettleRule::default()),
            Settling::EdgeError { .. }
        ));
        let tl = timeline(&[(1, 100.0); 30]);
        assert!(assess(&tl, 0.1, 1, &SettleRule::default()).is_settled());
    }
}
