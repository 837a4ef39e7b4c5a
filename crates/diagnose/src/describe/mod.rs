//! [`describe`]: a [`Finding`] in words — the summary sentence, the evidence (one or two
//! sentences per fact, in the facts' order, then the models), and the few short lines that
//! decide it ([`crate::summary`]). Nothing here decides: every number comes from the finding.
//!
//! Each fact's words live in the module of its group, which writes its evidence sentence, its
//! short key line and its rank among the key lines ([`Teller`]): [`curve`] (what the steps
//! measured: base latency, steps, knee, plateau, stalls, errors), [`size`] (Little's law, the
//! mock's ceiling, busy cores, a batch), [`cpu`] (generator, target, machine, threads),
//! [`downstream`] (the mock's connections, fan-out, the pool waiting on it), [`overload`] (past
//! the knee), [`place`] (where the limit sits, and the one-line `attribution`), [`growing`] (a
//! pool that grows instead of queueing), [`streams`] (the HTTP/2 streams a downstream allows);
//! [`models`] writes the fits' sentences after the facts.
//!
//! A new [`Fact`] gets its words in its group's module (a new group: a module with a
//! [`Teller`]) and a line in [`teller`], whose match names every fact and has no wildcard: a
//! fact with no teller does not compile. It also gets a sample in `tests`, which checks that
//! every fact has a sentence, a key line and a rank, or is listed as told elsewhere.

mod cpu;
mod curve;
mod downstream;
mod growing;
mod models;
mod overload;
pub(crate) mod place;
mod size;
mod streams;
#[cfg(test)]
mod tests;

pub(crate) use cpu::{client_side_reading, cores_words};

use crate::finding::Finding;
use crate::summary::{key_evidence, summary};
use chokepoint_result::format::duration;
use chokepoint_result::{CeilingReading, ErrorCounts, Fact, Kind, Service};

/// What [`describe`] writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Description {
    /// One sentence, as the seed's author would write it.
    pub summary: String,
    /// At most four short lines: the evidence that decides the finding.
    pub key_evidence: Vec<String>,
    /// Every fact in a sentence, each number traceable to the steps.
    pub evidence: Vec<String>,
}

/// The finding in words.
pub fn describe(finding: &Finding) -> Description {
    let mut evidence: Vec<String> = finding
        .facts
        .iter()
        .flat_map(|fact| fact_sentences(fact, finding))
        .collect();
    evidence.extend(models::model_sentences(finding));
    Description {
        summary: summary(finding),
        key_evidence: key_evidence(finding),
        evidence,
    }
}

/// `503: 12, reset: 3` — the kinds by count, most first.
pub(crate) fn error_list(counts: &ErrorCounts) -> String {
    let mut v: Vec<(&String, &u64)> = counts.iter().filter(|(_, &n)| n > 0).collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    if v.is_empty() {
        return "kinds not recorded".to_string();
    }
    v.iter()
        .map(|(k, n)| format!("{k}: {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The first fact the `pick` matches.
pub(crate) fn find<'f, T>(finding: &'f Finding, pick: impl Fn(&'f Fact) -> Option<T>) -> Option<T> {
    finding.facts.iter().find_map(pick)
}

/// The size Little's law or the mock's ceiling gave the plateau (the number a pool's or a
/// shedder's summary names).
pub(crate) fn plateau_size(finding: &Finding) -> f64 {
    let ceiling = find(finding, |f| match f {
        Fact::MockCeiling {
            max_in_flight,
            reading,
            ..
        } if *reading != CeilingReading::Disagrees => Some(*max_in_flight),
        Fact::ConnectionCeiling { connections, .. } => Some(f64::from(*connections)),
        _ => None,
    });
    let little = find(finding, |f| match f {
        Fact::Little { in_service, .. } => Some(*in_service),
        _ => None,
    });
    ceiling.or(little).unwrap_or(0.0)
}

/// The time a request holds its slot, in words: `the whole 1.0 s downstream call`.
pub(crate) fn service_words(service_ms: f64, service: Service) -> String {
    match service {
        Service::DownstreamCall => format!("the whole {} downstream call", duration(service_ms)),
        Service::Request => format!("the whole {} request", duration(service_ms)),
    }
}

/// A group module's words for its facts: the evidence sentences, the short key line, the rank
/// among the key lines. Each returns nothing for a fact of another group, and may return
/// nothing for its own (a step's key line is only the largest step's).
struct Teller {
    /// The evidence sentences of one fact (none when another sentence tells it).
    sentences: fn(&Fact, &Finding) -> Vec<String>,
    /// Its key line; `None` for a fact with no short form.
    short: fn(&Fact, &Finding) -> Option<String>,
    /// Where its key line stands in a finding of this kind, lowest first; `None` leaves it out.
    rank: fn(Kind, &Fact) -> Option<u8>,
}

/// The module that words `fact`. The match names every fact and has no wildcard arm, so a new
/// fact does not compile until it has a group; a fact told in another fact's sentence says
/// where.
fn teller(fact: &Fact) -> &'static Teller {
    match fact {
        Fact::NothingMeasured
        | Fact::NoSuccess { .. }
        | Fact::StoppedAnswering { .. }
        | Fact::BaseLatency { .. }
        | Fact::Step { .. }
        | Fact::AllInFlight { .. }
        | Fact::OneStep { .. }
        | Fact::Contention { .. }
        | Fact::Knee { .. }
        | Fact::Stalls { .. }
        | Fact::ClientsUnanswered { .. }
        | Fact::ErrorsStart { .. }
        | Fact::Served { .. }
        | Fact::Errors { .. }
        | Fact::MaxClientsReached { .. }
        | Fact::WarmedUp { .. } => &curve::TELLER,
        // The plateau's sentence is told inside the knee's; its key line and rank are its own.
        Fact::Plateau { .. } => &curve::TELLER,
        Fact::Little { .. }
        | Fact::MockCeiling { .. }
        | Fact::ConnectionCeiling { .. }
        | Fact::CoresBusy { .. }
        | Fact::Batch { .. } => &size::TELLER,
        Fact::GeneratorBound { .. }
        | Fact::GeneratorBusy { .. }
        | Fact::MachineCpu { .. }
        | Fact::CpuSaturated { .. }
        | Fact::CpuPerRequest { .. }
        | Fact::CpuPerRequestRises { .. }
        | Fact::CpuNotLimit { .. }
        | Fact::CpuQuota { .. }
        | Fact::CeilingOverCpu { .. }
        | Fact::TargetNotObserved
        | Fact::MachineSaturated { .. }
        | Fact::MachineBusyBeforeLoad { .. }
        | Fact::MachineTakenAtFall { .. }
        | Fact::ThreadsRunning { .. }
        | Fact::ThreadsRunningBesideIdleCores { .. }
        | Fact::WholeCores { .. }
        | Fact::WholeThreadsRunning { .. }
        | Fact::InterpreterLock { .. } => &cpu::TELLER,
        Fact::MockConnectionCap { .. }
        | Fact::NoMockConnectionCap
        | Fact::DownstreamIdle { .. }
        | Fact::NoMock
        | Fact::BehindForwarder { .. }
        | Fact::FanOut { .. }
        | Fact::PoolWaiting { .. }
        | Fact::DownstreamConnections { .. } => &downstream::TELLER,
        Fact::StreamCap { .. } => &streams::TELLER,
        Fact::Overload { .. } => &overload::TELLER,
        Fact::Place { .. } | Fact::PlaceUnclear { .. } => &place::TELLER,
        Fact::GrowingPool { .. } | Fact::PoolGrewInFront { .. } => &growing::TELLER,
        // Told after the facts, in the models' sentences (`models::model_sentences`).
        Fact::BetterModel { .. } | Fact::Retrograde { .. } => &models::TELLER,
    }
}

/// Whether fewer than half the `clients` were in service at once by Little's law at `x_rps`
/// and `mean_ms`. In the closed model every client always has a request out, so a queue, which
/// answers each in turn, keeps them all in service (its latency grows to clients / X); far fewer
/// means the others waited where a request's latency does not count.
pub(crate) fn few_in_service(x_rps: f64, mean_ms: f64, clients: u32) -> bool {
    crate::points::in_service(x_rps, mean_ms) < f64::from(clients) / 2.0
}

/// The evidence sentences of one fact, from the module that tells it.
fn fact_sentences(fact: &Fact, finding: &Finding) -> Vec<String> {
    (teller(fact).sentences)(fact, finding)
}

/// A fact's key line, from the module that tells it.
pub(crate) fn short(fact: &Fact, finding: &Finding) -> Option<String> {
    (teller(fact).short)(fact, finding)
}

/// Where a fact's key line stands among those of a finding of `kind`; `None` leaves it out.
pub(crate) fn rank(kind: Kind, fact: &Fact) -> Option<u8> {
    (teller(fact).rank)(kind, fact)
}
