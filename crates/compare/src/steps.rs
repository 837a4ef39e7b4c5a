//! The figures of matching steps, and of the plateau: samples out of the recorded runs, into the
//! tests, and the verdict out of the test's result.
//!
//! Data flows: two sweeps' steps → [`match_steps`] (client counts both measured) → per pair,
//! [`compare_reports`]: the per-bucket successful rate of each timeline → [`rank::rank_test`];
//! the successful requests' HdrHistogram → [`Distribution`] → [`bootstrap::quantile_shift`] for
//! p50 and p99 → [`verdict`] turns a test's interval into `Better`/`Worse`/`NoDifference` (a
//! change under the floor (`min_change`, a share of the figure) is no difference, however sure the test).
use crate::bootstrap::{self, Distribution};
use crate::rank::{self, Interval};
use crate::{Figure, FigureName, FindingRead, Method, NoCall, StepComparison, Verdict};
use chokepoint_result::{LoadReport, Step, SweepResult};
use std::collections::BTreeMap;

/// The steps of two sweeps paired by client count.
#[derive(Debug)]
pub struct Matched<'a> {
    /// (before, after) at each client count both measured, by increasing clients.
    pub pairs: Vec<(&'a Step, &'a Step)>,
    /// Client counts only before measured.
    pub only_before: Vec<u32>,
    /// Client counts only after measured.
    pub only_after: Vec<u32>,
}

/// Pairs the steps by client count; a count run twice in one sweep is its last run.
pub fn match_steps<'a>(before: &'a [Step], after: &'a [Step]) -> Matched<'a> {
    let by_clients = |steps: &'a [Step]| -> BTreeMap<u32, &'a Step> {
        steps.iter().map(|s| (s.clients, s)).collect()
    };
    let (b, a) = (by_clients(before), by_clients(after));
    Matched {
        pairs: b
            .iter()
            .filter_map(|(c, sb)| a.get(c).map(|sa| (*sb, *sa)))
            .collect(),
        only_before: b.keys().filter(|c| !a.contains_key(c)).copied().collect(),
        only_after: a.keys().filter(|c| !b.contains_key(c)).copied().collect(),
    }
}

/// The successful requests per second of each whole bucket of a run's timeline.
pub fn throughput_samples(load: &LoadReport) -> Vec<f64> {
    if load.timeline_bucket_s <= 0.0 {
        return Vec::new();
    }
    load.whole_timeline()
        .iter()
        .map(|p| p.ok as f64 / load.timeline_bucket_s)
        .collect()
}

/// The successful requests' latencies (ms), from the run's exact histogram.
fn ok_latencies(load: &LoadReport) -> Result<Distribution, NoCall> {
    let encoded = load.histograms.as_ref().ok_or(NoCall::NoHistograms)?;
    let histogram = chokepoint_load::hdr::decode(&encoded.ok).map_err(|_| NoCall::NoHistograms)?;
    Ok(Distribution::from_counts(histogram.iter_recorded().map(
        |v| {
            (
                v.value_iterated_to() as f64 / 1000.0,
                v.count_since_last_iteration(),
            )
        },
    )))
}

/// The verdict on a tested change of figure `name`, whose value before was `before`: better or
/// worse when `significant` and the interval leaves zero out (both must agree) and the change is
/// at least `min_change` (a share: 0.05 is 5 %) of `before` (when known); else no difference.
pub fn verdict(
    name: FigureName,
    change: &Interval,
    significant: bool,
    before: Option<f64>,
    min_change: f64,
) -> (Verdict, Option<NoCall>) {
    if !significant || change.holds_zero() {
        return (Verdict::NoDifference, Some(NoCall::WithinChance));
    }
    if let Some(b) = before.filter(|b| *b > 0.0) {
        if change.estimate.abs() < min_change * b {
            return (Verdict::NoDifference, Some(NoCall::Small));
        }
    }
    let up = change.low > 0.0;
    if up == name.higher_is_better() {
        (Verdict::Better, None)
    } else {
        (Verdict::Worse, None)
    }
}

/// A figure tested with the rank test on `before`/`after` samples; a change under `min_change`
/// of the figure before is no difference.
pub fn rank_figure(
    name: FigureName,
    values: (Option<f64>, Option<f64>),
    before: &[f64],
    after: &[f64],
    min_change: f64,
) -> Figure {
    let test = rank::rank_test(before, after);
    let (verdict, no_call) = match &test {
        Some(t) => verdict(
            name,
            &t.shift,
            t.p_value < crate::ALPHA,
            values.0,
            min_change,
        ),
        None => (Verdict::NoDifference, Some(NoCall::TooFewSamples)),
    };
    Figure {
        name,
        before: values.0,
        after: values.1,
        change: test.map(|t| t.shift),
        p_value: test.map(|t| t.p_value),
        samples_before: before.len() as u64,
        samples_after: after.len() as u64,
        method: Method::RankTest,
        verdict,
        no_call,
    }
}

/// A latency percentile (`q`) tested with the bootstrap; `fallback` are the reports' own
/// percentiles, shown when a side kept no histogram.
fn percentile_figure(
    name: FigureName,
    q: f64,
    before: &Result<Distribution, NoCall>,
    after: &Result<Distribution, NoCall>,
    fallback: (f64, f64),
    seed: u64,
    min_change: f64,
) -> Figure {
    let value = |d: &Result<Distribution, NoCall>, fallback: f64| match d {
        Ok(d) => d.quantile(q),
        Err(_) => (fallback > 0.0).then_some(fallback),
    };
    let samples = |d: &Result<Distribution, NoCall>| d.as_ref().map_or(0, Distribution::len);
    let (change, verdict, no_call) = match (before, after) {
        (Ok(b), Ok(a)) => match bootstrap::quantile_shift(b, a, q, seed) {
            Some(change) => {
                let (v, why) = verdict(name, &change, true, b.quantile(q), min_change);
                (Some(change), v, why)
            }
            None => (None, Verdict::NoDifference, Some(NoCall::TooFewSamples)),
        },
        _ => (None, Verdict::NoDifference, Some(NoCall::NoHistograms)),
    };
    Figure {
        name,
        before: value(before, fallback.0),
        after: value(after, fallback.1),
        change,
        p_value: None,
        samples_before: samples(before),
        samples_after: samples(after),
        method: Method::Bootstrap,
        verdict,
        no_call,
    }
}

/// Throughput, p50 and p99 of two runs at (usually) the same client count.
pub fn compare_reports(before: &LoadReport, after: &LoadReport, min_change: f64) -> StepComparison {
    let (lb, la) = (ok_latencies(before), ok_latencies(after));
    let fallback = |l: &LoadReport, pick: fn(&chokepoint_result::LatencyMs) -> f64| {
        l.ok_latency_ms.as_ref().map_or(0.0, pick)
    };
    let seed = u64::from(before.clients) << 8;
    StepComparison {
        clients: before.clients,
        clients_after: after.clients,
        throughput: rank_figure(
            FigureName::Throughput,
            (
                Some(before.ok_throughput_rps),
                Some(after.ok_throughput_rps),
            ),
            &throughput_samples(before),
            &throughput_samples(after),
            min_change,
        ),
        p50: percentile_figure(
            FigureName::P50,
            0.5,
            &lb,
            &la,
            (fallback(before, |l| l.p50), fallback(after, |l| l.p50)),
            seed | 50,
            min_change,
        ),
        p99: percentile_figure(
            FigureName::P99,
            0.99,
            &lb,
            &la,
            (fallback(before, |l| l.p99), fallback(after, |l| l.p99)),
            seed | 99,
            min_change,
        ),
    }
}

/// The steps a side's plateau stands on, and its throughput: the diagnosis's plateau, or the
/// step with the most successful throughput where it found none.
pub fn plateau_steps<'a>(
    sweep: &'a SweepResult,
    finding: Option<&FindingRead>,
) -> (Vec<&'a Step>, Option<f64>) {
    if let Some(f) = finding.filter(|f| f.plateau_rps.is_some()) {
        let steps: Vec<&Step> = sweep
            .steps
            .iter()
            .filter(|s| f.plateau_clients.contains(&s.clients))
            .collect();
        if !steps.is_empty() {
            return (steps, f.plateau_rps);
        }
    }
    let best = sweep
        .steps
        .iter()
        .max_by(|a, b| a.ok_throughput_rps.total_cmp(&b.ok_throughput_rps));
    (
        best.into_iter().collect(),
        best.map(|s| s.ok_throughput_rps),
    )
}

/// The plateau's figure: the buckets of its steps pooled on each side, rank-tested.
pub fn compare_plateaus(
    before: &SweepResult,
    finding_before: Option<&FindingRead>,
    after: &SweepResult,
    finding_after: Option<&FindingRead>,
    min_change: f64,
) -> (Figure, Vec<u32>, Vec<u32>) {
    let (steps_b, value_b) = plateau_steps(before, finding_before);
    let (steps_a, value_a) = plateau_steps(after, finding_after);
    let pooled = |steps: &[&Step]| -> Vec<f64> {
        steps
            .iter()
            .flat_map(|s| throughput_samples(&s.load))
            .collect()
    };
    let clients = |steps: &[&Step]| steps.iter().map(|s| s.clients).collect();
    (
        rank_figure(
            FigureName::Plateau,
            (value_b, value_a),
            &pooled(&steps_b),
            &pooled(&steps_a),
            min_change,
        ),
        clients(&steps_b),
        clients(&steps_a),
    )
}
