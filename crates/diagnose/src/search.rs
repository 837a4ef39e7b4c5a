//! The adaptive search for the knee: which client count to run next, pure over the steps so far.
//!
//! 1. Start at 1 client; double while throughput keeps following clients (efficiency ≥ 0.9).
//! 2. Once a step falls below, bisect between the last good and the first bad count: at most
//!    [`MAX_NARROWING`] extra steps, and only while the interval is wider than 2 clients and
//!    than 10% of the estimated limit (plateau throughput × base latency).
//! 3. Confirm the plateau with one step at about twice the estimated limit (or twice the first
//!    bad count), unless a measured step past the knee is already at 1.5× the estimate.
//!
//! It never proposes a count already measured nor more than `max_clients` (doubling that would
//! overshoot ends with one step at `max_clients`), and stops at once when the generator saturated
//! (> 90% CPU) or when successful throughput collapsed below half its best at two steps.
//! Because it is recomputed from all the steps each time, a noisy step that looked like a knee
//! is outvoted by the steps measured after it.

use crate::points::{points, shape, Point};
use chokepoint_result::Step;

/// Most bisection steps between the last good and the first bad count.
const MAX_NARROWING: usize = 3;

/// The next client count to run, or `None` to stop. See the module documentation.
pub fn next_clients(steps: &[Step], max_clients: u32) -> Option<u32> {
    if max_clients == 0 {
        return None;
    }
    let pts = points(steps);
    let measured = |c: u32| pts.iter().any(|p| p.clients == c);
    let propose = |c: u32| -> Option<u32> {
        let c = c.clamp(1, max_clients);
        (!measured(c)).then_some(c)
    };
    let Some(first) = pts.first() else {
        return Some(1);
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
        // Still following clients: double, ending with one step at the maximum.
        if largest >= max_clients {
            return None;
        }
        return propose(largest.saturating_mul(2).min(max_clients));
    };
    let first_bad = pts[knee].clients;
    let last_good = knee.checked_sub(1).map_or(0, |i| pts[i].clients);
    let plateau_x = crate::points::median(pts[knee..].iter().map(|p| p.ok_x));
    let estimate = plateau_x * sh.base_ms / 1000.0;

    // Bisection steps are the counts off the doubling chain that start..2^k would give.
    let on_chain = |c: u32| {
        let mut x = first.clients;
        while x < c {
            x = x.saturating_mul(2);
        }
        x == c
    };
    let narrowing = pts
        .iter()
        .filter(|p: &&Point<'_>| !on_chain(p.clients) && p.clients < max_clients)
        .count();
    let width = first_bad - last_good;
    if last_good > 0 && narrowing < MAX_NARROWING && width > 2 && (width as f64) > 0.1 * estimate {
        let mid = last_good + width / 2;
        if let Some(c) = propose(mid) {
            return Some(c);
        }
    }
    let confirmed = pts
        .iter()
        .any(|p| p.clients > first_bad && p.clients as f64 >= 1.5 * estimate);
    if confirmed {
        return None;
    }
    let target = (2.0 * estimate).round().max(2.0 * first_bad as f64);
    let target = if target.is_finite() && target < max_clients as f64 {
        target as u32
    } else {
        max_clients
    };
    if target <= largest {
        return None;
    }
    propose(target)
}
