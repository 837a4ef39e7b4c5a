//! The diagnosis: a sweep's steps in, a finding out — pure functions, no I/O, no clock.
//!
//! [`diagnose`] reads the [`Step`]s of a sweep (any order, repeats merged by their median) and
//! the [`SweepContext`] ([`diagnose_with`] also the [`catalogue`] of known pools, passed in),
//! and decides a [`Finding`]: the kind of limit, its size, the knee, the
//! base latency, the plateau, the models' fits and the [`Fact`]s it read, each with its numbers
//! and the client counts of the steps it came from. [`describe`] then writes the words — one
//! summary sentence, evidence sentences, at most four short key lines — and
//! [`Finding::into_diagnosis`] gives the JSON record ([`Diagnosis`]) with both.
//!
//! The method is a row of stages, run in this order by [`diagnose_with`] (the list is its body
//! and `decide`'s); each takes the finding so far and the evidence and returns it, maybe
//! revised, with the facts that decided it. Stages 2, 3, 4, 6 and 8 decide or revise the kind;
//! the others only read it.
//!
//! 0. **Nothing to read, or a service that stopped answering**: no step measured, no step
//!    succeeded, or from some step on not one request completed after smaller steps were
//!    answered (`hang`: a deadlock, [`Fact::StoppedAnswering`], `error-bound` with no limit and
//!    no place). Each is decided here, and no other stage runs.
//! 1. **Ideal line and knee** (`analysis`, [`points`](crate::points), `ideal`). The base
//!    latency L0 is the ok mean latency at the fewest clients (when that step already queued
//!    past a known downstream delay D, L0 = D). The ideal throughput is X(c) = c / L0;
//!    efficiency e(c) = X(c) / ideal. The knee is the first step from which every step has
//!    e < 0.9, confirmed only when e falls below 0.8 or throughput stops growing (a drift to 86%
//!    while throughput still grows is contention, a [`Fact::Contention`]). A step whose every
//!    call the mock saw in flight at once is not past a pool, whatever its throughput (a paused
//!    machine).
//! 2. **First match** (`kinds`), first match wins: `generator-bound` (the generator above 90%
//!    CPU at the knee step or the next, with its total rate, errors included, stalled too — a
//!    shedding target's fast errors can busy the generator past a knee it did not cause), a
//!    plateau on whole cores (`whole_cores`: the target kept a whole number of cores busy from
//!    the knee on, unless errors decide or it thrashes), `connection-limit` (periodic stalls in
//!    a step's timeline, `stalls`), `error-bound` (more than 5% errors from some step on), a
//!    plateau, `no-limit-found` otherwise.
//! 3. **The plateau's kind** (`plateau_kind`, `size`): `cpu-bound` (target CPU saturated; or one
//!    request in service burning ≥ 15% of all cores with the downstream idle or absent — CPU
//!    work on fewer threads than cores; or whole cores; or the mock idle when the CPU was not
//!    observed) or `blocking-pool`. Past the knee, the plateau throughput is the median
//!    successful throughput; the steps within 10% of it form the plateau. Little's law turns it
//!    into a size: limit = plateau X × S, S = D when the target makes one downstream call per request (else L0). When the
//!    mock saw the plateau, its most calls in flight are direct evidence and win when they agree
//!    within 15%. With no mock, the target's connections to one peer at one count at every
//!    plateau step, each held by a thread in a network wait, are the size when Little's law
//!    over the whole request reads more (`connection_ceiling`).
//! 4. **A falling plateau** (`analysis`): a `blocking-pool` whose throughput collapses past its
//!    peak is `contention`.
//! 5. **Models** (`models`). A Universal Scalability Law fit ([`usl_fit`]) with ≥ 4 client
//!    counts, beside the bounded-pool model ([`pool_fit`]); the one with the lower RMS error of
//!    throughput is named (the USL only when clearly lower: it has one more parameter).
//!    Contention's size is the USL's peak concurrency (else the clients of peak throughput).
//!    The facts told whatever the kind come here too: errors, fan-out, what was not observed.
//!    **Clients left unanswered** (`unanswered`): a `blocking-pool` (or stage 4's
//!    `contention`) seen from the client side whose every step from the knee on left some clients without one answer while the others
//!    were answered again and again is `connection-limit`, sized by the clients answered
//!    ([`Fact::ClientsUnanswered`]): a queue answers its clients in turn, so those clients'
//!    connections were never in it (a listen backlog, a proxy's `maxconn`).
//! 6. **A pool seen from the client side** ([`saturation`]): a `blocking-pool` without
//!    downstream evidence becomes `cpu-bound` when the target's threads were running at the
//!    plateau ([`Fact::ThreadsRunning`]), or `machine-saturated` when the machine's CPU was
//!    ≥ 90% busy and the target's CPU unknown or below the generator's
//!    ([`Fact::MachineSaturated`]).
//! 7. **What /proc showed** (`observed`): the pool whose threads all wait on the network at the
//!    plateau ([`Fact::PoolWaiting`]), the connections to the mock by step
//!    ([`Fact::DownstreamConnections`]).
//! 8. **A growing pool** (`growing`): a pool that grew a thread per client past the knee
//!    instead of queueing makes the finding `growing-pool` ([`Fact::GrowingPool`]), its limit
//!    what stopped it. When the mock saw every call in flight at once, stages 1–7 run again with
//!    those steps counted short of the ideal line, and this stage reads that finding too.
//!    **A plateau that burns more CPU per request** (`thrash`): a `blocking-pool`, or a
//!    `cpu-bound` not decided by a CPU quota, whose CPU per request at its most clients is 2×
//!    or more that at its fewest (or at the last step before the plateau), 0.25 core or more
//!    added, is `contention` ([`Fact::CpuPerRequestRises`]): waiting for a slot burns no CPU,
//!    requests spinning on each other do. Direct evidence of a pool (the mock's ceiling, threads
//!    or connections held at the limit, a stream cap) leaves it a pool.
//!    **A machine busy before the load** (`busy`): a `blocking-pool` or `connection-limit`
//!    whose steps below the knee show other processes holding the machine with less than half
//!    a core idle is `machine-saturated`, its limit unnamed ([`Fact::MachineBusyBeforeLoad`]):
//!    a target starved of CPU by others looks like a pool from the client side. The same direct
//!    evidence leaves it as it was. **Others taking the machine as it fell** (`busy`): a
//!    `contention` read from a fall past the peak, the target observed, whose CPU per request
//!    held while other processes held the machine at the falling steps, is `machine-saturated`
//!    ([`Fact::MachineTakenAtFall`]): the target served less on less CPU. A rise of the CPU per
//!    request, or a pool seen at its limit, leaves it as it was.
//! 9. **Where the limit sits** (`place`): from the steps at or past the knee, the pool whose
//!    held threads match the limit (the runtime's stacks first, then `/proc`), the connections
//!    to the downstream for a connection limit, the CPU and its busiest pool
//!    ([`Fact::Place`], `diagnosis.place`); or what was seen when that names no one place
//!    ([`Fact::PlaceUnclear`]). A pool the [`catalogue`] passed in knows gets its setting.
//!
//! Deciding and describing are apart: the stages decide and collect the facts; `describe` and
//! `summary` only read a [`Finding`].
//!
//! [`overload`] says what the steps past the knee show the service doing under overload (it
//! queues, sheds, times out or collapses) and [`peak`] where successful throughput peaked.
//! [`next_clients`] is the sweep's adaptive search and [`Gate`] / [`check_gates`] the CI gates.
#![deny(missing_docs)]

mod actor_dispatcher;
mod analysis;
mod busy;
pub mod catalogue;
mod connection_ceiling;
mod describe;
mod evidence;
mod finding;
mod fit;
mod gates;
mod growing;
mod hang;
mod ideal;
mod kinds;
mod models;
mod observed;
mod overload;
mod place;
mod plateau_kind;
mod points;
mod pool_pattern;
pub mod saturation;
mod search;
mod settle;
mod size;
pub mod size_rule;
mod stalls;
pub mod stated_size;
mod stream_cap;
mod summary;
mod thrash;
mod unanswered;
pub mod warmup;
pub mod what_if;
mod whole_cores;

use analysis::{AllInFlight, Analysis};
use catalogue::Catalogue;
use evidence::Evidence;
use points::Point;

pub use describe::{describe, Description};
pub use finding::Finding;
pub use fit::{pool_fit, usl_fit};
pub use gates::{check_gates, Gate, GateError};
pub use overload::{overload, peak};
pub use search::{next_clients, next_step};
pub use settle::{assess, SettleRule, Settling};
pub use stream_cap::multiplexed_peers;

#[doc(no_inline)]
pub use chokepoint_result::{Diagnosis, Fact, Step, SweepContext};

/// The finding for a finished (or interrupted) sweep, with the built-in catalogue of known
/// pools ([`diagnose_with`] takes another).
pub fn diagnose(steps: &[Step], context: &SweepContext) -> Finding {
    diagnose_with(steps, context, Catalogue::built_in())
}

/// The finding for a finished (or interrupted) sweep, a place's setting looked up in
/// `catalogue`. Steps may come in any order, with repeats; 0 or 1 steps give an honest, smaller
/// finding.
pub fn diagnose_with(steps: &[Step], context: &SweepContext, catalogue: &Catalogue) -> Finding {
    let pts = points::points(steps);
    if pts.is_empty() {
        return finding::nothing_measured();
    }
    if pts.iter().all(|p| p.ok_x <= 0.0) {
        return finding::nothing_succeeded(&pts);
    }
    if let Some(finding) = hang::stopped_answering(&pts) {
        return finding;
    }
    let evidence = Evidence {
        steps,
        context,
        catalogue,
    };
    // 1–7.
    let finding = decide(&evidence, &pts, AllInFlight::Follows);
    // 8. A pool that grew instead of queueing: growing-pool. When the mock saw every call in
    // flight the knee may hide there, so this stage also reads 1–7 run again with those steps
    // counted short.
    let finding = growing::reconsider(finding, &evidence, || {
        decide(&evidence, &pts, AllInFlight::Short)
    });
    // 8b. A pool's plateau whose CPU per request rose with the clients: contention.
    let finding = thrash::reconsider(finding, &evidence, &pts);
    // 8c. A pool or stalls read from the client side while other processes held the machine
    // from the first steps: machine-saturated.
    let finding = busy::reconsider(finding, &evidence);
    // 8d. A fall past the peak while other processes took the machine, each request costing
    // the target what it did at the peak: machine-saturated, not contention.
    let finding = busy::reconsider_fall(finding, &evidence, &pts);
    // 9. Where the limit sits, with the catalogue's setting.
    place::with_place(finding, &evidence)
}

/// Stages 1–7 of the method, in order; each takes the finding so far and returns it, maybe
/// revised.
fn decide(evidence: &Evidence<'_>, pts: &[Point<'_>], all_in_flight: AllInFlight) -> Finding {
    // 1. The ideal line, the knee, and how overload looks past it.
    let mut analysis = Analysis::new(pts, evidence.context, all_in_flight);
    // 2. generator-bound, a plateau on whole cores, connection-limit, error-bound, a plateau,
    // or no-limit-found.
    let first = analysis.first_match();
    // 3. A plateau: cpu-bound or blocking-pool.
    let decision = analysis.plateau_kind(first);
    // 4. A blocking-pool whose throughput then falls: contention.
    let decision = analysis.collapse(decision);
    // 5. The models, contention's size, the facts told whatever the kind.
    let finding = analysis.finish(decision);
    // 5b. A blocking-pool whose clients past the knee were left unanswered: connection-limit.
    let finding = unanswered::reconsider(finding, evidence);
    // 6. A blocking-pool seen only from the client side: cpu-bound or machine-saturated.
    let finding = saturation::reconsider_a_pool(finding, evidence);
    // 7. What /proc showed of the pool and the connections.
    observed::with_facts(finding, evidence)
}
