//! [`Finding`]: what [`diagnose`](crate::diagnose) decided, as data, and the first two decisions
//! for an empty sweep and a sweep where nothing succeeded.

use crate::describe::describe;
use crate::points::{error_counts, Point};
use chokepoint_result::{
    Diagnosis, Fact, FanOutShape, Kind, Model, Overload, Peak, Plateau, PoolFit, UslFit,
};

/// The finding for a sweep: the kind of limit, its size, the figures it stands on and the facts
/// read from the steps, in the order the evidence tells them. [`describe`] writes its
/// sentences; [`Finding::into_diagnosis`] gives the JSON record with both.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The kind of limit.
    pub kind: Kind,
    /// Its size in concurrent requests; `None` when none was found.
    pub limit: Option<f64>,
    /// The first step where throughput stopped following clients.
    pub knee_clients: Option<u32>,
    /// The base latency L0 of the ideal line, ms; `None` when unknown.
    pub base_latency_ms: Option<f64>,
    /// The plateau the limit stands on.
    pub plateau: Option<Plateau>,
    /// The Universal Scalability Law's fit, with at least 4 client counts.
    pub usl: Option<UslFit>,
    /// The bounded-pool model's fit, for a limit on a plateau.
    pub pool: Option<PoolFit>,
    /// The model with the lower RMS error, when both were fitted.
    pub better_model: Option<Model>,
    /// Whether fanned-out downstream calls look parallel or serial.
    pub fan_out: Option<FanOutShape>,
    /// What overload did to the service past the knee (also a [`Fact::Overload`]).
    pub overload: Option<Overload>,
    /// The step with the most successful throughput.
    pub peak: Option<Peak>,
    /// What was read from the steps, with the numbers and the steps each came from.
    pub facts: Vec<Fact>,
}

impl Finding {
    /// A finding with no limit, no figures and these facts.
    pub(crate) fn bare(kind: Kind, facts: Vec<Fact>) -> Finding {
        Finding {
            kind,
            limit: None,
            knee_clients: None,
            base_latency_ms: None,
            plateau: None,
            usl: None,
            pool: None,
            better_model: None,
            fan_out: None,
            overload: None,
            peak: None,
            facts,
        }
    }

    /// The JSON record: the finding's figures and facts with the sentences [`describe`] writes.
    pub fn into_diagnosis(self) -> Diagnosis {
        let text = describe(&self);
        let place = self.facts.iter().find_map(|fact| match fact {
            Fact::Place { place } => Some(place.as_ref().clone()),
            _ => None,
        });
        Diagnosis {
            kind: self.kind,
            limit: self.limit,
            knee_clients: self.knee_clients,
            summary: text.summary,
            evidence: text.evidence,
            usl: self.usl,
            pool: self.pool,
            better_model: self.better_model.map(|m| m.as_str().to_string()),
            fan_out: self.fan_out.map(|f| f.as_str().to_string()),
            attribution: place.as_ref().map(crate::describe::place::attribution),
            place,
            base_latency_ms: self.base_latency_ms,
            plateau: self.plateau,
            facts: self.facts,
            key_evidence: text.key_evidence,
            overload: self.overload,
            peak: self.peak,
        }
    }
}

/// The finding when no step with clients was measured.
pub(crate) fn nothing_measured() -> Finding {
    Finding::bare(Kind::NoLimitFound, vec![Fact::NothingMeasured])
}

/// The finding when no step had a single successful request: error-bound when requests failed,
/// else nothing to measure.
pub(crate) fn nothing_succeeded(pts: &[Point<'_>]) -> Finding {
    let facts: Vec<Fact> = pts
        .iter()
        .map(|p| Fact::NoSuccess {
            clients: p.clients,
            throughput_rps: p.x,
            errors: error_counts(p),
        })
        .collect();
    let failed = pts
        .iter()
        .any(|p| error_counts(p).values().sum::<u64>() > 0);
    let kind = if failed {
        Kind::ErrorBound
    } else {
        Kind::NoLimitFound
    };
    Finding::bare(kind, facts)
}
