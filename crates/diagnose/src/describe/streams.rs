//! The words about HTTP/2 streams: how the calls in flight read against the streams the
//! target's connections allow ([`Fact::StreamCap`]): its sentence, key line and rank, for the
//! mock's counts and for a peer asked for its SETTINGS. Each number comes from the fact (the
//! finding's limit when no mock counted the calls); nothing here decides
//! ([`crate::stream_cap`] does).

use super::Teller;
use crate::finding::Finding;
use chokepoint_result::format::{clients as clients_words, concurrency};
use chokepoint_result::{Fact, Kind, StreamCapReading};
use std::net::SocketAddr;

/// The words of the stream cap's fact.
pub(super) const TELLER: Teller = Teller {
    sentences: |fact, finding| sentence(fact, finding).into_iter().collect(),
    short,
    rank,
};

/// `1 connection`, `3 connections`.
fn connections_words(n: u64) -> String {
    if n == 1 {
        "1 connection".to_string()
    } else {
        format!("{n} connections")
    }
}

/// `8 at 16 clients, 6 at 32 clients`.
fn per_step(values: &[u64], clients: &[u32]) -> String {
    values
        .iter()
        .zip(clients)
        .map(|(v, c)| format!("{v} at {}", clients_words(*c)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Who allows the streams: `the mock`, `127.0.0.1:8443 (nginx)`.
fn downstream_words(peer: Option<SocketAddr>, program: Option<&str>) -> String {
    match (peer, program) {
        (None, _) => "the mock".to_string(),
        (Some(addr), Some(program)) => format!("{addr} ({program})"),
        (Some(addr), None) => addr.to_string(),
    }
}

/// The evidence sentence of a [`Fact::StreamCap`]; `None` for any other fact.
fn sentence(fact: &Fact, finding: &Finding) -> Option<String> {
    let Fact::StreamCap {
        clients,
        cap,
        connections,
        opened,
        in_flight,
        streams_per_connection,
        allowed,
        reading,
        peer,
        peer_program,
    } = fact
    else {
        return None;
    };
    let from = clients.first().copied().unwrap_or(0);
    let ceiling = in_flight.first().copied();
    let kept = connections.first().copied().unwrap_or(0);
    let allowed = allowed.unwrap_or(0);
    let downstream = downstream_words(*peer, peer_program.as_deref());
    let asked = match peer {
        Some(_) => ", asked of it after the steps",
        None => "",
    };
    let over = format!(
        "Over HTTP/2 the target kept {} to {downstream}, which allows {cap} streams on each \
         (SETTINGS_MAX_CONCURRENT_STREAMS{asked}), {allowed} in all",
        connections_words(kept)
    );
    // The calls in flight: the mock's count, or the finding's limit without one.
    let limit = concurrency(finding.limit.unwrap_or(0.0));
    let held = match ceiling {
        Some(ceiling) => format!("{ceiling} calls were in flight at once"),
        None => format!("the limit found is {limit} calls in flight"),
    };
    Some(match reading {
        StreamCapReading::AtCap => {
            let seen = match (ceiling, streams_per_connection) {
                (Some(ceiling), Some(streams)) => format!(
                    "the mock saw {ceiling} calls in flight at once at every step from {} on \
                     (at most {streams} streams on one connection)",
                    clients_words(from)
                ),
                (Some(ceiling), None) => format!(
                    "the mock behind it saw {ceiling} calls in flight at once at every step \
                     from {} on",
                    clients_words(from)
                ),
                (None, _) => format!(
                    "the limit found is {limit} calls in flight, with the connections at that \
                     count at every step from {} on",
                    clients_words(from)
                ),
            };
            format!(
                "{over}, and {seen}: the calls stopped at the streams the connections allow, \
                 and past them they wait inside the target's client, where no thread of the \
                 downstream shows them (RFC 9113 §5.1.2)."
            )
        }
        StreamCapReading::BelowCap => format!(
            "{over}, but at most {} in flight at once: something in front of the connections \
             lets fewer out, so the stream cap is not what stops them.",
            match ceiling {
                Some(ceiling) => format!("{ceiling} calls were"),
                None => format!("{limit} calls were (the limit found)"),
            }
        ),
        StreamCapReading::AboveCap => format!(
            "{over}, but {held}, more than its streams allow: some came another way (HTTP/1.1, \
             or connections not counted as HTTP/2), so the stream cap names nothing."
        ),
        StreamCapReading::CeilingMoved => format!(
            "{over}, but the calls in flight at once were not one count ({}): the stream cap \
             names nothing.",
            per_step(in_flight, clients)
        ),
        StreamCapReading::ConnectionsChanged => format!(
            "Over HTTP/2 the target's connections to {downstream} ({cap} streams allowed on \
             each) did not hold steady (the most open at once: {}{}): no one number of streams \
             held the calls, so the stream cap names nothing.",
            per_step(connections, clients),
            match opened {
                Some(opened) => format!("; {opened} opened during those steps"),
                None => String::new(),
            }
        ),
        StreamCapReading::NotTheLimit => format!(
            "{over}, and the mock saw {} calls in flight at once, the streams allowed; but the \
             limit found is another number, so the cap was met and something else sized the \
             plateau.",
            ceiling.unwrap_or(allowed)
        ),
    })
}

/// The key line of a [`Fact::StreamCap`].
fn short(fact: &Fact, finding: &Finding) -> Option<String> {
    let Fact::StreamCap {
        cap,
        connections,
        in_flight,
        reading,
        peer,
        peer_program,
        ..
    } = fact
    else {
        return None;
    };
    let ceiling = match in_flight.first() {
        Some(ceiling) => ceiling.to_string(),
        None => concurrency(finding.limit.unwrap_or(0.0)),
    };
    let kept = connections.first().copied().unwrap_or(0);
    let whose = match peer {
        None => "the mock's cap".to_string(),
        Some(addr) => format!(
            "the cap {} sent",
            downstream_words(Some(*addr), peer_program.as_deref())
        ),
    };
    Some(match reading {
        StreamCapReading::AtCap => format!(
            "HTTP/2: {ceiling} calls in flight = {} × {cap} streams, {whose}.",
            connections_words(kept)
        ),
        StreamCapReading::BelowCap => format!(
            "HTTP/2: {ceiling} calls in flight, below the {} streams allowed.",
            kept * cap
        ),
        _ => "HTTP/2: the streams allowed did not hold the calls; no stream cap named.".to_string(),
    })
}

/// Where its key line stands: right after the place for a pool's finding.
fn rank(kind: Kind, fact: &Fact) -> Option<u8> {
    match (kind, fact) {
        (Kind::BlockingPool | Kind::ErrorBound, Fact::StreamCap { reading, .. }) => {
            Some(if *reading == StreamCapReading::AtCap {
                2
            } else {
                3
            })
        }
        _ => None,
    }
}
