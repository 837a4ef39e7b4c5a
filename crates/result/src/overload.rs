//! What overload does to a service: the steps past the knee, classified (see the diagnosis's
//! `overload` module for the rules). Plain data; the JSON tag is `behaviour`.

use serde::{Deserialize, Serialize};

/// The step of a sweep with the most successful throughput.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Peak {
    /// Its client count.
    pub clients: u32,
    /// Its successful throughput, per second.
    pub throughput_rps: f64,
}

/// What happened to the service past the knee, as load went on growing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "behaviour", rename_all = "kebab-case")]
pub enum Overload {
    /// Throughput stayed flat while latency grew with clients: requests wait in a queue.
    Queues {
        /// The knee's client count.
        from_clients: u32,
        /// The largest client count measured.
        to_clients: u32,
        /// Successful throughput at the largest step, per second.
        throughput_rps: f64,
        /// Mean latency of successful requests at the knee, ms.
        from_latency_ms: f64,
        /// Mean latency of successful requests at the largest step, ms.
        to_latency_ms: f64,
    },
    /// Excess requests fail fast: the service refuses what it cannot serve.
    Sheds {
        /// The first step past the knee with more than 5% errors.
        from_clients: u32,
        /// The largest client count measured.
        at_clients: u32,
        /// The share of requests that failed at the largest step (0..=1).
        error_rate: f64,
        /// Median latency of the failed requests (median over the failing steps), ms.
        error_latency_ms: f64,
        /// The most common error kind (`http_503`, ...).
        error_kind: String,
    },
    /// Excess requests fail after a wait: the errors' latency is the wait they were allowed.
    TimesOut {
        /// The first step past the knee with more than 5% errors.
        from_clients: u32,
        /// The largest client count measured.
        at_clients: u32,
        /// The share of requests that failed at the largest step (0..=1).
        error_rate: f64,
        /// The wait before a request failed: median latency of the failed requests (median over
        /// the failing steps), ms.
        wait_ms: f64,
        /// The most common error kind (`http_503`, `request_timeout`, ...).
        error_kind: String,
    },
    /// Successful throughput fell past a peak as clients grew: more clients cost throughput.
    Collapses {
        /// The peak.
        peak: Peak,
        /// The largest client count measured.
        at_clients: u32,
        /// Successful throughput at the largest step, per second.
        throughput_rps: f64,
        /// How far throughput fell from the peak at the largest step (0..=1).
        fall: f64,
    },
}

impl Overload {
    /// The behaviour's name as it appears in JSON (`queues`, `sheds`, `times-out`, `collapses`).
    pub fn name(&self) -> &'static str {
        match self {
            Overload::Queues { .. } => "queues",
            Overload::Sheds { .. } => "sheds",
            Overload::TimesOut { .. } => "times-out",
            Overload::Collapses { .. } => "collapses",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaviours_are_tagged_in_kebab_case() {
        let collapse = Overload::Collapses {
            peak: Peak {
                clients: 16,
                throughput_rps: 651.0,
            },
            at_clients: 256,
            throughput_rps: 148.0,
            fall: 0.77,
        };
        let json = serde_json::to_value(&collapse).unwrap();
        assert_eq!(json["behaviour"], "collapses");
        assert_eq!(json["peak"]["clients"], 16);
        let back: Overload = serde_json::from_value(json).unwrap();
        assert_eq!(back, collapse);
        let times_out = Overload::TimesOut {
            from_clients: 32,
            at_clients: 128,
            error_rate: 0.85,
            wait_ms: 250.0,
            error_kind: "http_503".into(),
        };
        let json = serde_json::to_value(&times_out).unwrap();
        assert_eq!(json["behaviour"], times_out.name());
        assert_eq!(json["behaviour"], "times-out");
    }
}
