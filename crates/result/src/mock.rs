//! What the controlled downstream saw: `/__chokepoint/stats` ([`MockStats`]) and a step's reading
//! of it ([`DownstreamStep`]).
use serde::{Deserialize, Serialize};

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
    /// Of the connections open now, those speaking HTTP/2 (each request on them is a stream).
    #[serde(default)]
    pub h2_connections_open: u64,
    /// Of the connections accepted in the window, those that spoke HTTP/2.
    #[serde(default)]
    pub h2_connections_accepted: u64,
    /// The most HTTP/2 connections open at once in the window (those open when it began count).
    #[serde(default)]
    pub max_h2_connections_open: u64,
    /// The most requests (streams) in flight at once on one HTTP/2 connection in the window;
    /// 0 when none spoke HTTP/2. At `config.max_concurrent_streams` the client was held by the
    /// stream cap.
    #[serde(default)]
    pub max_streams_per_connection: u64,
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
    /// `--max-concurrent-streams`: the SETTINGS_MAX_CONCURRENT_STREAMS each HTTP/2 connection
    /// advertises and enforces, if set (none: no limit is advertised).
    #[serde(default)]
    pub max_concurrent_streams: Option<u64>,
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
    /// The most HTTP/2 connections open at once at the downstream during the step (a client
    /// that keeps its connections has them all open from the step's start); 0 when none spoke
    /// HTTP/2.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub h2_connections: u64,
    /// HTTP/2 connections the downstream accepted during the step (0 for a client that keeps
    /// the ones it had).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub h2_connections_accepted: u64,
    /// The most requests (streams) in flight at once on one HTTP/2 connection during the step.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub max_streams_per_connection: u64,
    /// The SETTINGS_MAX_CONCURRENT_STREAMS the downstream advertised on each HTTP/2 connection
    /// (the mock's `--max-concurrent-streams`); `None` when it advertised none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent_streams: Option<u64>,
}

/// Whether a count is 0: such HTTP/2 counts are left out of a step that spoke none.
fn is_zero(n: &u64) -> bool {
    *n == 0
}
