//! A stream cap: HTTP/2 calls in flight stopped at the streams a downstream allows on the
//! connections the target keeps to it ([`Fact::StreamCap`], and the place
//! [`PlaceKind::StreamCap`] when the evidence agrees).
//!
//! Why, from first principles. RFC 9113 §5.1.2: an endpoint must not open more streams on a
//! connection than its peer's SETTINGS_MAX_CONCURRENT_STREAMS (a stream is a request). So a
//! client that keeps C connections to a downstream that advertises a cap of N can have at most
//! C × N calls in flight there; past that its calls wait inside the client — a gRPC channel
//! queues them ("additional RPCs are queued in the client", the gRPC performance guide), as
//! the `h2` crate and Go's HTTP/2 transport with `StrictMaxConcurrentStreams` do — where no
//! thread of the downstream and no connection count of the target shows them. A gRPC channel
//! and Go's HTTP/2 transport keep one connection per host, so C is 1 unless the service opened
//! more.
//!
//! The mock counts what decides it, per step: its calls in flight (the most at once), the
//! HTTP/2 connections open (the most at once) and opened, the most streams on one connection,
//! and the cap it advertised (`--max-concurrent-streams`). From the steps at or past the knee
//! that spoke HTTP/2 to a mock with a cap ([`StreamCapReading`]):
//! - the connections must be one count at every step, none opened during them (else
//!   `connections-changed`: no one number of streams held);
//! - the ceiling (the mock's most in flight) must be the same at every step (else
//!   `ceiling-moved`), and is then read against C × N: below it something in front of the
//!   connections let fewer calls out (`below-cap`: a pool of 6 in front of a cap of 8 is the
//!   pool's finding, not the cap's), above it some calls came another way (`above-cap`);
//! - equal to it, it must also be the finding's limit (within the place's tolerance, as a
//!   held pool's threads are matched): then the cap is the place (`at-cap`), else the cap was
//!   met and something else sized the plateau (`not-the-limit`).
//!
//! Only `at-cap` names a place; every other reading is told as seen and leaves the place to the
//! other rules. Both settings are named, each side's: the downstream's cap and the client's
//! connection (channel) count, since raising either raises C × N.
use crate::place::matches_limit;
use chokepoint_result::{Fact, Place, PlaceKind, PlaceSource, Setting, Step, StreamCapReading};

/// What the mock's HTTP/2 counts say of the steps at or past the knee.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StreamCapRead {
    clients: Vec<u32>,
    cap: u64,
    connections: Vec<u64>,
    opened: u64,
    in_flight: Vec<u64>,
    streams_per_connection: u64,
    allowed: Option<u64>,
    /// How the ceiling read against the streams allowed.
    pub(crate) reading: StreamCapReading,
}

/// The reading of the `plateau` steps (at or past the knee, by clients) against the finding's
/// `limit`; `None` when none of them spoke HTTP/2 to a mock that advertised a cap.
pub(crate) fn read(plateau: &[&Step], limit: f64) -> Option<StreamCapRead> {
    let seen: Vec<(&Step, &chokepoint_result::DownstreamStep)> = plateau
        .iter()
        .filter_map(|step| {
            let ds = step.downstream.as_ref()?;
            (ds.h2_connections > 0 && ds.max_concurrent_streams.is_some()).then_some((*step, ds))
        })
        .collect();
    let cap = seen.first()?.1.max_concurrent_streams?;
    let connections: Vec<u64> = seen.iter().map(|(_, ds)| ds.h2_connections).collect();
    let in_flight: Vec<u64> = seen
        .iter()
        .map(|(step, _)| step.downstream_inflight.map_or(0, |d| d.max))
        .collect();
    let opened = seen.iter().map(|(_, ds)| ds.h2_connections_accepted).sum();
    let steady = opened == 0
        && connections.iter().all(|c| *c == connections[0])
        && seen
            .iter()
            .all(|(_, ds)| ds.max_concurrent_streams == Some(cap));
    let allowed = steady.then(|| connections[0] * cap);
    let flat = in_flight.iter().all(|n| *n == in_flight[0]);
    let reading = match allowed {
        None => StreamCapReading::ConnectionsChanged,
        Some(_) if !flat => StreamCapReading::CeilingMoved,
        Some(allowed) if in_flight[0] < allowed => StreamCapReading::BelowCap,
        Some(allowed) if in_flight[0] > allowed => StreamCapReading::AboveCap,
        Some(allowed) if matches_limit(limit, allowed as f64) => StreamCapReading::AtCap,
        Some(_) => StreamCapReading::NotTheLimit,
    };
    Some(StreamCapRead {
        clients: seen.iter().map(|(step, _)| step.clients).collect(),
        cap,
        connections,
        opened,
        in_flight,
        streams_per_connection: seen
            .iter()
            .map(|(_, ds)| ds.max_streams_per_connection)
            .max()
            .unwrap_or(0),
        allowed,
        reading,
    })
}

impl StreamCapRead {
    /// The fact that tells the reading, whatever it is.
    pub(crate) fn fact(&self) -> Fact {
        Fact::StreamCap {
            clients: self.clients.clone(),
            cap: self.cap,
            connections: self.connections.clone(),
            opened: self.opened,
            in_flight: self.in_flight.clone(),
            streams_per_connection: self.streams_per_connection,
            allowed: self.allowed,
            reading: self.reading,
        }
    }

    /// The cap as the place, with both sides' settings; `None` unless the reading is `at-cap`.
    pub(crate) fn place(&self) -> Option<Place> {
        if self.reading != StreamCapReading::AtCap {
            return None;
        }
        let connections = *self.connections.first()?;
        Some(Place {
            kind: Some(PlaceKind::StreamCap),
            size: self.allowed.map(|n| n as f64),
            held: self.in_flight.first().map(|n| *n as f64),
            clients: *self.clients.last()?,
            source: Some(PlaceSource::Mock),
            setting: Some(downstream_setting(self.cap)),
            client_setting: Some(client_setting(connections)),
            h2_connections: Some(connections),
            stream_cap: Some(self.cap),
            ..Place::default()
        })
    }
}

/// The downstream's side: the cap its HTTP/2 server advertises, with the defaults of common
/// servers (nginx 128, Go's 250) at a commit.
fn downstream_setting(cap: u64) -> Setting {
    Setting {
        framework: "the downstream's HTTP/2 server (here chokepoint mock)".into(),
        setting: "its SETTINGS_MAX_CONCURRENT_STREAMS: the mock's --max-concurrent-streams; nginx http2_max_concurrent_streams; Go http2.Server.MaxConcurrentStreams; grpc-go grpc.MaxConcurrentStreams".into(),
        default: format!("{cap} here; nginx 128, Go 250"),
        source: "RFC 9113 §5.1.2 https://www.rfc-editor.org/rfc/rfc9113#section-5.1.2; nginx https://github.com/nginx/nginx/blob/b19bc2e0fa60100ee8170acf161bc9b8f01cce26/src/http/v2/ngx_http_v2_module.c (concurrent_streams, 128); Go https://github.com/golang/net/blob/eee95b58b3b259781fc1052ed6143a0aa9284e04/http2/server.go (defaultMaxStreams = 250)".into(),
        size_rule: None,
        default_here: None,
    }
}

/// The client's side: the connections (gRPC channels) it keeps to the downstream.
fn client_setting(connections: u64) -> Setting {
    Setting {
        framework: "the target's HTTP/2 or gRPC client".into(),
        setting: "the connections it keeps to the downstream: more gRPC channels (each with its own channel arguments, so that they do not share one connection) or a pool of them".into(),
        default: format!("{connections} here; one per host for a gRPC channel"),
        source: "https://github.com/grpc/grpc.io/blob/e98a6214300c735da9bdd30e7efb3b5de4d29407/content/en/docs/guides/performance.md".into(),
        size_rule: None,
        default_here: None,
    }
}
