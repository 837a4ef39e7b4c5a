//! Steps merged into one point per client count, and the analysis both the diagnosis and the
//! adaptive search share: base latency, efficiency against the ideal line, and the knee.
//!
//! Steps may come in any order and with repeats; a repeated client count becomes one point whose
//! numbers are the medians of its steps, so one noisy repeat cannot move a finding. Every number
//! is finite and non-negative: a step with 0 requests has 0 throughput and 0 latency.

use chokepoint_result::{ErrorCounts, Step};

/// Efficiency below which throughput no longer follows clients.
pub(crate) const KNEE_EFFICIENCY: f64 = 0.9;

/// One client count of a sweep, its repeats merged.
#[derive(Debug, Clone)]
pub(crate) struct Point<'a> {
    pub clients: u32,
    /// Successful requests per second.
    pub ok_x: f64,
    /// Completed requests per second (ok and errors).
    pub x: f64,
    /// Mean latency of successful requests (of all requests when none succeeded), ms.
    pub ok_mean_ms: f64,
    /// Median latency of successful requests (of all when none succeeded), ms.
    pub ok_p50_ms: f64,
    /// Mean latency of all requests, ms.
    pub mean_ms: f64,
    pub error_rate: f64,
    pub requests: f64,
    pub generator_cpu: f64,
    pub target_cpu: Option<f64>,
    /// The whole machine's CPU, percent of all cores.
    pub machine_cpu: Option<f64>,
    pub inflight_max: Option<f64>,
    pub inflight_mean: Option<f64>,
    /// Downstream requests during the step.
    pub ds_requests: Option<f64>,
    pub ds_max_connections: Option<f64>,
    /// The steps merged into this point, in the order given.
    pub steps: Vec<&'a Step>,
}

/// Requests in service at once by Little's law: throughput (per second) × mean latency (ms).
pub(crate) fn in_service(x_rps: f64, mean_ms: f64) -> f64 {
    x_rps * mean_ms / 1000.0
}

impl Point<'_> {
    /// Downstream calls per target request, when the mock saw the step and requests completed.
    pub fn calls_per_request(&self) -> Option<f64> {
        match self.ds_requests {
            Some(ds) if self.requests > 0.0 => Some(ds / self.requests),
            _ => None,
        }
    }

    /// Whether the target made one downstream call per request, when the mock saw the step:
    /// the calls per request within 0.8–1.25, or the calls and the requests apart by no more
    /// than the calls in flight at once. The step counts requests answered in its window and
    /// the mock counts calls begun in the same window, so each end of the window can hold up
    /// to the calls in flight that one counts and the other does not: a 2 s step over a 500 ms
    /// call counts 3 waves of answers and, by a race with the window's start, 3 or 4 waves of
    /// calls (1.0 or 1.33 per request). A second call per request adds a whole request's
    /// worth, more than the calls in flight once a step holds a few rounds of them.
    pub fn one_call(&self) -> Option<bool> {
        let (ds, calls) = (self.ds_requests?, self.calls_per_request()?);
        let in_flight = self.inflight_max.unwrap_or(0.0);
        Some((0.8..=1.25).contains(&calls) || (ds - self.requests).abs() <= in_flight)
    }
}

/// A finite, non-negative value (0 otherwise).
pub(crate) fn clean(v: f64) -> f64 {
    if v.is_finite() && v > 0.0 {
        v
    } else {
        0.0
    }
}

/// The median of the finite values, 0 when there are none ([`chokepoint_result::median`]).
pub(crate) fn median(values: impl IntoIterator<Item = f64>) -> f64 {
    chokepoint_result::median(values).unwrap_or(0.0)
}

fn median_opt<'a>(steps: &[&'a Step], f: impl Fn(&'a Step) -> Option<f64>) -> Option<f64> {
    let values: Vec<f64> = steps.iter().filter_map(|s| f(s)).map(clean).collect();
    (!values.is_empty()).then(|| median(values))
}

/// Groups steps by client count (steps with 0 clients are ignored), sorted by clients.
pub(crate) fn points(steps: &[Step]) -> Vec<Point<'_>> {
    let mut counts: Vec<u32> = steps.iter().map(|s| s.clients).filter(|&c| c > 0).collect();
    counts.sort_unstable();
    counts.dedup();
    counts
        .into_iter()
        .map(|clients| {
            let group: Vec<&Step> = steps.iter().filter(|s| s.clients == clients).collect();
            let ok_latency = |s: &Step| s.ok_latency_ms.unwrap_or(s.latency_ms);
            Point {
                clients,
                ok_x: median(group.iter().map(|s| clean(s.ok_throughput_rps))),
                x: median(group.iter().map(|s| clean(s.throughput_rps))),
                ok_mean_ms: median(group.iter().map(|s| clean(ok_latency(s).mean))),
                ok_p50_ms: median(group.iter().map(|s| clean(ok_latency(s).p50))),
                mean_ms: median(group.iter().map(|s| clean(s.latency_ms.mean))),
                error_rate: median(group.iter().map(|s| step_error_rate(s))),
                requests: median(group.iter().map(|s| s.requests as f64)),
                generator_cpu: median(group.iter().map(|s| clean(s.generator_cpu_pct))),
                target_cpu: median_opt(&group, |s| s.target_cpu_pct),
                machine_cpu: median_opt(&group, |s| s.machine_contended_cpu_pct()),
                inflight_max: median_opt(&group, |s| s.downstream_inflight.map(|d| d.max as f64)),
                inflight_mean: median_opt(&group, |s| s.downstream_inflight.map(|d| d.mean)),
                ds_requests: median_opt(&group, |s| {
                    s.downstream.as_ref().map(|d| d.requests as f64)
                }),
                ds_max_connections: median_opt(&group, |s| {
                    s.downstream.as_ref().map(|d| d.max_connections_open as f64)
                }),
                steps: group,
            }
        })
        .collect()
}

/// The step's error rate, recomputed from its counts when they are there (the stored rate may be
/// missing in hand-made tables), clamped to 0..=1.
pub(crate) fn step_error_rate(s: &Step) -> f64 {
    let errors: u64 = s.errors.values().sum();
    let rate = if s.requests > 0 && errors > 0 {
        errors as f64 / s.requests as f64
    } else {
        s.error_rate
    };
    clean(rate).min(1.0)
}

/// Base latency and efficiencies of a sweep's points.
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    /// The base latency L0 in ms (0 when unknown).
    pub base_ms: f64,
    /// True when the fewest-clients step was already queued and L0 was taken as the known
    /// downstream delay.
    pub base_from_delay: bool,
    /// Efficiency e(c) = X(c) / (c / L0) per point.
    pub efficiency: Vec<f64>,
    /// Index of the knee: the first point from which every point is below [`KNEE_EFFICIENCY`].
    pub knee: Option<usize>,
    /// Points whose throughput fell short while the mock saw every client's call in flight at
    /// once: no pool smaller than the clients can do that, so the shortfall is noise (a paused
    /// machine) and the point counts as following clients.
    pub all_in_flight: Vec<usize>,
}

/// Base latency L0 = the lowest ok mean latency of the two smallest client counts (so a cold
/// first step cannot lower the ideal line); when the fewest-clients step has more than one
/// client, a known downstream delay `delay_ms`, and a latency above 1.5× that delay, that step
/// was already queued and L0 is the delay itself.
pub(crate) fn shape(points: &[Point<'_>], delay_ms: Option<f64>) -> Shape {
    shape_with(points, delay_ms, true)
}

/// [`shape`], where a step the mock saw all in flight counts as following clients only when
/// `all_in_flight_follows` (a pool that gives every call a thread lets them all through while
/// its threads wait for the CPU: see `crate::growing`).
pub(crate) fn shape_with(
    points: &[Point<'_>],
    delay_ms: Option<f64>,
    all_in_flight_follows: bool,
) -> Shape {
    let mut base_ms = points
        .iter()
        .take(2)
        .map(|p| p.ok_mean_ms)
        .filter(|&l| l > 0.0)
        .fold(f64::INFINITY, f64::min);
    if !base_ms.is_finite() {
        base_ms = 0.0;
    }
    let mut base_from_delay = false;
    if let (Some(first), Some(d)) = (points.first(), delay_ms) {
        let single_call = first.one_call().unwrap_or(true);
        if first.clients > 1 && d > 0.0 && single_call && (base_ms > 1.5 * d || base_ms == 0.0) {
            base_ms = d;
            base_from_delay = true;
        }
    }
    let efficiency: Vec<f64> = points
        .iter()
        .map(|p| {
            if base_ms > 0.0 {
                p.ok_x * base_ms / 1000.0 / p.clients as f64
            } else if p.ok_x > 0.0 {
                1.0
            } else {
                0.0
            }
        })
        .collect();
    let mut efficiency = efficiency;
    let mut all_in_flight = Vec::new();
    for (i, p) in points.iter().enumerate() {
        let one_call = p.one_call().unwrap_or(false);
        if all_in_flight_follows
            && efficiency[i] < KNEE_EFFICIENCY
            && one_call
            && p.clients > 1
            && p.inflight_max.is_some_and(|m| m >= p.clients as f64)
        {
            efficiency[i] = KNEE_EFFICIENCY;
            all_in_flight.push(i);
        }
    }
    let knee =
        (0..efficiency.len()).find(|&i| efficiency[i..].iter().all(|&e| e < KNEE_EFFICIENCY));
    Shape {
        base_ms,
        base_from_delay,
        efficiency,
        knee,
        all_in_flight,
    }
}

/// Errors of all the steps of a point, summed by kind.
pub(crate) fn error_counts(p: &Point<'_>) -> ErrorCounts {
    let mut counts = ErrorCounts::new();
    for s in &p.steps {
        for (kind, n) in &s.errors {
            *counts.entry(kind.clone()).or_default() += n;
        }
    }
    counts
}
