//! What overload does to the service: the steps past the knee, classified, and the peak.
//!
//! Reads the points of a sweep (see [`crate::points`]) and the knee; writes an [`Overload`]:
//!
//! 1. **Errors.** When more than [`ERROR_SHARE`] of the requests failed at the largest step, the
//!    service answers excess load with errors. Their latency (the median over the failing steps
//!    past the knee of each step's median error latency) says how: below [`FAST_SHARE`] of the
//!    base latency it **sheds** (refuses before doing the work); otherwise it **times out**, and
//!    that latency is the wait the callers were allowed. (Results written before error latency
//!    was recorded skip this rule.)
//! 2. **Collapse.** Otherwise, when the last two steps both sit past the peak and below
//!    [`HELD_SHARE`] of its successful throughput (falling), and the last one below
//!    [`COLLAPSE_SHARE`] of it, the service **collapses**: more clients cost throughput. The
//!    figure is the fall at the largest step. (A fall at the largest step alone is not enough:
//!    one noisy step can do it; the adaptive search then runs one step between the peak and it.)
//! 3. **Queue.** Otherwise throughput held and the clients waited: it **queues**, and the figures
//!    are the latency at the knee and at the largest step.
//!
//! Nothing is said with fewer than two steps from the knee on.

use crate::points::{median, points, shape, Point};
use chokepoint_result::{Overload, Peak, Step, SweepContext};
use std::collections::BTreeMap;

/// Share of failed requests above which a step's errors count (the diagnosis's error-bound
/// rate).
const ERROR_SHARE: f64 = 0.05;
/// Errors faster than this share of the base latency were refused before the work was done.
const FAST_SHARE: f64 = 0.5;
/// A step past the peak below this share of it has started to fall.
const HELD_SHARE: f64 = 0.95;
/// Throughput below this share of the peak at the largest step is a collapse.
const COLLAPSE_SHARE: f64 = 0.8;

/// What overload does to the service, from a sweep's steps; `None` without a knee or with fewer
/// than two steps from it on.
pub fn overload(steps: &[Step], ctx: &SweepContext) -> Option<Overload> {
    let pts = points(steps);
    let sh = shape(&pts, ctx.downstream_delay_ms);
    classify(&pts, sh.knee?, sh.base_ms)
}

/// The step with the most successful throughput (the fewest clients among equals).
pub fn peak(steps: &[Step]) -> Option<Peak> {
    peak_of(&points(steps))
}

/// Contention's size: the concurrency of peak throughput, the USL's when its fit has one, else
/// the clients of the peak step.
pub(crate) fn contention_size(
    usl: Option<chokepoint_result::UslFit>,
    peak: Option<&Peak>,
) -> Option<f64> {
    usl.and_then(|u| u.n_max)
        .or(peak.map(|p| f64::from(p.clients)))
        .filter(|l| l.is_finite())
}

pub(crate) fn peak_of(pts: &[Point<'_>]) -> Option<Peak> {
    let best = pts
        .iter()
        .reduce(|best, p| if p.ok_x > best.ok_x { p } else { best })?;
    Some(Peak {
        clients: best.clients,
        throughput_rps: best.ok_x,
    })
}

/// The classification of the module documentation, over points sorted by clients, the index of
/// the knee and the base latency in ms.
pub(crate) fn classify(pts: &[Point<'_>], knee: usize, base_ms: f64) -> Option<Overload> {
    let past_knee = pts.get(knee..).filter(|past| past.len() >= 2)?;
    let (knee_point, largest) = (past_knee.first()?, past_knee.last()?);
    if largest.error_rate > ERROR_SHARE {
        if let Some(errors) = errors_past_knee(past_knee, largest, base_ms) {
            return Some(errors);
        }
    }
    let peak = peak_of(pts)?;
    if fell(pts, &peak) && fall_confirmed(pts, &peak) {
        return Some(Overload::Collapses {
            peak,
            at_clients: largest.clients,
            throughput_rps: largest.ok_x,
            fall: 1.0 - largest.ok_x / peak.throughput_rps,
        });
    }
    Some(Overload::Queues {
        from_clients: knee_point.clients,
        to_clients: largest.clients,
        throughput_rps: largest.ok_x,
        from_latency_ms: knee_point.ok_mean_ms,
        to_latency_ms: largest.ok_mean_ms,
    })
}

/// Whether the largest step fell below [`COLLAPSE_SHARE`] of an earlier peak.
fn fell(pts: &[Point<'_>], peak: &Peak) -> bool {
    pts.last().is_some_and(|largest| {
        peak.clients < largest.clients && largest.ok_x < COLLAPSE_SHARE * peak.throughput_rps
    })
}

/// Whether the step before the largest, past the peak too, is below [`HELD_SHARE`] of it: a fall
/// seen at two steps, not one noisy step.
fn fall_confirmed(pts: &[Point<'_>], peak: &Peak) -> bool {
    pts.len() >= 2 && {
        let before_largest = &pts[pts.len() - 2];
        peak.clients < before_largest.clients
            && before_largest.ok_x < HELD_SHARE * peak.throughput_rps
    }
}

/// When the largest step fell from the peak and the step before it does not confirm the fall:
/// the peak's and the largest step's client counts. One step between them tells a collapse
/// from a noisy step (the adaptive search runs it).
pub(crate) fn fall_to_confirm(pts: &[Point<'_>]) -> Option<(u32, u32)> {
    let peak = peak_of(pts)?;
    let largest = pts.last()?;
    (fell(pts, &peak) && !fall_confirmed(pts, &peak)).then_some((peak.clients, largest.clients))
}

/// Sheds or times out, from the failing steps past the knee; `None` when their error latency
/// was not recorded.
fn errors_past_knee(
    past_knee: &[Point<'_>],
    largest: &Point<'_>,
    base_ms: f64,
) -> Option<Overload> {
    let failing: Vec<&Point<'_>> = past_knee
        .iter()
        .filter(|p| p.error_rate > ERROR_SHARE)
        .collect();
    let latencies: Vec<f64> = failing.iter().filter_map(|p| error_p50_ms(p)).collect();
    if latencies.is_empty() {
        return None;
    }
    let error_ms = median(latencies);
    let from_clients = failing.first()?.clients;
    let error_kind = most_common_error(&failing);
    Some(if error_ms < FAST_SHARE * base_ms {
        Overload::Sheds {
            from_clients,
            at_clients: largest.clients,
            error_rate: largest.error_rate,
            error_latency_ms: error_ms,
            error_kind,
        }
    } else {
        Overload::TimesOut {
            from_clients,
            at_clients: largest.clients,
            error_rate: largest.error_rate,
            wait_ms: error_ms,
            error_kind,
        }
    })
}

/// A point's median error latency (median over its steps that recorded one), ms.
fn error_p50_ms(p: &Point<'_>) -> Option<f64> {
    let values: Vec<f64> = p
        .steps
        .iter()
        .filter_map(|s| s.error_latency_ms.map(|l| l.p50))
        .collect();
    (!values.is_empty()).then(|| median(values))
}

/// The error kind with the most failures over the points' steps (`other` when none is named).
fn most_common_error(points: &[&Point<'_>]) -> String {
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for step in points.iter().flat_map(|p| &p.steps) {
        for (kind, n) in &step.errors {
            *counts.entry(kind.as_str()).or_default() += n;
        }
    }
    counts
        .into_iter()
        .max_by_key(|&(_, n)| n)
        .map_or_else(|| "other".to_string(), |(kind, _)| kind.to_string())
}
