//! The sentences of the facts read along the throughput curve: what was measured, the base
//! latency, each step, the knee and its plateau, contention, stalls, errors, where the sweep
//! stopped, the warm-up before it: each fact's sentence, key line and rank. Each number comes from the fact; nothing
//! here decides.

use super::{error_list, few_in_service, Teller};
use crate::finding::Finding;
use chokepoint_result::format::{clients, count, duration, percent, rate, whole_ms};
use chokepoint_result::{Fact, Kind, Overload, Warmup};

/// The words of the curve's facts.
pub(super) const TELLER: Teller = Teller {
    sentences: |fact, finding| sentence(fact, finding).into_iter().collect(),
    short,
    rank,
};

/// The evidence sentence of one fact of this module's kind; `None` for any other fact, and for
/// the plateau (told in the knee's sentence).
fn sentence(fact: &Fact, finding: &Finding) -> Option<String> {
    let s = match fact {
        Fact::NothingMeasured => {
            "The sweep ended before any step with clients completed.".to_string()
        }
        Fact::NoSuccess {
            clients: c,
            throughput_rps,
            ..
        } => format!(
            "At {}: 0 successful requests, {} completed per second.",
            clients(*c),
            rate(*throughput_rps)
        ),
        Fact::StoppedAnswering {
            from_clients,
            silent,
            window_s,
            answered_clients,
            answered_throughput_rps,
            stuck,
        } => format!(
            "At {} the service answered {} req/s; from {} on not one request completed, answered or failed, within each {window_s:.1} s step ({} silent step(s): {}). \
             A pool, a CPU or a connection cap keeps serving at its plateau when clients are added; throughput that falls to nothing is a service that stopped making progress: \
             a deadlock, or a wait without a timeout. No setting is named. {}",
            clients(*answered_clients),
            rate(*answered_throughput_rps),
            clients(*from_clients),
            silent.len(),
            silent.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
            stuck_words(*from_clients, stuck.as_ref())
        ),
        Fact::BaseLatency {
            clients: c,
            latency_ms,
            base_ms,
            from_delay: true,
        } => format!(
            "At {}, the fewest measured, the mean latency was {}, over 1.5× the {} downstream delay: \
             that step already queued, so the ideal line uses the delay as the base latency.",
            clients(*c),
            whole_ms(*latency_ms),
            duration(*base_ms)
        ),
        Fact::BaseLatency {
            clients: c,
            base_ms,
            from_delay: false,
            ..
        } => format!(
            "With {} the mean latency was {}, so the ideal throughput is clients / {} ({} req/s per client).",
            clients(*c),
            whole_ms(*base_ms),
            duration(*base_ms),
            rate(1000.0 / base_ms)
        ),
        Fact::Step {
            clients: c,
            ok_throughput_rps,
            latency_ms,
            in_service,
            efficiency,
            downstream_busy,
            downstream_delay_ms,
            mock_in_flight_max,
            target_cpu_pct,
            runs,
        } => {
            let mut s = format!(
                "At {}: {} req/s ok, mean {}, {} in service by Little's law, {} of ideal",
                clients(*c),
                rate(*ok_throughput_rps),
                whole_ms(*latency_ms),
                count(*in_service),
                percent(*efficiency)
            );
            if let (Some(busy), Some(d)) = (downstream_busy, downstream_delay_ms) {
                s.push_str(&format!(
                    "; {} downstream slots busy (X × {})",
                    count(*busy),
                    duration(*d)
                ));
            }
            if let Some(m) = mock_in_flight_max {
                s.push_str(&format!("; mock in flight max {}", count(*m)));
            }
            if let Some(t) = target_cpu_pct {
                s.push_str(&format!("; target CPU {t:.0}%"));
            }
            if *runs > 1 {
                s.push_str(&format!(" (median of {runs} runs)"));
            }
            s.push('.');
            s
        }
        Fact::AllInFlight { clients: c, efficiency } => format!(
            "At {c} clients throughput was {} of ideal, yet the mock saw all {c} calls in flight at once: \
             no pool smaller than that lets them through, so the shortfall is taken as noise, not a limit.",
            percent(*efficiency)
        ),
        Fact::OneStep { .. } => "Only one step was measured: one step cannot show where throughput stops following clients; \
             a limit can only be read from it when the base latency is known (a downstream delay) and the step queued."
            .to_string(),
        Fact::Contention {
            from_clients,
            threshold,
            lowest_efficiency,
            good_clients,
            good_throughput_rps,
            last_clients,
            last_throughput_rps,
        } => format!(
            "Efficiency drifts below {} from {from_clients} clients (down to {} at {last_clients} clients) but throughput still grows, \
             from {} req/s at {good_clients} clients to {} req/s at {last_clients}: contention, not a hard limit.",
            percent(*threshold),
            percent(*lowest_efficiency),
            rate(*good_throughput_rps),
            rate(*last_throughput_rps),
        ),
        Fact::Knee {
            clients: c,
            efficiency,
            threshold,
        } => {
            let mut s = format!(
                "The knee is at {}: throughput reached {} of ideal there (below {}), and every larger step stays below.",
                clients(*c),
                percent(*efficiency),
                percent(*threshold)
            );
            if let Some(Fact::Plateau {
                from_clients: a,
                to_clients: b,
                throughput_rps,
                from_latency_ms: la,
                to_latency_ms: lb,
            }) = finding.facts.iter().find(|f| matches!(f, Fact::Plateau { .. }))
            {
                // What the flat throughput means follows the kind: a pool queues the added
                // clients; with contention they also cost CPU (told in its own fact).
                let unanswered = finding
                    .facts
                    .iter()
                    .any(|f| matches!(f, Fact::ClientsUnanswered { .. }));
                let meaning = match finding.kind {
                    Kind::Contention => "the added clients bring no throughput",
                    Kind::ConnectionLimit if unanswered => {
                        "the added clients were never served (told below)"
                    }
                    // Requests that fail hold their clients too, out of the successful
                    // figures Little's law reads here: only a plateau that queues is read.
                    _ if matches!(finding.overload, Some(Overload::Queues { .. }))
                        && few_in_service(*throughput_rps, *lb, *b) =>
                    {
                        "yet by Little's law far fewer than the clients were in service, so the others waited where a request's latency does not count"
                    }
                    _ => "a queue behind a fixed pool",
                };
                s.push_str(&format!(
                    " From {a} to {b} clients ({:.1}×) throughput stays within 10% of {} req/s while mean latency {} from {} to {} ({:.1}×): {meaning}.",
                    *b as f64 / *a as f64,
                    rate(*throughput_rps),
                    if lb > la { "grows" } else { "goes" },
                    whole_ms(*la),
                    whole_ms(*lb),
                    if *la > 0.0 { lb / la } else { 0.0 }
                ));
            }
            s
        }
        // Told in the knee's sentence, above.
        Fact::Plateau { .. } => return None,
        Fact::Stalls {
            clients: c,
            count: n,
            stall_s,
            period_s,
            per_burst,
            ..
        } => format!(
            "At {} the timeline shows {n} stalls of about {stall_s:.1} s with almost no completions, one every {period_s:.1} s \
             (median gap between stall starts), with {} completions per burst.",
            clients(*c),
            count(*per_burst)
        ),
        Fact::ClientsUnanswered {
            clients: steps,
            unanswered,
            in_service,
            waited_s,
        } => format!(
            "Clients the target never answered: {} at {} clients; each waited {waited_s:.0} s or more (the ramp and the window) \
             without one answer while the others were answered again and again ({} in service at once by Little's law). \
             A queue answers its clients in turn, so their connections were never in one: the target served only some connections \
             and left the rest unaccepted or unread (a listen backlog that overflowed behind a slow accept loop, \
             a proxy's or server's connection cap such as HAProxy's maxconn).",
            list(unanswered.iter().map(u32::to_string)),
            list(steps.iter().map(u32::to_string)),
            list(in_service.iter().map(|&l| count(l)))
        ),
        Fact::ErrorsStart {
            clients: c,
            error_rate,
            errors,
            error_p50_ms,
            threshold,
        } => format!(
            "Errors start at {}: {} of requests failed ({}){}; every larger step stays above {} in the median.",
            clients(*c),
            percent(*error_rate),
            error_list(errors),
            error_p50_ms
                .map(|ms| format!(", answered in {} (median)", whole_ms(ms)))
                .unwrap_or_default(),
            percent(*threshold)
        ),
        Fact::Served {
            from_clients,
            ok_throughput_rps,
            ..
        } => format!(
            "The limit is what the target serves, not what it refuses: successful throughput from {from_clients} clients on is {} req/s (median).",
            rate(*ok_throughput_rps)
        ),
        Fact::Errors {
            clients: c,
            error_rate,
            errors,
        } => format!(
            "At {} {} of requests failed ({}).",
            clients(*c),
            percent(*error_rate),
            error_list(errors)
        ),
        Fact::MaxClientsReached { max_clients } => format!(
            "The sweep stopped at its maximum of {max_clients} clients; raise --max-clients to look further."
        ),
        Fact::WarmedUp { warmup } => warmed_up_sentence(warmup),
        _ => return None,
    };
    Some(s)
}

/// A fact in one short line; `None` for facts with no short form, or for a step any but the
/// largest.
fn short(fact: &Fact, f: &Finding) -> Option<String> {
    let line = match fact {
        Fact::NothingMeasured => "No step with clients was measured.".to_string(),
        Fact::NoSuccess {
            clients: c,
            throughput_rps,
            errors,
        } => format!(
            "{}: 0 ok of {} req/s ({}).",
            clients(*c),
            rate(*throughput_rps),
            error_list(errors)
        ),
        Fact::StoppedAnswering {
            from_clients,
            answered_clients,
            ..
        } => format!(
            "Stopped answering from {}: nothing completed (answered at {}).",
            clients(*from_clients),
            clients(*answered_clients)
        ),
        Fact::BaseLatency { base_ms, .. } => format!(
            "Ideal line: clients / {} (the base latency).",
            duration(*base_ms)
        ),
        Fact::Step {
            clients: c,
            ok_throughput_rps,
            efficiency,
            ..
        } => {
            let largest = f.facts.iter().rev().find_map(|x| match x {
                Fact::Step { clients, .. } => Some(*clients),
                _ => None,
            });
            if largest != Some(*c) {
                return None;
            }
            format!(
                "Largest step, {}: {} req/s, {} of ideal.",
                clients(*c),
                rate(*ok_throughput_rps),
                percent(*efficiency)
            )
        }
        Fact::Contention {
            from_clients,
            lowest_efficiency,
            ..
        } => format!(
            "From {from_clients} clients efficiency drifts to {} while throughput still grows: contention.",
            percent(*lowest_efficiency)
        ),
        Fact::MaxClientsReached { max_clients } => {
            format!("Stopped at --max-clients {max_clients}.")
        }
        Fact::WarmedUp { warmup } if !warmup.settled => format!(
            "Still warming up after {:.0} s unmeasured: latency {} → {}.",
            warmup.seconds,
            duration(warmup.first_ms),
            duration(warmup.last_ms)
        ),
        Fact::Knee {
            clients: c,
            efficiency,
            ..
        } => format!(
            "Knee at {}: {} of the ideal throughput.",
            clients(*c),
            percent(*efficiency)
        ),
        Fact::Plateau {
            from_clients,
            to_clients,
            throughput_rps,
            from_latency_ms,
            to_latency_ms,
        } => format!(
            "From {from_clients} to {to_clients} clients throughput stays at {} req/s while mean latency grows {} → {}.",
            rate(*throughput_rps),
            duration(*from_latency_ms),
            duration(*to_latency_ms)
        ),
        Fact::Stalls {
            clients: c,
            count: n,
            stall_s,
            period_s,
            per_burst,
            ..
        } => format!(
            "At {}: {n} stalls of {stall_s:.1} s, one every {period_s:.1} s, {} completions per burst.",
            clients(*c),
            count(*per_burst)
        ),
        Fact::ClientsUnanswered {
            clients: steps,
            unanswered,
            ..
        } => format!(
            "{} of {} clients never answered.",
            list(unanswered.iter().map(u32::to_string)),
            list(steps.iter().map(u32::to_string))
        ),
        Fact::ErrorsStart {
            clients: c,
            error_rate,
            errors,
            ..
        } => format!(
            "From {} on, {} of requests fail ({}).",
            clients(*c),
            percent(*error_rate),
            error_list(errors)
        ),
        Fact::Served {
            ok_throughput_rps, ..
        } => format!(
            "Successful throughput stays at {} req/s.",
            rate(*ok_throughput_rps)
        ),
        Fact::Errors {
            clients: c,
            error_rate,
            ..
        } => format!("{} failed at {}.", percent(*error_rate), clients(*c)),
        _ => return None,
    };
    Some(line)
}

/// Where a fact's key line stands in a finding of `kind`; `None` leaves it out.
fn rank(kind: Kind, fact: &Fact) -> Option<u8> {
    match (kind, fact) {
        (_, Fact::NothingMeasured | Fact::NoSuccess { .. }) => Some(0),
        (_, Fact::StoppedAnswering { .. }) => Some(0),
        (Kind::ConnectionLimit, Fact::Stalls { .. }) => Some(0),
        (_, Fact::ClientsUnanswered { .. }) => Some(0),
        (Kind::ErrorBound, Fact::ErrorsStart { .. }) => Some(0),
        (Kind::ErrorBound, Fact::Served { .. }) => Some(1),
        (Kind::BlockingPool | Kind::CpuBound, Fact::Plateau { .. }) => Some(0),
        (Kind::BlockingPool | Kind::CpuBound, Fact::Knee { .. }) => Some(5),
        (Kind::MachineSaturated | Kind::GrowingPool, Fact::Plateau { .. }) => Some(1),
        (Kind::NoLimitFound, Fact::BaseLatency { .. }) => Some(0),
        (Kind::NoLimitFound, Fact::Step { .. }) => Some(1),
        (Kind::NoLimitFound, Fact::Contention { .. } | Fact::MaxClientsReached { .. }) => Some(2),
        (_, Fact::Errors { .. }) => Some(8),
        // Said first only when the service may still have been warming up in the steps.
        (_, Fact::WarmedUp { warmup }) if !warmup.settled => Some(1),
        _ => None,
    }
}

/// The warm-up before the first step, and what it means for the steps.
pub(super) fn warmed_up_sentence(warmup: &Warmup) -> String {
    if warmup.in_first_step {
        return format!(
            "The first step ({}) was checked for a warm-up as it ran: its mean latency went from {} to {}, not falling, so it stood and nothing ran unmeasured.",
            clients(warmup.clients),
            duration(warmup.first_ms),
            duration(warmup.last_ms)
        );
    }
    let ran = format!(
        "Before the first step, {} ran unmeasured for {:.1} s while the service warmed up: its mean latency went from {} to {}",
        clients(warmup.clients),
        warmup.seconds,
        duration(warmup.first_ms),
        duration(warmup.last_ms)
    );
    if warmup.settled {
        format!("{ran} and stopped falling; the steps measured it warm.")
    } else {
        format!(
            "{ran} and was still falling when the warm-up's time ran out: the first steps may read it slower than it is (sweep again, or give it a longer warm-up with --warmup)."
        )
    }
}

/// Where a service that stopped answering had its threads, in words; without stacks, where to
/// look.
fn stuck_words(at: u32, stuck: Option<&chokepoint_result::Stuck>) -> String {
    let Some(stuck) = stuck else {
        return "Look at where its threads wait at the silent steps.".to_string();
    };
    format!(
        "At {} the stacks ({}) had {} thread(s) of `{}` {} in {}: where it stopped.",
        clients(at),
        stuck.source.map_or("the runtime's", |s| s.as_str()),
        count(stuck.threads),
        stuck.pool,
        stuck.waiting.map_or("waiting", |w| w.as_words()),
        if stuck.frames.is_empty() {
            "frames not read".to_string()
        } else {
            stuck.frames.join(" ← ")
        }
    )
}

/// Items joined for a sentence: `1, 2 and 3`.
fn list(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    match items.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}
