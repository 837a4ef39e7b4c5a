//! [`diagnose`]: the finding for a sweep (the method is in the crate documentation).

use crate::fit::{pool_fit, usl_fit};
use crate::points::{median, points, shape, Point, Shape, KNEE_EFFICIENCY};
use crate::stalls::{find_stalls, Stalls};
use chokepoint_result::Step;
use chokepoint_result::{Diagnosis, ErrorCounts, Kind, SweepContext};

/// Error rate above which errors decide the kind.
const ERROR_BOUND_RATE: f64 = 0.05;
/// Generator CPU (percent) above which the numbers are the generator's.
const GENERATOR_SATURATED_PCT: f64 = 90.0;
/// How close the mock's most calls in flight must be to Little's estimate to be preferred.
const INFLIGHT_AGREEMENT: f64 = 0.15;
/// How far above Little's law a ceiling the mock hit at every plateau step may sit and still be
/// taken as the pool (slots left idle by a starved machine lower Little's figure, not the pool).
const STARVED_SLOTS_RATIO: f64 = 1.5;
/// The USL is named the better model only when its error is below this share of the pool
/// model's (it has one more parameter, so it always fits noise a little better)...
const USL_ERROR_SHARE: f64 = 0.75;
/// ...and when the pool model's error is above this share of the mean throughput (below it, the
/// pool model is already within the noise).
const NOISE_SHARE: f64 = 0.03;
/// Share of one core a request in service must burn to count as CPU work (a request waiting on
/// a call burns next to nothing; one computing burns most of a core).
const CPU_HEAVY_CORE_SHARE: f64 = 0.3;
/// The same, in percent of all cores, when the number of cores is unknown.
const CPU_HEAVY_PCT: f64 = 15.0;

fn fmt_rate(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

fn fmt_ms(ms: f64) -> String {
    if ms >= 10.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

fn fmt_dur(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else {
        fmt_ms(ms)
    }
}

fn fmt_count(v: f64) -> String {
    if v >= 10.0 || (v == v.trunc() && v.abs() < 1e15) {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn fmt_pct(share: f64) -> String {
    let pct = share * 100.0;
    if pct >= 10.0 {
        format!("{pct:.0}%")
    } else {
        format!("{pct:.1}%")
    }
}

fn plural(n: u32) -> &'static str {
    if n == 1 {
        "client"
    } else {
        "clients"
    }
}

/// Errors of all the steps of a point, summed by kind.
fn error_counts(p: &Point<'_>) -> ErrorCounts {
    let mut counts = ErrorCounts::new();
    for s in &p.steps {
        for (kind, n) in &s.errors {
            *counts.entry(kind.clone()).or_default() += n;
        }
    }
    counts
}

fn describe_errors(counts: &ErrorCounts) -> String {
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

/// The finding for a finished (or interrupted) sweep. Steps may come in any order, with
/// repeats; 0 or 1 steps give an honest, smaller finding.
pub fn diagnose(steps: &[Step], context: &SweepContext) -> Diagnosis {
    let pts = points(steps);
    if pts.is_empty() {
        return Diagnosis {
            kind: Kind::NoLimitFound,
            limit: None,
            knee_clients: None,
            summary: "No step was measured, so there is nothing to diagnose yet.".to_string(),
            evidence: vec!["The sweep ended before any step with clients completed.".to_string()],
            usl: None,
            pool: None,
            better_model: None,
            fan_out: None,
            attribution: None,
        };
    }
    if pts.iter().all(|p| p.ok_x <= 0.0) {
        return nothing_succeeded(&pts);
    }
    Analysis::new(&pts, context).finish()
}

/// The finding when no step had a single successful request.
fn nothing_succeeded(pts: &[Point<'_>]) -> Diagnosis {
    let mut all = ErrorCounts::new();
    for p in pts {
        for (k, n) in error_counts(p) {
            *all.entry(k).or_default() += n;
        }
    }
    let largest = pts.last().map_or(0, |p| p.clients);
    let failed = all.values().sum::<u64>() > 0;
    let summary = if failed {
        format!(
            "No request succeeded at any step up to {largest} {}: every request failed ({}).",
            plural(largest),
            describe_errors(&all)
        )
    } else {
        format!(
            "No request completed at any step up to {largest} {}: there is nothing to measure.",
            plural(largest)
        )
    };
    Diagnosis {
        kind: if failed {
            Kind::ErrorBound
        } else {
            Kind::NoLimitFound
        },
        limit: None,
        knee_clients: None,
        summary,
        evidence: pts
            .iter()
            .map(|p| {
                format!(
                    "At {} {}: 0 successful requests, {} completed per second.",
                    p.clients,
                    plural(p.clients),
                    fmt_rate(p.x)
                )
            })
            .collect(),
        usl: None,
        pool: None,
        better_model: None,
        fan_out: None,
        attribution: None,
    }
}

struct Analysis<'p, 'a> {
    pts: &'p [Point<'a>],
    ctx: &'p SweepContext,
    delay: Option<f64>,
    sh: Shape,
    /// Downstream calls per target request at the fewest clients the mock saw.
    calls: Option<f64>,
    evidence: Vec<String>,
}

/// Size of a plateau: Little's estimate and, when it agrees, the mock's count.
struct Size {
    limit: f64,
    little: f64,
    sentence: Option<String>,
}

impl<'p, 'a> Analysis<'p, 'a> {
    fn new(pts: &'p [Point<'a>], ctx: &'p SweepContext) -> Self {
        let delay = ctx
            .downstream_delay_ms
            .filter(|d| d.is_finite() && *d > 0.0);
        let sh = shape(pts, delay);
        let calls = pts.iter().find_map(|p| p.calls_per_request());
        Analysis {
            pts,
            ctx,
            delay,
            sh,
            calls,
            evidence: Vec::new(),
        }
    }

    fn single_call(&self) -> bool {
        self.calls.is_none_or(|c| (0.8..=1.25).contains(&c))
    }

    /// The time a request holds its slot, ms, and how to say it.
    fn service(&self) -> (f64, String) {
        let l0 = self.sh.base_ms;
        match self.delay {
            Some(d) if self.single_call() && (self.sh.base_from_delay || l0 <= 1.5 * d) => {
                (d, format!("the whole {} downstream call", fmt_dur(d)))
            }
            _ => (l0, format!("the whole {} request", fmt_dur(l0))),
        }
    }

    fn size(&self, plateau_x: f64, idx: &[usize]) -> Size {
        let (s_ms, s_label) = self.service();
        let little = plateau_x * s_ms / 1000.0;
        let mut sentence = None;
        let mut limit = little;
        let direct = self.ctx.mock_present && self.calls.is_some() && self.single_call();
        let maxes: Vec<f64> = idx
            .iter()
            .filter_map(|&i| self.pts[i].inflight_max)
            .collect();
        // The mock's own time-weighted mean in flight is Little's law measured at the
        // downstream; on a busy machine it is steadier than the client's throughput.
        let means: Vec<f64> = idx
            .iter()
            .filter_map(|&i| self.pts[i].inflight_mean)
            .collect();
        let mock_mean = median(means);
        let reference = little.max(mock_mean);
        if direct && !maxes.is_empty() {
            let m = median(maxes.iter().copied());
            if reference > 0.0 && (m - reference).abs() <= INFLIGHT_AGREEMENT * reference {
                limit = m;
                sentence = Some(format!(
                    "The mock never saw more than {} calls in flight at the plateau steps (median of their maxima), \
                     agreeing with Little's law: {} req/s × {} = {}, and with the mock's own mean of {} in flight.",
                    fmt_count(m),
                    fmt_rate(plateau_x),
                    fmt_dur(s_ms),
                    fmt_count(little),
                    fmt_count(mock_mean)
                ));
            } else if maxes.len() >= 2
                && maxes.iter().all(|&x| x == m)
                && m >= reference
                && m <= STARVED_SLOTS_RATIO * reference
            {
                // Every plateau step hit the very same ceiling: that is the pool. Little's law
                // comes out lower when the slots are not kept busy all the time (a machine short
                // of CPU adds time between calls), never higher than the pool.
                limit = m;
                sentence = Some(format!(
                    "The mock saw exactly {} calls in flight at each of the {} plateau steps: that ceiling is the pool. \
                     Little's law gives less ({} req/s × {} = {}, and the mock's mean of {}): the slots were not busy all the time.",
                    fmt_count(m),
                    maxes.len(),
                    fmt_rate(plateau_x),
                    fmt_dur(s_ms),
                    fmt_count(little),
                    fmt_count(mock_mean)
                ));
            } else {
                sentence = Some(format!(
                    "The mock saw at most {} calls in flight at the plateau steps, which does not agree with \
                     Little's law ({} req/s × {} = {}): the limit is taken from Little's law.",
                    fmt_count(m),
                    fmt_rate(plateau_x),
                    fmt_dur(s_ms),
                    fmt_count(little)
                ));
            }
        } else if s_ms > 0.0 {
            sentence = Some(format!(
                "Little's law: {} req/s × {} ({}) = {} requests held at once.",
                fmt_rate(plateau_x),
                fmt_dur(s_ms),
                if s_label.contains("downstream") {
                    "the downstream delay"
                } else {
                    "the base latency"
                },
                fmt_count(little)
            ));
        }
        Size {
            limit,
            little,
            sentence,
        }
    }

    fn base_sentences(&mut self) {
        let first = &self.pts[0];
        let l0 = self.sh.base_ms;
        if self.sh.base_from_delay {
            self.evidence.push(format!(
                "At {} {}, the fewest measured, the mean latency was {}, over 1.5× the {} downstream delay: \
                 that step already queued, so the ideal line uses the delay as the base latency.",
                first.clients,
                plural(first.clients),
                fmt_ms(first.ok_mean_ms),
                fmt_dur(l0)
            ));
        } else if l0 > 0.0 {
            self.evidence.push(format!(
                "With {} {} the mean latency was {}, so the ideal throughput is clients / {} ({} req/s per client).",
                first.clients,
                plural(first.clients),
                fmt_ms(l0),
                fmt_dur(l0),
                fmt_rate(1000.0 / l0)
            ));
        }
        for (i, p) in self.pts.iter().enumerate() {
            let in_service = p.x * p.mean_ms / 1000.0;
            let mut s = format!(
                "At {} {}: {} req/s ok, mean {}, {} in service by Little's law, {} of ideal",
                p.clients,
                plural(p.clients),
                fmt_rate(p.ok_x),
                fmt_ms(p.ok_mean_ms),
                fmt_count(in_service),
                fmt_pct(self.sh.efficiency[i])
            );
            if let Some(d) = self.delay {
                s.push_str(&format!(
                    "; {} downstream slots busy (X × {})",
                    fmt_count(p.ok_x * d / 1000.0),
                    fmt_dur(d)
                ));
            }
            if let Some(m) = p.inflight_max {
                s.push_str(&format!("; mock in flight max {}", fmt_count(m)));
            }
            if let Some(t) = p.target_cpu {
                s.push_str(&format!("; target CPU {t:.0}%"));
            }
            if p.steps.len() > 1 {
                s.push_str(&format!(" (median of {} runs)", p.steps.len()));
            }
            s.push('.');
            self.evidence.push(s);
        }
        for &i in &self.sh.all_in_flight {
            let p = &self.pts[i];
            let ideal = if l0 > 0.0 {
                p.clients as f64 * 1000.0 / l0
            } else {
                0.0
            };
            self.evidence.push(format!(
                "At {} clients throughput was {} of ideal, yet the mock saw all {} calls in flight at once: \
                 no pool smaller than that lets them through, so the shortfall is taken as noise, not a limit.",
                p.clients,
                fmt_pct(if ideal > 0.0 { p.ok_x / ideal } else { 0.0 }),
                p.clients
            ));
        }
        if self.pts.len() == 1 {
            self.evidence.push(
                "Only one step was measured: one step cannot show where throughput stops following clients; \
                 a limit can only be read from it when the base latency is known (a downstream delay) and the step queued."
                    .to_string(),
            );
        }
    }

    fn missing_evidence(&mut self, cpu_already_said: bool) {
        if !self.ctx.mock_present {
            self.evidence.push(
                "No mock was given: the downstream evidence (calls in flight, connections) is missing.".to_string(),
            );
        }
        if !self.ctx.target_observed && !cpu_already_said {
            self.evidence.push(
                "The target process was not observed: its CPU evidence is missing.".to_string(),
            );
        }
    }

    fn small_errors(&mut self) {
        for p in self.pts {
            if p.error_rate > 0.0 {
                self.evidence.push(format!(
                    "At {} {} {} of requests failed ({}).",
                    p.clients,
                    plural(p.clients),
                    fmt_pct(p.error_rate),
                    describe_errors(&error_counts(p))
                ));
            }
        }
    }

    fn fan_out(&mut self) -> Option<String> {
        if !self.ctx.mock_present {
            return None;
        }
        let p = self.pts.iter().find(|p| p.calls_per_request().is_some())?;
        let calls = p.calls_per_request()?;
        if calls < 1.8 {
            return None;
        }
        let step = p.steps.iter().find(|s| s.downstream.is_some())?;
        let ds = step.downstream.as_ref()?;
        let requests = step.requests.max(1) as f64;
        let delays: Vec<(f64, f64)> = ds
            .stubs
            .iter()
            .filter(|s| s.requests > 0)
            .filter_map(|s| s.delay_ms.map(|d| (d, s.requests as f64 / requests)))
            .collect();
        let (slowest, sum) = if !delays.is_empty() {
            (
                delays.iter().map(|d| d.0).fold(0.0, f64::max),
                delays.iter().map(|d| d.0 * d.1).sum::<f64>(),
            )
        } else {
            let d = self.delay?;
            (d, d * calls)
        };
        let base = p.ok_mean_ms;
        if slowest <= 0.0 || base <= 0.0 {
            return None;
        }
        let parallel = base < (slowest + sum) / 2.0;
        let word = if parallel { "parallel" } else { "serial" };
        self.evidence.push(format!(
            "Fan-out: {:.1} downstream calls per request; calls appear {word}: {} {} {} {}, the slowest call takes {}, the sum would be {}.",
            calls,
            p.clients,
            plural(p.clients),
            if p.clients == 1 { "waits" } else { "wait" },
            fmt_ms(base),
            fmt_ms(slowest),
            fmt_ms(sum)
        ));
        Some(word.to_string())
    }

    fn finish(mut self) -> Diagnosis {
        let pts = self.pts;
        self.base_sentences();
        let knee = self.sh.knee.filter(|&k| self.knee_confirmed(k));
        let last = pts.len() - 1;

        // The plateau past the knee.
        let (plateau_x, plateau_idx) = match knee {
            Some(k) => {
                let px = median(pts[k..].iter().map(|p| p.ok_x));
                let idx: Vec<usize> = (k.saturating_sub(1)..pts.len())
                    .filter(|&i| (pts[i].ok_x - px).abs() <= 0.1 * px)
                    .collect();
                if idx.is_empty() {
                    // Too noisy for a flat plateau: every step past the knee stands for it.
                    (px, (k..pts.len()).collect())
                } else {
                    (median(idx.iter().map(|&i| pts[i].ok_x)), idx)
                }
            }
            None => (0.0, Vec::new()),
        };
        let plateau_from = plateau_idx
            .first()
            .map(|&i| pts[i].clients)
            .or(knee.map(|k| pts[k].clients));

        // The generator explains the limit when it saturated where throughput stopped following
        // (the knee step or the next) and its total rate, errors included, stopped too: a
        // shedding target's fast errors can busy the generator past a knee it did not cause.
        let base_s = self.sh.base_ms / 1000.0;
        let generator = knee.and_then(|k| {
            (k..pts.len().min(k + 2))
                .map(|i| (i, &pts[i]))
                .find(|(_, p)| {
                    p.generator_cpu > GENERATOR_SATURATED_PCT
                        && p.x * base_s / (p.clients as f64) < KNEE_EFFICIENCY
                })
        });
        if generator.is_none() && knee.is_some() {
            if let Some(g) = pts
                .iter()
                .find(|p| p.generator_cpu > GENERATOR_SATURATED_PCT)
            {
                self.evidence.push(format!(
                    "The generator used {:.0}% of its CPU at {} {}, after the limit showed: the finding stands, but figures at that step may be the generator's.",
                    g.generator_cpu,
                    g.clients,
                    plural(g.clients)
                ));
            }
        }
        let stalls = self.stalls();
        let error_from = (0..pts.len()).find(|&i| {
            pts[i].error_rate > ERROR_BOUND_RATE
                && median(pts[i..].iter().map(|p| p.error_rate)) > ERROR_BOUND_RATE
        });

        let kind;
        let mut limit = None;
        let mut knee_clients = knee.map(|k| pts[k].clients);
        let summary;
        if let Some((i, p)) = generator {
            kind = Kind::GeneratorBound;
            summary = format!(
                "The load generator's own CPU reached {:.0}% at {} clients: these numbers show the generator's limit, not the target's.",
                p.generator_cpu, p.clients
            );
            self.evidence.push(format!(
                "At {} clients the generator used {:.0}% of its CPU (over {GENERATOR_SATURATED_PCT:.0}%) while throughput was {} of ideal: \
                 run the generator on another machine or with more cores to see the target's limit.",
                p.clients,
                p.generator_cpu,
                fmt_pct(self.sh.efficiency[i])
            ));
        } else if let Some((i, st, cap)) = stalls {
            kind = Kind::ConnectionLimit;
            let p = &pts[i];
            let size = cap.unwrap_or(st.per_burst);
            limit = Some(size);
            knee_clients = Some(knee_clients.map_or(p.clients, |k| k.min(p.clients)));
            summary = format!(
                "Throughput stalls every {:.1} s from {} {} on: connections run out at ~{} and come back in batches.",
                st.period_s,
                p.clients,
                plural(p.clients),
                fmt_count(size)
            );
            self.evidence.push(format!(
                "At {} {} the timeline shows {} stalls of about {:.1} s with almost no completions, one every {:.1} s \
                 (median gap between stall starts), with {} completions per burst.",
                p.clients,
                plural(p.clients),
                st.count,
                st.stall_s,
                st.period_s,
                fmt_count(st.per_burst)
            ));
            match (cap, self.ctx.mock_keepalive_timeout_ms) {
                (Some(c), keepalive) => {
                    self.evidence.push(format!(
                        "The mock had {} connections open at most, at its cap of {}{}.",
                        fmt_count(p.ds_max_connections.unwrap_or(c)),
                        fmt_count(c),
                        keepalive
                            .map(|k| format!(", and closes idle ones after {}", fmt_dur(k as f64)))
                            .unwrap_or_default()
                    ));
                }
                (None, _) if self.ctx.mock_present => self.evidence.push(
                    "The mock has no connection cap, so the connections run out on the target's side.".to_string(),
                ),
                (None, _) => {}
            }
        } else if let Some(f) = error_from {
            kind = Kind::ErrorBound;
            let p = &pts[f];
            let counts = error_counts(p);
            let err_p50 = median(
                p.steps
                    .iter()
                    .filter_map(|s| s.error_latency_ms.map(|l| l.p50)),
            );
            let ok_plateau = median(pts[f..].iter().map(|p| p.ok_x));
            let idx: Vec<usize> = (f..pts.len()).collect();
            let size = self.size(ok_plateau, &idx);
            limit = Some(size.limit);
            knee_clients = Some(knee_clients.map_or(p.clients, |k| k.min(p.clients)));
            let speed = if err_p50 > 0.0 {
                format!(" in {}", fmt_ms(err_p50))
            } else {
                String::new()
            };
            summary = format!(
                "Past ~{} in flight the target sheds load: from {} {} on, {} of requests get {}{}, while successful throughput stays at {} req/s.",
                fmt_count(size.limit),
                p.clients,
                plural(p.clients),
                fmt_pct(p.error_rate),
                main_error_word(&counts),
                speed,
                fmt_rate(ok_plateau)
            );
            self.evidence.push(format!(
                "Errors start at {} {}: {} of requests failed ({}){}; every larger step stays above {} in the median.",
                p.clients,
                plural(p.clients),
                fmt_pct(p.error_rate),
                describe_errors(&counts),
                if err_p50 > 0.0 {
                    format!(", answered in {} (median)", fmt_ms(err_p50))
                } else {
                    String::new()
                },
                fmt_pct(ERROR_BOUND_RATE)
            ));
            self.evidence.push(format!(
                "The limit is what the target serves, not what it refuses: successful throughput from {} clients on is {} req/s (median).",
                p.clients,
                fmt_rate(ok_plateau)
            ));
            if let Some(s) = size.sentence {
                self.evidence.push(s);
            }
            if let Some((low, high)) = self.batch_range(f) {
                limit = Some(size.limit.clamp(low, high));
            }
        } else if let Some(k) = knee {
            let size = self.size(plateau_x, &plateau_idx);
            limit = Some(size.limit);
            let from = plateau_from.unwrap_or(pts[k].clients);
            self.plateau_sentence(k, plateau_x, &plateau_idx);
            let target_cpu = median(plateau_idx.iter().filter_map(|&i| pts[i].target_cpu));
            let generator_cpu = median(plateau_idx.iter().map(|&i| pts[i].generator_cpu));
            let observed = self.ctx.target_observed
                && plateau_idx.iter().any(|&i| pts[i].target_cpu.is_some());
            let cpu_saturated = observed
                && (target_cpu >= 75.0
                    || (target_cpu + generator_cpu >= 90.0 && target_cpu > generator_cpu));
            let idle = self.downstream_idle(&plateau_idx, size.little);
            // CPU per request in service at the fewest clients, in percent of all cores: a
            // request that waits on a call burns almost none; one doing CPU work burns a core.
            let first = &pts[0];
            let in_service = (first.x * first.mean_ms / 1000.0).max(first.clients as f64 * 0.5);
            let cpu_per_request = match (observed, first.target_cpu) {
                (true, Some(t)) if in_service > 0.0 => t / in_service,
                _ => 0.0,
            };
            let heavy_enough = match self.ctx.cores {
                Some(cores) if cores > 0 => {
                    cpu_per_request * cores as f64 / 100.0 >= CPU_HEAVY_CORE_SHARE
                }
                _ => cpu_per_request >= CPU_HEAVY_PCT,
            };
            let cpu_heavy = heavy_enough && (idle.is_some() || !self.ctx.mock_present);
            // A CPU limit is sized by the cores the target kept busy at the plateau: Little's
            // law over the base latency counts the time a request waits for a core too, and a
            // loaded machine makes that wait large.
            let cores_busy = match self.ctx.cores {
                Some(cores) if observed && cores > 0 && target_cpu > 0.0 => {
                    Some(target_cpu * cores as f64 / 100.0)
                }
                _ => None,
            };
            let machine_cpu = median(plateau_idx.iter().filter_map(|&i| pts[i].machine_cpu));
            let machine_observed = plateau_idx.iter().any(|&i| pts[i].machine_cpu.is_some());
            let cpu_limit = cores_busy.unwrap_or(size.limit);
            if cpu_saturated || cpu_heavy {
                limit = Some(cpu_limit);
                if let (Some(busy), Some(cores)) = (cores_busy, self.ctx.cores) {
                    self.evidence.push(format!(
                        "The limit is the cores the target kept busy at the plateau: {target_cpu:.0}% of {cores} cores = {} cores \
                         (Little's law over the base latency gives {}, which counts waiting for a core too).",
                        fmt_count(busy),
                        fmt_count(size.limit)
                    ));
                }
                if machine_observed {
                    let others = (machine_cpu - target_cpu - generator_cpu).max(0.0);
                    self.evidence.push(format!(
                        "The machine's CPU was {machine_cpu:.0}% busy at the plateau: the target {target_cpu:.0}%, the generator {generator_cpu:.0}%, everything else about {others:.0}%{}.",
                        if machine_cpu >= 90.0 && others >= 20.0 {
                            "; the target competed for cores, so on a quiet machine its limit may be higher"
                        } else {
                            ""
                        }
                    ));
                }
            }
            if cpu_saturated {
                kind = Kind::CpuBound;
                summary = format!(
                    "Throughput stops at {} req/s from {} {} on with the target's CPU at {:.0}%: the limit is the CPU, about {} requests in service at once.",
                    fmt_rate(plateau_x),
                    from,
                    plural(from),
                    target_cpu,
                    fmt_count(cpu_limit)
                );
                self.evidence.push(format!(
                    "At the plateau the target used {target_cpu:.0}% of all cores and the generator {generator_cpu:.0}% of its own."
                ));
            } else if cpu_heavy {
                kind = Kind::CpuBound;
                summary = format!(
                    "Throughput stops at {} req/s from {} {} on with every request in service burning CPU ({:.0}% of all cores each): \
                     the limit is CPU work, about {} requests in service at once.",
                    fmt_rate(plateau_x),
                    from,
                    plural(from),
                    cpu_per_request,
                    fmt_count(cpu_limit)
                );
                self.evidence.push(format!(
                    "At {} {} the target used {:.0}% of all cores for {} request(s) in service; at the plateau {target_cpu:.0}%, \
                     no longer growing with clients: the work that limits it is CPU.",
                    first.clients,
                    plural(first.clients),
                    first.target_cpu.unwrap_or(0.0),
                    fmt_count(in_service)
                ));
                if let Some(idle_sentence) = idle.clone() {
                    self.evidence.push(idle_sentence);
                }
            } else if let (false, Some(idle_sentence)) = (observed, idle.clone()) {
                kind = Kind::CpuBound;
                summary = format!(
                    "Throughput stops at {} req/s from {} {} on while the downstream stays idle: the limit is the target's own work, about {} requests in service at once.",
                    fmt_rate(plateau_x),
                    from,
                    plural(from),
                    fmt_count(size.limit)
                );
                self.evidence.push(idle_sentence);
                self.evidence.push(
                    "The target's CPU was not observed; per-request service time grows with clients while the downstream is idle, which points at the CPU.".to_string(),
                );
            } else {
                kind = Kind::BlockingPool;
                let (_, s_label) = self.service();
                summary = format!(
                    "Throughput stops at {} req/s from {} {} on: the service behaves like a pool of ~{} slots each held for {}.",
                    fmt_rate(plateau_x),
                    from,
                    plural(from),
                    fmt_count(size.limit),
                    s_label
                );
                if observed {
                    self.evidence.push(format!(
                        "The CPU is not the limit: at the plateau the target used {target_cpu:.0}% of all cores and the generator {generator_cpu:.0}%."
                    ));
                }
                if let Some(idle_sentence) = idle {
                    self.evidence.push(format!(
                        "{idle_sentence} The pool is held by something other than the downstream call."
                    ));
                }
            }
            if let Some(s) = size.sentence {
                self.evidence.push(s);
            }
            if let Some((low, high)) = self.batch_range(k) {
                limit = Some(size.limit.clamp(low, high));
            }
        } else {
            kind = Kind::NoLimitFound;
            let p = &pts[last];
            summary = if pts.len() == 1 && self.delay.is_none() {
                format!(
                    "One step at {} {} ({} req/s, mean {}) cannot show a limit: without a second step or a known downstream delay there is no ideal line to compare with.",
                    p.clients,
                    plural(p.clients),
                    fmt_rate(p.ok_x),
                    fmt_ms(p.ok_mean_ms)
                )
            } else {
                format!(
                    "No limit up to {} {}: {} req/s at {} {}, {} of ideal.",
                    p.clients,
                    plural(p.clients),
                    fmt_rate(p.ok_x),
                    p.clients,
                    plural(p.clients),
                    fmt_pct(self.sh.efficiency[last])
                )
            };
            if let Some(g) = pts
                .iter()
                .find(|p| p.generator_cpu > GENERATOR_SATURATED_PCT)
            {
                self.evidence.push(format!(
                    "The generator used {:.0}% of its CPU at {} clients: larger steps may show the generator's limit.",
                    g.generator_cpu, g.clients
                ));
            }
            if self.ctx.max_clients > 0 && p.clients >= self.ctx.max_clients {
                self.evidence.push(format!(
                    "The sweep stopped at its maximum of {} clients; raise --max-clients to look further.",
                    self.ctx.max_clients
                ));
            }
        }
        if kind != Kind::ErrorBound {
            self.small_errors();
        }
        let fan_out = self.fan_out();
        if kind == Kind::BlockingPool || kind == Kind::CpuBound {
            self.missing_evidence(kind == Kind::CpuBound);
        } else if !self.ctx.mock_present && kind != Kind::GeneratorBound {
            self.evidence.push(
                "No mock was given: the downstream evidence (calls in flight, connections) is missing.".to_string(),
            );
        }

        // Models.
        let xy: Vec<(f64, f64)> = pts.iter().map(|p| (p.clients as f64, p.ok_x)).collect();
        let usl = usl_fit(&xy);
        let pool = if knee.is_some()
            && matches!(kind, Kind::BlockingPool | Kind::CpuBound | Kind::ErrorBound)
        {
            let (s_ms, _) = self.service();
            pool_fit(
                &xy,
                self.sh.base_ms / 1000.0,
                s_ms / 1000.0,
                plateau_x.max(1e-9),
            )
        } else {
            None
        };
        // Compared on their error, not R²: on a flat plateau R² says nothing (there is next to no
        // variance to explain) while the error still does.
        let errors = match (&usl, &pool) {
            (Some(u), Some(p)) => {
                let usl_error = rms_error(&xy, |n| {
                    u.lambda * n / (1.0 + u.sigma * (n - 1.0) + u.kappa * n * (n - 1.0))
                });
                let base_s = self.sh.base_ms / 1000.0;
                let pool_error = rms_error(&xy, |n| (n / base_s).min(p.plateau_rps));
                Some((usl_error, pool_error))
            }
            _ => None,
        };
        let mean_x = xy.iter().map(|p| p.1).sum::<f64>() / xy.len().max(1) as f64;
        let better_model = errors.map(|(usl_error, pool_error)| {
            if usl_error < USL_ERROR_SHARE * pool_error && pool_error > NOISE_SHARE * mean_x {
                "usl".to_string()
            } else {
                "bounded-pool".to_string()
            }
        });
        let error_note = errors
            .map(|(usl_error, pool_error)| {
                format!(
                    " (RMS error {} req/s against the USL's {} req/s)",
                    fmt_rate(pool_error),
                    fmt_rate(usl_error)
                )
            })
            .unwrap_or_default();
        if let Some(u) = &usl {
            self.evidence.push(format!(
                "USL fit: σ = {:.3}, κ = {:.5}, λ = {} req/s, N_max = {}, R² = {:.3}.",
                u.sigma,
                u.kappa,
                fmt_rate(u.lambda),
                u.n_max
                    .map_or("none (κ = 0)".to_string(), |n| format!("{n:.0}")),
                u.r_squared
            ));
        }
        if let Some(p) = &pool {
            self.evidence.push(format!(
                "Bounded-pool model X(N) = min(N / {}, {} req/s): R² = {:.3}{error_note}{}.",
                fmt_dur(self.sh.base_ms),
                fmt_rate(p.plateau_rps),
                p.r_squared,
                match better_model.as_deref() {
                    Some("usl") =>
                        "; the USL fits better (throughput falls past its peak or keeps creeping)",
                    Some(_) => "; it fits better than the USL",
                    None => "",
                }
            ));
        }
        if let (Some(u), Some("usl")) = (&usl, better_model.as_deref()) {
            let peak = pts
                .iter()
                .max_by(|a, b| a.ok_x.total_cmp(&b.ok_x))
                .filter(|p| p.clients < pts[last].clients);
            if let (Some(peak), Some(_)) = (peak, u.n_max) {
                let end = &pts[last];
                if end.ok_x < 0.9 * peak.ok_x {
                    self.evidence.push(format!(
                        "Throughput peaks at {} req/s at {} clients and falls to {} req/s at {} clients: \
                         more clients cost throughput (contention σ and crosstalk κ), which a fixed pool alone does not do.",
                        fmt_rate(peak.ok_x),
                        peak.clients,
                        fmt_rate(end.ok_x),
                        end.clients
                    ));
                }
            }
        }
        Diagnosis {
            kind,
            limit: limit.filter(|l: &f64| l.is_finite()),
            knee_clients,
            summary,
            evidence: self.evidence,
            usl,
            pool,
            better_model,
            fan_out,
            attribution: None,
        }
    }

    /// A knee is a limit only when throughput really stopped: efficiency fell below 80%
    /// somewhere past it, or the largest step (≥ 1.2× the clients of the last good one) gained
    /// at most 3% throughput over it. A slow drift to 85% while throughput still grows is
    /// contention, not a limit; it is said in the evidence.
    fn knee_confirmed(&mut self, k: usize) -> bool {
        let pts = self.pts;
        if k == 0 {
            return true;
        }
        let deepest = self.sh.efficiency[k..]
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let (good, last) = (&pts[k - 1], &pts[pts.len() - 1]);
        let flat =
            last.ok_x <= 1.03 * good.ok_x && last.clients as f64 >= 1.2 * good.clients as f64;
        if deepest < 0.8 || flat {
            return true;
        }
        self.evidence.push(format!(
            "Efficiency drifts below {} from {} clients (down to {} at {} clients) but throughput still grows, \
             from {} req/s at {} clients to {} req/s at {}: contention, not a hard limit.",
            fmt_pct(KNEE_EFFICIENCY),
            pts[k].clients,
            fmt_pct(deepest),
            last.clients,
            fmt_rate(good.ok_x),
            good.clients,
            fmt_rate(last.ok_x),
            last.clients
        ));
        false
    }

    fn plateau_sentence(&mut self, k: usize, plateau_x: f64, idx: &[usize]) {
        let pts = self.pts;
        let p = &pts[k];
        let mut s = format!(
            "The knee is at {} {}: throughput reached {} of ideal there (below {}), and every larger step stays below.",
            p.clients,
            plural(p.clients),
            fmt_pct(self.sh.efficiency[k]),
            fmt_pct(KNEE_EFFICIENCY)
        );
        if let (Some(&a), Some(&b)) = (idx.first(), idx.last()) {
            if b > a {
                let (pa, pb) = (&pts[a], &pts[b]);
                s.push_str(&format!(
                    " From {} to {} clients ({:.1}×) throughput stays within 10% of {} req/s while mean latency grows from {} to {} ({:.1}×): a queue behind a fixed pool.",
                    pa.clients,
                    pb.clients,
                    pb.clients as f64 / pa.clients as f64,
                    fmt_rate(plateau_x),
                    fmt_ms(pa.ok_mean_ms),
                    fmt_ms(pb.ok_mean_ms),
                    if pa.ok_mean_ms > 0.0 { pb.ok_mean_ms / pa.ok_mean_ms } else { 0.0 }
                ));
            }
        }
        self.evidence.push(s);
    }

    /// When the mock is present: a sentence saying it stayed idle at the plateau, if it did.
    fn downstream_idle(&self, idx: &[usize], little: f64) -> Option<String> {
        if !self.ctx.mock_present {
            return None;
        }
        let calls: Vec<f64> = idx
            .iter()
            .filter_map(|&i| self.pts[i].calls_per_request())
            .collect();
        let in_flight: Vec<f64> = idx
            .iter()
            .filter_map(|&i| self.pts[i].inflight_mean)
            .collect();
        if calls.is_empty() && in_flight.is_empty() {
            return None;
        }
        let calls = if calls.is_empty() { 1.0 } else { median(calls) };
        let in_flight = if in_flight.is_empty() {
            f64::INFINITY
        } else {
            median(in_flight)
        };
        let l0 = self.sh.base_ms;
        let mut limit = self.pts[idx[0]].ok_x * l0 / 1000.0;
        if little > 0.0 {
            limit = limit.max(little);
        }
        if calls < 0.5 {
            Some(format!(
                "The downstream stayed idle: it saw {calls:.2} calls per target request at the plateau."
            ))
        } else if limit > 0.0 && in_flight < 0.5 * limit {
            Some(format!(
                "The downstream stayed nearly idle: {in_flight:.1} calls in flight on average at the plateau, against ~{} requests in service.",
                fmt_count(limit)
            ))
        } else {
            None
        }
    }

    /// Stalls with their point index and the connection cap when the mock was at it.
    fn stalls(&self) -> Option<(usize, Stalls, Option<f64>)> {
        let base_p50 = if self.pts[0].ok_p50_ms > 0.0 {
            self.pts[0].ok_p50_ms
        } else {
            self.sh.base_ms
        };
        let min_stall_s = 1.5 * base_p50 / 1000.0;
        let cap = self.ctx.mock_max_connections.map(|c| c as f64);
        self.pts.iter().enumerate().find_map(|(i, p)| {
            let st = p.steps.iter().find_map(|s| find_stalls(s, min_stall_s))?;
            let at_cap = match (cap, p.ds_max_connections) {
                (Some(c), Some(m)) => m >= 0.9 * c,
                _ => false,
            };
            let accepted = if cap.is_some() && self.ctx.mock_present {
                at_cap
            } else {
                st.count >= 3
            };
            accepted.then_some((i, st, if at_cap { cap } else { None }))
        })
    }

    /// A single step of a batch (each client sent about one request, as `ab -n N -c N`): the
    /// requests went through in waves of the delay, which bounds the pool from both sides.
    fn batch_range(&mut self, from: usize) -> Option<(f64, f64)> {
        let d = self.delay?;
        if self.pts.len() != 1 {
            return None;
        }
        let p = &self.pts[from];
        let step = p.steps.first()?;
        let served = step.ok as f64;
        let waves = (step.duration_s * 1000.0 / d).round();
        if step.requests as f64 > 1.5 * p.clients as f64 || waves < 2.0 || served < 1.0 {
            return None;
        }
        let low = (served / waves).ceil();
        let high = (served / (waves - 1.0)).ceil() - 1.0;
        self.evidence.push(format!(
            "This step is one batch ({} requests for {} clients): {} successful requests took {:.1} s, {} waves of the {} delay, \
             so the pool holds between {} and {} at once.",
            step.requests,
            p.clients,
            step.ok,
            step.duration_s,
            waves,
            fmt_dur(d),
            low,
            high.max(low)
        ));
        self.evidence.push(
            "Little's law undercounts a batch (its last wave is partial), so the limit is kept within that range.".to_string(),
        );
        Some((low, high.max(low)))
    }
}

/// Root-mean-square error of `model` over the points (clients, throughput).
fn rms_error(points: &[(f64, f64)], model: impl Fn(f64) -> f64) -> f64 {
    if points.is_empty() {
        return 0.0;
    }
    let sse: f64 = points.iter().map(|&(n, x)| (x - model(n)).powi(2)).sum();
    (sse / points.len() as f64).sqrt()
}
