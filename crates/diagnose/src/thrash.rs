//! Contention without a fall: a plateau on which each request costs more CPU the more clients
//! there are ([`Fact::CpuPerRequestRises`]).
//!
//! Why, from first principles. A request waiting for a pool's slot (a thread, a connection, a
//! permit) waits parked: in an accept backlog, a futex, a socket read, none of which burns CPU.
//! So past a pool's knee the target's CPU stays what the plateau's throughput needs, and the
//! CPU per request holds. Requests that get in each other's way while they run — a lock spun
//! on, compare-and-swap retries, a convoy's wake-ups — burn CPU for every other request they
//! meet, so the CPU per request grows with the clients while throughput stays put: the
//! Universal Scalability Law's crosstalk before it makes throughput fall (the fall itself is
//! `analysis`'s collapse rule). A spinlock thrashing on one core (tests/targets/java-thrash)
//! swept adaptively stopped before its fall: 532 req/s at 14 clients and 547 at 28, while its
//! CPU per request went from 0.71 to 1.67 ms, and the pool rule read it as a pool of ~12.
//!
//! The rule: a `blocking-pool` plateau whose CPU per request (all requests: a failure costs CPU
//! too) at its most clients is at least [`RISE`] times that at its fewest, with [`ADDED_CORES`]
//! or more cores added, is `contention`. Both bounds are absolute, so they read the same on 2
//! cores or 64: CPU per request does not depend on the machine's size, and a quarter of a core
//! of added burn is far past a CPU sample's noise and a runtime's background work (JIT, GC and
//! timers move with throughput, which is flat here).
//!
//! Direct evidence of a pool wins and leaves the finding as it is: the mock's ceiling read as
//! the limit, connections at one count each held in a network wait, a pool's threads in a
//! network wait matching the limit, a stream cap at the limit. A pool's runtime may spin a
//! little: the demo's actor pool (a ForkJoinPool, whose idle workers scan before they park)
//! rose 2.3× on its plateau, by 0.1 core, with the mock's ceiling at its 20.
use crate::evidence::Evidence;
use crate::finding::Finding;
use crate::place::matches_limit;
use crate::points::Point;
use chokepoint_result::{CeilingReading, Fact, Kind, StreamCapReading};

/// The CPU per request at the plateau's most clients over that at its fewest: twice, past the
/// step-to-step wobble of a CPU reading (tens of percent on a loaded machine).
pub(crate) const RISE: f64 = 2.0;
/// The cores the rise must add at the most clients over the fewest.
pub(crate) const ADDED_CORES: f64 = 0.25;

/// `finding` as contention when its plateau's CPU per request rose (see the module), else as
/// it was.
pub(crate) fn reconsider(
    mut finding: Finding,
    evidence: &Evidence<'_>,
    pts: &[Point<'_>],
) -> Finding {
    if finding.kind != Kind::BlockingPool || a_pool_is_seen(&finding) {
        return finding;
    }
    let Some(fact) = rise(&finding, evidence, pts) else {
        return finding;
    };
    finding.kind = Kind::Contention;
    finding.limit = crate::overload::contention_size(finding.usl, finding.peak.as_ref());
    finding.facts.push(fact);
    finding
}

/// Whether a fact of `finding` saw the pool directly, at its limit.
pub(crate) fn a_pool_is_seen(finding: &Finding) -> bool {
    let limit = finding.limit.unwrap_or(0.0);
    finding.facts.iter().any(|fact| match fact {
        Fact::MockCeiling { reading, .. } => *reading != CeilingReading::Disagrees,
        Fact::ConnectionCeiling { .. } => true,
        Fact::PoolWaiting { socket_wait, .. } => matches_limit(*socket_wait, limit),
        Fact::StreamCap { reading, .. } => *reading == StreamCapReading::AtCap,
        _ => false,
    })
}

/// The rise of the CPU per request over the plateau's steps, when it is one.
fn rise(finding: &Finding, evidence: &Evidence<'_>, pts: &[Point<'_>]) -> Option<Fact> {
    let cores = f64::from(evidence.context.cores?);
    if !evidence.context.target_observed {
        return None;
    }
    let plateau = finding.plateau.as_ref()?;
    let mut steps: Vec<&Point<'_>> = pts
        .iter()
        .filter(|p| plateau.clients.contains(&p.clients) && p.x > 0.0 && p.target_cpu.is_some())
        .collect();
    steps.sort_by_key(|p| p.clients);
    let (first, last) = (*steps.first()?, *steps.last()?);
    if first.clients == last.clients {
        return None;
    }
    let cores_busy = |p: &Point<'_>| p.target_cpu.unwrap_or(0.0) * cores / 100.0;
    let cpu_ms = |p: &Point<'_>| cores_busy(p) / p.x * 1000.0;
    let (from_ms, to_ms) = (cpu_ms(first), cpu_ms(last));
    let rose = from_ms > 0.0
        && to_ms >= RISE * from_ms
        && cores_busy(last) - cores_busy(first) >= ADDED_CORES;
    rose.then(|| Fact::CpuPerRequestRises {
        clients: steps.iter().map(|p| p.clients).collect(),
        from_clients: first.clients,
        from_throughput_rps: first.x,
        from_cpu_ms: from_ms,
        from_cores: cores_busy(first),
        to_clients: last.clients,
        to_throughput_rps: last.x,
        to_cpu_ms: to_ms,
        to_cores: cores_busy(last),
    })
}
