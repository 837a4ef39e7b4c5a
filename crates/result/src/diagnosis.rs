//! The finding as the JSON carries it: its [`Kind`], the models' fits and the [`Diagnosis`] record.
use crate::{Fact, Overload, Peak, Place, Plateau};
use serde::{Deserialize, Serialize};

/// The kind of limit a sweep found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A fixed pool of workers held for the whole of a blocking call.
    BlockingPool,
    /// The target's CPU is the limit.
    CpuBound,
    /// Connections run out and come back in batches (periodic stalls).
    ConnectionLimit,
    /// Errors or timeouts start past some concurrency.
    ErrorBound,
    /// The generator's own CPU was saturated: the result is not about the target.
    GeneratorBound,
    /// Throughput kept following clients up to the largest step.
    NoLimitFound,
    /// The whole machine's CPU was saturated at the plateau, the target's CPU unknown or the
    /// generator sharing its cores: the limit is the machine, not something in the target.
    MachineSaturated,
    /// Throughput peaked and fell as clients grew: more clients cost throughput (lock
    /// contention, thrashing; the USL's κ).
    Contention,
    /// A pool that starts a thread per blocked call instead of queueing: its threads grew with
    /// the clients past the point where throughput stopped following them.
    GrowingPool,
}

impl Kind {
    /// The kind's name as it appears in JSON and on the command line (`blocking-pool`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::BlockingPool => "blocking-pool",
            Kind::CpuBound => "cpu-bound",
            Kind::ConnectionLimit => "connection-limit",
            Kind::ErrorBound => "error-bound",
            Kind::GeneratorBound => "generator-bound",
            Kind::NoLimitFound => "no-limit-found",
            Kind::MachineSaturated => "machine-saturated",
            Kind::Contention => "contention",
            Kind::GrowingPool => "growing-pool",
        }
    }

    /// Every kind, in the order DESIGN.md lists them.
    pub const ALL: [Kind; 9] = [
        Kind::BlockingPool,
        Kind::CpuBound,
        Kind::ConnectionLimit,
        Kind::ErrorBound,
        Kind::GeneratorBound,
        Kind::NoLimitFound,
        Kind::MachineSaturated,
        Kind::Contention,
        Kind::GrowingPool,
    ];

    /// Parses a kind's name (`blocking-pool`, ...).
    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A Universal Scalability Law fit: X(N) = λN / (1 + σ(N−1) + κN(N−1)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct UslFit {
    /// Contention (serial fraction).
    pub sigma: f64,
    /// Coherency (crosstalk) cost.
    pub kappa: f64,
    /// Throughput of one client, per second.
    pub lambda: f64,
    /// Concurrency of peak throughput, √((1−σ)/κ); `None` when κ is 0.
    pub n_max: Option<f64>,
    /// Coefficient of determination of the fit on the measured steps.
    pub r_squared: f64,
}

impl UslFit {
    /// The throughput the law gives at `clients`.
    pub fn throughput(&self, clients: f64) -> f64 {
        let n = clients;
        self.lambda * n / (1.0 + self.sigma * (n - 1.0) + self.kappa * n * (n - 1.0))
    }
}

/// The bounded-pool model: X(N) = min(N / base latency, limit / service time).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PoolFit {
    /// The pool size the model puts behind the plateau.
    pub limit: f64,
    /// The plateau throughput, per second.
    pub plateau_rps: f64,
    /// Coefficient of determination of the fit on the measured steps.
    pub r_squared: f64,
    /// The base latency L0 of the model's rising part, ms (0 in results written before it was
    /// recorded).
    #[serde(default)]
    pub base_latency_ms: f64,
}

impl PoolFit {
    /// The ideal line the model rises along: clients / L0 (infinite when L0 is unknown).
    pub fn ideal(&self, clients: f64) -> f64 {
        clients / (self.base_latency_ms / 1000.0)
    }

    /// The throughput the model gives at `clients`: min(clients / L0, plateau).
    pub fn throughput(&self, clients: f64) -> f64 {
        self.ideal(clients).min(self.plateau_rps)
    }
}

/// The finding: what limits the target, how big, and the numbers behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnosis {
    /// The kind of limit.
    pub kind: Kind,
    /// The size of the limit in concurrent requests (a pool's size); `None` when none was found.
    pub limit: Option<f64>,
    /// The first step where throughput stopped following clients.
    pub knee_clients: Option<u32>,
    /// One sentence, as the seed's author would write it.
    pub summary: String,
    /// Sentences with the numbers behind the finding, each traceable to the steps.
    pub evidence: Vec<String>,
    /// The USL fit, when there were enough steps.
    pub usl: Option<UslFit>,
    /// The bounded-pool model's fit, when it applies.
    #[serde(default)]
    pub pool: Option<PoolFit>,
    /// Which model fits the steps better: `"bounded-pool"` or `"usl"`; `None` without both fits.
    #[serde(default)]
    pub better_model: Option<String>,
    /// For fan-out targets: `"parallel"` or `"serial"`, when the downstream evidence shows it.
    #[serde(default)]
    pub fan_out: Option<String>,
    /// Where in the target the limit sits (a thread pool's name, ...), from the observers.
    pub attribution: Option<String>,
    /// Where the limit sits, typed (the one-line `attribution` is rendered from it); `None`
    /// when the evidence points at no one place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<Place>,
    /// The base latency L0 of the ideal line X(c) = c / L0, ms; `None` when unknown.
    #[serde(default)]
    pub base_latency_ms: Option<f64>,
    /// The plateau the limit stands on, when there is one.
    #[serde(default)]
    pub plateau: Option<Plateau>,
    /// What the diagnosis read, typed, in the order of the evidence (see [`Fact`]).
    #[serde(default)]
    pub facts: Vec<Fact>,
    /// The evidence that decides the finding, in at most four short lines.
    #[serde(default)]
    pub key_evidence: Vec<String>,
    /// What overload did to the service past the knee; `None` without two steps from the knee
    /// on.
    #[serde(default)]
    pub overload: Option<Overload>,
    /// The step with the most successful throughput.
    #[serde(default)]
    pub peak: Option<Peak>,
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn kind_names_round_trip_through_json_and_parse() {
        for kind in Kind::ALL {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
            assert_eq!(Kind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(Kind::parse("blocking_pool"), None);
    }
}
