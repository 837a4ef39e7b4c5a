//! The adaptive search for the knee: which client count to run next, pure over the steps so far.
//!
//! 1. Start at 1 client; double while throughput keeps following clients (efficiency ≥ 0.9),
//!    or grow four-fold when the largest step (past the first) kept the base latency within 5%
//!    ([`CLEAN`]) without errors: far from any limit the counts between tell nothing new, and
//!    each step costs seconds. Latency, not counted throughput, decides: in a closed loop they
//!    say the same (X = clients / latency), but a short step's count is off by up to one
//!    request per client (1 client at 100 ms counts 9 or 10 in a second), its latency is not.
//! 2. Once a step falls below, bisect between the last good and the first bad count: at most
//!    [`MAX_NARROWING`] extra steps, and only while the interval is wider than 2 clients and
//!    than 10% of the estimated limit (plateau throughput × base latency).
//!    Skipped when a step past the knee already says the size: the mock saw a flat ceiling of
//!    calls in flight below the clients (its mean within 10% of its most), or the target kept a
//!    whole number of cores busy (within 10%) while its throughput held (within 10%: a
//!    CPU-bound service is work-conserving; cores held while throughput falls are contention).
//!    Then one step confirms it instead — just past the
//!    ceiling (a fifth past, at least one more client), or one doubling past the step that
//!    showed the cores (once) — and two steps past the knee that agree end the search. The 2× probe stands for
//!    the step past the ceiling when a step within 1.5× of the ceiling already places the knee.
//! 3. Confirm the plateau with one step at about twice the estimated limit (or twice the first
//!    bad count), unless a measured step past the knee is already at 1.5× the estimate.
//! 4. Probe the overload side: steps at about [`PROBES`] (2× and 4×) the estimated limit (the
//!    mock's ceiling when it showed one, else plateau throughput × base latency), each skipped
//!    when a measured count lies within [`NEAR`] of it, so the diagnosis can say what overload
//!    does (it queues, sheds, times out or collapses); none once a step at the 4× probe's load
//!    or beyond has run. A flat mock ceiling is confirmed by the
//!    2× probe instead of a step of its own when no step covers that probe yet (else by the
//!    step just past the ceiling, which places the knee). No more probes once the largest step
//!    had more than half its requests fail or a p99 above [`P99_STOP`]× the base latency. When the
//!    last probe alone fell from the peak (see the `overload` module), one step between the two
//!    (their geometric mean, unless a step is near it) tells a collapse from a noisy step.
//!
//! [`next_step`] says why it chose a count ([`StepChoice`]), so the evidence can say it too.
//!
//! It never proposes a count already measured nor more than `max_clients` (doubling that would
//! overshoot ends with one step at `max_clients`), and stops at once when the generator saturated
//! (> 90% CPU) or when successful throughput collapsed below half its best at two steps.
//! Because it is recomputed from all the steps each time, a noisy step that looked like a knee
//! is outvoted by the steps measured after it.

use crate::points::{points, shape, Point};
use chokepoint_result::{Step, StepChoice};

/// Base latency over a step's latency from which it followed clients cleanly (no queue): the
/// search then grows four-fold.
const CLEAN: f64 = 0.95;

/// Most bisection steps between the last good and the first bad count.
const MAX_NARROWING: usize = 3;

/// Agreement within which two readings of a size (in flight, cores) are the same size.
const SAME_SIZE: f64 = 0.1;

/// The overload probes, as multiples of the estimated limit.
const PROBES: [u32; 2] = [2, 4];

/// A measured count covers a probe when it lies within this share of it (either side).
const NEAR: f64 = 0.2;

/// Share of failed requests at the largest step past which no further probe is run.
const ERRORS_STOP: f64 = 0.5;

/// p99, as a multiple of the base latency, past which no further probe is run.
const P99_STOP: f64 = 20.0;

/// The next client count to run, or `None` to stop. See the module documentation.
pub fn next_clients(steps: &[Step], max_clients: u32) -> Option<u32> {
    next_step(steps, max_clients, None).map(|(clients, _)| clients)
}

/// The next client count to run and why, or `None` to stop. `cores` is the machine's core count
/// (target CPU is a share of all of them); without it, a CPU plateau is not used to skip ahead.
pub fn next_step(
    steps: &[Step],
    max_clients: u32,
    cores: Option<u32>,
) -> Option<(u32, StepChoice)> {
    if max_clients == 0 {
        return None;
    }
    let pts = points(steps);
    let measured = |c: u32| pts.iter().any(|p| p.clients == c);
    let propose = |c: u32, why: StepChoice| -> Option<(u32, StepChoice)> {
        let c = c.clamp(1, max_clients);
        (!measured(c)).then_some((c, why))
    };
    let Some(first) = pts.first() else {
        return Some((1, StepChoice::Start));
    };
    if pts.iter().any(|p| p.generator_cpu > 90.0) {
        return None;
    }
    // Collapse: past the best step, two steps under half its throughput.
    let best = pts.iter().max_by(|a, b| a.ok_x.total_cmp(&b.ok_x))?;
    let collapsed = pts
        .iter()
        .filter(|p| p.clients > best.clients && p.ok_x < 0.5 * best.ok_x)
        .count();
    if collapsed >= 2 {
        return None;
    }
    let sh = shape(&pts, None);
    let largest = pts.last().map_or(0, |p| p.clients);
    let Some(knee) = sh.knee else {
        // Still following clients: grow, ending with one step at the maximum.
        if largest >= max_clients {
            return None;
        }
        let factor = growth(&pts, sh.base_ms);
        let grown = largest.saturating_mul(factor);
        return if grown > max_clients {
            propose(max_clients, StepChoice::MaxClients)
        } else {
            propose(
                grown,
                StepChoice::Doubling {
                    from: largest,
                    times: Some(factor),
                },
            )
        };
    };
    let first_bad = pts[knee].clients;
    let last_good = knee.checked_sub(1).map_or(0, |i| pts[i].clients);
    let plateau_x = crate::points::median(pts[knee..].iter().map(|p| p.ok_x));
    let estimate = plateau_x * sh.base_ms / 1000.0;

    // Bisection steps are the counts off the growth chain (each ×2 or ×4 the one before).
    let mut chain = vec![first.clients];
    for p in &pts[1..] {
        let last = chain[chain.len() - 1];
        if p.clients == last.saturating_mul(2) || p.clients == last.saturating_mul(4) {
            chain.push(p.clients);
        }
    }
    let narrowing = pts
        .iter()
        .filter(|p: &&Point<'_>| !chain.contains(&p.clients) && p.clients < max_clients)
        .count();
    if let Some((size, why)) = size_seen_past_knee(&pts[knee..], cores) {
        let ceiling = matches!(why, StepChoice::ConfirmCeiling { .. });
        let shown_at = match why {
            StepChoice::ConfirmCeiling { seen_at, .. }
            | StepChoice::ConfirmCores { seen_at, .. } => pts.iter().find(|p| p.clients == seen_at),
            _ => None,
        };
        // A CPU-bound service is work-conserving: the same busy cores serve the same requests
        // per second however long the queue. Cores that stay while throughput falls cost more
        // CPU per request (contention), so they do not say the plateau's size; its peak does,
        // and the bisection below looks for it.
        let held =
            |p: &Point<'_>| ceiling || shown_at.is_none_or(|shown| same_size(p.ok_x, shown.ok_x));
        let agreeing = pts[knee..]
            .iter()
            .filter(|p| size_of(p, cores).is_some_and(|s| same_size(s, size)) && held(p))
            .count();
        // A ceiling is a size in requests: the probes go by it; cores are not.
        let probe_estimate = if ceiling { size } else { estimate };
        if agreeing >= 2 {
            return overload_probe(&pts, probe_estimate, sh.base_ms, max_clients);
        }
        let confirm = if ceiling {
            // The 2x probe confirms the ceiling too when a step just past the ceiling (within
            // 1.5x of it) already places the knee and no step covers the probe; otherwise one
            // step just past the ceiling places the knee.
            let knee_placed = pts
                .iter()
                .any(|p| f64::from(p.clients) > size && f64::from(p.clients) <= 1.5 * size);
            match overload_probe(&pts, size, sh.base_ms, max_clients) {
                Some((clients, StepChoice::OverloadProbe { multiple: 2, .. })) if knee_placed => {
                    clients
                }
                _ => (size + (size / 5.0).max(1.0)).ceil() as u32,
            }
        } else {
            // Cores are no client count: one doubling past the step that showed them, once (a
            // busy machine may never give a second reading within 10%; the plateau's other
            // steps then decide, as without the cores).
            match why {
                StepChoice::ConfirmCores { seen_at, .. } => seen_at.saturating_mul(2),
                _ => largest.saturating_mul(2),
            }
        };
        if let Some(next) = propose(confirm, why) {
            return Some(next);
        }
    }
    let width = first_bad - last_good;
    if last_good > 0 && narrowing < MAX_NARROWING && width > 2 && (width as f64) > 0.1 * estimate {
        let mid = last_good + width / 2;
        let why = StepChoice::Narrowing {
            last_good,
            first_bad,
        };
        if let Some(next) = propose(mid, why) {
            return Some(next);
        }
    }
    let confirmed = pts
        .iter()
        .any(|p| p.clients > first_bad && p.clients as f64 >= 1.5 * estimate);
    let target = (2.0 * estimate).round().max(2.0 * first_bad as f64);
    let target = if target.is_finite() && target < max_clients as f64 {
        target as u32
    } else {
        max_clients
    };
    if !confirmed && target > largest {
        if let Some(next) = propose(target, StepChoice::ConfirmPlateau { estimate }) {
            return Some(next);
        }
    }
    overload_probe(&pts, estimate, sh.base_ms, max_clients)
}

/// How much the next step grows while throughput follows clients: four-fold when the largest
/// step, past the first, kept the base latency `base_ms` within [`CLEAN`] and had no errors,
/// else two-fold.
fn growth(pts: &[Point<'_>], base_ms: f64) -> u32 {
    match pts {
        [_, .., largest]
            if base_ms > 0.0
                && largest.error_rate == 0.0
                && largest.ok_mean_ms > 0.0
                && base_ms / largest.ok_mean_ms >= CLEAN =>
        {
            4
        }
        _ => 2,
    }
}

/// The next overload probe (see the module documentation), or `None` when every probe is
/// covered or the largest step already shows enough overload.
fn overload_probe(
    pts: &[Point<'_>],
    estimate: f64,
    base_ms: f64,
    max_clients: u32,
) -> Option<(u32, StepChoice)> {
    if !(estimate.is_finite() && estimate > 0.0) {
        return None;
    }
    // A fall at the last probe alone: one step between the peak and it (less load than a step
    // already run, so the stopping rule below does not hold it back) tells a collapse from a
    // noisy step.
    let covered = |clients: u32| {
        pts.iter()
            .any(|p| (f64::from(p.clients) - f64::from(clients)).abs() <= NEAR * f64::from(clients))
    };
    if let Some((peak, fallen)) = crate::overload::fall_to_confirm(pts) {
        let between = (f64::from(peak) * f64::from(fallen)).sqrt().round() as u32;
        if between > peak && between < fallen && !covered(between) {
            let multiple = (f64::from(between) / estimate).round().max(1.0) as u32;
            return Some((between, StepChoice::OverloadProbe { multiple, estimate }));
        }
    }
    let largest = pts.last()?;
    let p99_ms = crate::points::median(largest.steps.iter().map(|s| s.latency_ms.p99));
    if largest.error_rate > ERRORS_STOP || (base_ms > 0.0 && p99_ms > P99_STOP * base_ms) {
        return None;
    }
    // A step already run at the largest probe's load or beyond shows what overload does; a
    // smaller probe under it would only re-measure the queue (a CPU-bound target whose
    // doubling went to 8× its cores before the cores were confirmed).
    let largest_probe = f64::from(PROBES[PROBES.len() - 1]) * estimate;
    if f64::from(largest.clients) >= (1.0 - NEAR) * largest_probe {
        return None;
    }
    let probe = |multiple: u32| {
        let wanted = (f64::from(multiple) * estimate).round().max(1.0);
        let clients = if wanted < f64::from(max_clients) {
            wanted as u32
        } else {
            max_clients
        };
        let covered = pts.iter().any(|p| {
            (f64::from(p.clients) - f64::from(clients)).abs() <= NEAR * f64::from(clients)
        });
        (!covered).then_some((clients, StepChoice::OverloadProbe { multiple, estimate }))
    };
    PROBES.into_iter().find_map(probe)
}

/// The size the first step past the knee that shows one says directly, and the reason to
/// confirm it: a flat ceiling at the mock, else whole cores of target CPU.
fn size_seen_past_knee(past_knee: &[Point<'_>], cores: Option<u32>) -> Option<(f64, StepChoice)> {
    past_knee.iter().find_map(|p| {
        if let Some(in_flight) = mock_ceiling(p) {
            return Some((
                in_flight,
                StepChoice::ConfirmCeiling {
                    in_flight: in_flight as u32,
                    seen_at: p.clients,
                },
            ));
        }
        busy_cores(p, cores?).map(|cores| {
            (
                cores,
                StepChoice::ConfirmCores {
                    cores,
                    seen_at: p.clients,
                },
            )
        })
    })
}

/// The size a step past the knee shows, by the same evidence as [`size_seen_past_knee`].
fn size_of(p: &Point<'_>, cores: Option<u32>) -> Option<f64> {
    mock_ceiling(p).or_else(|| busy_cores(p, cores?))
}

/// The mock's most calls in flight when they were a flat ceiling below the step's clients.
fn mock_ceiling(p: &Point<'_>) -> Option<f64> {
    let (max, mean) = (p.inflight_max?, p.inflight_mean?);
    (max >= 1.0 && max < p.clients as f64 && mean >= (1.0 - SAME_SIZE) * max).then_some(max)
}

/// The target's busy cores when they were a whole number (at least one).
fn busy_cores(p: &Point<'_>, cores: u32) -> Option<f64> {
    let busy = crate::whole_cores::busy_cores(p.target_cpu?, cores);
    crate::whole_cores::whole(busy, crate::whole_cores::WHOLE).map(|_| busy)
}

fn same_size(a: f64, b: f64) -> bool {
    (a - b).abs() <= SAME_SIZE * a.max(b)
}
