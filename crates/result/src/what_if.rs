//! A what-if (`sweep --what-if M`, `diagnosis.what_if` in `result.json`): what the service
//! would serve with its pool at another size, measured by emulation (the mock's delay scaled,
//! Little's law) or, where that is not valid, only the bound its CPU demand allows. The
//! experiment measures the emulated steps, the diagnosis crate decides the rest and writes the
//! sentence; the renderers print the sentence.
use serde::{Deserialize, Serialize};

/// How the prediction was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MeasuredBy {
    /// Steps run with the mock's delay scaled so that the pool of N serves as a pool of M.
    Emulation,
    /// No emulation was valid: only the CPU bound is given (`predicted_rps` is that bound).
    Bound,
}

/// Why the what-if could not be measured by emulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NotEmulated {
    /// The sweep had no mock: there is no delay to scale.
    NoMock,
    /// The finding is not a pool (`blocking-pool`): scaling a delay says nothing of its size.
    NotAPool,
    /// The pool's hold is not the mock's global delay (a stub's own delay, several calls, or a
    /// hold far from the delay).
    NotTheMocksDelay,
    /// The pool of M would need the mock's delay cut below a millisecond.
    DelayTooShort,
    /// The sweep was interrupted or the emulated steps were.
    Interrupted,
}

/// What stops the service first at the rate of the emulated pool, or past it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum NextLimit {
    /// The CPU: busy at the emulated steps, or (when the pool of M still stood) past the bound.
    Cpu {
        /// Cores the target kept busy at the emulated steps (`None` when not observed).
        cores_busy: Option<f64>,
        /// The cores it may use (its CPU quota's, else the machine's).
        usable_cores: f64,
        /// Whether the CPU stopped the emulated steps themselves (short of the pool of M).
        stopped_the_emulation: bool,
    },
    /// The mock never saw as many calls at once as the service's pool holds: another pool or
    /// a connection cap of about `in_flight` sits in front.
    Concurrency {
        /// The most calls the mock saw in flight at once at the emulated steps.
        in_flight: u64,
    },
    /// Errors took over at the emulated steps.
    Errors {
        /// Share of the emulated requests that failed, 0–1.
        error_rate: f64,
    },
    /// The emulated steps fell short of the pool of M and nothing measured says why.
    Unknown,
}

/// One emulated step, as measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EmulatedStep {
    /// Clients of the step.
    pub clients: u32,
    /// Successful responses per second.
    pub ok_throughput_rps: f64,
    /// Median latency, ms.
    pub p50_ms: f64,
    /// Share of failed requests, 0–1.
    pub error_rate: f64,
    /// The target's CPU, percent of all the machine's cores, when observed.
    pub target_cpu_pct: Option<f64>,
    /// The most calls the mock saw in flight at once.
    pub downstream_max_in_flight: Option<u64>,
}

/// `diagnosis.what_if`: the pool at `pool` instead of `from_pool`, and what it would serve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WhatIf {
    /// M: the pool size predicted (`None` when it was asked as a factor and the finding had
    /// no pool to scale).
    pub pool: Option<u32>,
    /// The pool as the finding names it: the setting that sizes it, else the pool's threads.
    pub name: Option<String>,
    /// N: the pool's size in the finding (its threads when observed, else the limit).
    pub from_pool: Option<u32>,
    /// The predicted throughput, req/s: measured at the emulated steps, or the bound when
    /// `measured_by` is `bound`; `None` when neither could be had.
    pub predicted_rps: Option<f64>,
    /// How the prediction was made.
    pub measured_by: MeasuredBy,
    /// What stops the service first at that rate, or past it.
    pub next_limit: Option<NextLimit>,
    /// The throughput the target's CPU allows: usable cores / CPU time per request.
    pub bound_rps: Option<f64>,
    /// The CPU time a request cost at the plateau steps, ms.
    pub cpu_ms_per_request: Option<f64>,
    /// The cores the bound counts (the CPU quota's when there is one).
    pub usable_cores: Option<f64>,
    /// What a pool of M would serve if nothing else stopped it: M / the hold time.
    pub pool_rps: Option<f64>,
    /// The mock's delay during the sweep, ms.
    pub delay_ms: Option<f64>,
    /// The time each call held a slot at the plateau, ms (N / plateau throughput).
    pub hold_ms: Option<f64>,
    /// The mock's delay at the emulated steps, ms.
    pub emulated_delay_ms: Option<f64>,
    /// The emulated steps.
    pub steps: Vec<EmulatedStep>,
    /// Why it was not measured by emulation, when it was not.
    pub not_emulated: Option<NotEmulated>,
    /// The what-if in one sentence, as the diagnosis crate writes it.
    pub summary: String,
}
