//! The measured window of a run: when it starts, what it has accumulated, the summariser
//! intervals it sends, and the report it becomes at the end.
use crate::engine::Shared;
use crate::recorder::{latency_ms, Samples};
use crate::streams::StreamSamples;
use crate::summary::{span_figures, IntervalSummary};
use crate::{LoadConfig, LoadEvent};
use chokepoint_observe::{CpuMeter, CpuScope, ThreadGroupCpu};
use chokepoint_result::{
    ErrorCounts, GrpcFigures, LateStarts, LoadReport, TargetFigures, TimelinePoint,
};
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// Above this share of its cores (percent) the generator says it may be the bottleneck.
pub const SATURATED_PCT: f64 = 90.0;

/// The measured window: its start, what it has accumulated, and the interval bookkeeping.
pub(crate) struct Window {
    run_start: Instant,
    pub(crate) start: Option<Instant>,
    duration: Option<Duration>,
    interval: Duration,
    pub(crate) interval_tick: Option<tokio::time::Interval>,
    interval_start: Option<Instant>,
    bucket: Duration,
    in_flight: Vec<u64>,
    total: Samples,
    connections_at_start: u64,
    handshakes_at_start: u64,
    cores: usize,
    generator: ThreadGroupCpu,
    cpu: Option<CpuMeter>,
    interval_cpu: Option<CpuMeter>,
    /// `--http2`: streams in flight per connection.
    streams: Option<StreamSamples>,
}

impl Window {
    pub(crate) fn new(
        config: &LoadConfig,
        cores: usize,
        run_start: Instant,
        generator: ThreadGroupCpu,
    ) -> Window {
        Window {
            run_start,
            start: None,
            duration: config.duration,
            interval: config.interval,
            interval_tick: None,
            interval_start: None,
            bucket: config.timeline_bucket,
            in_flight: Vec::new(),
            total: Samples::default(),
            connections_at_start: 0,
            handshakes_at_start: 0,
            cores,
            generator,
            cpu: None,
            interval_cpu: None,
            streams: None,
        }
    }

    pub(crate) fn begin(&mut self, at: Instant, shared: &Shared, send: &impl Fn(LoadEvent)) {
        let _ = shared.window_start.set(at);
        self.start = Some(at);
        self.interval_start = Some(at);
        self.connections_at_start = shared.counts.opened.load(Relaxed);
        self.handshakes_at_start = shared.counts.handshakes.load(Relaxed);
        self.streams = shared.http2.as_deref().map(StreamSamples::begin);
        let first = (at + self.interval).into();
        self.interval_tick = Some(tokio::time::interval_at(first, self.interval));
        let scope = CpuScope::Group(self.generator.clone());
        self.cpu = CpuMeter::start(scope.clone()).ok();
        self.interval_cpu = CpuMeter::start(scope).ok();
        send(LoadEvent::MeasurementStarted {
            ramp: at.saturating_duration_since(self.run_start),
        });
    }

    pub(crate) fn deadline(&self) -> Option<Instant> {
        Some(self.start? + self.duration?)
    }

    pub(crate) fn sample_in_flight(&mut self, now: Instant, in_flight: u64) {
        let Some(start) = self.start else { return };
        let index = (now.saturating_duration_since(start).as_micros()
            / self.bucket.as_micros().max(1)) as usize;
        if index >= self.in_flight.len() {
            self.in_flight.resize(index + 1, 0);
        }
        self.in_flight[index] = in_flight;
    }

    pub(crate) fn emit_interval(&mut self, shared: &Shared, send: &impl Fn(LoadEvent), last: bool) {
        let (Some(start), Some(interval_start)) = (self.start, self.interval_start) else {
            return;
        };
        let now = Instant::now();
        let mut current = Samples::default();
        shared.registry.drain_into(&mut current);
        self.total.add(&current);
        if last && current.requests() == 0 {
            return;
        }
        let generator_cpu_pct = self
            .interval_cpu
            .as_mut()
            .and_then(|meter| {
                let pct = meter.percent(self.cores).ok();
                let _ = meter.restart();
                pct
            })
            .unwrap_or(0.0);
        send(LoadEvent::Interval(IntervalSummary {
            start: interval_start.saturating_duration_since(start),
            elapsed: now.saturating_duration_since(interval_start),
            interval: span_figures(&current, now.saturating_duration_since(interval_start)),
            total: span_figures(&self.total, now.saturating_duration_since(start)),
            active: shared.in_flight.load(Relaxed),
            generator_cpu_pct,
            histogram: current.latency.clone(),
            last,
        }));
        self.interval_start = Some(now);
    }

    pub(crate) fn report(
        &self,
        config: &LoadConfig,
        shared: &Shared,
        end: Instant,
        interrupted: bool,
    ) -> LoadReport {
        let total = &self.total;
        let duration = self
            .start
            .map(|start| end.saturating_duration_since(start))
            .unwrap_or_default();
        let seconds = duration.as_secs_f64();
        let per_second = |n: u64| {
            if seconds > 0.0 {
                n as f64 / seconds
            } else {
                0.0
            }
        };
        let open = config.rate.is_some();
        let generator_cpu_pct = self
            .cpu
            .as_ref()
            .and_then(|meter| meter.percent(self.cores).ok())
            .unwrap_or(0.0);
        let buckets = (duration
            .as_micros()
            .div_ceil(self.bucket.as_micros().max(1))) as usize;
        let timeline = (0..buckets)
            .map(|i| {
                let sums = total.timeline.get(i).copied().unwrap_or_default();
                TimelinePoint {
                    t_s: i as f64 * self.bucket.as_secs_f64(),
                    completed: sums.completed,
                    ok: sums.ok,
                    mean_latency_ms: if sums.completed > 0 {
                        sums.latency_sum_us as f64 / sums.completed as f64 / 1000.0
                    } else {
                        0.0
                    },
                    in_flight: self.in_flight.get(i).copied().unwrap_or(0),
                }
            })
            .collect();
        let optional = |h: &hdrhistogram::Histogram<u64>| (!h.is_empty()).then(|| latency_ms(h));
        let errors: ErrorCounts = total
            .errors
            .iter()
            .map(|(kind, count)| (kind.name(), *count))
            .collect();
        LoadReport {
            target: config.url.clone(),
            requests: total.requests(),
            ok: total.ok,
            throughput_rps: per_second(total.requests()),
            ok_throughput_rps: per_second(total.ok),
            latency_ms: latency_ms(&total.latency),
            ok_latency_ms: optional(&total.ok_latency),
            error_latency_ms: optional(&total.error_latency),
            uncorrected_latency_ms: open.then(|| latency_ms(&total.uncorrected)),
            late_starts: open.then(|| LateStarts {
                count: total.late_count,
                mean_ms: if total.late_count > 0 {
                    total.late_sum_us as f64 / total.late_count as f64 / 1000.0
                } else {
                    0.0
                },
                max_ms: total.late_max_us as f64 / 1000.0,
            }),
            clients: if open {
                shared.max_in_flight.load(Relaxed) as u32
            } else {
                config.clients
            },
            rate_rps: config.rate,
            duration_s: seconds,
            connections_opened: shared.counts.opened.load(Relaxed) - self.connections_at_start,
            tls_handshakes: shared.counts.handshakes.load(Relaxed) - self.handshakes_at_start,
            connect_ms: optional(&total.connect),
            tls_handshake_ms: optional(&total.handshake),
            targets: target_figures(config, total, &per_second),
            keepalive: config.keepalive,
            generator_cpu_pct,
            generator_saturated: generator_cpu_pct > SATURATED_PCT,
            bytes_received: total.bytes,
            timeline_bucket_s: self.bucket.as_secs_f64(),
            timeline,
            interrupted,
            histograms: Some(crate::hdr::histograms_of(total, open)),
            grpc: config
                .grpc
                .as_ref()
                .map(|g| GrpcFigures::of(g.methods.clone(), total.ok, &errors)),
            errors,
            unanswered_clients: (!open).then(|| {
                let sent = shared.sent.load(Relaxed);
                sent.saturating_sub(shared.warmed.load(Relaxed))
            }),
            http2: shared.http2.as_deref().map(|target| match &self.streams {
                Some(streams) => streams.figures(target, duration),
                None => StreamSamples::begin(target).figures(target, duration),
            }),
        }
    }
}

/// The figures of each request of a targets file (none without one).
fn target_figures(
    config: &LoadConfig,
    total: &Samples,
    per_second: &dyn Fn(u64) -> f64,
) -> Vec<TargetFigures> {
    config
        .targets
        .iter()
        .enumerate()
        .map(|(index, target)| {
            let samples = total.per_target.get(index).cloned().unwrap_or_default();
            TargetFigures {
                method: target.method.to_string(),
                url: target.url.clone(),
                requests: samples.latency.len(),
                ok: samples.ok,
                errors: samples
                    .errors
                    .iter()
                    .map(|(kind, count)| (kind.name(), *count))
                    .collect(),
                throughput_rps: per_second(samples.latency.len()),
                latency_ms: latency_ms(&samples.latency),
            }
        })
        .collect()
}
