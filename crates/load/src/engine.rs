//! One run: the coordinator (ramp, window, intervals, end) and the client tasks it spawns.
use crate::client::{Client, Target};
use crate::pacer::{Pace, Pacer};
use crate::recorder::{latency_ms, Outcome, Registry, Samples};
use crate::summary::{span_figures, IntervalSummary};
use crate::{LoadConfig, LoadError, LoadEvent, ParsedUrl};
use chokepoint_observe::{CpuMeter, CpuScope, ThreadGroupCpu};
use chokepoint_result::{LateStarts, LoadReport, TimelinePoint};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::Sender;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// Above this share of its cores (percent) the generator says it may be the bottleneck.
pub const SATURATED_PCT: f64 = 90.0;
/// In the open model a worker wakes up to this much before a hit is due (the timer's
/// granularity is 1 ms), so hits are not counted late because of the timer alone.
const EARLY_WAKE: Duration = Duration::from_millis(1);

pub(crate) fn current_thread_runtime() -> Result<tokio::runtime::Runtime, LoadError> {
    // I/O and timers only: the signal and process drivers would run on every turn of the loop.
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| LoadError::Engine(format!("cannot start the runtime: {e}")))
}

/// What the coordinator and every client task share.
struct Shared {
    registry: Registry,
    /// Set when the measured window begins; nothing completed before it is recorded.
    window_start: OnceLock<Instant>,
    bucket_us: u64,
    /// Requests (closed model) or hits (open model) taken so far.
    issued: AtomicU64,
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
    /// Clients that completed at least one request.
    warmed: AtomicU32,
    connections: AtomicU64,
    /// The generator's threads, whose CPU is its own figure.
    generator: ThreadGroupCpu,
}

impl Shared {
    fn record(&self, outcome: impl FnOnce(u64) -> Outcome, done: Instant) {
        let Some(window) = self.window_start.get() else {
            return;
        };
        let Some(since) = done.checked_duration_since(*window) else {
            return;
        };
        let bucket = since.as_micros() as u64 / self.bucket_us;
        self.registry.record(&outcome(bucket));
    }
}

async fn resolve(parsed: &ParsedUrl) -> Result<SocketAddr, LoadError> {
    let unresolved = |why: String| {
        LoadError::Unreachable(format!(
            "cannot resolve host '{}' ({why}): fix the URL",
            parsed.host
        ))
    };
    let mut addrs = tokio::net::lookup_host((parsed.host.as_str(), parsed.port))
        .await
        .map_err(|e| unresolved(e.to_string()))?;
    addrs.next().ok_or_else(|| unresolved("no address".into()))
}

async fn preflight(addr: SocketAddr, timeout: Duration) -> Result<(), LoadError> {
    let timeout = timeout.min(Duration::from_secs(10));
    match tokio::time::timeout(timeout, tokio::net::TcpStream::connect(addr)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            Err(LoadError::Unreachable(format!(
                "nothing listens on {addr} (connection refused): start the service or fix the URL"
            )))
        }
        Ok(Err(e)) => Err(LoadError::Unreachable(format!(
            "cannot connect to {addr} ({e}): start the service or fix the URL"
        ))),
        Err(_) => Err(LoadError::Unreachable(format!(
            "{addr} did not accept a connection within {timeout:?}: check the service or the URL"
        ))),
    }
}

/// Runs one load run to its end on the calling thread's runtime: resolves and checks the target,
/// starts the workers, paces the window and the intervals, and returns what was measured.
/// Events go to `events` (a caller that stopped listening does not stop the run).
pub(crate) async fn coordinate(
    config: LoadConfig,
    parsed: ParsedUrl,
    events: Sender<LoadEvent>,
    cancel: CancellationToken,
    cores: usize,
    generator: ThreadGroupCpu,
) -> Result<LoadReport, LoadError> {
    let send = |event: LoadEvent| {
        let _ = events.send(event);
    };
    let addr = resolve(&parsed).await?;
    preflight(addr, config.timeout).await?;
    let request = Target::render(
        &config.method,
        &parsed.path,
        &parsed.authority,
        &config.headers,
        config.keepalive,
        &config.body,
    )
    .map_err(LoadError::Config)?;
    let target = Arc::new(Target {
        addr,
        request,
        head: config.method == http::Method::HEAD,
        keepalive: config.keepalive,
        timeout: config.timeout,
    });
    let shared = Arc::new(Shared {
        registry: Registry::new(),
        window_start: OnceLock::new(),
        bucket_us: (config.timeline_bucket.as_micros() as u64).max(1),
        issued: AtomicU64::new(0),
        in_flight: AtomicU64::new(0),
        max_in_flight: AtomicU64::new(0),
        warmed: AtomicU32::new(0),
        connections: AtomicU64::new(0),
        generator: generator.clone(),
    });

    let start = Instant::now();
    let mut window = Window::new(&config, cores, start, generator.clone());
    if !config.exclude_ramp || config.rate.is_some() {
        window.begin(start, &shared, &send);
    }
    let stop = CancellationToken::new();
    let (worker_ended, mut workers) = tokio::sync::mpsc::unbounded_channel();
    let spawned = spawn_workers(
        &config,
        cores,
        &shared,
        &target,
        start,
        &stop,
        &worker_ended,
    );
    drop(worker_ended);
    if let Err(e) = spawned {
        stop.cancel();
        while workers.recv().await.is_some() {}
        return Err(e);
    }
    let mut bucket_tick = tokio::time::interval(config.timeline_bucket);
    bucket_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut interrupted = false;
    let mut failed = None;
    loop {
        let deadline = window.deadline();
        tokio::select! {
            _ = cancel.cancelled() => {
                interrupted = true;
                break;
            }
            _ = sleep_until(deadline) => break,
            _ = bucket_tick.tick() => {
                let now = Instant::now();
                if window.start.is_none()
                    && (shared.warmed.load(Relaxed) >= config.clients
                        || now.duration_since(start) >= config.ramp_limit)
                {
                    window.begin(now, &shared, &send);
                }
                window.sample_in_flight(now, shared.in_flight.load(Relaxed));
            }
            _ = tick(&mut window.interval_tick) => {
                window.emit_interval(&shared, &send, false);
            }
            ended = workers.recv() => match ended {
                None => break, // every client finished (-n reached)
                Some(Some(error)) => failed = Some(error),
                Some(None) => {}
            }
        }
        if failed.is_some() {
            break;
        }
    }
    let end = Instant::now();
    stop.cancel();
    while workers.recv().await.is_some() {}
    if let Some(error) = failed {
        return Err(error);
    }
    window.emit_interval(&shared, &send, true);
    Ok(window.report(&config, &shared, end, interrupted))
}

/// Starts one worker thread per core (at most one per client), each running its share of the
/// clients on a single-threaded runtime until they finish or `stop` is cancelled. Every worker
/// holds a clone of `ended` until its runtime (and every request in it) is gone, and sends an
/// error through it if it could not start; the channel closes when all have ended.
fn spawn_workers(
    config: &LoadConfig,
    cores: usize,
    shared: &Arc<Shared>,
    target: &Arc<Target>,
    start: Instant,
    stop: &CancellationToken,
    ended: &UnboundedSender<Option<LoadError>>,
) -> Result<(), LoadError> {
    let workers = cores.clamp(1, config.clients as usize);
    for worker in 0..workers {
        let clients = config.clients as usize / workers
            + usize::from(worker < config.clients as usize % workers);
        let (shared, target, stop, ended, generator) = (
            shared.clone(),
            target.clone(),
            stop.clone(),
            ended.clone(),
            shared.generator.clone(),
        );
        let (think_time, requests, rate, duration) = (
            config.think_time,
            config.requests,
            config.rate,
            config.duration,
        );
        std::thread::Builder::new()
            .name("cp-load".into())
            .spawn(move || {
                let member = generator.join();
                let runtime = match current_thread_runtime() {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        let _ = ended.send(Some(e));
                        return;
                    }
                };
                runtime.block_on(async {
                    let mut tasks = JoinSet::new();
                    for _ in 0..clients {
                        let (shared, target) = (shared.clone(), target.clone());
                        match rate {
                            None => {
                                tasks.spawn(closed_client(shared, target, think_time, requests))
                            }
                            Some(rate) => {
                                let pacer = Pacer {
                                    rate,
                                    duration,
                                    hits: requests,
                                };
                                tasks.spawn(open_worker(shared, target, pacer, start))
                            }
                        };
                    }
                    tokio::select! {
                        _ = stop.cancelled() => {}
                        _ = async { while tasks.join_next().await.is_some() {} } => {}
                    }
                });
                drop(runtime); // abandons what is in flight; nothing records after this
                drop(member); // the thread's CPU is banked before the coordinator hears it ended
                drop(ended);
            })
            .map_err(|e| LoadError::Engine(format!("cannot start a load thread: {e}")))?;
    }
    Ok(())
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
        None => std::future::pending().await,
    }
}

async fn tick(interval: &mut Option<tokio::time::Interval>) {
    match interval {
        Some(interval) => {
            interval.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// The measured window: its start, what it has accumulated, and the interval bookkeeping.
struct Window {
    run_start: Instant,
    start: Option<Instant>,
    duration: Option<Duration>,
    interval: Duration,
    interval_tick: Option<tokio::time::Interval>,
    interval_start: Option<Instant>,
    bucket: Duration,
    in_flight: Vec<u64>,
    total: Samples,
    connections_at_start: u64,
    cores: usize,
    generator: ThreadGroupCpu,
    cpu: Option<CpuMeter>,
    interval_cpu: Option<CpuMeter>,
}

impl Window {
    fn new(
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
            cores,
            generator,
            cpu: None,
            interval_cpu: None,
        }
    }

    fn begin(&mut self, at: Instant, shared: &Shared, send: &impl Fn(LoadEvent)) {
        let _ = shared.window_start.set(at);
        self.start = Some(at);
        self.interval_start = Some(at);
        self.connections_at_start = shared.connections.load(Relaxed);
        let first = (at + self.interval).into();
        self.interval_tick = Some(tokio::time::interval_at(first, self.interval));
        let scope = CpuScope::Group(self.generator.clone());
        self.cpu = CpuMeter::start(scope.clone()).ok();
        self.interval_cpu = CpuMeter::start(scope).ok();
        send(LoadEvent::MeasurementStarted {
            ramp: at.saturating_duration_since(self.run_start),
        });
    }

    fn deadline(&self) -> Option<Instant> {
        Some(self.start? + self.duration?)
    }

    fn sample_in_flight(&mut self, now: Instant, in_flight: u64) {
        let Some(start) = self.start else { return };
        let index = (now.saturating_duration_since(start).as_micros()
            / self.bucket.as_micros().max(1)) as usize;
        if index >= self.in_flight.len() {
            self.in_flight.resize(index + 1, 0);
        }
        self.in_flight[index] = in_flight;
    }

    fn emit_interval(&mut self, shared: &Shared, send: &impl Fn(LoadEvent), last: bool) {
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

    fn report(
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
        LoadReport {
            target: config.url.clone(),
            requests: total.requests(),
            ok: total.ok,
            errors: total
                .errors
                .iter()
                .map(|(kind, count)| (kind.name(), *count))
                .collect(),
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
            connections_opened: shared.connections.load(Relaxed) - self.connections_at_start,
            keepalive: config.keepalive,
            generator_cpu_pct,
            generator_saturated: generator_cpu_pct > SATURATED_PCT,
            bytes_received: total.bytes,
            timeline_bucket_s: self.bucket.as_secs_f64(),
            timeline,
            interrupted,
            histograms: Some(crate::hdr::histograms_of(total, open)),
        }
    }
}

/// A closed-loop client: its next request goes out when the last one ended (and the think time
/// passed).
async fn closed_client(
    shared: Arc<Shared>,
    target: Arc<Target>,
    think_time: Duration,
    requests: Option<u64>,
) {
    let mut client = Client::new();
    let mut warmed = false;
    loop {
        if requests.is_some_and(|limit| shared.issued.fetch_add(1, Relaxed) >= limit) {
            return;
        }
        let begun = Instant::now();
        shared.in_flight.fetch_add(1, Relaxed);
        let exchange = client.exchange(&target, &shared.connections, begun).await;
        shared.in_flight.fetch_sub(1, Relaxed);
        let done = Instant::now();
        shared.record(
            |bucket| Outcome {
                latency: done - begun,
                uncorrected: None,
                lateness: None,
                failure: exchange.failure,
                bytes: exchange.bytes,
                bucket,
            },
            done,
        );
        if !warmed {
            warmed = true;
            shared.warmed.fetch_add(1, Relaxed);
        }
        if !think_time.is_zero() {
            tokio::time::sleep(think_time).await;
        }
    }
}

/// An open-model worker: takes the next hit of the schedule, waits until it is due, sends it on
/// its own connection. Latency counts from the due time, so a hit that had to wait for a free
/// worker carries its wait (wrk2's correction for coordinated omission).
async fn open_worker(shared: Arc<Shared>, target: Arc<Target>, pacer: Pacer, start: Instant) {
    let mut client = Client::new();
    loop {
        let hit = shared.issued.fetch_add(1, Relaxed);
        let wait = match pacer.pace(start.elapsed(), hit) {
            Pace::Stop => return,
            Pace::Wait(wait) => wait,
        };
        let due = start + pacer.due(hit);
        if wait > EARLY_WAKE {
            tokio::time::sleep_until((due - EARLY_WAKE).into()).await;
        }
        let sent = Instant::now();
        let in_flight = shared.in_flight.fetch_add(1, Relaxed) + 1;
        shared.max_in_flight.fetch_max(in_flight, Relaxed);
        let exchange = client.exchange(&target, &shared.connections, sent).await;
        shared.in_flight.fetch_sub(1, Relaxed);
        let done = Instant::now();
        shared.record(
            |bucket| Outcome {
                latency: done - due.min(sent),
                uncorrected: Some(done - sent),
                lateness: Some(sent.saturating_duration_since(due)),
                failure: exchange.failure,
                bytes: exchange.bytes,
                bucket,
            },
            done,
        );
    }
}
