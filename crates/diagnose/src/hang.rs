//! A service that stopped answering: from some step on, not one request completed — neither
//! answered nor failed — within the step's measured window, after smaller steps were answered
//! ([`Fact::StoppedAnswering`]).
//!
//! Why it is its own finding. In a closed loop a pool, a CPU or a connection cap keeps serving
//! at its plateau whatever the clients past it: throughput stops growing, it does not vanish.
//! Throughput that falls to nothing when clients are added is a service that no longer makes
//! progress: a deadlock (Go's HTTP/2 transport with `StrictMaxConcurrentRequests` deadlocks once
//! more requests than the server's stream cap arrive at once: tests/targets/go-h2-client), a
//! wait without a timeout, or requests each slower than the whole window. Read as a plateau it
//! gave "contention" and "the mock saw exactly 0 calls in flight: that ceiling is the pool";
//! no knob raises a limit of zero, so the finding names none. It is `error-bound` (requests
//! that never come back are timeouts the generator did not wait for), its limit unknown: it
//! lies above the last step answered and at or below the first silent one.
//!
//! Only when every step from the first silent one on is silent: a service that answers again at
//! a larger step had a pause, which the other stages read.
//!
//! Where it stopped is what the reader needs next; when the sweep took the runtime's stacks at
//! the first silent step, the place with the most threads that were not idle is told
//! ([`Stuck`]): the two locks of a lock-order deadlock, Go's transport waiting for a stream.
use crate::points::Point;
use chokepoint_result::{Fact, Finding, Kind, Stuck, WaitKind};

/// The finding when the service stopped answering past some step, else `None`.
pub(crate) fn stopped_answering(pts: &[Point<'_>]) -> Option<Finding> {
    let silent = |p: &Point<'_>| p.requests <= 0.0 && p.clients > 0;
    let first_silent = pts.iter().position(silent)?;
    let answered = pts[..first_silent].iter().rev().find(|p| !silent(p))?;
    if !pts[first_silent..].iter().all(silent) {
        return None;
    }
    let window_s = pts[first_silent]
        .steps
        .iter()
        .map(|s| s.duration_s)
        .fold(0.0, f64::max);
    let mut finding = Finding::bare(
        Kind::ErrorBound,
        vec![Fact::StoppedAnswering {
            from_clients: pts[first_silent].clients,
            silent: pts[first_silent..].iter().map(|p| p.clients).collect(),
            window_s,
            answered_clients: answered.clients,
            answered_throughput_rps: answered.x,
            stuck: stuck_at(&pts[first_silent]),
        }],
    );
    finding.knee_clients = Some(pts[first_silent].clients);
    Some(finding)
}

/// The place of `point`'s stacks with the most threads that were not idle (nor running: a
/// service that makes no progress has none at work).
fn stuck_at(point: &Point<'_>) -> Option<Stuck> {
    point
        .steps
        .iter()
        .filter_map(|step| step.stacks.as_ref())
        .flat_map(|evidence| {
            evidence.pools.iter().flat_map(move |pool| {
                pool.stacks
                    .iter()
                    .map(move |place| (evidence.source, pool, place))
            })
        })
        .filter(|(_, _, place)| {
            !matches!(
                place.waiting,
                Some(WaitKind::Idle | WaitKind::Running) | None
            )
        })
        .max_by(|a, b| a.2.threads.total_cmp(&b.2.threads))
        .map(|(source, pool, place)| Stuck {
            source,
            pool: pool.pool.clone(),
            threads: place.threads,
            waiting: place.waiting,
            frames: place.frames.clone(),
        })
}
