//! The finding's summary sentence, and the short lines of evidence that decide it (at most four,
//! for the first screen of the report): both read the kind and the facts.

use crate::describe::{error_list, find, plateau_size, service_words};
use crate::finding::Finding;
use chokepoint_result::format::{clients, count, duration, parameter, percent, rate, whole_ms};
use chokepoint_result::{CeilingReading, ErrorCounts, Fact, Kind, Overload};

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
            let held = find(f, |fact| match fact {
                Fact::Little {
                    service_ms,
                    service,
                    ..
                } => Some(service_words(*service_ms, *service)),
                _ => None,
            })
            .unwrap_or_default();
            format!(
                "Throughput stops at {} req/s from {} on: the service behaves like a pool of ~{} slots each held for {held}.",
                rate(px),
                clients(from),
                count(plateau_size(f))
            )
        }
        Kind::NoLimitFound => no_limit(f),
        Kind::MachineSaturated => find(f, |fact| match fact {
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

/// Where a fact stands among the key lines of a finding of `kind`; `None` leaves it out.
fn rank(kind: Kind, fact: &Fact) -> Option<u8> {
    let general = match fact {
        Fact::MachineCpu {
            contended: true, ..
        } => Some(6),
        Fact::GeneratorBusy { .. } => Some(7),
        Fact::Errors { .. } => Some(8),
        Fact::FanOut { .. } => Some(9),
        _ => None,
    };
    let specific = match (kind, fact) {
        (_, Fact::NothingMeasured | Fact::NoSuccess { .. }) => Some(0),
        (Kind::GeneratorBound, Fact::GeneratorBound { .. }) => Some(0),
        (Kind::ConnectionLimit, Fact::Stalls { .. }) => Some(0),
        (Kind::ConnectionLimit, Fact::MockConnectionCap { .. } | Fact::NoMockConnectionCap) => {
            Some(1)
        }
        (Kind::ErrorBound, Fact::ErrorsStart { .. }) => Some(0),
        (Kind::ErrorBound, Fact::Served { .. }) => Some(1),
        (Kind::ErrorBound | Kind::BlockingPool | Kind::CpuBound, Fact::Batch { .. }) => Some(2),
        (Kind::BlockingPool | Kind::CpuBound, Fact::Plateau { .. }) => Some(0),
        (Kind::BlockingPool | Kind::CpuBound, Fact::Knee { .. }) => Some(5),
        (Kind::BlockingPool | Kind::ErrorBound, Fact::MockCeiling { .. }) => Some(2),
        (Kind::BlockingPool | Kind::ErrorBound, Fact::Little { .. }) => Some(3),
        (Kind::CpuBound, Fact::CpuSaturated { .. } | Fact::CpuPerRequest { .. }) => Some(2),
        (Kind::CpuBound, Fact::CoresBusy { .. }) => Some(3),
        (Kind::BlockingPool, Fact::CpuNotLimit { .. }) => Some(4),
        (Kind::BlockingPool, Fact::CeilingOverCpu { .. }) => Some(1),
        (Kind::CpuBound, Fact::CpuQuota { .. }) => Some(0),
        (Kind::BlockingPool | Kind::CpuBound, Fact::DownstreamIdle { .. }) => Some(4),
        (Kind::BlockingPool | Kind::CpuBound, Fact::TargetNotObserved) => Some(5),
        (Kind::BlockingPool | Kind::CpuBound, Fact::NoMock) => Some(5),
        (Kind::MachineSaturated, Fact::MachineSaturated { .. }) => Some(0),
        (Kind::CpuBound, Fact::ThreadsRunning { .. }) => Some(1),
        (Kind::CpuBound, Fact::WholeCores { .. } | Fact::WholeThreadsRunning { .. }) => Some(1),
        (Kind::MachineSaturated, Fact::Plateau { .. }) => Some(1),
        (Kind::BlockingPool | Kind::MachineSaturated, Fact::PoolWaiting { .. }) => Some(3),
        (Kind::ConnectionLimit, Fact::DownstreamConnections { .. }) => Some(2),
        (_, Fact::Place { .. } | Fact::PlaceUnclear { .. }) => Some(1),
        (Kind::NoLimitFound, Fact::Step { .. }) => Some(1),
        (Kind::NoLimitFound, Fact::BaseLatency { .. }) => Some(0),
        (Kind::NoLimitFound, Fact::Contention { .. } | Fact::MaxClientsReached { .. }) => Some(2),
        (Kind::Contention, Fact::Overload { .. }) => Some(0),
        (Kind::Contention, Fact::BetterModel { .. }) => Some(1),
        (Kind::Contention, Fact::CpuNotLimit { .. } | Fact::CoresBusy { .. }) => Some(3),
        (Kind::GrowingPool, Fact::GrowingPool { .. }) => Some(0),
        (Kind::GrowingPool, Fact::Plateau { .. } | Fact::Overload { .. }) => Some(1),
        (Kind::GrowingPool, Fact::CpuSaturated { .. } | Fact::CoresBusy { .. }) => Some(2),
        _ => None,
    };
    specific.or(general)
}

/// A fact in one short line; `None` for facts with no short form (or, for a step, any but the
/// largest).
fn short(fact: &Fact, f: &Finding) -> Option<String> {
    let line = match fact {
        Fact::NothingMeasured => "No step with clients was measured.".to_string(),
        Fact::Place { .. } | Fact::PlaceUnclear { .. } => crate::describe::place::short(fact)?,
        Fact::Overload { overload } => crate::describe::past_the_knee(overload),
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
        Fact::GeneratorBound {
            clients: c,
            generator_cpu_pct,
            efficiency,
            ..
        } => format!(
            "Generator CPU {generator_cpu_pct:.0}% at {}, throughput {} of ideal.",
            clients(*c),
            percent(*efficiency)
        ),
        Fact::GeneratorBusy {
            clients: c,
            generator_cpu_pct,
            ..
        } => format!("Generator CPU {generator_cpu_pct:.0}% at {}.", clients(*c)),
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
        Fact::MockConnectionCap { max_open, cap, .. } => format!(
            "The mock had {} connections open, at its cap of {}.",
            count(*max_open),
            count(*cap)
        ),
        Fact::NoMockConnectionCap => {
            "The mock has no connection cap: the target's connections run out.".to_string()
        }
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
            CeilingReading::Agrees | CeilingReading::SameAtEveryStep => format!(
                "The mock saw at most {} calls in flight at the plateau.",
                count(*max_in_flight)
            ),
            CeilingReading::Disagrees => return None,
        },
        Fact::CpuSaturated {
            target_cpu_pct,
            generator_cpu_pct,
            ..
        } => format!(
            "Target CPU {target_cpu_pct:.0}% of all cores at the plateau (generator {generator_cpu_pct:.0}%)."
        ),
        Fact::CpuPerRequest {
            per_request_pct, ..
        } => format!(
            "Each request in service burns {per_request_pct:.0}% of all cores."
        ),
        Fact::CoresBusy {
            cores, cores_busy, ..
        } => format!("{} of {cores} cores busy at the plateau.", count(*cores_busy)),
        Fact::CpuNotLimit {
            target_cpu_pct,
            generator_cpu_pct,
            ..
        } => format!(
            "CPU is not the limit: target {target_cpu_pct:.0}%, generator {generator_cpu_pct:.0}%."
        ),
        Fact::CpuQuota {
            quota_cores,
            throttled_share,
            ..
        } => format!(
            "CPU quota {} of a core, throttled in {} of periods.",
            count(*quota_cores),
            percent(*throttled_share)
        ),
        Fact::CeilingOverCpu {
            in_flight, faster, ..
        } => format!(
            "Mock ceiling {} at every step; faster at {} with less CPU.",
            count(*in_flight),
            clients(faster.0)
        ),
        Fact::MachineCpu {
            machine_cpu_pct,
            others_pct,
            ..
        } => format!(
            "The machine was {machine_cpu_pct:.0}% busy, {others_pct:.0}% by other processes."
        ),
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
        Fact::TargetNotObserved => "The target's CPU was not observed.".to_string(),
        Fact::NoMock => "No mock: the downstream was not watched.".to_string(),
        Fact::Batch { low, high, .. } => {
            format!("One batch: its waves bound the pool to {low}–{high}.")
        }
        Fact::Errors {
            clients: c,
            error_rate,
            ..
        } => format!("{} failed at {}.", percent(*error_rate), clients(*c)),
        Fact::FanOut {
            calls_per_request,
            shape,
            ..
        } => format!(
            "{calls_per_request:.1} downstream calls per request, {}.",
            shape.as_str()
        ),
        Fact::MachineSaturated {
            machine_cpu_pct,
            target_cpu_pct,
            ..
        } => format!(
            "The machine's CPU was {machine_cpu_pct:.0}% busy at the plateau, the target's {}.",
            target_cpu_pct.map_or("not observed".to_string(), |t| format!("{t:.0}%"))
        ),
        Fact::ThreadsRunning {
            running, threads, ..
        } => format!("{running:.1} of the target's {threads:.0} threads running at once, none waiting on the network."),
        Fact::WholeCores {
            cores, cores_busy, ..
        } => format!(
            "{} of {} busy at every step from the knee on.",
            count(*cores_busy),
            cores_words(*cores)
        ),
        Fact::WholeThreadsRunning {
            threads_running,
            cores_busy,
            ..
        } => format!(
            "{threads_running:.1} threads on a CPU or waiting for one at once from the knee on{}.",
            cores_busy
                .map(|c| format!(", {} cores got", count(c)))
                .unwrap_or_default()
        ),
        Fact::PoolWaiting { pool, .. } if crate::describe::place::names_pool(f, pool) => {
            return None
        }
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
        Fact::GrowingPool { .. } => return crate::growing::short(fact),
        _ => return None,
    };
    Some(line)
}

/// `one core` or `N cores`.
pub(crate) fn cores_words(cores: u32) -> String {
    if cores == 1 {
        "one core".to_string()
    } else {
        format!("{cores} cores")
    }
}
