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
//! The same holds for a plateau read as `cpu-bound`: a service whose CPU is what holds its
//! throughput serves each request at the same CPU cost before and past its knee (throughput is
//! the cores over that cost). When the cost per request at the plateau is twice or more what it
//! was just before it, the CPU saturated because of the added clients, not because of the
//! work: at the earlier cost the same cores would have served twice the throughput.
//! tests/targets/go-spin-permits (built after this rule: 16 permits taken by a compare-and-swap
//! retried with `runtime.Gosched()`) held 777 req/s from 17 to 65 clients, the 16 permits' own
//! ceiling, while its spinning waiters took the CPU from 0.29 cores at 14 clients to 1.86, 0.45
//! ms a request to 2.4 ms; it was read `cpu-bound 1.8`. Its waiters spin from the first one
//! queued, so the CPU saturates at the knee itself and the plateau's own steps all cost about
//! the same: the cost is also read at the last step before the plateau, and the lower of the
//! two is the work's.
//!
//! The rule: a `blocking-pool` plateau, or a `cpu-bound` one not decided by a CPU quota, whose
//! CPU per request (all requests: a failure costs CPU too) at its most clients is at least
//! [`RISE`] times that at its fewest, or at the last step before it, with [`ADDED_CORES`] or
//! more cores added, is `contention`. Both bounds are absolute, so they read the same on 2
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
    let looked_at = match finding.kind {
        Kind::BlockingPool => true,
        Kind::CpuBound => !decided_by_a_quota(&finding),
        _ => false,
    };
    if !looked_at || a_pool_is_seen(&finding) {
        return finding;
    }
    let Some(fact) = rise(&finding, evidence, pts) else {
        return finding;
    };
    // The cpu-bound reading's facts say the CPU is the limit (its size, whole cores, threads
    // running "so it is CPU-bound"); the rise says it is not, and contention's size is its own.
    finding.facts.retain(|fact| {
        !matches!(
            fact,
            Fact::CoresBusy { .. }
                | Fact::WholeCores { .. }
                | Fact::WholeThreadsRunning { .. }
                | Fact::InterpreterLock { .. }
                | Fact::ThreadsRunning { .. }
        )
    });
    finding.kind = Kind::Contention;
    finding.limit = crate::overload::contention_size(finding.usl, finding.peak.as_ref());
    finding.facts.push(fact);
    finding
}

/// Whether a `cpu-bound` finding was decided by a CPU quota: a quota caps the cores the target
/// may use, and its throttling is no work of the requests. Every other reading of the CPU as
/// the limit (its saturation, whole cores, threads seen running or waiting for a core) says the
/// CPU was in use; only the cost per request says whether that use held throughput.
pub(crate) fn decided_by_a_quota(finding: &Finding) -> bool {
    finding
        .facts
        .iter()
        .any(|fact| matches!(fact, Fact::CpuQuota { .. }))
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
    let cores_busy = |p: &Point<'_>| p.target_cpu.unwrap_or(0.0) * cores / 100.0;
    let cpu_ms = |p: &Point<'_>| cores_busy(p) / p.x * 1000.0;
    // The work's own cost is also read at the last step before the plateau: waiters that spin
    // from the first one queued can saturate the CPU at the knee itself, so that the plateau's
    // own steps all cost the same (see the module).
    let before = pts
        .iter()
        .filter(|p| p.clients < first.clients && p.x > 0.0 && p.target_cpu.is_some())
        .max_by_key(|p| p.clients);
    let first = match before {
        Some(before) if cpu_ms(before) < cpu_ms(first) => before,
        _ => first,
    };
    if first.clients == last.clients {
        return None;
    }
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
