//! The what-if (`sweep --what-if M`): what the service would serve with its pool at M instead
//! of N. Pure: it reads the finished sweep and the emulated steps the experiment measured, and
//! decides; [`words`] tells the decision.
//!
//! Little's law gives a free experiment. A pool of N, each call holding a slot for h (about the
//! mock's delay d), serves N/h. Cut the mock's delay to d' = d·N/M and the same pool holds each
//! call for about h·N/M, so it serves M/h: what a pool of M at the old delay would. (The hold
//! is scaled with the delay, not the delay alone: on the demo service the hold was 7% over the
//! delay at 100 ms and 6% over it at 46 ms, so subtracting a fixed own part overshot by 10%.)
//! What the service measures at d' is then the prediction,
//! unless something else (its CPU, another pool, a connection cap) stops it first, which the
//! emulated steps show too. [`plan`] decides whether the emulation is valid and its delay and
//! clients; [`judge`] reads the emulated steps; [`cpu_bound`] is the bound beside it: usable
//! cores / CPU time per request at the plateau.
#[cfg(test)]
mod tests;
pub(crate) mod words;

pub use words::words;

use chokepoint_result::{
    Diagnosis, EmulatedStep, Kind, MeasuredBy, NextLimit, NotEmulated, PlaceKind, Step,
    SweepContext, WhatIf,
};

/// The hold may exceed the mock's delay by this share (the service's own part) and the
/// emulation still counts as scaling the pool's service time.
const HOLD_OVER_DELAY: f64 = 1.5;
/// A hold this far under the delay says the pool's size is not what was read.
const HOLD_UNDER_DELAY: f64 = 0.9;
/// The emulated steps reached this share of what a pool of M serves: the pool still stood.
const REACHED_THE_POOL: f64 = 0.9;
/// Cores busy at this share of the usable ones: the CPU stopped the emulation.
const CPU_STOPPED: f64 = 0.75;
/// A share of failed requests past which errors took over.
const ERRORS_TOOK_OVER: f64 = 0.05;
/// The shortest emulated delay, ms: shorter, the mock's timer and the service's own time blur it.
const SHORTEST_DELAY_MS: f64 = 1.0;

/// The size asked with `--what-if`: a pool of M, or a factor of the finding's N (`2x`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PoolSize {
    /// This many slots.
    Pool(u32),
    /// The finding's pool times this.
    Times(f64),
}

impl std::str::FromStr for PoolSize {
    type Err = String;
    fn from_str(text: &str) -> Result<PoolSize, String> {
        let text = text.trim();
        let wrong = || {
            format!(
                "'{text}' is not a pool size: give the pool's new size (40) or a factor of the one found (2x)"
            )
        };
        if let Some(factor) = text.strip_suffix(['x', 'X']) {
            return match factor.trim().parse::<f64>() {
                Ok(f) if f.is_finite() && f > 0.0 => Ok(PoolSize::Times(f)),
                _ => Err(wrong()),
            };
        }
        match text.parse::<i64>() {
            Ok(n) if (1..=1_000_000).contains(&n) => Ok(PoolSize::Pool(n as u32)),
            Ok(_) => Err(format!("'{text}' must be a pool of 1 to 1000000 slots")),
            Err(_) => Err(wrong()),
        }
    }
}

/// The emulation to run: the delay to set and the clients to run at.
#[derive(Debug, Clone, PartialEq)]
pub struct Emulation {
    /// N, the pool found.
    pub from_pool: u32,
    /// M, the pool predicted.
    pub pool: u32,
    /// The mock's delay during the sweep, ms.
    pub delay_ms: f64,
    /// What each call held a slot for at the plateau, ms: N / plateau throughput.
    pub hold_ms: f64,
    /// The delay that makes the pool of N serve as one of M, ms.
    pub emulated_delay_ms: f64,
    /// Client counts that saturate a pool of M (1.5 M and 2 M, within the largest allowed).
    pub clients: Vec<u32>,
}

/// What [`plan`] decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Run the emulation.
    Emulate(Emulation),
    /// No emulation: only the bound ([`bound_only`]).
    BoundOnly {
        /// M when it is known.
        pool: Option<u32>,
        /// N when there is one.
        from_pool: Option<u32>,
        /// Why not.
        why: NotEmulated,
    },
    /// Nothing to predict: a note, and no what-if.
    Refuse(Refusal),
}

/// A what-if with nothing to predict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Refusal {
    /// M is the pool found.
    SamePool(u32),
    /// A pool of M cannot be saturated within the largest client count.
    TooFewClients {
        /// M.
        pool: u32,
        /// The largest client count allowed.
        max_clients: u32,
    },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::SamePool(n) => write!(
                f,
                "--what-if {n}: the pool found is already {n}: give another size (or 2x)"
            ),
            Refusal::TooFewClients { pool, max_clients } => write!(
                f,
                "--what-if {pool}: a pool of {pool} needs more than {pool} clients and --max-clients is {max_clients}: raise --max-clients"
            ),
        }
    }
}

/// The CPU bound: usable cores / CPU time per request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuBound {
    /// CPU time per request at the plateau, ms (median of its steps).
    pub cpu_ms_per_request: f64,
    /// The cores the target may use: its quota's when it has one, else the machine's.
    pub usable_cores: f64,
    /// usable cores / CPU per request, req/s.
    pub bound_rps: f64,
}

/// N: the pool's threads (a thread pool) or the held ones (a semaphore, connections) when the
/// place was read, else the finding's limit; rounded.
pub fn pool_found(diagnosis: &Diagnosis) -> Option<u32> {
    let from_place = diagnosis.place.as_ref().and_then(|place| match place.kind {
        Some(PlaceKind::ThreadPool) => place.size.or(place.held),
        Some(PlaceKind::Semaphore | PlaceKind::ConnectionPool) => place.held.or(place.size),
        _ => None,
    });
    let n = from_place.or(diagnosis.limit())?.round();
    (n >= 1.0).then_some(n as u32)
}

/// The pool as the finding names it: the catalogue's setting, else the pool's threads.
pub fn pool_name(diagnosis: &Diagnosis) -> Option<String> {
    let place = diagnosis.place.as_ref()?;
    place
        .setting
        .as_ref()
        .map(|s| s.setting.clone())
        .or_else(|| place.pool.clone())
}

/// Decides whether a pool of `size` can be emulated from this finding: the finding is a
/// blocking pool, the sweep had a mock whose global delay (`mock_delay_ms`, read now) is the
/// delay the sweep's calls waited (no stub's own delay on top), and the hold at the plateau is
/// that delay and little more.
pub fn plan(
    diagnosis: &Diagnosis,
    context: &SweepContext,
    size: PoolSize,
    mock_delay_ms: Option<f64>,
    max_clients: u32,
) -> Plan {
    let from_pool = pool_found(diagnosis).filter(|_| diagnosis.kind() == Kind::BlockingPool);
    let pool = match (size, from_pool) {
        (PoolSize::Pool(m), _) => Some(m),
        (PoolSize::Times(f), Some(n)) => Some(((n as f64 * f).round() as u32).max(1)),
        (PoolSize::Times(_), None) => None,
    };
    let bound_only = |why| Plan::BoundOnly {
        pool,
        from_pool,
        why,
    };
    if !context.mock_present {
        return bound_only(NotEmulated::NoMock);
    }
    let (Some(n), Some(m), Some(plateau)) = (from_pool, pool, diagnosis.plateau()) else {
        return bound_only(NotEmulated::NotAPool);
    };
    if m == n {
        return Plan::Refuse(Refusal::SamePool(n));
    }
    if m >= max_clients {
        return Plan::Refuse(Refusal::TooFewClients {
            pool: m,
            max_clients,
        });
    }
    let delay_ms = match (mock_delay_ms, context.downstream_delay_ms) {
        (Some(now), Some(swept)) if now > 0.0 && (now - swept).abs() < 0.5 => now,
        _ => return bound_only(NotEmulated::NotTheMocksDelay),
    };
    if plateau.throughput_rps <= 0.0 {
        return bound_only(NotEmulated::NotAPool);
    }
    let hold_ms = n as f64 * 1000.0 / plateau.throughput_rps;
    if !(HOLD_UNDER_DELAY * delay_ms..=HOLD_OVER_DELAY * delay_ms).contains(&hold_ms) {
        return bound_only(NotEmulated::NotTheMocksDelay);
    }
    let emulated_delay_ms = delay_ms * n as f64 / m as f64;
    if emulated_delay_ms < SHORTEST_DELAY_MS {
        return bound_only(NotEmulated::DelayTooShort);
    }
    let mut clients = vec![
        (m * 3).div_ceil(2).min(max_clients),
        (m * 2).min(max_clients),
    ];
    clients.dedup();
    Plan::Emulate(Emulation {
        from_pool: n,
        pool: m,
        delay_ms,
        hold_ms,
        emulated_delay_ms,
        clients,
    })
}

/// The CPU bound from the plateau steps: each one's CPU time per request (the target's share
/// of the machine's cores over its successful throughput), the median, and the usable cores
/// (the smallest CPU quota seen, else the machine's cores, as the diagnosis counts them).
pub fn cpu_bound(
    diagnosis: &Diagnosis,
    steps: &[Step],
    context: &SweepContext,
) -> Option<CpuBound> {
    let machine_cores = f64::from(context.cores?);
    let plateau = diagnosis.plateau()?;
    let on_plateau: Vec<&Step> = steps
        .iter()
        .filter(|s| plateau.clients.contains(&s.clients))
        .collect();
    let mut per_request: Vec<f64> = on_plateau
        .iter()
        .filter(|s| s.ok_throughput_rps > 0.0)
        .filter_map(|s| Some(s.target_cpu_pct? / 100.0 * machine_cores / s.ok_throughput_rps))
        .filter(|cpu_s| *cpu_s > 0.0)
        .collect();
    if per_request.is_empty() {
        return None;
    }
    per_request.sort_by(f64::total_cmp);
    let cpu_s = per_request[per_request.len() / 2];
    let usable_cores = on_plateau
        .iter()
        .filter_map(|s| s.cpu_quota.as_ref().map(|q| q.cores))
        .fold(machine_cores, f64::min);
    Some(CpuBound {
        cpu_ms_per_request: cpu_s * 1000.0,
        usable_cores,
        bound_rps: usable_cores / cpu_s,
    })
}

/// An emulated step as the what-if keeps it.
pub fn emulated_step(step: &Step) -> EmulatedStep {
    EmulatedStep {
        clients: step.clients,
        ok_throughput_rps: step.ok_throughput_rps,
        p50_ms: step.latency_ms.p50,
        error_rate: step.error_rate,
        target_cpu_pct: step.target_cpu_pct,
        downstream_max_in_flight: step.downstream_inflight.map(|d| d.max),
    }
}

/// The what-if from the emulated steps: their mean successful throughput is the prediction;
/// short of what a pool of M serves, what stopped them first (errors, the CPU, fewer calls at
/// the mock than the pool holds); else the CPU bound is what stops it next.
pub fn judge(
    emulation: &Emulation,
    steps: Vec<EmulatedStep>,
    bound: Option<CpuBound>,
    machine_cores: Option<u32>,
    name: Option<String>,
) -> WhatIf {
    let mut what_if = WhatIf {
        pool: Some(emulation.pool),
        name,
        from_pool: Some(emulation.from_pool),
        predicted_rps: None,
        measured_by: MeasuredBy::Emulation,
        next_limit: None,
        bound_rps: bound.map(|b| b.bound_rps),
        cpu_ms_per_request: bound.map(|b| b.cpu_ms_per_request),
        usable_cores: bound.map(|b| b.usable_cores),
        pool_rps: Some(emulation.pool as f64 * 1000.0 / emulation.hold_ms),
        delay_ms: Some(emulation.delay_ms),
        hold_ms: Some(emulation.hold_ms),
        emulated_delay_ms: Some(emulation.emulated_delay_ms),
        steps,
        not_emulated: None,
        summary: String::new(),
    };
    if what_if.steps.is_empty() {
        what_if.measured_by = MeasuredBy::Bound;
        what_if.predicted_rps = what_if.bound_rps;
        what_if.not_emulated = Some(NotEmulated::Interrupted);
        what_if.summary = words(&what_if);
        return what_if;
    }
    let count = what_if.steps.len() as f64;
    let mean = |f: &dyn Fn(&EmulatedStep) -> f64| what_if.steps.iter().map(f).sum::<f64>() / count;
    let measured = mean(&|s| s.ok_throughput_rps);
    let error_rate = mean(&|s| s.error_rate);
    let cores = machine_cores.map(f64::from);
    let usable = bound.map(|b| b.usable_cores).or(cores);
    let cpu: Vec<f64> = what_if
        .steps
        .iter()
        .filter_map(|s| s.target_cpu_pct)
        .collect();
    let cores_busy = match (cores, cpu.is_empty()) {
        (Some(cores), false) => Some(cpu.iter().sum::<f64>() / cpu.len() as f64 / 100.0 * cores),
        _ => None,
    };
    let in_flight = what_if
        .steps
        .iter()
        .filter_map(|s| s.downstream_max_in_flight)
        .max();
    let reached = measured >= REACHED_THE_POOL * what_if.pool_rps.unwrap_or(f64::INFINITY);
    what_if.predicted_rps = Some(measured);
    what_if.next_limit = if reached {
        bound.map(|b| NextLimit::Cpu {
            cores_busy,
            usable_cores: b.usable_cores,
            stopped_the_emulation: false,
        })
    } else if error_rate > ERRORS_TOOK_OVER {
        Some(NextLimit::Errors { error_rate })
    } else if let (Some(busy), Some(usable)) = (cores_busy, usable) {
        if busy >= CPU_STOPPED * usable {
            Some(NextLimit::Cpu {
                cores_busy: Some(busy),
                usable_cores: usable,
                stopped_the_emulation: true,
            })
        } else {
            fewer_calls(in_flight, emulation.from_pool)
        }
    } else {
        fewer_calls(in_flight, emulation.from_pool)
    };
    what_if.summary = words(&what_if);
    what_if
}

/// Fewer calls at the mock than the pool of N holds: something in front caps them.
fn fewer_calls(in_flight: Option<u64>, from_pool: u32) -> Option<NextLimit> {
    match in_flight {
        Some(k) if (k as f64) < REACHED_THE_POOL * from_pool as f64 => {
            Some(NextLimit::Concurrency { in_flight: k })
        }
        _ => Some(NextLimit::Unknown),
    }
}

/// The what-if with only the bound: no emulation, for the reason given.
pub fn bound_only(
    pool: Option<u32>,
    from_pool: Option<u32>,
    why: NotEmulated,
    bound: Option<CpuBound>,
    name: Option<String>,
) -> WhatIf {
    let mut what_if = WhatIf {
        pool,
        name,
        from_pool,
        predicted_rps: bound.map(|b| b.bound_rps),
        measured_by: MeasuredBy::Bound,
        next_limit: bound.map(|b| NextLimit::Cpu {
            cores_busy: None,
            usable_cores: b.usable_cores,
            stopped_the_emulation: false,
        }),
        bound_rps: bound.map(|b| b.bound_rps),
        cpu_ms_per_request: bound.map(|b| b.cpu_ms_per_request),
        usable_cores: bound.map(|b| b.usable_cores),
        pool_rps: None,
        delay_ms: None,
        hold_ms: None,
        emulated_delay_ms: None,
        steps: Vec::new(),
        not_emulated: Some(why),
        summary: String::new(),
    };
    what_if.summary = words(&what_if);
    what_if
}
