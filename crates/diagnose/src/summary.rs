//! The finding's summary sentence, and the short lines of evidence that decide it (at most four,
//! for the first screen of the report): both read the kind and the facts. Each fact's key line
//! and its rank are written beside its evidence sentence, in its group's module of
//! [`crate::describe`]; here they are only picked and ordered.

use crate::describe::{
    client_side_reading, cores_words, error_list, find, plateau_size, rank, service_words, short,
};
use crate::finding::Finding;
use chokepoint_result::format::{clients, count, ms, parameter, percent, rate, whole_ms};
use chokepoint_result::{CeilingReading, ErrorCounts, Fact, Kind, Overload, PlaceKind};

/// Most short lines of [`key_evidence`].
const KEY_LINES: usize = 4;

/// The summary sentence.
pub(crate) fn summary(f: &Finding) -> String {
    if f.facts.contains(&Fact::NothingMeasured) {
        return "No step was measured, so there is nothing to diagnose yet.".to_string();
    }
    if let Some(s) = nothing_succeeded(f) {
        return s;
    }
    if let Some(s) = find(f, |fact| {
        match fact {
        Fact::StoppedAnswering {
            from_clients,
            window_s,
            answered_clients,
            answered_throughput_rps,
            ..
        } => Some(format!(
            "The service stopped answering at {}: not one request completed within a {window_s:.1} s step, \
             after {} req/s at {}. A deadlock or a wait without a timeout, not a limit a setting raises.",
            clients(*from_clients),
            rate(*answered_throughput_rps),
            clients(*answered_clients)
        )),
        _ => None,
    }
    }) {
        return s;
    }
    let (px, from) = f
        .plateau
        .as_ref()
        .map_or((0.0, 0), |p| (p.throughput_rps, p.from_clients));
    match f.kind {
        Kind::GeneratorBound => find(f, |fact| match fact {
            Fact::GeneratorBound {
                clients: c,
                generator_cpu_pct,
                ..
            } => Some(format!(
                "The load generator's own CPU reached {generator_cpu_pct:.0}% at {c} clients: these numbers show the generator's limit, not the target's."
            )),
            _ => None,
        })
        .unwrap_or_default(),
        Kind::ConnectionLimit => find(f, |fact| match fact {
            Fact::ClientsUnanswered {
                clients: steps,
                unanswered,
                ..
            } => Some(format!(
                "The target serves about {} connections at once: from {} on, the clients past them had not one answer in the whole step \
                 ({} of {}), while the others' requests took {}.",
                count(f.limit.unwrap_or_default()),
                clients(steps.first().copied().unwrap_or_default()),
                unanswered.last().copied().unwrap_or_default(),
                steps.last().copied().unwrap_or_default(),
                ms(f.base_latency_ms.unwrap_or_default())
            )),
            Fact::Stalls {
                clients: c,
                period_s,
                per_burst,
                ..
            } => Some(format!(
                "Throughput stalls every {period_s:.1} s from {} on: connections run out at ~{} and come back in batches.",
                clients(*c),
                count(f.limit.unwrap_or(*per_burst))
            )),
            _ => None,
        })
        .unwrap_or_default(),
        Kind::ErrorBound => find(f, |fact| match fact {
            Fact::ErrorsStart {
                clients: c,
                error_rate,
                errors,
                error_p50_ms,
                ..
            } => Some(format!(
                "Past ~{} in flight the target sheds load: from {} on, {} of requests get {}{}, while successful throughput stays at {} req/s.",
                count(plateau_size(f)),
                clients(*c),
                percent(*error_rate),
                main_error_word(errors),
                error_p50_ms
                    .map(|ms| format!(" in {}", whole_ms(ms)))
                    .unwrap_or_default(),
                rate(px)
            )),
            _ => None,
        })
        .unwrap_or_default(),
        Kind::CpuBound => {
            let start = format!("Throughput stops at {} req/s from {} on", rate(px), clients(from));
            find(f, |fact| match fact {
                // The quota first: the machine's share of CPU would read as room to spare.
                Fact::CpuQuota {
                    quota_cores,
                    throttled_share,
                    ..
                } => Some(format!(
                    "{start} with the target at its CPU quota of {} of a core, throttled by the kernel in {} of the periods: the limit is the quota, not the machine's cores.",
                    count(*quota_cores),
                    percent(*throttled_share)
                )),
                Fact::CpuSaturated {
                    target_cpu_pct,
                    in_service,
                    ..
                } => Some(format!(
                    "{start} with the target's CPU at {target_cpu_pct:.0}%: the limit is the CPU, about {} requests in service at once.",
                    count(*in_service)
                )),
                Fact::WholeCores { cores, .. } => Some(format!(
                    "{start} with the target keeping {} busy: the limit is its CPU on {}, not the downstream.",
                    cores_words(*cores),
                    if *cores == 1 { "that core" } else { "those cores" }
                )),
                Fact::WholeThreadsRunning { cores, .. } => Some(format!(
                    "{start} with the target's threads wanting {} all the time: the limit is its CPU, not the downstream.",
                    cores_words(*cores)
                )),
                Fact::InterpreterLock { .. } => Some(format!(
                    "{start} with the target's threads queued for CPython's interpreter lock (the GIL): the limit is \
                     one core of Python at a time, not the downstream."
                )),
                Fact::ThreadsRunning { running, .. } => Some(format!(
                    "{start} with the target's threads running ({running:.1} on a CPU or waiting for one at once): the limit is its CPU work, \
                     about {} requests in service at once.",
                    count(*running)
                )),
                Fact::CpuPerRequest {
                    per_request_pct,
                    limit_in_service,
                    ..
                } => Some(format!(
                    "{start} with every request in service burning CPU ({per_request_pct:.0}% of all cores each): \
                     the limit is CPU work, about {} requests in service at once.",
                    count(*limit_in_service)
                )),
                _ => None,
            })
            .unwrap_or_else(|| {
                format!(
                    "{start} while the downstream stays idle: the limit is the target's own work, about {} requests in service at once.",
                    count(plateau_size(f))
                )
            })
        }
        Kind::BlockingPool => {
            let little = find(f, |fact| match fact {
                Fact::Little {
                    service_ms,
                    service,
                    ..
                } => Some((*service_ms, *service)),
                _ => None,
            });
            let held = little
                .map(|(ms, service)| service_words(ms, service))
                .unwrap_or_default();
            // A full ceiling below Little's law over the request: the slot is held for the
            // call alone, not the whole request.
            let outside = find(f, |fact| match fact {
                Fact::MockCeiling {
                    reading: CeilingReading::FullAtEveryStep,
                    ..
                } => Some(()),
                _ => None,
            });
            let connections = find(f, |fact| match fact {
                Fact::ConnectionCeiling {
                    peer_port, hold_ms, ..
                } => Some((*peer_port, *hold_ms)),
                _ => None,
            });
            let held = match (outside, connections, little) {
                (Some(()), _, Some((ms, _))) => format!(
                    "its downstream call alone: each {} request also spends time outside its slot",
                    whole_ms(ms)
                ),
                (None, Some((port, hold_ms)), Some((ms, _))) => format!(
                    "~{} of each {} request: a connection to port {port}",
                    whole_ms(hold_ms),
                    whole_ms(ms)
                ),
                _ => held,
            };
            // The place a stream cap: the slots are the HTTP/2 streams the connections allow.
            let streams = find(f, |fact| match fact {
                Fact::Place { place } if place.kind == Some(PlaceKind::StreamCap) => {
                    Some((place.h2_connections?, place.stream_cap?))
                }
                _ => None,
            });
            if let Some((connections, cap)) = streams {
                return format!(
                    "Throughput stops at {} req/s from {} on: the calls stop at the HTTP/2 streams the downstream allows on the {} the target keeps to it, {} × {cap} = {} at once, each held for {held}.",
                    rate(px),
                    clients(from),
                    if connections == 1 { "1 connection".to_string() } else { format!("{connections} connections") },
                    connections,
                    connections * cap
                );
            }
            format!(
                "Throughput stops at {} req/s from {} on: the service behaves like a pool of ~{} slots each held for {held}.",
                rate(px),
                clients(from),
                count(plateau_size(f))
            )
        }
        Kind::NoLimitFound => no_limit(f),
        Kind::MachineSaturated => find(f, |fact| match fact {
            Fact::MachineTakenAtFall {
                others_pct,
                peak_clients,
                suggested,
                suggested_limit,
                ..
            } => Some(format!(
                "Throughput peaked at {} and fell past it while other processes held {others_pct:.0}% of all cores: \
                 the target served less on the CPU they left it, so this sweep cannot say whether it contends (alone, the fall reads as {}).",
                clients(*peak_clients),
                client_side_reading(*suggested, *suggested_limit)
            )),
            Fact::MachineBusyBeforeLoad {
                others_pct,
                suggested,
                suggested_limit,
                ..
            } => Some(format!(
                "{}, but other processes held {others_pct:.0}% of all cores before the load was heavy: \
                 the target ran on the CPU they left it, so this sweep cannot say what limits it (alone, its client side reads as {}).",
                match (f.plateau.as_ref(), f.knee_clients) {
                    (Some(_), _) => format!("Throughput stops at {} req/s from {} on", rate(px), clients(from)),
                    (None, Some(knee)) => format!("Throughput stops following the clients from {} on", clients(knee)),
                    (None, None) => "Throughput stops following the clients".to_string(),
                },
                client_side_reading(*suggested, *suggested_limit)
            )),
            Fact::MachineSaturated {
                machine_cpu_pct,
                target_cpu_pct,
                generator_cpu_pct,
                others_pct,
                ..
            } => Some(format!(
                "Throughput stops at {} req/s from {} on with the machine's CPU {machine_cpu_pct:.0}% busy ({}, the generator {generator_cpu_pct:.0}%, \
                 everything else {others_pct:.0}%): the machine ran out of cores, so this sweep cannot say what limits the target.",
                rate(px),
                clients(from),
                target_cpu_pct.map_or("the target not observed".to_string(), |t| format!("the target {t:.0}%"))
            )),
            _ => None,
        })
        .unwrap_or_default(),
        Kind::Contention => contention(f),
        Kind::GrowingPool => crate::growing::summary(f),
    }
}

/// The summary of a collapse past a peak, with the USL's crosstalk and the peak it predicts.
fn contention(f: &Finding) -> String {
    if let Some(rise) = f.facts.iter().find_map(|fact| match fact {
        Fact::CpuPerRequestRises {
            from_clients,
            from_cpu_ms,
            to_clients,
            to_cpu_ms,
            ..
        } => Some((*from_clients, *from_cpu_ms, *to_clients, *to_cpu_ms)),
        _ => None,
    }) {
        let (from, from_ms, to, to_ms) = rise;
        let (held, held_from) = f
            .plateau
            .as_ref()
            .map_or((0.0, from), |p| (p.throughput_rps, p.from_clients));
        return format!(
            "Throughput holds at {} req/s from {} to {} while each request's CPU grows {:.1}× ({} at {} → {} at {}): \
             more clients cost CPU, not throughput (contention, before any fall).",
            rate(held),
            clients(held_from),
            clients(to),
            to_ms / from_ms,
            ms(from_ms),
            clients(from),
            ms(to_ms),
            clients(to)
        );
    }
    let Some(Overload::Collapses {
        peak,
        at_clients,
        throughput_rps,
        fall,
    }) = &f.overload
    else {
        return String::new();
    };
    let usl = f
        .usl
        .filter(|u| u.kappa > 0.0)
        .and_then(|u| Some((u.kappa, u.n_max?)))
        .map(|(kappa, n_max)| {
            format!(
                "; the USL's crosstalk κ = {} puts the peak near {} clients",
                parameter(kappa),
                count(n_max)
            )
        })
        .unwrap_or_default();
    format!(
        "Throughput peaks at {} req/s at {} and falls {} to {} req/s at {}: more clients cost \
         throughput (contention{usl}).",
        rate(peak.throughput_rps),
        clients(peak.clients),
        percent(*fall),
        rate(*throughput_rps),
        clients(*at_clients)
    )
}

/// The summary when no step succeeded.
fn nothing_succeeded(f: &Finding) -> Option<String> {
    let mut largest = None;
    let mut all = ErrorCounts::new();
    for fact in &f.facts {
        if let Fact::NoSuccess {
            clients, errors, ..
        } = fact
        {
            largest = Some(*clients);
            for (k, n) in errors {
                *all.entry(k.clone()).or_default() += n;
            }
        }
    }
    let largest = clients(largest?);
    Some(if f.kind == Kind::ErrorBound {
        format!(
            "No request succeeded at any step up to {largest}: every request failed ({}).",
            error_list(&all)
        )
    } else {
        format!("No request completed at any step up to {largest}: there is nothing to measure.")
    })
}

/// The summary of a sweep whose throughput kept following clients: the largest step against
/// the ideal line, or why one step cannot tell.
fn no_limit(f: &Finding) -> String {
    let one_step = f.facts.iter().any(|x| matches!(x, Fact::OneStep { .. }));
    let last = f.facts.iter().rev().find_map(|x| match x {
        Fact::Step {
            clients,
            ok_throughput_rps,
            latency_ms,
            efficiency,
            downstream_delay_ms,
            ..
        } => Some((
            *clients,
            *ok_throughput_rps,
            *latency_ms,
            *efficiency,
            downstream_delay_ms.is_some(),
        )),
        _ => None,
    });
    let Some((c, x, latency_ms, efficiency, delay_known)) = last else {
        return String::new();
    };
    if one_step && !delay_known {
        format!(
            "One step at {} ({} req/s, mean {}) cannot show a limit: without a second step or a known downstream delay there is no ideal line to compare with.",
            clients(c),
            rate(x),
            whole_ms(latency_ms)
        )
    } else {
        format!(
            "No limit up to {}: {} req/s at {}, {} of ideal.",
            clients(c),
            rate(x),
            clients(c),
            percent(efficiency)
        )
    }
}

/// "503", "timeouts", ... for the most common error kind.
fn main_error_word(counts: &ErrorCounts) -> String {
    let top = counts.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)));
    match top {
        Some((k, _)) => match k.strip_prefix("http_") {
            Some(code) => code.to_string(),
            None => match k.as_str() {
                "request_timeout" | "connect_timeout" => "timeouts".to_string(),
                "reset" => "resets".to_string(),
                "connect_refused" => "refused connections".to_string(),
                other => other.replace('_', " "),
            },
        },
        None => "errors".to_string(),
    }
}

/// At most four short lines with the evidence that decides the finding, most telling first:
/// for a limit on a plateau, the plateau, its size, what the CPU and the downstream did; for
/// the other kinds, the facts their rule read.
pub(crate) fn key_evidence(f: &Finding) -> Vec<String> {
    let mut ranked: Vec<(u8, String)> = f
        .facts
        .iter()
        .filter_map(|fact| {
            let rank = rank(f.kind, fact)?;
            Some((rank, short(fact, f)?))
        })
        .collect();
    ranked.sort_by_key(|r| r.0);
    ranked.into_iter().take(KEY_LINES).map(|r| r.1).collect()
}
