//! [`describe`]: a [`Finding`] in words — the summary sentence, the evidence (one or two
//! sentences per fact, in the facts' order, then the models), and the few short lines that
//! decide it ([`crate::summary`]). Nothing here decides: every number comes from the finding.

use crate::finding::Finding;
use crate::summary::{key_evidence, summary};
use chokepoint_result::format::{clients, count, duration, percent, rate, whole_ms};
use chokepoint_result::{CeilingReading, ErrorCounts, Fact, Kind, Model, Overload, Service};

/// What [`describe`] writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Description {
    /// One sentence, as the seed's author would write it.
    pub summary: String,
    /// At most four short lines: the evidence that decides the finding.
    pub key_evidence: Vec<String>,
    /// Every fact in a sentence, each number traceable to the steps.
    pub evidence: Vec<String>,
}

/// The finding in words.
pub fn describe(finding: &Finding) -> Description {
    let mut evidence: Vec<String> = finding
        .facts
        .iter()
        .flat_map(|fact| match fact {
            Fact::Batch { .. } => batch_sentences(fact),
            Fact::Place { .. } | Fact::PlaceUnclear { .. } => {
                crate::describe_place::sentence(fact, finding)
                    .into_iter()
                    .collect()
            }
            _ => sentence(fact, finding).into_iter().collect(),
        })
        .collect();
    evidence.extend(model_sentences(finding));
    Description {
        summary: summary(finding),
        key_evidence: key_evidence(finding),
        evidence,
    }
}

/// `503: 12, reset: 3` — the kinds by count, most first.
pub(crate) fn error_list(counts: &ErrorCounts) -> String {
    let mut v: Vec<(&String, &u64)> = counts.iter().filter(|(_, &n)| n > 0).collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    if v.is_empty() {
        return "kinds not recorded".to_string();
    }
    v.iter()
        .map(|(k, n)| format!("{k}: {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The first fact the `pick` matches.
pub(crate) fn find<'f, T>(finding: &'f Finding, pick: impl Fn(&'f Fact) -> Option<T>) -> Option<T> {
    finding.facts.iter().find_map(pick)
}

/// The size Little's law or the mock's ceiling gave the plateau (the number a pool's or a
/// shedder's summary names).
pub(crate) fn plateau_size(finding: &Finding) -> f64 {
    let ceiling = find(finding, |f| match f {
        Fact::MockCeiling {
            max_in_flight,
            reading,
            ..
        } if *reading != CeilingReading::Disagrees => Some(*max_in_flight),
        _ => None,
    });
    let little = find(finding, |f| match f {
        Fact::Little { in_service, .. } => Some(*in_service),
        _ => None,
    });
    ceiling.or(little).unwrap_or(0.0)
}

/// The time a request holds its slot, in words: `the whole 1.0 s downstream call`.
pub(crate) fn service_words(service_ms: f64, service: Service) -> String {
    match service {
        Service::DownstreamCall => format!("the whole {} downstream call", duration(service_ms)),
        Service::Request => format!("the whole {} request", duration(service_ms)),
    }
}

/// The evidence sentence of one fact; `None` for facts told elsewhere (in the summary, in
/// another fact's sentence, or with the models).
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
                s.push_str(&format!(
                    " From {a} to {b} clients ({:.1}×) throughput stays within 10% of {} req/s while mean latency grows from {} to {} ({:.1}×): a queue behind a fixed pool.",
                    *b as f64 / *a as f64,
                    rate(*throughput_rps),
                    whole_ms(*la),
                    whole_ms(*lb),
                    if *la > 0.0 { lb / la } else { 0.0 }
                ));
            }
            s
        }
        Fact::GeneratorBound {
            clients: c,
            generator_cpu_pct,
            threshold_pct,
            efficiency,
        } => format!(
            "At {c} clients the generator used {generator_cpu_pct:.0}% of its CPU (over {threshold_pct:.0}%) while throughput was {} of ideal: \
             run the generator on another machine or with more cores to see the target's limit.",
            percent(*efficiency)
        ),
        Fact::GeneratorBusy {
            clients: c,
            generator_cpu_pct,
            past_limit: true,
        } => format!(
            "The generator used {generator_cpu_pct:.0}% of its CPU at {}, after the limit showed: the finding stands, but figures at that step may be the generator's.",
            clients(*c)
        ),
        Fact::GeneratorBusy {
            clients: c,
            generator_cpu_pct,
            past_limit: false,
        } => format!(
            "The generator used {generator_cpu_pct:.0}% of its CPU at {c} clients: larger steps may show the generator's limit."
        ),
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
        Fact::Little {
            throughput_rps,
            service_ms,
            service,
            in_service,
            ..
        } => {
            let ceiling = finding
                .facts
                .iter()
                .any(|f| matches!(f, Fact::MockCeiling { .. }));
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
        Fact::MachineCpu {
            machine_cpu_pct,
            target_cpu_pct,
            generator_cpu_pct,
            others_pct,
            contended,
            ..
        } => format!(
            "The machine's CPU was {machine_cpu_pct:.0}% busy at the plateau: the target {target_cpu_pct:.0}%, the generator {generator_cpu_pct:.0}%, everything else about {others_pct:.0}%{}.",
            if *contended {
                "; the target competed for cores, so on a quiet machine its limit may be higher"
            } else {
                ""
            }
        ),
        Fact::CpuSaturated {
            target_cpu_pct,
            generator_cpu_pct,
            ..
        } => format!(
            "At the plateau the target used {target_cpu_pct:.0}% of all cores and the generator {generator_cpu_pct:.0}% of its own."
        ),
        Fact::CpuPerRequest {
            clients: c,
            target_cpu_pct,
            in_service,
            plateau_cpu_pct,
            ..
        } => format!(
            "At {} the target used {target_cpu_pct:.0}% of all cores for {} request(s) in service; at the plateau {plateau_cpu_pct:.0}%, \
             no longer growing with clients: the work that limits it is CPU.",
            clients(*c),
            count(*in_service)
        ),
        Fact::CpuNotLimit {
            target_cpu_pct,
            generator_cpu_pct,
            ..
        } => format!(
            "The CPU is not the limit: at the plateau the target used {target_cpu_pct:.0}% of all cores and the generator {generator_cpu_pct:.0}%."
        ),
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
        Fact::TargetNotObserved if finding.kind == Kind::CpuBound => {
            "The target's CPU was not observed; per-request service time grows with clients while the downstream is idle, which points at the CPU."
                .to_string()
        }
        Fact::TargetNotObserved => {
            "The target process was not observed: its CPU evidence is missing.".to_string()
        }
        Fact::NoMock => {
            "No mock was given: the downstream evidence (calls in flight, connections) is missing."
                .to_string()
        }
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
        Fact::Overload { overload } => past_the_knee(overload),
        Fact::MaxClientsReached { max_clients } => format!(
            "The sweep stopped at its maximum of {max_clients} clients; raise --max-clients to look further."
        ),
        Fact::MachineSaturated { pool_size, .. } => format!(
            "Without the machine saturated this would read as a pool of ~{}; with every core busy it may be nothing but the CPU. \
             For a clean answer observe the target (--pid PID, or --pid auto on this machine) and run the generator on other cores \
             (taskset) or another machine.",
            pool_size.map_or("?".to_string(), count)
        ),
        Fact::ThreadsRunning {
            running, threads, ..
        } => format!(
            "From /proc, the target's threads at the plateau: {running:.1} of its {threads:.0} on a CPU or waiting for one at once on average, \
             none waiting on the network: its own work is the limit, not a pool."
        ),
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
        Fact::Plateau { .. }
        | Fact::Batch { .. }
        | Fact::BetterModel { .. }
        | Fact::Retrograde { .. } => {
            return None
        }
        #[allow(unreachable_patterns)] // facts added later are told when a describer knows them
        _ => return None,
    };
    Some(s)
}

/// A batch's two sentences: the waves that bound the pool, and why the limit keeps within them.
/// "Past the knee: ..." — what overload did to the service.
pub(crate) fn past_the_knee(overload: &Overload) -> String {
    match overload {
        Overload::Queues {
            from_clients,
            to_clients,
            throughput_rps,
            from_latency_ms,
            to_latency_ms,
        } => format!(
            "Past the knee: it queues. From {} to {} throughput held at {} req/s while mean \
             latency {} from {} to {}.",
            from_clients,
            clients(*to_clients),
            rate(*throughput_rps),
            if to_latency_ms > from_latency_ms {
                "grew"
            } else {
                "went"
            },
            duration(*from_latency_ms),
            duration(*to_latency_ms)
        ),
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

/// The models' sentences: the USL's fit, the bounded pool's beside it with the better one, and
/// a retrograde peak when the USL is named for it.
fn model_sentences(finding: &Finding) -> Vec<String> {
    let mut out = Vec::new();
    let better = find(finding, |f| match f {
        Fact::BetterModel {
            model,
            pool_rms_error_rps,
            usl_rms_error_rps,
        } => Some((*model, *pool_rms_error_rps, *usl_rms_error_rps)),
        _ => None,
    });
    if let Some(u) = &finding.usl {
        out.push(format!(
            "USL fit: σ = {:.3}, κ = {:.5}, λ = {} req/s, N_max = {}, R² = {:.3}.",
            u.sigma,
            u.kappa,
            rate(u.lambda),
            u.n_max
                .map_or("none (κ = 0)".to_string(), |n| format!("{n:.0}")),
            u.r_squared
        ));
    }
    if let Some(p) = &finding.pool {
        let error_note = better
            .map(|(_, pool_error, usl_error)| {
                format!(
                    " (RMS error {} req/s against the USL's {} req/s)",
                    rate(pool_error),
                    rate(usl_error)
                )
            })
            .unwrap_or_default();
        out.push(format!(
            "Bounded-pool model X(N) = min(N / {}, {} req/s): R² = {:.3}{error_note}{}.",
            duration(p.base_latency_ms),
            rate(p.plateau_rps),
            p.r_squared,
            match better.map(|b| b.0) {
                Some(Model::Usl) =>
                    "; the USL fits better (throughput falls past its peak or keeps creeping)",
                Some(Model::BoundedPool) => "; it fits better than the USL",
                None => "",
            }
        ));
    }
    if let Some(Fact::Retrograde {
        peak_clients,
        peak_rps,
        last_clients,
        last_rps,
    }) = finding
        .facts
        .iter()
        .find(|f| matches!(f, Fact::Retrograde { .. }))
    {
        out.push(format!(
            "Throughput peaks at {} req/s at {peak_clients} clients and falls to {} req/s at {last_clients} clients: \
             more clients cost throughput (contention σ and crosstalk κ), which a fixed pool alone does not do.",
            rate(*peak_rps),
            rate(*last_rps)
        ));
    }
    out
}
