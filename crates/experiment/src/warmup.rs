//! The warm-up check of a sweep's first step (`chokepoint_diagnose::warmup`, the rule and its
//! reasons). The first step feeds [`WarmCheck`] each interval's mean latency while it runs.
//! When the rule reads the latency level (or the step ends before it can tell), the step stands
//! and nothing ran unmeasured. When it reads it still falling, the step ends at once and is
//! thrown away, and [`warm_up`] runs the same clients unmeasured, the series going on, until it
//! levels or [`SweepConfig::warmup_limit`] runs out; then the first step runs again. The load
//! engine runs the warm-up as any step, its report thrown away; the front end sees the progress
//! ([`SweepEvent::WarmingUp`]).
use crate::{SweepConfig, SweepEvent};
use chokepoint_diagnose::warmup::{first_and_last, trend, Trend};
use chokepoint_load::LoadEvent;
use chokepoint_result::Warmup;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The default of [`SweepConfig::warmup_limit`] (`--warmup`): long enough for a JIT's hot
/// paths (a JVM's C2 compiles within seconds under load), short beside a sweep.
pub const DEFAULT_WARMUP_LIMIT: Duration = Duration::from_secs(20);

/// The first step's latency series and what the rule read of it.
pub(crate) struct WarmCheck {
    clients: u32,
    interval: Duration,
    began: Instant,
    latencies: Vec<f64>,
    trend: Trend,
}

impl WarmCheck {
    /// A check of a first step of `clients`, read every `interval` (the step's timeline bucket).
    pub(crate) fn new(clients: u32, interval: Duration) -> Self {
        WarmCheck {
            clients,
            interval,
            began: Instant::now(),
            latencies: Vec::new(),
            trend: Trend::Unknown,
        }
    }

    /// Feeds one interval's mean latency (`None`: no answer in it). True when the step should
    /// end now: the latency is still falling. The first answer the rule gives is kept.
    pub(crate) fn see(&mut self, mean_ms: Option<f64>) -> bool {
        if self.trend != Trend::Unknown {
            return false;
        }
        self.latencies.extend(mean_ms);
        self.trend = trend(&self.latencies, self.interval);
        self.trend == Trend::Falling
    }

    /// True when the step was ended because the service was still warming up.
    pub(crate) fn still_warming(&self) -> bool {
        self.trend == Trend::Falling
    }

    /// The record of a first step that stood: nothing ran unmeasured.
    pub(crate) fn stood(&self) -> Option<Warmup> {
        let (first_ms, last_ms) = first_and_last(&self.latencies, self.interval)?;
        Some(Warmup {
            clients: self.clients,
            seconds: 0.0,
            first_ms,
            last_ms,
            settled: true,
            in_first_step: true,
        })
    }
}

/// Runs the first step's clients unmeasured after `check` read the latency still falling, its
/// series going on, until it levels; `Ok(None)` when cancelled.
pub(crate) fn warm_up(
    config: &SweepConfig,
    mut check: WarmCheck,
    cancel: &CancellationToken,
    on_event: &mut dyn FnMut(SweepEvent<'_>),
) -> anyhow::Result<Option<Warmup>> {
    let mut load = config.base.clone();
    load.clients = check.clients;
    load.duration = Some(config.warmup_limit);
    load.requests = None;
    load.rate = None;
    load.exclude_ramp = false;
    load.ramp_limit = config.ramp_limit;
    load.interval = check.interval;
    let run =
        chokepoint_load::start(load, cancel.child_token()).map_err(|e| anyhow::anyhow!("{e}"))?;
    let clients = check.clients;
    on_event(SweepEvent::WarmingUp {
        clients,
        elapsed: check.began.elapsed(),
        latency_ms: None,
    });
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
        let latency_ms = (answered > 0).then_some(summary.interval.mean_ms);
        check.latencies.extend(latency_ms);
        on_event(SweepEvent::WarmingUp {
            clients,
            elapsed: check.began.elapsed(),
            latency_ms,
        });
        if trend(&check.latencies, check.interval) == Trend::Level {
            settled = true;
            run.end_window();
        }
    }
    let report = run.finish().map_err(|e| anyhow::anyhow!("{e}"))?;
    if report.interrupted {
        return Ok(None);
    }
    let Some((first_ms, last_ms)) = first_and_last(&check.latencies, check.interval) else {
        return Ok(None);
    };
    let warmup = Warmup {
        clients,
        seconds: check.began.elapsed().as_secs_f64(),
        first_ms,
        last_ms,
        settled,
        in_first_step: false,
    };
    on_event(SweepEvent::WarmedUp(&warmup));
    Ok(Some(warmup))
}
