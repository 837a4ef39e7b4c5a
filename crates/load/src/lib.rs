//! The load engine: drives an HTTP/1.1 or HTTP/2 service (plain or over TLS) with closed-loop
//! clients or a constant arrival rate, and measures what it saw into a
//! [`chokepoint_result::LoadReport`].
//!
//! How a run flows:
//! - [`LoadConfig`] says what to send and how ([`LoadConfig::new`] gives ab-like defaults,
//!   [`LoadConfig::validate`] refuses bad input with a one-line message): one request, or the
//!   requests of a targets file ([`targets`], vegeta's format) sent in turn.
//! - [`start`] checks the configuration and returns a [`LoadHandle`]: the run's live events,
//!   then its report. Its control thread resolves the target and opens one connection first
//!   (`setup`: nothing listening, or a TLS certificate not trusted, is an error, not a run full of
//!   failures), then starts one worker thread per core (named `cp-load`), each with its own
//!   single-threaded tokio runtime, and spreads one task per client over them (`engine`). Each
//!   client speaks HTTP/1.1 itself (`client`): the requests are rendered once (`request`),
//!   responses are parsed in place with httparse (`response`), over a connection that `tls`
//!   opens (plain TCP, or a rustls handshake over it). In the closed model each client sends its
//!   next request when the last one ended; in the open model each task takes the next hit of the
//!   schedule ([`pacer`]) and latency counts from the hit's due time (wrk2's correction).
//! - With [`LoadConfig::http2`] the clients are streams instead (`h2client`, the `h2` crate):
//!   client `i` sends on connection `i % connections`, each connection and its streams on one
//!   worker thread; the same client tasks drive them through the engine's `Session`. The
//!   streams in flight per connection become the report's `http2` figures (`streams`).
//! - With [`LoadConfig::grpc`] the streams are gRPC unary calls: the same HTTP/2 exchange,
//!   whose outcome is the call's `grpc-status` (in the trailers, or the headers of a
//!   Trailers-Only response); a non-zero one is an error kind of its own (`grpc_unavailable`),
//!   and the report's `grpc` figures count the calls by status.
//! - Each request's latency (and, when it opened a connection, the connect and handshake times)
//!   is recorded in `recorder::Registry::record`: into HdrHistograms owned by the worker thread,
//!   drained and merged once per interval, so no channel or lock is contended per request.
//! - Every `interval` a [`LoadEvent::Interval`] carries JMeter's summariser figures
//!   ([`IntervalSummary`]); at the end the merged histograms become the report (`window`).
//!
//! The run also measures its own CPU use (`generator_cpu_pct`) so a saturated generator is not
//! mistaken for a slow service.
//!
//! Outside a run: [`grpc_call_once`] (`unary`) sends one gRPC call and reads its answer (the
//! server's reflection, asked before a `--grpc` run without a descriptor set), and
//! [`connect_h2_unverified`] opens the TLS connection on which a peer is asked its HTTP/2
//! SETTINGS.
#![deny(missing_docs)]

mod client;
mod engine;
pub mod failure;
mod h2client;
mod handle;
pub mod hdr;
pub mod pacer;
pub mod recorder;
mod request;
mod response;
mod setup;
pub mod shard;
mod streams;
pub mod summary;
pub mod targets;
mod tls;
mod unary;
mod window;

/// Re-exported so callers can fill [`LoadConfig::body`] and [`LoadConfig::method`].
pub use bytes::Bytes;
pub use handle::{start, LoadHandle};
/// Re-exported: [`IntervalSummary::histogram`] is one of its histograms.
pub use hdrhistogram;
pub use http::Method;
pub use setup::Spare;
use std::time::Duration;
pub use summary::IntervalSummary;
pub use targets::{parse_targets, RequestSpec, TargetsOrder};
pub use tls::{connect_h2_unverified, Trust};
pub use unary::{grpc_call_once, UnaryAnswer};
pub use window::SATURATED_PCT;

/// What one load run sends, to where, and when it stops.
#[derive(Debug, Clone)]
pub struct LoadConfig {
    /// The target, `http://host[:port][/path]` or `https://...`.
    pub url: String,
    /// Request method.
    pub method: http::Method,
    /// Extra request headers, in order.
    pub headers: Vec<(String, String)>,
    /// Request body (empty for none).
    pub body: Bytes,
    /// Closed model: the number of clients. Open model: the most connections (and requests in
    /// flight) at once.
    pub clients: u32,
    /// Length of the measured window. With `requests` too, the run stops at whichever comes
    /// first.
    pub duration: Option<Duration>,
    /// Exactly this many requests in total (as ab's `-n`).
    pub requests: Option<u64>,
    /// Open model: requests per second on a fixed schedule.
    pub rate: Option<f64>,
    /// Closed model: pause after each response before the next request.
    pub think_time: Duration,
    /// Keep connections alive between requests (one per client); otherwise one per request.
    pub keepalive: bool,
    /// Per request (and per connect).
    pub timeout: Duration,
    /// How often a [`LoadEvent::Interval`] is sent.
    pub interval: Duration,
    /// Resolution of [`chokepoint_result::LoadReport::timeline`].
    pub timeline_bucket: Duration,
    /// Start the measured window only once every client has completed one request (or
    /// `ramp_limit` passed); what completed before is not reported.
    pub exclude_ramp: bool,
    /// The longest ramp when `exclude_ramp` is set.
    pub ramp_limit: Duration,
    /// How an `https://` server's certificate is checked.
    pub trust: Trust,
    /// Several requests sent in turn (a targets file), instead of the one of `url`, `method`,
    /// `headers` and `body`; `headers` are added to each. Empty for the one request.
    pub targets: Vec<RequestSpec>,
    /// The order `targets` are sent in.
    pub targets_order: TargetsOrder,
    /// Speak HTTP/2 (`h2` by ALPN over `https://`, `h2c` with prior knowledge over `http://`):
    /// the clients are concurrent streams spread over `connections` connections (`h2client`).
    pub http2: bool,
    /// With `http2`: the connections the streams are spread over (at most one per client).
    pub connections: u32,
    /// gRPC unary calls (needs `http2`): each request is sent with `content-type:
    /// application/grpc` and `te: trailers` (its body already a framed message, its path
    /// `/package.Service/Method`), and a call succeeds when its `grpc-status` is 0.
    pub grpc: Option<GrpcRun>,
}

/// What a gRPC run calls (`LoadConfig::grpc`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrpcRun {
    /// The methods called, `package.Service/Method`: the one of the URL's request, or one per
    /// request of the targets file, in its order.
    pub methods: Vec<String>,
}

/// Parses a request method (`GET`, `post`, ...); methods are sent in upper case.
pub fn parse_method(name: &str) -> Result<http::Method, LoadError> {
    http::Method::from_bytes(name.to_ascii_uppercase().as_bytes()).map_err(|_| {
        LoadError::Config(format!(
            "'{name}' is not an HTTP method: use GET, POST, PUT, DELETE, ... (-m)"
        ))
    })
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The configuration is not usable.
    #[error("{0}")]
    Config(String),
    /// The target cannot be reached at all.
    #[error("{0}")]
    Unreachable(String),
    /// The server's TLS certificate is not trusted (the message says why, and the fix).
    #[error("{0}")]
    Certificate(String),
    /// The engine itself failed (runtime, thread).
    #[error("load engine failed: {0}")]
    Engine(String),
}

/// What a run tells its caller while it runs.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // a few events per run: boxing would buy nothing
pub enum LoadEvent {
    /// The measured window begins (at once when `exclude_ramp` is false).
    MeasurementStarted {
        /// Time spent in the ramp before the window.
        ramp: Duration,
    },
    /// Every `interval`, and once at the end for the last partial interval.
    Interval(IntervalSummary),
}

/// The parts of a validated URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParsedUrl {
    /// `https://`: TLS under HTTP.
    pub tls: bool,
    pub host: String,
    pub port: u16,
    /// `host[:port]` as the Host header carries it.
    pub authority: String,
    pub path: http::Uri,
}

impl LoadConfig {
    /// A configuration with the defaults: GET, 10 clients for 10 s, keep-alive, 30 s timeout,
    /// summaries every 10 s, 100 ms timeline buckets, no ramp exclusion.
    pub fn new(url: &str) -> Result<LoadConfig, LoadError> {
        parse_url(url)?;
        Ok(LoadConfig {
            url: url.to_string(),
            method: http::Method::GET,
            headers: Vec::new(),
            body: Bytes::new(),
            clients: 10,
            duration: Some(Duration::from_secs(10)),
            requests: None,
            rate: None,
            think_time: Duration::ZERO,
            keepalive: true,
            timeout: Duration::from_secs(30),
            interval: Duration::from_secs(10),
            timeline_bucket: Duration::from_millis(100),
            exclude_ramp: false,
            ramp_limit: Duration::from_secs(10),
            trust: Trust::Platform,
            targets: Vec::new(),
            targets_order: TargetsOrder::RoundRobin,
            http2: false,
            connections: 1,
            grpc: None,
        })
    }

    /// Checks every field; the message names the setting and how to fix it.
    pub fn validate(&self) -> Result<(), LoadError> {
        let bad = |m: &str| Err(LoadError::Config(m.to_string()));
        parse_url(&self.url)?;
        if self.clients == 0 {
            return bad("clients must be at least 1 (-c)");
        }
        if self.duration.is_some_and(|d| d.is_zero()) {
            return bad("the duration must be greater than 0 (-d 10s)");
        }
        if self.requests == Some(0) {
            return bad("the request count must be at least 1 (-n)");
        }
        if self.duration.is_none() && self.requests.is_none() {
            return bad("give a duration (-d) or a request count (-n)");
        }
        if let Some(rate) = self.rate {
            if !(rate.is_finite() && rate > 0.0) {
                return bad("the rate must be a number of requests per second above 0 (--rate)");
            }
        }
        if self.grpc.is_some() && !self.http2 {
            return bad("gRPC is spoken over HTTP/2 only: set http2 with grpc");
        }
        if self.connections == 0 {
            return bad("connections must be at least 1 (--connections)");
        }
        if self.timeout.is_zero() {
            return bad("the timeout must be greater than 0 (--timeout)");
        }
        if self.interval.is_zero() {
            return bad("the interval must be greater than 0 (--interval)");
        }
        if self.timeline_bucket.is_zero() {
            return bad("the timeline bucket must be greater than 0");
        }
        let first = parse_url(&self.url)?;
        for target in &self.targets {
            let parsed = parse_url(&target.url)?;
            if (parsed.tls, &parsed.host, parsed.port) != (first.tls, &first.host, first.port) {
                return Err(LoadError::Config(format!(
                    "{} is not on the same server as {}: one run loads one server",
                    target.url, self.url
                )));
            }
        }
        for (name, value) in &self.headers {
            if http::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
                return Err(LoadError::Config(format!(
                    "'{name}' is not a valid header name (-H 'Name: value')"
                )));
            }
            if http::HeaderValue::from_str(value).is_err() {
                return Err(LoadError::Config(format!(
                    "the value of header '{name}' is not valid (-H 'Name: value')"
                )));
            }
        }
        Ok(())
    }

    pub(crate) fn parsed_url(&self) -> Result<ParsedUrl, LoadError> {
        parse_url(&self.url)
    }
}

pub(crate) fn parse_url(url: &str) -> Result<ParsedUrl, LoadError> {
    let bad = |why: &str| {
        Err(LoadError::Config(format!(
            "'{url}' is not a usable URL ({why}): write it as http://host:port/path or https://..."
        )))
    };
    let uri: http::Uri = match url.parse() {
        Ok(uri) => uri,
        Err(_) => return bad("malformed"),
    };
    let tls = match uri.scheme_str() {
        Some("http") => false,
        Some("https") => true,
        Some(other) => return bad(&format!("scheme '{other}' is not http or https")),
        None => return bad("no http:// or https:// scheme"),
    };
    let Some(authority) = uri.authority() else {
        return bad("no host");
    };
    if authority.as_str().contains('@') {
        return bad("user info is not supported");
    }
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']');
    if host.is_empty() {
        return bad("no host");
    }
    let port = authority.port_u16().unwrap_or(if tls { 443 } else { 80 });
    let path = uri
        .path_and_query()
        .map(|pq| pq.as_str())
        .filter(|pq| !pq.is_empty())
        .unwrap_or("/");
    let path = match path.parse::<http::Uri>() {
        Ok(path) => path,
        Err(_) => return bad("malformed path"),
    };
    Ok(ParsedUrl {
        tls,
        host: host.to_string(),
        port,
        authority: authority.as_str().to_string(),
        path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_validated() {
        let parsed = parse_url("http://localhost:8080/a?b=1").unwrap();
        assert_eq!((parsed.host.as_str(), parsed.port), ("localhost", 8080));
        assert_eq!(parsed.path, "/a?b=1");
        assert_eq!(parsed.authority, "localhost:8080");
        let parsed = parse_url("http://[::1]").unwrap();
        assert_eq!((parsed.host.as_str(), parsed.port), ("::1", 80));
        assert_eq!(parsed.path, "/");
        for bad in [
            "",
            "localhost:80",
            "ftp://x/",
            "http://",
            "http//x",
            "ht tp://x",
        ] {
            assert!(parse_url(bad).is_err(), "{bad} should be refused");
        }
        let https = parse_url("https://x/a").unwrap();
        assert_eq!(
            (https.tls, https.port, https.authority.as_str()),
            (true, 443, "x")
        );
        assert!(!parse_url("http://x/").unwrap().tls);
    }

    #[test]
    fn validation_names_the_setting() {
        let mut config = LoadConfig::new("http://127.0.0.1:1/").unwrap();
        assert!(config.validate().is_ok());
        config.clients = 0;
        assert!(config.validate().unwrap_err().to_string().contains("-c"));
        config.clients = 1;
        config.rate = Some(0.0);
        assert!(config
            .validate()
            .unwrap_err()
            .to_string()
            .contains("--rate"));
        config.rate = None;
        config.duration = None;
        assert!(config.validate().is_err());
    }
}
