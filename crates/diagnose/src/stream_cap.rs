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
//! keeps one connection per host, so C is 1 unless the service opened more. Go's HTTP/2
//! transport keeps one only when strict (`net/http.HTTP2Config.StrictMaxConcurrentRequests`);
//! by default it opens another connection whenever its connections are at the cap, and then
//! the cap limits nothing: the connections change between steps, and no cap is named.
//!
//! Two sources say C and N. The first is the mock's counts, per step: its calls in flight (the
//! most at once), the HTTP/2 connections open (the most at once) and opened, the most streams
//! on one connection, and the cap it advertised (`--max-concurrent-streams`). The second, for a
//! cap the mock cannot see (a proxy between the target and the mock: nginx's
//! `http2_max_concurrent_streams`), is the target's connections to a peer in `/proc` (the most
//! at once at each step: C × N bounds the streams open at once, so the connections open at
//! once are its C) and the SETTINGS that peer sent when the sweep asked it after the steps
//! ([`multiplexed_peers`] says which peers may be asked; the sweep asks). The mock's counts
//! win when both exist: they count each connection opened and the streams on each, where
//! `/proc` samples, and its cap is the one it enforced. From the steps at or past the knee
//! ([`StreamCapReading`]):
//! - the connections must be one count at every step, none opened during them as far as the
//!   source counts them (the mock does; `/proc` samples, and cannot) (else
//!   `connections-changed`: no one number of streams held);
//! - the ceiling (the mock's most in flight; without a mock's count, the finding's limit) must
//!   be the same at every step (else `ceiling-moved`), and is then read against C × N: below
//!   it something in front of the connections let fewer calls out (`below-cap`: a pool of 6 in
//!   front of a cap of 8 is the pool's finding, not the cap's), above it some calls came
//!   another way (`above-cap`);
//! - equal to it, it must also be the finding's limit (within the place's tolerance, as a
//!   held pool's threads are matched): then the cap is the place (`at-cap`), else the cap was
//!   met and something else sized the plateau (`not-the-limit`).
//!
//! Only `at-cap` names a place; every other reading is told as seen and leaves the place to the
//! other rules. Both settings are named, each side's: the downstream's cap and the client's
//! connection (channel) count, since raising either raises C × N.
use crate::finding::Finding;
use crate::place::matches_limit;
use chokepoint_result::{
    Fact, H2Peer, Kind, Place, PlaceKind, PlaceSource, Setting, Step, StreamCapReading,
};
use std::net::SocketAddr;

/// Where the counts of a reading came from.
#[derive(Debug, Clone, PartialEq)]
enum Source {
    /// The mock's: the HTTP/2 connections it accepted during the steps and the most streams on
    /// one connection.
    Mock {
        opened: u64,
        streams_per_connection: u64,
    },
    /// The target's connections to `addr` in `/proc` and the cap it sent when asked.
    Peer {
        addr: SocketAddr,
        program: Option<String>,
    },
}

/// What the counts of one source say of the steps at or past the knee.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StreamCapRead {
    clients: Vec<u32>,
    cap: u64,
    connections: Vec<u64>,
    in_flight: Vec<u64>,
    /// The finding's limit: the ceiling when no mock counted the calls.
    limit: f64,
    allowed: Option<u64>,
    source: Source,
    /// How the ceiling read against the streams allowed.
    pub(crate) reading: StreamCapReading,
}

/// The readings of the `plateau` steps (at or past the knee, by clients) against the finding's
/// `limit`: the mock's when it advertised a cap and the target spoke HTTP/2 to it, else one for
/// each of `peers` that answered with a cap and that the steps' connections show. Empty when
/// neither source has one.
pub(crate) fn read(plateau: &[&Step], limit: f64, peers: &[H2Peer]) -> Vec<StreamCapRead> {
    match from_mock(plateau, limit) {
        Some(read) => vec![read],
        None => peers
            .iter()
            .filter_map(|peer| from_peer(plateau, limit, peer))
            .collect(),
    }
}

/// The mock's reading; `None` when no step spoke HTTP/2 to a mock that advertised a cap.
fn from_mock(plateau: &[&Step], limit: f64) -> Option<StreamCapRead> {
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
    let one_cap = seen
        .iter()
        .all(|(_, ds)| ds.max_concurrent_streams == Some(cap));
    let source = Source::Mock {
        opened,
        streams_per_connection: seen
            .iter()
            .map(|(_, ds)| ds.max_streams_per_connection)
            .max()
            .unwrap_or(0),
    };
    let clients = seen.iter().map(|(step, _)| step.clients).collect();
    Some(reading_of(
        clients,
        cap,
        connections,
        in_flight,
        one_cap && opened == 0,
        limit,
        source,
    ))
}

/// The reading of `peer`'s cap; `None` when it sent none, or no plateau step's connections were
/// read. A step that read the connections and saw none to the peer counts 0 there.
fn from_peer(plateau: &[&Step], limit: f64, peer: &H2Peer) -> Option<StreamCapRead> {
    let cap = peer.stream_cap()?;
    let seen: Vec<(&Step, u64)> = plateau
        .iter()
        .filter_map(|step| Some((*step, connections_to(step, peer.addr)?)))
        .collect();
    if seen.is_empty() {
        return None;
    }
    let connections: Vec<u64> = seen.iter().map(|(_, n)| *n).collect();
    // The mock's calls in flight are the ceiling when it counted them at every step (it sits
    // behind the peer); else the finding's limit is.
    let in_flight: Vec<u64> = seen
        .iter()
        .filter_map(|(step, _)| step.downstream_inflight.map(|d| d.max))
        .collect();
    let in_flight = if in_flight.len() == seen.len() {
        in_flight
    } else {
        Vec::new()
    };
    let source = Source::Peer {
        addr: peer.addr,
        program: peer.program.clone(),
    };
    let clients = seen.iter().map(|(step, _)| step.clients).collect();
    Some(reading_of(
        clients,
        cap,
        connections,
        in_flight,
        true,
        limit,
        source,
    ))
}

/// The most established connections from the target to `addr` one sample of `step` saw; `None`
/// when the step's connections were not read.
fn connections_to(step: &Step, addr: SocketAddr) -> Option<u64> {
    let connections = step.connections.as_ref()?;
    Some(
        connections
            .downstream
            .iter()
            .find(|peer| peer.peer_addr == Some(addr))
            .map_or(0, |peer| u64::from(peer.counts.most.established)),
    )
}

/// The reading of `connections` (per step, with `cap` streams on each; `kept`: no connection
/// opened and one cap throughout, as far as the source can tell) against the ceiling: the
/// mock's `in_flight` per step, or the finding's `limit` when it is empty.
fn reading_of(
    clients: Vec<u32>,
    cap: u64,
    connections: Vec<u64>,
    in_flight: Vec<u64>,
    kept: bool,
    limit: f64,
    source: Source,
) -> StreamCapRead {
    let steady = kept && connections[0] > 0 && connections.iter().all(|c| *c == connections[0]);
    let allowed = steady.then(|| connections[0] * cap);
    let reading = match (allowed, in_flight.first()) {
        (None, _) => StreamCapReading::ConnectionsChanged,
        (Some(_), Some(first)) if in_flight.iter().any(|n| n != first) => {
            StreamCapReading::CeilingMoved
        }
        (Some(allowed), Some(&ceiling)) if ceiling < allowed => StreamCapReading::BelowCap,
        (Some(allowed), Some(&ceiling)) if ceiling > allowed => StreamCapReading::AboveCap,
        (Some(allowed), _) if matches_limit(limit, allowed as f64) => StreamCapReading::AtCap,
        (Some(_), Some(_)) => StreamCapReading::NotTheLimit,
        // No count of the calls but the limit: it is the ceiling.
        (Some(allowed), None) if limit < allowed as f64 => StreamCapReading::BelowCap,
        (Some(_), None) => StreamCapReading::AboveCap,
    };
    StreamCapRead {
        clients,
        cap,
        connections,
        in_flight,
        limit,
        allowed,
        source,
        reading,
    }
}

/// The downstream peers whose connections from the target carry several calls at once, which
/// the sweep may then ask for their HTTP/2 SETTINGS (and no other: an HTTP/2 preface sent to a
/// PostgreSQL or a Redis makes it log errors).
///
/// Why. HTTP/1.1 carries one call at a time on a connection (pipelining aside, which clients
/// leave off), so a target with L calls in flight at the plateau (a `blocking-pool` or
/// `error-bound` finding's limit) and fewer connections C to one peer than L — clearly fewer,
/// beyond the tolerance a pool's threads are matched with — at one count at every plateau step
/// multiplexes its calls on them: HTTP/2 (or gRPC over it), the one protocol an HTTP service
/// commonly calls so (a multiplexing database or cache client does too: the sweep keeps those
/// out by their program and port). The mock is never one: its counts say its HTTP/2 streams
/// themselves.
pub fn multiplexed_peers(steps: &[Step], finding: &Finding) -> Vec<SocketAddr> {
    let (Some(limit), Some(knee)) = (finding.limit, finding.knee_clients) else {
        return Vec::new();
    };
    if !matches!(finding.kind, Kind::BlockingPool | Kind::ErrorBound) {
        return Vec::new();
    }
    let plateau: Vec<&Step> = steps
        .iter()
        .filter(|s| s.clients >= knee && s.connections.is_some())
        .collect();
    let Some(first) = plateau.first().and_then(|s| s.connections.as_ref()) else {
        return Vec::new();
    };
    first
        .downstream
        .iter()
        .filter(|peer| !peer.mock)
        .filter_map(|peer| {
            let addr = peer.peer_addr?;
            let kept = connections_to(plateau[0], addr)?;
            let steady = plateau
                .iter()
                .all(|step| connections_to(step, addr) == Some(kept));
            let fewer = kept > 0 && limit > kept as f64 && !matches_limit(kept as f64, limit);
            (steady && fewer).then_some(addr)
        })
        .collect()
}

impl StreamCapRead {
    /// The fact that tells the reading, whatever it is.
    pub(crate) fn fact(&self) -> Fact {
        let (opened, streams_per_connection, peer, peer_program) = match &self.source {
            Source::Mock {
                opened,
                streams_per_connection,
            } => (Some(*opened), Some(*streams_per_connection), None, None),
            Source::Peer { addr, program } => (None, None, Some(*addr), program.clone()),
        };
        Fact::StreamCap {
            clients: self.clients.clone(),
            cap: self.cap,
            connections: self.connections.clone(),
            opened,
            in_flight: self.in_flight.clone(),
            streams_per_connection,
            allowed: self.allowed,
            reading: self.reading,
            peer,
            peer_program,
        }
    }

    /// The cap as the place, with both sides' settings; `None` unless the reading is `at-cap`.
    pub(crate) fn place(&self) -> Option<Place> {
        if self.reading != StreamCapReading::AtCap {
            return None;
        }
        let connections = *self.connections.first()?;
        let (source, setting, peer_port) = match &self.source {
            Source::Mock { .. } => (PlaceSource::Mock, mock_setting(), None),
            Source::Peer { addr, program } => (
                PlaceSource::PeerSettings,
                peer_setting(*addr, program.as_deref()),
                Some(addr.port()),
            ),
        };
        Some(Place {
            kind: Some(PlaceKind::StreamCap),
            size: self.allowed.map(|n| n as f64),
            held: Some(self.in_flight.first().map_or(self.limit, |n| *n as f64)),
            clients: *self.clients.last()?,
            source: Some(source),
            setting: Some(setting),
            client_setting: Some(client_setting()),
            h2_connections: Some(connections),
            stream_cap: Some(self.cap),
            peer_port,
            ..Place::default()
        })
    }
}

/// nginx's `http2_max_concurrent_streams`, default 128, at a commit.
const NGINX_SOURCE: &str = "https://github.com/nginx/nginx/blob/b19bc2e0fa60100ee8170acf161bc9b8f01cce26/src/http/v2/ngx_http_v2_module.c (concurrent_streams, 128)";
/// The defaults of common HTTP/2 servers, at a commit.
const SERVERS_SOURCE: &str = "RFC 9113 §5.1.2 https://www.rfc-editor.org/rfc/rfc9113#section-5.1.2; nginx https://github.com/nginx/nginx/blob/b19bc2e0fa60100ee8170acf161bc9b8f01cce26/src/http/v2/ngx_http_v2_module.c (concurrent_streams, 128); Go https://github.com/golang/net/blob/eee95b58b3b259781fc1052ed6143a0aa9284e04/http2/server.go (defaultMaxStreams = 250)";

/// The mock's side: the cap its HTTP/2 server advertises, with the defaults of common servers
/// (nginx 128, Go's 250) at a commit. The cap seen is the place's `stream_cap`, told beside.
fn mock_setting() -> Setting {
    Setting {
        framework: "the downstream's HTTP/2 server (here chokepoint mock)".into(),
        setting: "its SETTINGS_MAX_CONCURRENT_STREAMS: the mock's --max-concurrent-streams; nginx http2_max_concurrent_streams; Go http2.Server.MaxConcurrentStreams; grpc-go grpc.MaxConcurrentStreams".into(),
        default: "nginx 128, Go 250".into(),
        source: SERVERS_SOURCE.into(),
        size_rule: None,
        default_here: None,
        stated_here: None,
    }
}

/// A peer's side: nginx's own directive when the program listening there is nginx, else the
/// cap by its RFC name, which sets no default (RFC 9113 §5.1.2: no limit until the server
/// sets one).
fn peer_setting(addr: SocketAddr, program: Option<&str>) -> Setting {
    let (framework, setting, default, source) = match program {
        Some("nginx") => (
            format!("nginx at {addr}"),
            "http2_max_concurrent_streams",
            "128".to_string(),
            NGINX_SOURCE,
        ),
        Some(other) => (
            format!("{other} at {addr}"),
            "SETTINGS_MAX_CONCURRENT_STREAMS",
            "the server's own: none in RFC 9113; nginx 128, Go 250".to_string(),
            SERVERS_SOURCE,
        ),
        None => (
            format!("the HTTP/2 server at {addr}"),
            "SETTINGS_MAX_CONCURRENT_STREAMS",
            "the server's own: none in RFC 9113; nginx 128, Go 250".to_string(),
            SERVERS_SOURCE,
        ),
    };
    Setting {
        framework,
        setting: setting.into(),
        default,
        source: source.into(),
        size_rule: None,
        default_here: None,
        stated_here: None,
    }
}

/// The client's side: the connections (gRPC channels) it keeps to the downstream; the count
/// seen is the place's `h2_connections`, told beside.
fn client_setting() -> Setting {
    Setting {
        framework: "the target's HTTP/2 or gRPC client".into(),
        setting: "the connections it keeps to the downstream: more gRPC channels (each with its own channel arguments, so that they do not share one connection) or a pool of them; Go's HTTP/2 transport opens more itself unless StrictMaxConcurrentRequests (net/http.HTTP2Config; StrictMaxConcurrentStreams in golang.org/x/net/http2) is set".into(),
        default: "one per host for a gRPC channel".into(),
        source: "https://github.com/grpc/grpc.io/blob/e98a6214300c735da9bdd30e7efb3b5de4d29407/content/en/docs/guides/performance.md; Go https://github.com/golang/go/blob/go1.26.8/src/net/http/http.go (HTTP2Config.StrictMaxConcurrentRequests)".into(),
        size_rule: None,
        default_here: None,
        stated_here: None,
    }
}
