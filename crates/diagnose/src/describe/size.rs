//! The sentences that size the limit: Little's law, the mock's ceiling of calls in flight, the
//! cores kept busy, and a batch's waves: each fact's sentences, key line and rank. Each number
//! comes from the fact; nothing here decides.

use super::{find, Teller};
use crate::finding::Finding;
use chokepoint_result::format::{count, duration, rate};
use chokepoint_result::{CeilingReading, Fact, Kind, Service};

/// The words of the facts that size the limit.
pub(super) const TELLER: Teller = Teller {
    sentences: |fact, finding| match fact {
        Fact::Batch { .. } => batch_sentences(fact),
        _ => sentence(fact, finding).into_iter().collect(),
    },
    short,
    rank,
};

/// The evidence sentence of one fact of this module's kind; `None` for any other fact (a batch
/// has two: [`batch_sentences`]).
fn sentence(fact: &Fact, finding: &Finding) -> Option<String> {
    let s = match fact {
        Fact::Little {
            throughput_rps,
            service_ms,
            service,
            in_service,
            ..
        } => {
            let ceiling = finding.facts.iter().any(|f| {
                matches!(
                    f,
                    Fact::MockCeiling { .. } | Fact::ConnectionCeiling { .. }
                )
            });
            if ceiling || *service_ms <= 0.0 {
                return None;
            }
            format!(
                "Little's law: {} req/s × {} ({}) = {} requests held at once.",
                rate(*throughput_rps),
                duration(*service_ms),
                match service {
                    Service::DownstreamCall => "the downstream delay",
                    Service::Request => "the base latency",
                },
                count(*in_service)
            )
        }
        Fact::MockCeiling {
            max_in_flight: m,
            mean_in_flight,
            steps,
            reading,
            ..
        } => {
            let (x, s_ms, little) = find(finding, |f| match f {
                Fact::Little {
                    throughput_rps,
                    service_ms,
                    in_service,
                    ..
                } => Some((*throughput_rps, *service_ms, *in_service)),
                _ => None,
            })
            .unwrap_or_default();
            match reading {
                CeilingReading::Agrees => format!(
                    "The mock never saw more than {} calls in flight at the plateau steps (median of their maxima), \
                     agreeing with Little's law: {} req/s × {} = {}, and with the mock's own mean of {} in flight.",
                    count(*m),
                    rate(x),
                    duration(s_ms),
                    count(little),
                    count(*mean_in_flight)
                ),
                CeilingReading::SameAtEveryStep => format!(
                    "The mock saw exactly {} calls in flight at each of the {steps} plateau steps: that ceiling is the pool. \
                     Little's law gives less ({} req/s × {} = {}, and the mock's mean of {}): the slots were not busy all the time.",
                    count(*m),
                    rate(x),
                    duration(s_ms),
                    count(little),
                    count(*mean_in_flight)
                ),
                CeilingReading::FullAtEveryStep => format!(
                    "The mock saw exactly {} calls in flight at each of the {steps} plateau steps, {} on average: \
                     a ceiling that does not move while the clients grow, its slots busy most of the time, is the pool. \
                     Little's law over the whole request gives more ({} req/s × {} = {}): each request spends part of \
                     its time outside its slot.",
                    count(*m),
                    count(*mean_in_flight),
                    rate(x),
                    duration(s_ms),
                    count(little)
                ),
                CeilingReading::Disagrees => format!(
                    "The mock saw at most {} calls in flight at the plateau steps, which does not agree with \
                     Little's law ({} req/s × {} = {}): the limit is taken from Little's law.",
                    count(*m),
                    rate(x),
                    duration(s_ms),
                    count(little)
                ),
            }
        }
        Fact::ConnectionCeiling {
            clients,
            peer_port,
            connections,
            pool,
            held_threads,
            hold_ms,
            little,
        } => format!(
            "The target kept exactly {connections} connections to port {peer_port} at each of the {} plateau steps \
             while clients grew to {}, and `{pool}` had {} threads holding them all the time (waiting on the network, \
             or woken by the answer and on a CPU or waiting for one): \
             {connections} calls in flight at once, each holding its connection ~{} ({connections} / the plateau's \
             throughput). Little's law over the whole request gives more ({}): each request spends part of its time \
             outside the pool.",
            clients.len(),
            clients.iter().max().copied().unwrap_or(0),
            count(*held_threads),
            duration(*hold_ms),
            count(*little)
        ),
        Fact::CoresBusy {
            target_cpu_pct,
            cores,
            cores_busy,
            little,
            ..
        } => format!(
            "The limit is the cores the target kept busy at the plateau: {target_cpu_pct:.0}% of {cores} cores = {} cores \
             (Little's law over the base latency gives {}, which counts waiting for a core too).",
            count(*cores_busy),
            count(*little)
        ),
        _ => return None,
    };
    Some(s)
}

/// A batch's two sentences: the waves that bound the pool, and why the limit keeps within them.
fn batch_sentences(fact: &Fact) -> Vec<String> {
    let Fact::Batch {
        clients: c,
        requests,
        ok,
        duration_s,
        waves,
        delay_ms,
        low,
        high,
    } = fact
    else {
        return Vec::new();
    };
    vec![
        format!(
            "This step is one batch ({requests} requests for {c} clients): {ok} successful requests took {duration_s:.1} s, {waves} waves of the {} delay, \
             so the pool holds between {low} and {high} at once.",
            duration(*delay_ms)
        ),
        "Little's law undercounts a batch (its last wave is partial), so the limit is kept within that range."
            .to_string(),
    ]
}

/// A fact in one short line; `None` for any other fact, or when there is no figure to give.
fn short(fact: &Fact, _: &Finding) -> Option<String> {
    let line = match fact {
        Fact::Little {
            throughput_rps,
            service_ms,
            in_service,
            ..
        } => {
            if *service_ms <= 0.0 {
                return None;
            }
            format!(
                "Little's law: {} req/s × {} = {} held at once.",
                rate(*throughput_rps),
                duration(*service_ms),
                count(*in_service)
            )
        }
        Fact::MockCeiling {
            max_in_flight,
            reading,
            ..
        } => match reading {
            CeilingReading::Agrees
            | CeilingReading::SameAtEveryStep
            | CeilingReading::FullAtEveryStep => format!(
                "The mock saw at most {} calls in flight at the plateau.",
                count(*max_in_flight)
            ),
            CeilingReading::Disagrees => return None,
        },
        Fact::ConnectionCeiling {
            connections,
            peer_port,
            ..
        } => format!("{connections} connections to port {peer_port}, each busy all the time."),
        Fact::CoresBusy {
            cores, cores_busy, ..
        } => format!(
            "{} of {cores} cores busy at the plateau.",
            count(*cores_busy)
        ),
        Fact::Batch { low, high, .. } => {
            format!("One batch: its waves bound the pool to {low}–{high}.")
        }
        _ => return None,
    };
    Some(line)
}

/// Where a fact's key line stands in a finding of `kind`; `None` leaves it out.
fn rank(kind: Kind, fact: &Fact) -> Option<u8> {
    match (kind, fact) {
        (Kind::ErrorBound | Kind::BlockingPool | Kind::CpuBound, Fact::Batch { .. }) => Some(2),
        (Kind::BlockingPool | Kind::ErrorBound, Fact::MockCeiling { .. }) => Some(2),
        (Kind::BlockingPool | Kind::ErrorBound, Fact::ConnectionCeiling { .. }) => Some(2),
        (Kind::BlockingPool | Kind::ErrorBound, Fact::Little { .. }) => Some(3),
        (Kind::CpuBound | Kind::Contention, Fact::CoresBusy { .. }) => Some(3),
        (Kind::GrowingPool, Fact::CoresBusy { .. }) => Some(2),
        _ => None,
    }
}
