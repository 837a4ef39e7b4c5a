//! [`Finding`]: what the diagnosis decided, as data: the kind of limit, its size, the figures it
//! stands on and the facts it read. The diagnosis crate builds it and tells it in words; a
//! [`Diagnosis`](crate::Diagnosis) holds it with those words, and `result.json` writes its
//! fields flat in the `diagnosis` object.

use crate::{Fact, FanOutShape, Kind, Model, Overload, Peak, Place, Plateau, PoolFit, UslFit};

/// The finding for a sweep: the kind of limit, its size, the figures it stands on and the facts
/// read from the steps, in the order the evidence tells them.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The kind of limit.
    pub kind: Kind,
    /// Its size in concurrent requests (a pool's size); `None` when none was found.
    pub limit: Option<f64>,
    /// The first step where throughput stopped following clients.
    pub knee_clients: Option<u32>,
    /// The base latency L0 of the ideal line X(c) = c / L0, ms; `None` when unknown.
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
    /// What overload did to the service past the knee; `None` without two steps from the knee
    /// on. The diagnosis also tells it as a [`Fact::Overload`]; a [`Diagnosis`](crate::Diagnosis)
    /// keeps only this field.
    pub overload: Option<Overload>,
    /// The step with the most successful throughput.
    pub peak: Option<Peak>,
    /// What was read from the steps, with the numbers and the steps each came from (see
    /// [`Fact`]).
    pub facts: Vec<Fact>,
}

impl Finding {
    /// A finding with no limit, no figures and these facts.
    pub fn bare(kind: Kind, facts: Vec<Fact>) -> Finding {
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

    /// Where the limit sits: the [`Fact::Place`] among the facts.
    pub fn place(&self) -> Option<&Place> {
        self.facts.iter().find_map(|fact| match fact {
            Fact::Place { place } => Some(place.as_ref()),
            _ => None,
        })
    }
}
