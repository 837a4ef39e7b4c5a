//! The records that cross chokepoint's stages, and nothing else.
//!
//! Data flows one way through chokepoint: the load engine measures a run and hands back a
//! [`LoadReport`]; the experiment turns each load run of a sweep into a [`Step`] (adding what the
//! mock saw, [`MockStats`], and what the observers saw of the target); the diagnosis reads the
//! steps and a [`SweepContext`] and writes a [`Diagnosis`]; the renderers read a finished
//! [`SweepResult`]. Every type here is plain data with serde derives: the JSON they produce is
//! chokepoint's contract with other tools (see DESIGN.md "Results"), so fields may be added but the
//! documented ones are never renamed.
//!
//! Error kinds are strings so that new kinds can be added without breaking readers; the
//! constants in [`error_kind`] are the names the engine uses.
#![deny(missing_docs)]

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod finding;
pub mod format;
pub use finding::{CeilingReading, Fact, FanOutShape, Model, Plateau, Service, Span};
mod shard;
pub use shard::{LatencyHistograms, LoadResultFile, MergeInfo, MergedShard, ShardInfo};
pub mod observed;
pub use observed::{
    ConnectionCounts, Connections, ObservationNote, PeerConnections, PoolThreads, SocketCounts,
    ThreadCounts, ThreadsByPool, WaitReason,
};
mod overload;
pub use overload::{Overload, Peak};

/// Counts by error kind (see [`error_kind`]), sorted by name so JSON output is stable.
pub type ErrorCounts = BTreeMap<String, u64>;

/// The names of error kinds, as they appear as keys of [`ErrorCounts`].
pub mod error_kind {
    /// The TCP connect was refused (nobody listens on the port).
    pub const CONNECT_REFUSED: &str = "connect_refused";
    /// The TCP connect did not complete within the request timeout.
    pub const CONNECT_TIMEOUT: &str = "connect_timeout";
    /// Connected, but the full response did not arrive within the request timeout.
    pub const REQUEST_TIMEOUT: &str = "request_timeout";
    /// The peer reset the connection, or closed it before a complete response.
    pub const RESET: &str = "reset";
    /// The TLS handshake failed (a certificate not trusted, no protocol in common, ...).
    pub const TLS: &str = "tls";
    /// The peer answered something that is not HTTP/1.1 (garbage, a malformed chunk).
    pub const PROTOCOL: &str = "protocol";
    /// Any other I/O error.
    pub const OTHER: &str = "other";

    /// The kind of a complete response with a non-2xx status: `http_503`, `http_404`, ...
    pub fn http_status(code: u16) -> String {
        format!("http_{code}")
    }

    /// Whether a kind names an HTTP status (the server answered) rather than a transport failure.
    pub fn is_http_status(kind: &str) -> bool {
        kind.starts_with("http_")
    }
}

/// Latency percentiles in milliseconds, from an HdrHistogram.
///
/// `min`, `mean`, `p50`, `p90`, `p95`, `p99`, `p999` and `max` are the contract; the other
/// percentiles are ab's list, kept for the terminal report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyMs {
    /// Smallest latency.
    pub min: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 66th percentile.
    #[serde(default)]
    pub p66: f64,
    /// 75th percentile.
    #[serde(default)]
    pub p75: f64,
    /// 80th percentile.
    #[serde(default)]
    pub p80: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 98th percentile.
    #[serde(default)]
    pub p98: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Largest latency.
    pub max: f64,
}

/// How many requests of the open model started late, and by how much (wrk2's view).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LateStarts {
    /// Requests sent more than 1 ms after their scheduled time.
    pub count: u64,
    /// Mean lateness of those requests, in milliseconds.
    pub mean_ms: f64,
    /// Largest lateness, in milliseconds.
    pub max_ms: f64,
}

/// One bucket of a run's time series (the bucket width is [`LoadReport::timeline_bucket_s`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TimelinePoint {
    /// Start of the bucket, in seconds since the measured window began.
    pub t_s: f64,
    /// Responses completed in the bucket (ok and errors).
    pub completed: u64,
    /// Of those, successful (2xx) responses.
    pub ok: u64,
    /// Mean latency of the responses completed in the bucket, in milliseconds (0 when none).
    pub mean_latency_ms: f64,
    /// Requests in flight at the end of the bucket.
    #[serde(default)]
    pub in_flight: u64,
}

/// What one run of the load engine measured: the `load --json` contract.
///
/// Fields missing from a saved file read as their defaults (files written before a field was
/// added, and sweep steps, which carry the report flattened, stay readable).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadReport {
    /// The URL that was loaded.
    pub target: String,
    /// Requests completed in the measured window (ok + errors).
    pub requests: u64,
    /// Requests answered with a 2xx status.
    pub ok: u64,
    /// Failed requests by kind (see [`error_kind`]); `ok + sum(errors) == requests`.
    pub errors: ErrorCounts,
    /// Completed requests per second over the measured window.
    pub throughput_rps: f64,
    /// Successful requests per second over the measured window.
    pub ok_throughput_rps: f64,
    /// Latency of all completed requests. In the open model this is measured from the intended
    /// send time (corrected for coordinated omission).
    pub latency_ms: LatencyMs,
    /// Latency of successful requests only; `None` when there were none.
    pub ok_latency_ms: Option<LatencyMs>,
    /// Latency of failed requests only (how fast a shedding server says no); `None` when none.
    pub error_latency_ms: Option<LatencyMs>,
    /// Open model only: latency measured from the actual send time (wrk2's `--u_latency`).
    pub uncorrected_latency_ms: Option<LatencyMs>,
    /// Open model only: requests that started late.
    pub late_starts: Option<LateStarts>,
    /// Closed model: number of clients. Open model: the most connections used at once.
    pub clients: u32,
    /// Open model only: the requested arrival rate, per second.
    pub rate_rps: Option<f64>,
    /// Length of the measured window, in seconds.
    pub duration_s: f64,
    /// TCP connections opened, including reconnects after the server closed a kept-alive one.
    pub connections_opened: u64,
    /// TLS handshakes completed (`https://` only; one per connection opened, when none failed).
    pub tls_handshakes: u64,
    /// How long the TCP connects took (part of the latency of the requests that opened a
    /// connection); `None` when no connection was opened in the measured window.
    pub connect_ms: Option<LatencyMs>,
    /// How long the TLS handshakes took, after the connect (also part of the latency);
    /// `None` without handshakes.
    pub tls_handshake_ms: Option<LatencyMs>,
    /// With several requests (`--targets`): one entry per request of the file, in its order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<TargetFigures>,
    /// Whether connections were kept alive between requests.
    pub keepalive: bool,
    /// CPU used by the generator's own threads, as a percentage of the cores it may use
    /// (100 = every core it may use was busy all the time).
    pub generator_cpu_pct: f64,
    /// True when `generator_cpu_pct` exceeded 90%: the figures may show the generator's limit.
    pub generator_saturated: bool,
    /// Response bytes received (headers and body).
    pub bytes_received: u64,
    /// Width of a [`TimelinePoint`] bucket, in seconds.
    pub timeline_bucket_s: f64,
    /// Throughput and latency over time, one point per bucket.
    pub timeline: Vec<TimelinePoint>,
    /// True when the run was interrupted before its planned end.
    pub interrupted: bool,
    /// The exact distributions behind the percentiles, so that shards can be merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histograms: Option<LatencyHistograms>,
}

/// What one request of a targets file got in a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TargetFigures {
    /// Its method.
    pub method: String,
    /// Its URL.
    pub url: String,
    /// Its completed requests in the measured window.
    pub requests: u64,
    /// Of those, answered with a 2xx status.
    pub ok: u64,
    /// Its failed requests by kind.
    pub errors: ErrorCounts,
    /// Its completed requests per second.
    pub throughput_rps: f64,
    /// Its latency.
    pub latency_ms: LatencyMs,
}

impl LoadReport {
    /// Failed requests, all kinds together.
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }

    /// Failed requests as a share of all requests (0 when there were none).
    pub fn error_rate(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.error_count() as f64 / self.requests as f64
        }
    }
}

/// Count, errors and latency of a span of a run (an interval, or everything so far): the figures
/// of JMeter's summariser line, sent by the load engine while it runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SpanFigures {
    /// Completed requests.
    pub requests: u64,
    /// Of those, failed.
    pub errors: u64,
    /// Length of the span, in seconds.
    pub elapsed_s: f64,
    /// Smallest latency, ms (0 when none).
    pub min_ms: f64,
    /// Mean latency, ms (0 when none).
    pub mean_ms: f64,
    /// Largest latency, ms (0 when none).
    pub max_ms: f64,
}

impl SpanFigures {
    /// Requests per second over the span (0 for an empty span).
    pub fn rate(&self) -> f64 {
        if self.elapsed_s > 0.0 {
            self.requests as f64 / self.elapsed_s
        } else {
            0.0
        }
    }

    /// Failed requests as a share of all requests, in percent (0 when there were none).
    pub fn error_pct(&self) -> f64 {
        if self.requests > 0 {
            100.0 * self.errors as f64 / self.requests as f64
        } else {
            0.0
        }
    }
}

/// One stub of a running mock, as `/__chokepoint/stats` reports it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StubStats {
    /// The stub's id (WireMock's `id` or `uuid`, or one the mock made up).
    pub id: String,
    /// The stub's `name`, or a short description of its request pattern.
    pub name: String,
    /// Requests this stub answered in the current window.
    pub requests: u64,
    /// The stub's typical delay in milliseconds (fixed delay, or a distribution's median,
    /// plus the global delay); `None` when it has none.
    pub delay_ms: Option<f64>,
}

/// A sample of the mock's in-flight count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct InFlightSample {
    /// Milliseconds since the window began.
    pub t_ms: u64,
    /// The most requests in flight at once during the sample period.
    pub in_flight: u64,
    /// Connections open at the end of the sample period.
    pub connections_open: u64,
}

/// What the controlled downstream saw since its last reset (`GET /__chokepoint/stats`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MockStats {
    /// Seconds since the window began (the last reset, or the start).
    pub window_s: f64,
    /// Requests received in the window (matched or not).
    pub requests: u64,
    /// Requests that matched no stub.
    pub unmatched: u64,
    /// Per-stub counts and delays.
    pub stubs: Vec<StubStats>,
    /// Requests in flight now.
    pub in_flight: u64,
    /// The most requests in flight at once in the window.
    pub max_in_flight: u64,
    /// Time-weighted mean of requests in flight over the window.
    pub mean_in_flight: f64,
    /// In-flight counts over time (every 100 ms), bounded in length.
    pub in_flight_series: Vec<InFlightSample>,
    /// Connections open now.
    pub connections_open: u64,
    /// The most connections open at once in the window.
    pub max_connections_open: u64,
    /// Connections accepted in the window.
    pub connections_accepted: u64,
    /// The mock's configuration that the diagnosis needs.
    pub config: MockConfigView,
}

/// The parts of a mock's configuration that explain what it saw.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MockConfigView {
    /// The global fixed delay (`--delay` or the admin `fixedDelay`), in milliseconds.
    pub fixed_delay_ms: Option<f64>,
    /// `--max-connections`, if set.
    pub max_connections: Option<u64>,
    /// `--keepalive-timeout` in milliseconds, if set.
    pub keepalive_timeout_ms: Option<u64>,
}

/// In-flight counts at the downstream during one step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DownstreamInFlight {
    /// Time-weighted mean of calls in flight.
    pub mean: f64,
    /// The most calls in flight at once.
    pub max: u64,
}

/// The downstream's view of one step (from the mock), kept beside the contract's
/// `downstream_inflight`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DownstreamStep {
    /// Downstream requests received during the step.
    pub requests: u64,
    /// Per-stub counts and delays.
    pub stubs: Vec<StubStats>,
    /// The most connections open at once at the downstream.
    pub max_connections_open: u64,
    /// Connections the downstream accepted during the step.
    pub connections_accepted: u64,
    /// In-flight samples at the downstream during the step.
    pub in_flight_series: Vec<InFlightSample>,
}

/// One concurrency level of a sweep: the contract's step record.
///
/// A step is its load run's [`LoadReport`] (flattened into the step's JSON object, so a step
/// carries every figure of `load --json` under the same names) plus what was seen around it: the
/// mock, the target's and the machine's CPU, the ramp. It derefs to the report, so a step's
/// figures read as `step.throughput_rps`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The step's load run (clients, throughput, latency, errors, generator CPU, timeline...).
    #[serde(flatten)]
    pub load: LoadReport,
    /// Failed requests as a share of all requests ([`LoadReport::error_rate`]).
    pub error_rate: f64,
    /// Calls in flight at the mock; `None` when no mock was given.
    pub downstream_inflight: Option<DownstreamInFlight>,
    /// More of what the mock saw; `None` when no mock was given.
    pub downstream: Option<DownstreamStep>,
    /// The target process's CPU use, percent of all cores; `None` when it was not observed.
    pub target_cpu_pct: Option<f64>,
    /// The whole machine's CPU use (every process), percent of all cores; `None` when unread.
    #[serde(default)]
    pub machine_cpu_pct: Option<f64>,
    /// The processes observed as the target during the step (a PID and its descendants, listed
    /// again at every sample); empty when the target was not observed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observed_pids: Vec<i32>,
    /// The target's threads by pool and state; `None` when the target was not observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_by_pool: Option<ThreadsByPool>,
    /// The target's TCP connections by side and state; `None` when the target was not observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<Connections>,
    /// Why some of that evidence is missing (a process gone, a file unreadable).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observation_notes: Vec<ObservationNote>,
    /// Seconds spent in the ramp (until every client had completed a request), not counted.
    pub ramp_s: f64,
    /// Why the sweep ran this client count; `None` in results written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen_because: Option<StepChoice>,
    /// Seconds of load the step cost: its ramp plus its measured window (`duration_s`), which is
    /// shorter than `--step` when the step ended early because its figures were known well
    /// enough.
    #[serde(default)]
    pub measured_s: f64,
    /// Why the measured window ended: `settled` (known well enough), `ceiling` (`--step` ran
    /// out), `fixed` (`--step-fixed`); `None` in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<StepEnd>,
}

impl std::ops::Deref for Step {
    type Target = LoadReport;

    fn deref(&self) -> &LoadReport {
        &self.load
    }
}

impl std::ops::DerefMut for Step {
    fn deref_mut(&mut self) -> &mut LoadReport {
        &mut self.load
    }
}

/// Why a sweep ran a client count: the adaptive search's reason, as data.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum StepChoice {
    /// The client count was given with `--clients`.
    Given,
    /// The first step of a search.
    Start,
    /// Throughput still followed clients at the largest step: doubled.
    Doubling {
        /// The largest step so far.
        from: u32,
    },
    /// Bisection between the last step that followed clients and the first that did not.
    Narrowing {
        /// The last client count whose throughput followed clients.
        last_good: u32,
        /// The first client count whose throughput did not.
        first_bad: u32,
    },
    /// The mock saw a flat ceiling of calls in flight below the clients: one step just past it
    /// confirms it, instead of narrowing down on the knee.
    ConfirmCeiling {
        /// The mock's most calls in flight.
        in_flight: u32,
        /// The step that showed it.
        seen_at: u32,
    },
    /// The target kept a whole number of cores busy past the knee: one step past it confirms it.
    ConfirmCores {
        /// Cores the target kept busy.
        cores: f64,
        /// The step that showed it.
        seen_at: u32,
    },
    /// One step well past the knee, to see the plateau hold.
    ConfirmPlateau {
        /// The size the plateau suggests (plateau throughput × base latency).
        estimate: f64,
    },
    /// The knee is known: a step at a multiple of the estimated limit, to see what overload
    /// does to the service (it queues, sheds, times out or collapses).
    OverloadProbe {
        /// The multiple of the estimate (2 or 4).
        multiple: u32,
        /// The estimated limit, in requests in service.
        estimate: f64,
    },
    /// Doubling would overshoot `--max-clients`: the last step is at the maximum.
    MaxClients,
}

/// Why a step's measured window ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepEnd {
    /// Its throughput was known within the stopping rule's interval.
    Settled,
    /// `--step`, the ceiling, ran out first.
    Ceiling,
    /// Fixed-length steps (`--step-fixed`).
    Fixed,
}

impl Step {
    /// The timeline without a last bucket that the window's end cut to less than half its width:
    /// its few completions would read as a stall or a drop in a rate. (The full timeline still
    /// adds up to `requests`.)
    pub fn whole_timeline(&self) -> &[TimelinePoint] {
        let bucket = self.timeline_bucket_s;
        match self.timeline.split_last() {
            Some((last, rest)) if bucket > 0.0 && self.duration_s - last.t_s < bucket / 2.0 => rest,
            _ => &self.timeline,
        }
    }
}

/// What the diagnosis knows besides the steps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SweepContext {
    /// The mock's global fixed delay, in milliseconds, when a mock was given and has one.
    pub downstream_delay_ms: Option<f64>,
    /// Whether a mock was given (downstream evidence exists).
    pub mock_present: bool,
    /// The mock's `--max-connections`, if any.
    pub mock_max_connections: Option<u64>,
    /// The mock's `--keepalive-timeout`, in milliseconds, if any.
    pub mock_keepalive_timeout_ms: Option<u64>,
    /// Whether the target process was observed (so `target_cpu_pct` is meaningful).
    pub target_observed: bool,
    /// The largest client count the sweep was allowed to try.
    pub max_clients: u32,
    /// Cores of the machine the target ran on (what `target_cpu_pct` is a share of), if known.
    #[serde(default)]
    pub cores: Option<u32>,
}

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
        }
    }

    /// Every kind, in the order DESIGN.md lists them.
    pub const ALL: [Kind; 8] = [
        Kind::BlockingPool,
        Kind::CpuBound,
        Kind::ConnectionLimit,
        Kind::ErrorBound,
        Kind::GeneratorBound,
        Kind::NoLimitFound,
        Kind::MachineSaturated,
        Kind::Contention,
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

/// A sweep's saved result: `DIR/result.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepResult {
    /// The URL that was swept.
    pub target: String,
    /// What the diagnosis knew besides the steps.
    pub context: SweepContext,
    /// The steps in the order they ran.
    pub steps: Vec<Step>,
    /// The finding; `None` while the sweep runs (steps are saved as they end).
    pub diagnosis: Option<Diagnosis>,
    /// True when the sweep was interrupted before its planned end.
    pub interrupted: bool,
    /// The chokepoint version that wrote this file.
    pub chokepoint_version: String,
    /// Set when this is one shard of a sweep run by several generators.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// Set when this result was merged from shards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge: Option<MergeInfo>,
    /// Wall time of the whole sweep, seconds: steps, ramps, drains between steps.
    #[serde(default)]
    pub duration_s: f64,
    /// Seconds of load over all steps (the sum of their `measured_s`).
    #[serde(default)]
    pub load_s: f64,
}

/// One scenario of `chokepoint demo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DemoScenario {
    /// Scenario name (the demo route, e.g. `actors`).
    pub name: String,
    /// The seed it comes from (`000`, ...).
    pub seed: String,
    /// The limit the scenario is built with; `None` for scenarios without one.
    pub expected_limit: Option<f64>,
    /// The limit the diagnosis found.
    pub found_limit: Option<f64>,
    /// The kind found.
    pub kind: Kind,
    /// The kind expected.
    pub expected_kind: Kind,
    /// Whether kind and limit (within 10%) match.
    pub ok: bool,
    /// Seconds the scenario took.
    pub seconds: f64,
    /// The finding's summary sentence.
    #[serde(default)]
    pub summary: String,
}

/// `demo --json FILE`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DemoResult {
    /// One entry per scenario, in the order they ran.
    pub scenarios: Vec<DemoScenario>,
    /// Seconds the whole demo took.
    pub seconds: f64,
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

    #[test]
    fn a_last_bucket_cut_short_by_the_window_is_left_out_of_the_whole_timeline() {
        let point = |t_s: f64| TimelinePoint {
            t_s,
            completed: 2,
            ..TimelinePoint::default()
        };
        let step = |duration_s: f64| Step {
            load: LoadReport {
                duration_s,
                timeline_bucket_s: 0.1,
                timeline: vec![point(0.0), point(0.1), point(0.2)],
                ..LoadReport::default()
            },
            ..Step::default()
        };
        assert_eq!(step(0.2009).whole_timeline().len(), 2);
        assert_eq!(step(0.27).whole_timeline().len(), 3);
    }

    /// The keys a step had before it held its load report (the contract's and the added ones).
    const STEP_KEYS_BEFORE_FLATTEN: [&str; 19] = [
        "clients",
        "throughput_rps",
        "ok_throughput_rps",
        "requests",
        "ok",
        "latency_ms",
        "ok_latency_ms",
        "error_latency_ms",
        "errors",
        "error_rate",
        "downstream_inflight",
        "downstream",
        "target_cpu_pct",
        "generator_cpu_pct",
        "machine_cpu_pct",
        "duration_s",
        "ramp_s",
        "timeline_bucket_s",
        "timeline",
    ];

    #[test]
    fn a_step_keeps_every_key_it_had_and_reads_a_recorded_step_back_unchanged() {
        let json = serde_json::to_value(Step::default()).unwrap();
        let keys = json.as_object().unwrap();
        for key in STEP_KEYS_BEFORE_FLATTEN {
            assert!(keys.contains_key(key), "the step lost '{key}'");
        }
        // A step as a sweep wrote it before: every value it had reads back the same.
        let recorded = serde_json::json!({
            "clients": 20, "throughput_rps": 19.7, "ok_throughput_rps": 19.5, "requests": 197,
            "ok": 195, "latency_ms": {"min": 1.0, "mean": 2.0, "p50": 2.0, "p90": 3.0,
            "p95": 3.0, "p99": 4.0, "p999": 5.0, "max": 6.0}, "ok_latency_ms": null,
            "error_latency_ms": null, "errors": {"http_503": 2}, "error_rate": 0.01,
            "downstream_inflight": {"mean": 19.8, "max": 20}, "downstream": null,
            "target_cpu_pct": 3.5, "generator_cpu_pct": 1.5, "duration_s": 10.0,
            "ramp_s": 1.0, "timeline_bucket_s": 0.1, "timeline": []
        });
        let step: Step = serde_json::from_value(recorded.clone()).unwrap();
        assert_eq!(
            (step.clients, step.requests, step.errors["http_503"]),
            (20, 197, 2)
        );
        let written = serde_json::to_value(&step).unwrap();
        for (key, value) in recorded.as_object().unwrap() {
            if key == "latency_ms" {
                continue; // written with ab's extra percentiles beside the recorded ones
            }
            assert_eq!(&written[key], value, "'{key}' changed");
        }
    }

    #[test]
    fn error_rate_counts_every_kind() {
        let mut report = LoadReport {
            requests: 10,
            ok: 6,
            ..LoadReport::default()
        };
        report.errors.insert(error_kind::RESET.into(), 1);
        report.errors.insert(error_kind::http_status(503), 3);
        assert_eq!(report.error_count(), 4);
        assert!((report.error_rate() - 0.4).abs() < 1e-12);
        assert!(error_kind::is_http_status("http_503"));
        assert!(!error_kind::is_http_status(error_kind::RESET));
    }
}
