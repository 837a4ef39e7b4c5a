//! What one load run measured: the [`LoadReport`] of `load --json`, and the figures read from
//! it (latency percentiles, error counts by kind, the timeline in buckets).
use crate::LatencyHistograms;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// HTTP/2: the server reset the stream with `REFUSED_STREAM` (not processed; most often the
    /// connection was at the server's `SETTINGS_MAX_CONCURRENT_STREAMS`).
    pub const REFUSED_STREAM: &str = "refused_stream";
    /// HTTP/2: a `GOAWAY` ended the stream: one with an error code, or a graceful one (the
    /// stream not processed) that the retry on a new connection met again.
    pub const GOAWAY: &str = "goaway";
    /// gRPC: a complete response (HTTP status 200) without a `grpc-status` in its trailers (or
    /// in its headers, Trailers-Only), or with one that is not a number.
    pub const GRPC_NO_STATUS: &str = "grpc_no_status";

    /// gRPC's status codes by number, as `doc/statuscodes.md` of grpc/grpc names them.
    const GRPC_CODES: [&str; 17] = [
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    ];

    /// The name of gRPC status `code` (`UNAVAILABLE`), or its number for one gRPC does not define.
    pub fn grpc_code_name(code: u32) -> String {
        match GRPC_CODES.get(code as usize) {
            Some(name) => name.to_string(),
            None => code.to_string(),
        }
    }

    /// The number of gRPC status `name` (`NOT_FOUND` is 5; any case), as a mock's
    /// `grpc-status-name` header gives it (WireMock's gRPC extension).
    pub fn grpc_code_of(name: &str) -> Option<u32> {
        GRPC_CODES
            .iter()
            .position(|known| known.eq_ignore_ascii_case(name.trim()))
            .map(|i| i as u32)
    }

    /// The kind of a gRPC call that ended with a non-zero `grpc-status`: `grpc_unavailable`,
    /// `grpc_deadline_exceeded`, ... (`grpc_17` for a code gRPC does not define).
    pub fn grpc_status(code: u32) -> String {
        format!("grpc_{}", grpc_code_name(code).to_ascii_lowercase())
    }

    /// The status name of a kind made by [`grpc_status`] (`grpc_unavailable` → `UNAVAILABLE`);
    /// `None` for any other kind, [`GRPC_NO_STATUS`] included.
    pub fn grpc_status_name(kind: &str) -> Option<String> {
        let rest = kind.strip_prefix("grpc_")?;
        let upper = rest.to_ascii_uppercase();
        (GRPC_CODES.contains(&upper.as_str()) || rest.parse::<u32>().is_ok()).then_some(upper)
    }

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
    /// `--http2` runs only: the connections, the streams in flight on each, the `GOAWAY`s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http2: Option<Http2Figures>,
    /// `--grpc` runs only: the methods called and the calls by `grpc-status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grpc: Option<GrpcFigures>,
    /// Closed model: the clients that sent a request and had not one answered (or failed) from
    /// the run's start to the window's end, ramp included; their first request was outstanding
    /// all that time (a connection the server did not accept, or did not read). `None` in the
    /// open model and in files written before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unanswered_clients: Option<u32>,
}

/// What a gRPC run's calls ended with (`LoadReport::grpc`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GrpcFigures {
    /// The methods called, `package.Service/Method`, in the order they are sent.
    pub methods: Vec<String>,
    /// Completed calls by the name of their `grpc-status` (`OK`, `UNAVAILABLE`, ...), over the
    /// measured window. A call with no status (`grpc_no_status`) or a non-200 HTTP status
    /// (`http_NNN`) is in `errors` only.
    pub statuses: ErrorCounts,
}

impl GrpcFigures {
    /// The figures of a run that called `methods`: `OK` is its `ok` count, every other status
    /// its `grpc_*` error kind's count.
    pub fn of(methods: Vec<String>, ok: u64, errors: &ErrorCounts) -> GrpcFigures {
        let mut statuses: ErrorCounts = errors
            .iter()
            .filter_map(|(kind, count)| Some((error_kind::grpc_status_name(kind)?, *count)))
            .collect();
        if ok > 0 {
            statuses.insert(error_kind::grpc_code_name(0), ok);
        }
        GrpcFigures { methods, statuses }
    }
}

/// What an HTTP/2 run saw on its connections (`LoadReport::http2`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Http2Figures {
    /// `h2` (ALPN over TLS) or `h2c` (cleartext, prior knowledge).
    pub protocol: String,
    /// The connections the clients' streams were spread over (`--connections`, at most one per
    /// client); each is reopened when the server closes it.
    pub connections: u32,
    /// The server's `SETTINGS_MAX_CONCURRENT_STREAMS` as the first connection read it; `None`
    /// when the server set no limit. Streams beyond it wait inside the client (their wait is
    /// part of their latency), as a gRPC channel's calls do.
    pub server_max_concurrent_streams: Option<u64>,
    /// The most streams in flight on one connection at once, over every connection.
    pub max_streams_in_flight: u64,
    /// Streams in flight per connection, averaged over the connections and over the measured
    /// window (the streams' time in flight over the window's length).
    pub mean_streams_in_flight: f64,
    /// One entry per connection, in order.
    pub per_connection: Vec<ConnectionStreams>,
    /// `GOAWAY` frames received from the server, graceful ones (code `NO_ERROR`, as nginx sends
    /// after `keepalive_requests`) included; streams a graceful one left unprocessed are resent
    /// once on a new connection, and count as failures (`goaway`) only if that fails too.
    pub goaways: u64,
}

/// The streams of one HTTP/2 connection of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ConnectionStreams {
    /// Requests completed on it in the measured window (ok and errors).
    pub requests: u64,
    /// The most streams in flight on it at once.
    pub max_streams_in_flight: u64,
    /// Streams in flight on it, averaged over the measured window (its streams' time in flight
    /// over the window's length, Little's law).
    pub mean_streams_in_flight: f64,
    /// Times it was opened (1, plus one per reopening after the server closed it).
    pub opened: u64,
    /// `GOAWAY`s the server sent on it.
    pub goaways: u64,
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
    /// The timeline without a last bucket that the window's end cut to less than half its width:
    /// its few completions would read as a stall or a drop in a rate. (The full timeline still
    /// adds up to `requests`.) A sweep step reads it through its report (`step.whole_timeline()`).
    pub fn whole_timeline(&self) -> &[TimelinePoint] {
        let bucket = self.timeline_bucket_s;
        match self.timeline.split_last() {
            Some((last, rest)) if bucket > 0.0 && self.duration_s - last.t_s < bucket / 2.0 => rest,
            _ => &self.timeline,
        }
    }

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

#[cfg(test)]
mod tests {
    use super::*;
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

    #[test]
    fn grpc_statuses_are_named_as_grpc_names_them() {
        // (code, kind, status name)
        let table = [
            (4, "grpc_deadline_exceeded", "DEADLINE_EXCEEDED"),
            (8, "grpc_resource_exhausted", "RESOURCE_EXHAUSTED"),
            (14, "grpc_unavailable", "UNAVAILABLE"),
            (16, "grpc_unauthenticated", "UNAUTHENTICATED"),
            (17, "grpc_17", "17"),
        ];
        for (code, kind, name) in table {
            assert_eq!(error_kind::grpc_status(code), kind);
            assert_eq!(error_kind::grpc_status_name(kind).as_deref(), Some(name));
        }
        assert_eq!(
            error_kind::grpc_status_name(error_kind::GRPC_NO_STATUS),
            None
        );
        assert_eq!(error_kind::grpc_status_name("http_503"), None);
        let errors: ErrorCounts = [
            ("grpc_unavailable".to_string(), 3),
            ("grpc_no_status".to_string(), 2),
            ("http_503".to_string(), 1),
        ]
        .into();
        let figures = GrpcFigures::of(vec!["a.B/C".into()], 10, &errors);
        let expected: ErrorCounts = [("OK".to_string(), 10), ("UNAVAILABLE".to_string(), 3)].into();
        assert_eq!(figures.statuses, expected);
    }
}
