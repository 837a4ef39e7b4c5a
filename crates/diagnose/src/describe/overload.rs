//! "Past the knee: ...": what overload did to the service, in one sentence from the typed
//! [`Overload`] (it queues, sheds, times out or collapses); the same sentence is its key line.

use super::{few_in_service, Teller};
use crate::points::in_service;
use chokepoint_result::format::{clients, count, duration, percent, rate};
use chokepoint_result::{Fact, Kind, Overload};

/// The words of [`Fact::Overload`].
pub(super) const TELLER: Teller = Teller {
    sentences: |fact, _| sentence(fact).into_iter().collect(),
    short: |fact, _| sentence(fact),
    rank,
};

/// The sentence of [`Fact::Overload`]; `None` for any other fact.
fn sentence(fact: &Fact) -> Option<String> {
    match fact {
        Fact::Overload { overload } => Some(past_the_knee(overload)),
        _ => None,
    }
}

/// Where its key line stands in a finding of `kind`; `None` leaves it out.
fn rank(kind: Kind, fact: &Fact) -> Option<u8> {
    match (kind, fact) {
        (Kind::Contention, Fact::Overload { .. }) => Some(0),
        (Kind::GrowingPool, Fact::Overload { .. }) => Some(1),
        _ => None,
    }
}

/// "Past the knee: ..." — what overload did to the service.
fn past_the_knee(overload: &Overload) -> String {
    match overload {
        Overload::Queues {
            from_clients,
            to_clients,
            throughput_rps,
            from_latency_ms,
            to_latency_ms,
        } => {
            let (from, to) = (duration(*from_latency_ms), duration(*to_latency_ms));
            if few_in_service(*throughput_rps, *to_latency_ms, *to_clients) {
                format!(
                    "Past the knee: throughput held at {} req/s from {} to {} while mean latency went from {from} to {to}: \
                     {} in service at once by Little's law, not the {} clients; the others waited where a request's latency does not count.",
                    rate(*throughput_rps),
                    from_clients,
                    clients(*to_clients),
                    count(in_service(*throughput_rps, *to_latency_ms)),
                    to_clients
                )
            } else {
                let verb = if to_latency_ms > from_latency_ms {
                    "grew"
                } else {
                    "went"
                };
                format!(
                    "Past the knee: it queues. From {} to {} throughput held at {} req/s while mean \
                     latency {verb} from {from} to {to}.",
                    from_clients,
                    clients(*to_clients),
                    rate(*throughput_rps),
                )
            }
        }
        Overload::Sheds {
            from_clients,
            at_clients,
            error_rate,
            error_latency_ms,
            error_kind,
        } => format!(
            "Past the knee: it sheds. From {} on, excess requests fail fast ({} in {}); {} \
             failed at {}.",
            clients(*from_clients),
            error_kind,
            duration(*error_latency_ms),
            percent(*error_rate),
            clients(*at_clients)
        ),
        Overload::TimesOut {
            from_clients,
            at_clients,
            error_rate,
            wait_ms,
            error_kind,
        } => format!(
            "Past the knee: it times out. From {} on, requests fail after a wait of about {} \
             ({}); {} failed at {}.",
            clients(*from_clients),
            duration(*wait_ms),
            error_kind,
            percent(*error_rate),
            clients(*at_clients)
        ),
        Overload::Collapses {
            peak,
            at_clients,
            throughput_rps,
            fall,
        } => format!(
            "Past the knee: it collapses. Throughput peaked at {} req/s at {} and fell {} to {} \
             req/s at {}.",
            rate(peak.throughput_rps),
            clients(peak.clients),
            percent(*fall),
            rate(*throughput_rps),
            clients(*at_clients)
        ),
    }
}
