//! The diagnosis: a sweep's steps in, a finding out — pure functions, no I/O, no clock.
//!
//! [`diagnose`] reads the [`Step`]s of a sweep (any order, repeats merged by their median) and
//! the [`SweepContext`], and decides a [`Finding`]: the kind of limit, its size, the knee, the
//! base latency, the plateau, the models' fits and the [`Fact`]s it read, each with its numbers
//! and the client counts of the steps it came from. [`describe`] then writes the words — one
//! summary sentence, evidence sentences, at most four short key lines — and
//! [`Finding::into_diagnosis`] gives the JSON record ([`Diagnosis`]) with both. The method:
//!
//! 1. **Ideal line** ([`points`](crate::points), `ideal`). The base latency L0 is the ok mean
//!    latency at the fewest clients (when that step already queued past a known downstream
//!    delay D, L0 = D). The ideal throughput is X(c) = c / L0; efficiency e(c) = X(c) / ideal.
//!    The knee is the first step from which every step has e < 0.9, confirmed only when e falls
//!    below 0.8 or throughput stops growing (a drift to 86% while throughput still grows is
//!    contention, a [`Fact::Contention`]). A step whose every call the mock saw in flight at
//!    once is not past a pool, whatever its throughput (a paused machine).
//! 2. **Plateau and size** (`ideal`, `size`). Past the knee, the plateau throughput is the
//!    median successful throughput; the steps within 10% of it form the plateau. Little's law
//!    turns it into a size: limit = plateau X × S, S = D when the target makes one downstream
//!    call per request (else L0). When the mock saw the plateau, its most calls in flight are
//!    direct evidence and win when they agree within 15%.
//! 3. **Kind** (`kinds`, `plateau_kind`), first match wins: `generator-bound` (the generator
//!    above 90% CPU at the knee step or the next, with its total rate, errors included, stalled
//!    too — a shedding target's fast errors can busy the generator past a knee it did not
//!    cause), `connection-limit` (periodic stalls in a step's timeline, `stalls`),
//!    `error-bound` (more than 5% errors from some step on), then for a plateau `cpu-bound`
//!    (target CPU saturated; or one request in service burning ≥ 15% of all cores with the
//!    downstream idle or absent — CPU work on fewer threads than cores; or the mock idle when
//!    the CPU was not observed) or `blocking-pool`; `no-limit-found` otherwise.
//! 4. **Models** (`models`). A Universal Scalability Law fit ([`usl_fit`]) with ≥ 4 client
//!    counts, beside the bounded-pool model ([`pool_fit`]); the one with the lower RMS error of
//!    throughput is named (the USL only when clearly lower: it has one more parameter).
//!
//!    A `blocking-pool` seen only from the client side becomes `cpu-bound` when the target's
//!    threads were running at the plateau ([`Fact::ThreadsRunning`]), or `machine-saturated`
//!    when the machine's CPU was ≥ 90% busy and the target's CPU unknown or below the
//!    generator's ([`saturation`], a [`Fact::MachineSaturated`]).
//! 5. **What /proc showed** (`observed`): the pool whose threads all wait on the network at the
//!    plateau ([`Fact::PoolWaiting`]), the connections to the mock by step
//!    ([`Fact::DownstreamConnections`]); and (`growing`) a pool that grew a thread per client
//!    past the knee instead of queueing makes the finding `growing-pool`
//!    ([`Fact::GrowingPool`]), its limit what stopped it.
//! 6. **Where the limit sits** (`place`): from the steps at or past the knee, the pool whose
//!    held threads match the limit (the runtime's stacks first, then `/proc`), the connections
//!    to the downstream for a connection limit, the CPU and its busiest pool
//!    ([`Fact::Place`], `diagnosis.place`); or what was seen when that names no one place
//!    ([`Fact::PlaceUnclear`]).
//!
//! Deciding and describing are apart: `analysis` runs the decisions in order and collects the
//! facts; `describe` and `summary` only read a [`Finding`].
//!
//! [`overload`] says what the steps past the knee show the service doing under overload (it
//! queues, sheds, times out or collapses) and [`peak`] where successful throughput peaked.
//! [`next_clients`] is the sweep's adaptive search and [`Gate`] / [`check_gates`] the CI gates.
#![deny(missing_docs)]

mod analysis;
pub mod catalogue;
mod describe;
mod finding;
mod fit;
mod gates;
mod growing;
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
mod stalls;
mod summary;
mod whole_cores;

pub use describe::{describe, Description};
pub use finding::Finding;
pub use fit::{pool_fit, usl_fit};
pub use gates::{check_gates, Gate, GateError};
pub use overload::{overload, peak};
pub use search::{next_clients, next_step};
pub use settle::{assess, SettleRule, Settling};

#[doc(no_inline)]
pub use chokepoint_result::{Diagnosis, Fact, Step, SweepContext};

/// The finding for a finished (or interrupted) sweep. Steps may come in any order, with
/// repeats; 0 or 1 steps give an honest, smaller finding.
pub fn diagnose(steps: &[Step], context: &SweepContext) -> Finding {
    let pts = points::points(steps);
    if pts.is_empty() {
        return finding::nothing_measured();
    }
    if pts.iter().all(|p| p.ok_x <= 0.0) {
        return finding::nothing_succeeded(&pts);
    }
    let decide = |all_in_flight_follows: bool| {
        let mut finding = analysis::Analysis::new(&pts, context, all_in_flight_follows).finish();
        saturation::reconsider_a_pool(&mut finding, steps, context);
        let observed = observed::facts(steps, &finding, context);
        finding.facts.extend(observed);
        finding
    };
    let mut finding = growing::reconsider(decide(true), || decide(false), steps, context);
    let place = place::facts(steps, &finding);
    finding.facts.extend(place);
    finding
}
