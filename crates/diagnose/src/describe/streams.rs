//! The words about HTTP/2 streams: how the mock's calls in flight read against the streams the
//! target's connections allow ([`Fact::StreamCap`]): its sentence, key line and rank. Each
//! number comes from the fact; nothing here decides ([`crate::stream_cap`] does).

use super::Teller;
use crate::finding::Finding;
use chokepoint_result::{Fact, Kind, StreamCapReading};

/// The words of the stream cap's fact.
pub(super) const TELLER: Teller = Teller {
    sentences: |fact, _| sentence(fact).into_iter().collect(),
    short: |fact, _: &Finding| short(fact),
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
        .map(|(v, c)| format!("{v} at {}", chokepoint_result::format::clients(*c)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The evidence sentence of a [`Fact::StreamCap`]; `None` for any other fact.
fn sentence(fact: &Fact) -> Option<String> {
    let Fact::StreamCap {
        clients,
        cap,
        connections,
        opened,
        in_flight,
        streams_per_connection,
        allowed,
        reading,
    } = fact
    else {
        return None;
    };
    let from = clients.first().copied().unwrap_or(0);
    let ceiling = in_flight.first().copied().unwrap_or(0);
    let kept = connections.first().copied().unwrap_or(0);
    let allowed = allowed.unwrap_or(0);
    let over = format!(
        "Over HTTP/2 the target kept {} to the mock, which allows {cap} streams on each \
         (SETTINGS_MAX_CONCURRENT_STREAMS), {allowed} in all",
        connections_words(kept)
    );
    Some(match reading {
        StreamCapReading::AtCap => format!(
            "{over}, and the mock saw {ceiling} calls in flight at once at every step from {} on \
             (at most {streams_per_connection} streams on one connection): the calls stopped at \
             the streams the connections allow, and past them they wait inside the target's \
             client, where no thread of the downstream shows them (RFC 9113 §5.1.2).",
            chokepoint_result::format::clients(from)
        ),
        StreamCapReading::BelowCap => format!(
            "{over}, but at most {ceiling} calls were in flight at once: something in front of \
             the connections lets fewer out, so the stream cap is not what stops them."
        ),
        StreamCapReading::AboveCap => format!(
            "{over}, but {ceiling} calls were in flight at once, more than its streams allow: \
             some came another way (HTTP/1.1, or connections not counted as HTTP/2), so the \
             stream cap names nothing."
        ),
        StreamCapReading::CeilingMoved => format!(
            "{over}, but the calls in flight at once were not one count ({}): the stream cap \
             names nothing.",
            per_step(in_flight, clients)
        ),
        StreamCapReading::ConnectionsChanged => format!(
            "Over HTTP/2 the target's connections to the mock ({cap} streams allowed on each) \
             did not hold steady (the most open at once: {}; {opened} opened during those \
             steps): no one number of streams held the calls, so the stream cap names nothing.",
            per_step(connections, clients)
        ),
        StreamCapReading::NotTheLimit => format!(
            "{over}, and the mock saw {ceiling} calls in flight at once, the streams allowed; \
             but the limit found is another number, so the cap was met and something else \
             sized the plateau."
        ),
    })
}

/// The key line of a [`Fact::StreamCap`].
fn short(fact: &Fact) -> Option<String> {
    let Fact::StreamCap {
        cap,
        connections,
        in_flight,
        reading,
        ..
    } = fact
    else {
        return None;
    };
    let ceiling = in_flight.first().copied().unwrap_or(0);
    let kept = connections.first().copied().unwrap_or(0);
    Some(match reading {
        StreamCapReading::AtCap => format!(
            "HTTP/2: {ceiling} calls in flight = {} × {cap} streams, the mock's cap.",
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
