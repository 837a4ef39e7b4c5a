//! The words about the downstream: the mock's connections, how busy it was, the fan-out of calls
//! per request, and what /proc showed of the target's pool and connections to it: each fact's
//! sentence, key line and rank. Each number comes from the fact; nothing here decides.

use super::Teller;
use crate::finding::Finding;
use chokepoint_result::format::{clients, count, duration, whole_ms};
use chokepoint_result::{Fact, Kind};

/// The words of the downstream's facts.
pub(super) const TELLER: Teller = Teller {
    sentences: |fact, finding| sentence(fact, finding).into_iter().collect(),
    short,
    rank,
};

/// The evidence sentence of one fact of this module's kind; `None` for any other fact, and for
/// a pool the place names (told there).
fn sentence(fact: &Fact, finding: &Finding) -> Option<String> {
    let s = match fact {
        Fact::MockConnectionCap {
            max_open,
            cap,
            keepalive_timeout_ms,
            ..
        } => format!(
            "The mock had {} connections open at most, at its cap of {}{}.",
            count(*max_open),
            count(*cap),
            keepalive_timeout_ms
                .map(|k| format!(", and closes idle ones after {}", duration(k as f64)))
                .unwrap_or_default()
        ),
        Fact::NoMockConnectionCap => {
            "The mock has no connection cap, so the connections run out on the target's side."
                .to_string()
        }
        Fact::DownstreamIdle {
            calls_per_request,
            in_flight,
            in_service,
            ..
        } => {
            let mut s = match in_flight {
                Some(m) if *calls_per_request >= 0.5 => format!(
                    "The downstream stayed nearly idle: {m:.1} calls in flight on average at the plateau, against ~{} requests in service.",
                    count(*in_service)
                ),
                _ => format!(
                    "The downstream stayed idle: it saw {calls_per_request:.2} calls per target request at the plateau."
                ),
            };
            if finding.kind == Kind::BlockingPool {
                s.push_str(" The pool is held by something other than the downstream call.");
            }
            s
        }
        Fact::NoMock => {
            "No mock was given: the downstream evidence (calls in flight, connections) is missing."
                .to_string()
        }
        Fact::BehindForwarder { forwarder } => format!(
            "The URL's port belongs to {} (process {}), a forwarder: it passed the requests on to {}, \
             where {} ({}) serves. Both were observed as the target; every request also crossed that hop.",
            forwarder.name,
            forwarder.pid,
            forwarder.hop(),
            forwarder.served_name,
            pids(&forwarder.served_pids)
        ),
        Fact::FanOut {
            clients: c,
            calls_per_request,
            latency_ms,
            slowest_ms,
            serial_ms,
            shape,
        } => format!(
            "Fan-out: {calls_per_request:.1} downstream calls per request; calls appear {}: {} {} {}, the slowest call takes {}, the sum would be {}.",
            shape.as_str(),
            clients(*c),
            if *c == 1 { "waits" } else { "wait" },
            whole_ms(*latency_ms),
            whole_ms(*slowest_ms),
            whole_ms(*serial_ms)
        ),
        Fact::PoolWaiting { pool, .. } if super::place::names_pool(finding, pool) => return None,
        Fact::PoolWaiting {
            clients: c,
            pool,
            threads,
            socket_wait,
            waits_on,
            mean_running,
            interval_ms,
        } => format!(
            "Thread pool `{pool}` (from /proc, sampled every {interval_ms} ms): {threads:.0} threads, up to {socket_wait:.0} of them \
             waiting on the network at once{} at {}, {mean_running:.1} running on average.",
            waits_on
                .as_ref()
                .map(|on| format!(", mostly in {on}"))
                .unwrap_or_default(),
            clients(*c)
        ),
        Fact::DownstreamConnections {
            clients: steps,
            peer_port,
            established,
            served,
            most_served,
            mock_cap,
            time_wait,
        } => {
            let series = |counts: &[u32]| {
                counts
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(" → ")
            };
            let most = established.iter().copied().max().unwrap_or(0);
            format!(
                "Connections from the target to the downstream (the mock, port {peer_port}) at {} clients: {} established at most{}; \
                 the mock served never more than {most_served} at once{}; up to {time_wait} in TIME_WAIT.",
                steps
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                series(established),
                if *most_served < most {
                    format!(
                        ", of which the mock served {} (the rest waited for it: not accepted, or the request unread)",
                        series(served)
                    )
                } else {
                    String::new()
                },
                match mock_cap {
                    Some(cap) if u64::from(*most_served) == *cap => format!(", the mock's cap of {cap}"),
                    _ => String::new(),
                }
            )
        }
        _ => return None,
    };
    Some(s)
}

/// A fact in one short line; `None` for any other fact, and for a pool the place names.
fn short(fact: &Fact, f: &Finding) -> Option<String> {
    let line = match fact {
        Fact::MockConnectionCap { max_open, cap, .. } => format!(
            "The mock had {} connections open, at its cap of {}.",
            count(*max_open),
            count(*cap)
        ),
        Fact::NoMockConnectionCap => {
            "The mock has no connection cap: the target's connections run out.".to_string()
        }
        Fact::DownstreamIdle {
            calls_per_request,
            in_flight,
            ..
        } => match in_flight {
            Some(m) if *calls_per_request >= 0.5 => {
                format!("The downstream stayed nearly idle: {m:.1} calls in flight.")
            }
            _ => "The downstream stayed idle.".to_string(),
        },
        Fact::NoMock => "No mock: the downstream was not watched.".to_string(),
        Fact::BehindForwarder { forwarder } => format!(
            "Behind {} on the URL's port: {} ({}) observed too.",
            forwarder.name,
            forwarder.served_name,
            forwarder.hop()
        ),
        Fact::FanOut {
            calls_per_request,
            shape,
            ..
        } => format!(
            "{calls_per_request:.1} downstream calls per request, {}.",
            shape.as_str()
        ),
        Fact::PoolWaiting { pool, .. } if super::place::names_pool(f, pool) => return None,
        Fact::PoolWaiting {
            pool,
            threads,
            socket_wait,
            ..
        } => format!(
            "Pool `{pool}`: {socket_wait:.0} of {threads:.0} threads waiting on the network at once."
        ),
        Fact::DownstreamConnections {
            most_served,
            mock_cap,
            ..
        } => format!(
            "The mock served at most {most_served} of the target's connections at once{}.",
            mock_cap.map(|cap| format!(" (its cap: {cap})")).unwrap_or_default()
        ),
        _ => return None,
    };
    Some(line)
}

/// Where a fact's key line stands in a finding of `kind`; `None` leaves it out.
fn rank(kind: Kind, fact: &Fact) -> Option<u8> {
    match (kind, fact) {
        (Kind::ConnectionLimit, Fact::MockConnectionCap { .. } | Fact::NoMockConnectionCap) => {
            Some(1)
        }
        (Kind::ConnectionLimit, Fact::DownstreamConnections { .. }) => Some(2),
        (Kind::BlockingPool | Kind::MachineSaturated, Fact::PoolWaiting { .. }) => Some(3),
        (Kind::BlockingPool | Kind::CpuBound, Fact::DownstreamIdle { .. }) => Some(4),
        (Kind::BlockingPool | Kind::CpuBound, Fact::NoMock) => Some(5),
        (_, Fact::FanOut { .. }) => Some(9),
        // The process observed is not the one on the URL's port: said before the place.
        (_, Fact::BehindForwarder { .. }) => Some(6),
        _ => None,
    }
}

/// Process ids as a reader reads them: `process 812`, `processes 812, 813`.
fn pids(pids: &[i32]) -> String {
    let list = pids
        .iter()
        .map(i32::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    if pids.len() == 1 {
        format!("process {list}")
    } else {
        format!("processes {list}")
    }
}
