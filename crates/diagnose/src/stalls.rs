//! Periodic stalls in a step's timeline: the sign of connections that run out and come back in
//! batches.
//!
//! A stall is a run of at least 2 buckets with at most 10% of the step's mean completions per
//! bucket, lasting at least `min_stall_s` (the caller passes 1.5× the base latency, so the gaps a
//! fixed delay leaves between synchronised waves of a pool are not taken for stalls). Stalls are
//! periodic when the gaps between their starts are regular: at least two thirds of them within
//! 30% of their median, which is the period.

use crate::points::median;
use chokepoint_result::{Span, Step, TimelinePoint};

/// Stalls found in one step.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stalls {
    /// Number of stalls.
    pub count: usize,
    /// Median gap between stall starts, seconds.
    pub period_s: f64,
    /// Median stall length, seconds.
    pub stall_s: f64,
    /// Median completions from one stall's start to the next (a burst).
    pub per_burst: f64,
    /// Each stall, from the start of the step's window.
    pub spans: Vec<Span>,
}

/// Runs of quiet buckets (at most 10% of the timeline's mean completions per bucket), at least 2
/// buckets and `min_stall_s` long, as (first bucket, length). None in an empty timeline.
pub(crate) fn quiet_runs(
    tl: &[TimelinePoint],
    bucket_s: f64,
    min_stall_s: f64,
) -> Vec<(usize, usize)> {
    let total: u64 = tl.iter().map(|p| p.completed).sum();
    let mean = total as f64 / tl.len().max(1) as f64;
    if mean <= 0.0 {
        return Vec::new();
    }
    let quiet: Vec<bool> = tl
        .iter()
        .map(|p| p.completed as f64 <= 0.1 * mean)
        .collect();
    let mut runs = Vec::new();
    let mut i = 0;
    while i < quiet.len() {
        if quiet[i] {
            let start = i;
            while i < quiet.len() && quiet[i] {
                i += 1;
            }
            let len = i - start;
            if len >= 2 && len as f64 * bucket_s >= min_stall_s {
                runs.push((start, len));
            }
        } else {
            i += 1;
        }
    }
    runs
}

/// The step's periodic stalls, if any (at least two stalls with a regular period).
pub(crate) fn find_stalls(step: &Step, min_stall_s: f64) -> Option<Stalls> {
    let bucket = step.timeline_bucket_s;
    let tl = step.whole_timeline();
    if !(bucket.is_finite() && bucket > 0.0) || tl.len() < 6 {
        return None;
    }
    let runs = quiet_runs(tl, bucket, min_stall_s);
    if runs.len() < 2 {
        return None;
    }
    let gaps: Vec<f64> = runs.windows(2).map(|w| (w[1].0 - w[0].0) as f64).collect();
    let period = median(gaps.iter().copied());
    let regular = gaps
        .iter()
        .filter(|&&g| (g - period).abs() <= 0.3 * period)
        .count();
    if (regular as f64) < (2.0 / 3.0) * gaps.len() as f64 {
        return None;
    }
    let bursts = runs.windows(2).map(|w| {
        tl[w[0].0..w[1].0]
            .iter()
            .map(|p| p.completed as f64)
            .sum::<f64>()
    });
    Some(Stalls {
        count: runs.len(),
        period_s: period * bucket,
        stall_s: median(runs.iter().map(|r| r.1 as f64)) * bucket,
        per_burst: median(bursts),
        spans: runs
            .iter()
            .map(|&(start, len)| Span {
                start_s: tl[start].t_s,
                length_s: len as f64 * bucket,
            })
            .collect(),
    })
}
