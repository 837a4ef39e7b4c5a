//! [`describe`]: a [`Finding`] in words — the summary sentence, the evidence (one or two
//! sentences per fact, in the facts' order, then the models), and the few short lines that
//! decide it ([`crate::summary`]). Nothing here decides: every number comes from the finding.
//!
//! Each fact's sentence is written by the module for its kind: [`curve`] (what the steps
//! measured: base latency, steps, knee, plateau, stalls, errors), [`size`] (Little's law, the
//! mock's ceiling, busy cores, a batch), [`cpu`] (generator, target, machine, threads),
//! [`downstream`] (the mock's connections, fan-out, the pool waiting on it), [`overload`] (past
//! the knee), [`place`] (where the limit sits, and the one-line `attribution`); [`models`]
//! writes the fits' sentences after the facts.

mod cpu;
mod curve;
mod downstream;
mod models;
mod overload;
pub(crate) mod place;
mod size;

pub(crate) use overload::past_the_knee;

use crate::finding::Finding;
use crate::summary::{key_evidence, summary};
use chokepoint_result::format::duration;
use chokepoint_result::{CeilingReading, ErrorCounts, Fact, Service};

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

/// The evidence sentences of one fact, from the module that tells its kind; none for the facts
/// told elsewhere (the plateau in the knee's sentence, the models' facts with the models).
fn fact_sentences(fact: &Fact, finding: &Finding) -> Vec<String> {
    match fact {
        Fact::Batch { .. } => size::batch_sentences(fact),
        Fact::Overload { overload } => vec![past_the_knee(overload)],
        Fact::GrowingPool { .. } => crate::growing::sentence(fact).into_iter().collect(),
        _ => curve::sentence(fact, finding)
            .or_else(|| size::sentence(fact, finding))
            .or_else(|| cpu::sentence(fact, finding))
            .or_else(|| downstream::sentence(fact, finding))
            .or_else(|| place::sentence(fact, finding))
            .into_iter()
            .collect(),
    }
}
