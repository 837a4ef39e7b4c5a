//! Clients the target never answered ([`Fact::ClientsUnanswered`]): a plateau read from the
//! client side is then a cap on the connections the target serves, not a pool.
//!
//! Why, from first principles. In the closed model every client always has one request out, so
//! by Little's law the requests in service are the clients. A pool queues what it cannot
//! serve, and a queue answers its clients in turn: a client answered once goes to the back of
//! the queue, behind those still waiting. So when some clients were answered again and again
//! while others had not one answer from the step's start to its end (the ramp, which waits up
//! to twice the step for every client's first answer, and the measured window), the waiting
//! ones were not in the queue the others cycled through: their connections sat where the
//! target did not serve them. A listen backlog that overflowed behind an accept loop that
//! could not keep up (the kernel drops the SYN or the handshake's last ACK, and the client's
//! retries back off: 1 s, 3 s, 7 s...), a proxy's `maxconn` that stops accepting, a server's
//! connection cap. Throughput is then what the answered clients alone make, and Little's law
//! counts them, not a pool.
//!
//! The same holds for a plateau that falls (`contention` from the curve, stage 4): the USL's
//! concurrency is the clients, and the clients in service were fewer, and changed from step to
//! step as retried handshakes got in (tests/targets/py-warmup read `contention` 144 so in one
//! sweep of two: 57, 105, 58 and 76 clients answered at 80, 128, 165 and 239).
//!
//! A client can be starved inside the target too: an unfair lock can pass over some clients for
//! a whole step. Then the clients it does answer wait for the lock as well, and their latency
//! grows past the request's own; behind a cap in front of the target the answered ones wait for
//! nothing. So the answered clients' latency must stay near the base latency ([`NO_QUEUE`]).
//!
//! A target that kept cores busy is no different. A CPU shares its cores among every request
//! the target has taken, in turn (the scheduler, an event loop's queue), so a CPU-bound target
//! answers every client, each more slowly as clients grow: by Little's law its answered
//! clients' latency is the clients over the throughput. Clients left unanswered for a whole
//! step while the answered ones were served at their base latency were held out by a cap on
//! what is served, whatever burned the cores (Node's cluster, whose primary passed the
//! connections its workers refused back and forth, kept 2 cores busy behind 16 connections
//! served: read as `cpu-bound 2` in one sweep of two). So a `cpu-bound` finding is read so
//! too, unless a CPU quota decided it (a quota's throttling is the limit however requests
//! wait).
//!
//! The rule: a `blocking-pool`, `cpu-bound` or curve-read `contention` (read from the client side, or seen
//! directly holding just as many as the clients answered, [`crate::thrash::a_pool_is_seen`])
//! whose every step from the knee on left clients
//! unanswered ([`chokepoint_result::LoadReport::unanswered_clients`]) while the answered ones
//! were each answered at least [`ROUNDS`] times in the window, without queueing, is
//! `connection-limit`, its size
//! the clients answered (median over those steps). The words say what was seen, and where it
//! may sit; nothing in the target is named.
use crate::evidence::Evidence;
use crate::finding::Finding;
use crate::place::matches_limit;
use crate::points::in_service;
use crate::thrash::a_pool_is_seen;
use chokepoint_result::{median, Fact, Kind, Step};

/// Answers each answered client had, at least, in the window: a queue in turn would have
/// answered an unanswered client before any other client's second answer.
const ROUNDS: f64 = 2.0;

/// The answered clients' mean latency under this many times the base latency: they waited in
/// no queue. A cap in front lets in no more clients than it serves at once, so theirs is the
/// request's own time; clients that wait behind others (a pool, an unfair lock that starves
/// some clients of it for the whole step) take one more service time at least for each one
/// ahead of them, half a one on average being far from none.
const NO_QUEUE: f64 = 1.5;

/// `finding` as `connection-limit` when clients were left unanswered past its knee (see the
/// module), else as it was.
pub(crate) fn reconsider(mut finding: Finding, evidence: &Evidence<'_>) -> Finding {
    // Contention here is stage 4's, a pool's plateau that fell: read from the curve alone,
    // which counts only the answered clients when others are left unanswered.
    let cpu = finding.kind == Kind::CpuBound;
    if !(matches!(finding.kind, Kind::BlockingPool | Kind::Contention)
        || cpu && !crate::thrash::decided_by_a_quota(&finding))
    {
        return finding;
    }
    let Some(knee) = finding.knee_clients else {
        return finding;
    };
    let Some(base_ms) = finding.base_latency_ms else {
        return finding;
    };
    let Some(fact) = unanswered_past(knee, base_ms, evidence.steps) else {
        return finding;
    };
    let Fact::ClientsUnanswered {
        clients,
        unanswered,
        ..
    } = &fact
    else {
        unreachable!("unanswered_past gives ClientsUnanswered")
    };
    let answered = median(
        clients
            .iter()
            .zip(unanswered)
            .map(|(&c, &u)| f64::from(c - u)),
    );
    // A pool seen directly (the mock's ceiling, threads or connections held) is the limit
    // unless it holds just the clients answered: then every accepted request was in it at
    // once and nothing queued there, and the cap is in front of it (HAProxy's frontend
    // `maxconn 16` before a mock that saw 16).
    let seen_is_the_answered = answered
        .zip(finding.limit)
        .is_some_and(|(answered, limit)| matches_limit(limit, answered));
    // A CPU-bound finding's limit is cores, never the clients answered; the mock's ceiling
    // beside it was read as a consequence of the CPU, which the unanswered clients refute.
    if !cpu && a_pool_is_seen(&finding) && !seen_is_the_answered {
        return finding;
    }
    finding.kind = Kind::ConnectionLimit;
    finding.limit = answered;
    finding.facts.insert(0, fact);
    finding
}

/// The clients unanswered at every step from `knee` on, when each such step left some,
/// answered the others [`ROUNDS`] times and in less than [`NO_QUEUE`] times `base_ms`; `None`
/// otherwise (or when a step did not count them).
pub(crate) fn unanswered_past(knee: u32, base_ms: f64, steps: &[Step]) -> Option<Fact> {
    let mut past: Vec<&Step> = steps.iter().filter(|s| s.clients >= knee).collect();
    past.sort_by_key(|s| s.clients);
    if past.is_empty() {
        return None;
    }
    let mut fact_steps = Vec::new();
    for step in &past {
        let unanswered = step.unanswered_clients?;
        let answered = step.clients.checked_sub(unanswered).filter(|&a| a > 0)?;
        if unanswered == 0
            || (step.requests as f64) < ROUNDS * f64::from(answered)
            || step.latency_ms.mean >= NO_QUEUE * base_ms
        {
            return None;
        }
        fact_steps.push((
            step.clients,
            unanswered,
            in_service(step.throughput_rps, step.latency_ms.mean),
            step.ramp_s + step.duration_s,
        ));
    }
    Some(Fact::ClientsUnanswered {
        clients: fact_steps.iter().map(|s| s.0).collect(),
        unanswered: fact_steps.iter().map(|s| s.1).collect(),
        in_service: fact_steps.iter().map(|s| s.2).collect(),
        waited_s: fact_steps.iter().map(|s| s.3).fold(f64::INFINITY, f64::min),
    })
}
