//! The warm-up before a sweep's first step: the first step's clients run, unmeasured, until the
//! service's mean latency stops falling (`chokepoint_diagnose::warmup`, the rule and its
//! reasons) or [`SweepConfig::warmup_limit`] runs out. The load engine runs it as any step, its
//! report thrown away; each interval's mean latency feeds the rule, and the front end sees the
//! progress ([`SweepEvent::WarmingUp`]).
use crate::{SweepConfig, SweepEvent};
use chokepoint_diagnose::warmup::{first_and_last, warmed_up, WARMUP_INTERVAL};
use chokepoint_load::LoadEvent;
use chokepoint_result::Warmup;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The default of [`SweepConfig::warmup_limit`] (`--warmup`): long enough for a JIT's hot
/// paths (a JVM's C2 compiles within seconds under load), short beside a sweep.
pub const DEFAULT_WARMUP_LIMIT: Duration = Duration::from_secs(20);

/// Warms the target up with `clients`; `Ok(None)` when cancelled or when no request was
/// answered (the first step then measures what there is).
pub(crate) fn warm_up(
    config: &SweepConfig,
    clients: u32,
    cancel: &CancellationToken,
    on_event: &mut dyn FnMut(SweepEvent<'_>),
) -> anyhow::Result<Option<Warmup>> {
    let mut load = config.base.clone();
    load.clients = clients;
    load.duration = Some(config.warmup_limit);
    load.requests = None;
    load.rate = None;
    load.exclude_ramp = false;
    load.ramp_limit = config.ramp_limit;
    load.interval = WARMUP_INTERVAL;
    let began = Instant::now();
    let run =
        chokepoint_load::start(load, cancel.child_token()).map_err(|e| anyhow::anyhow!("{e}"))?;
    on_event(SweepEvent::WarmingUp {
        clients,
        elapsed: Duration::ZERO,
        latency_ms: None,
    });
    let mut latencies: Vec<f64> = Vec::new();
    let mut settled = false;
    for event in run.events() {
        let LoadEvent::Interval(summary) = event else {
            continue;
        };
        if summary.last || settled {
            continue;
        }
        let answered = summary
            .interval
            .requests
            .saturating_sub(summary.interval.errors);
        if answered > 0 {
            latencies.push(summary.interval.mean_ms);
        }
        on_event(SweepEvent::WarmingUp {
            clients,
            elapsed: began.elapsed(),
            latency_ms: (answered > 0).then_some(summary.interval.mean_ms),
        });
        if warmed_up(&latencies) {
            settled = true;
            run.end_window();
        }
    }
    let report = run.finish().map_err(|e| anyhow::anyhow!("{e}"))?;
    if report.interrupted {
        return Ok(None);
    }
    let Some((first_ms, last_ms)) = first_and_last(&latencies) else {
        return Ok(None);
    };
    let warmup = Warmup {
        clients,
        seconds: began.elapsed().as_secs_f64(),
        first_ms,
        last_ms,
        settled,
    };
    on_event(SweepEvent::WarmedUp(&warmup));
    Ok(Some(warmup))
}
