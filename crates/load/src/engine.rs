//! One run: the coordinator (ramp, window, intervals, end) and the client tasks it spawns.
//!
//! A client task is written once for each model (closed, open) over a [`Session`]: an HTTP/1.1
//! client on its own connection, or an HTTP/2 stream on a shared one (`h2client`).
use crate::client::{Client, ConnectionCounts, Exchange, Request, Target};
use crate::h2client::{H2Stream, H2Target, Lane};
use crate::pacer::{Pace, Pacer};
use crate::recorder::{Outcome, Registry};
use crate::setup::{preflight, preflight_h2, render_requests, resolve, Spare};
use crate::targets::send_order;
use crate::tls::{client_config, Connect, Plain, Tls};
use crate::window::Window;
use crate::{LoadConfig, LoadError, LoadEvent, ParsedUrl};
use chokepoint_observe::ThreadGroupCpu;
use chokepoint_result::LoadReport;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::Sender;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

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
pub(crate) struct Shared {
    pub(crate) registry: Registry,
    /// Set when the measured window begins; nothing completed before it is recorded.
    pub(crate) window_start: OnceLock<Instant>,
    bucket_us: u64,
    /// Requests (closed model) or hits (open model) taken so far.
    issued: AtomicU64,
    pub(crate) in_flight: AtomicU64,
    pub(crate) max_in_flight: AtomicU64,
    /// Clients that completed at least one request.
    pub(crate) warmed: AtomicU32,
    /// Clients that sent at least one request (with `-n`, clients past the count send none).
    pub(crate) sent: AtomicU32,
    /// Clients of the run (closed model).
    clients: u32,
    /// Told when the last client completed its first request: the ramp is over then, not at
    /// the next bucket tick.
    all_warmed: tokio::sync::Notify,
    pub(crate) counts: ConnectionCounts,
    /// Request `k` of the run is `target.requests[order[k % order.len()]]`.
    order: Vec<usize>,
    /// A targets file was given: outcomes are recorded per request too.
    several: bool,
    /// The generator's threads, whose CPU is its own figure.
    generator: ThreadGroupCpu,
    /// `--http2`: the connections and their streams.
    pub(crate) http2: Option<Arc<H2Target>>,
}

/// How a client exchanges one request: HTTP/1.1 on a connection of its own, or an HTTP/2 stream
/// on its lane's connection.
pub(crate) trait Session: Send + 'static {
    /// Sends request `which` of the run and reads the whole response; `now` is when it began.
    fn exchange(
        &mut self,
        which: usize,
        counts: &ConnectionCounts,
        now: Instant,
    ) -> impl Future<Output = Exchange> + Send;
}

/// An HTTP/1.1 client and what its requests share.
struct H1Session<C: Connect> {
    client: Client<C>,
    target: Arc<Target<C>>,
}

impl<C: Connect> Session for H1Session<C> {
    fn exchange(
        &mut self,
        which: usize,
        counts: &ConnectionCounts,
        now: Instant,
    ) -> impl Future<Output = Exchange> + Send {
        self.client.exchange(&self.target, which, counts, now)
    }
}

impl Session for H2Stream {
    fn exchange(
        &mut self,
        which: usize,
        counts: &ConnectionCounts,
        now: Instant,
    ) -> impl Future<Output = Exchange> + Send {
        H2Stream::exchange(self, which, counts, now)
    }
}

/// Makes client `i`'s session, inside the worker runtime that drives it.
type MakeSession<S> = Arc<dyn Fn(usize) -> S + Send + Sync>;

/// The clients of each worker thread, by index.
fn assign(clients: u32, workers: usize, worker_of: impl Fn(usize) -> usize) -> Vec<Vec<usize>> {
    let mut assigned = vec![Vec::new(); workers];
    for i in 0..clients as usize {
        assigned[worker_of(i)].push(i);
    }
    assigned
}

impl Shared {
    /// Which request the `k`-th request of the run sends.
    fn pick(&self, k: u64) -> usize {
        self.order[(k % self.order.len() as u64) as usize]
    }

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

/// The two ways a run is ended early from outside.
pub(crate) struct Ending {
    /// Ends the run at once; the report says `interrupted`.
    pub cancel: CancellationToken,
    /// Ends the measured window now, as if its duration had run out: a whole report.
    pub end_window: CancellationToken,
}

pub(crate) async fn coordinate(
    config: LoadConfig,
    parsed: ParsedUrl,
    events: Sender<LoadEvent>,
    ending: Ending,
    cores: usize,
    generator: ThreadGroupCpu,
) -> Result<LoadReport, LoadError> {
    let addr = resolve(&parsed).await?;
    if config.http2 {
        return coordinate_h2(config, parsed, addr, events, ending, cores, generator).await;
    }
    let requests = render_requests(&config, &parsed)?;
    let workers = cores.clamp(1, config.clients as usize);
    let assigned = assign(config.clients, workers, |i| i % workers);
    if parsed.tls {
        let tls = Tls::new(client_config(&config.trust, &[b"http/1.1"])?, &parsed.host)?;
        let spare = preflight(addr, &tls, config.timeout, &config.url, &config.trust).await?;
        let target = target(&config, addr, tls, requests, spare);
        let make = h1_sessions(target);
        drive(
            config, make, assigned, None, events, ending, cores, generator,
        )
        .await
    } else {
        let spare = preflight(addr, &Plain, config.timeout, &config.url, &config.trust).await?;
        let target = target(&config, addr, Plain, requests, spare);
        let make = h1_sessions(target);
        drive(
            config, make, assigned, None, events, ending, cores, generator,
        )
        .await
    }
}

fn h1_sessions<C: Connect>(target: Arc<Target<C>>) -> MakeSession<H1Session<C>> {
    Arc::new(move |_| H1Session {
        client: Client::new(),
        target: target.clone(),
    })
}

/// `--http2`: the preflight, the lanes (connections), and the streams spread over them; a
/// lane's streams all run on the worker thread that drives its connection.
async fn coordinate_h2(
    config: LoadConfig,
    parsed: ParsedUrl,
    addr: SocketAddr,
    events: Sender<LoadEvent>,
    ending: Ending,
    cores: usize,
    generator: ThreadGroupCpu,
) -> Result<LoadReport, LoadError> {
    let tls = match parsed.tls {
        true => Some(Tls::new(
            client_config(&config.trust, &[b"h2", b"http/1.1"])?,
            &parsed.host,
        )?),
        false => None,
    };
    let timeout = config.timeout;
    let server_max_streams = preflight_h2(
        addr,
        tls.as_ref(),
        timeout,
        &config.url,
        &config.trust,
        config.grpc.is_some(),
    )
    .await?;
    let lanes = config.connections.min(config.clients) as usize;
    let target = Arc::new(H2Target {
        addr,
        tls,
        requests: crate::h2client::requests(&config)?,
        timeout,
        lanes: (0..lanes).map(|_| Arc::new(Lane::default())).collect(),
        server_max_streams,
        grpc: config.grpc.is_some(),
    });
    let workers = cores.clamp(1, lanes);
    let assigned = assign(config.clients, workers, |i| (i % lanes) % workers);
    let streams = target.clone();
    let make: MakeSession<H2Stream> = Arc::new(move |i| H2Stream::new(streams.clone(), i));
    drive(
        config,
        make,
        assigned,
        Some(target),
        events,
        ending,
        cores,
        generator,
    )
    .await
}

fn target<C: Connect>(
    config: &LoadConfig,
    addr: SocketAddr,
    connect: C,
    requests: Vec<Request>,
    spare: Option<Spare>,
) -> Arc<Target<C>> {
    Arc::new(Target {
        addr,
        connect,
        requests,
        keepalive: config.keepalive,
        timeout: config.timeout,
        spare: std::sync::Mutex::new(spare),
    })
}

/// Drives the run: client `i` of `assigned[w]` runs on worker `w` with the session `make(i)`.
#[allow(clippy::too_many_arguments)] // one call per protocol, each naming every part
async fn drive<S: Session>(
    config: LoadConfig,
    make: MakeSession<S>,
    assigned: Vec<Vec<usize>>,
    http2: Option<Arc<H2Target>>,
    events: Sender<LoadEvent>,
    ending: Ending,
    cores: usize,
    generator: ThreadGroupCpu,
) -> Result<LoadReport, LoadError> {
    let Ending { cancel, end_window } = ending;
    let send = |event: LoadEvent| {
        let _ = events.send(event);
    };
    let shared = Arc::new(Shared {
        registry: Registry::new(),
        window_start: OnceLock::new(),
        bucket_us: (config.timeline_bucket.as_micros() as u64).max(1),
        issued: AtomicU64::new(0),
        in_flight: AtomicU64::new(0),
        max_in_flight: AtomicU64::new(0),
        warmed: AtomicU32::new(0),
        sent: AtomicU32::new(0),
        clients: config.clients,
        all_warmed: tokio::sync::Notify::new(),
        counts: ConnectionCounts::default(),
        order: send_order(config.targets.len(), config.targets_order),
        several: !config.targets.is_empty(),
        generator: generator.clone(),
        http2,
    });

    let start = Instant::now();
    let mut window = Window::new(&config, cores, start, generator);
    if !config.exclude_ramp || config.rate.is_some() {
        window.begin(start, &shared, &send);
    }
    let stop = CancellationToken::new();
    let (worker_ended, mut workers) = tokio::sync::mpsc::unbounded_channel();
    let spawned = spawn_workers(
        &config,
        assigned,
        &shared,
        &make,
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
            _ = end_window.cancelled() => break,
            _ = shared.all_warmed.notified(), if window.start.is_none() => {
                window.begin(Instant::now(), &shared, &send);
            }
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

/// Starts one worker thread per entry of `assigned` (one per core, at most one per client or
/// HTTP/2 connection), each running its clients on a single-threaded runtime until they finish
/// or `stop` is cancelled. Every worker holds a clone of `ended` until its runtime (and every
/// request in it) is gone, and sends an error through it if it could not start; the channel
/// closes when all have ended.
fn spawn_workers<S: Session>(
    config: &LoadConfig,
    assigned: Vec<Vec<usize>>,
    shared: &Arc<Shared>,
    make: &MakeSession<S>,
    start: Instant,
    stop: &CancellationToken,
    ended: &UnboundedSender<Option<LoadError>>,
) -> Result<(), LoadError> {
    for clients in assigned {
        let (shared, make, stop, ended, generator) = (
            shared.clone(),
            make.clone(),
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
                    for client in clients {
                        let (shared, session) = (shared.clone(), make(client));
                        match rate {
                            None => {
                                tasks.spawn(closed_client(shared, session, think_time, requests))
                            }
                            Some(rate) => {
                                let pacer = Pacer {
                                    rate,
                                    duration,
                                    hits: requests,
                                };
                                tasks.spawn(open_worker(shared, session, pacer, start))
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

/// A closed-loop client: its next request goes out when the last one ended (and the think time
/// passed).
async fn closed_client<S: Session>(
    shared: Arc<Shared>,
    mut session: S,
    think_time: Duration,
    requests: Option<u64>,
) {
    let (mut warmed, mut sent) = (false, false);
    // A request count or several requests need the run's request index; otherwise no shared
    // counter is touched per request.
    let counted = requests.is_some() || shared.order.len() > 1;
    loop {
        let k = if counted {
            shared.issued.fetch_add(1, Relaxed)
        } else {
            0
        };
        if requests.is_some_and(|limit| k >= limit) {
            return;
        }
        let which = shared.pick(k);
        if !sent {
            sent = true;
            shared.sent.fetch_add(1, Relaxed);
        }
        let begun = Instant::now();
        shared.in_flight.fetch_add(1, Relaxed);
        let exchange = session.exchange(which, &shared.counts, begun).await;
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
                connect: exchange.opened.map(|o| o.connect),
                handshake: exchange.opened.and_then(|o| o.handshake),
                target: shared.several.then_some(which),
            },
            done,
        );
        if !warmed {
            warmed = true;
            if shared.warmed.fetch_add(1, Relaxed) + 1 == shared.clients {
                shared.all_warmed.notify_one();
            }
        }
        if !think_time.is_zero() {
            tokio::time::sleep(think_time).await;
        }
    }
}

/// An open-model worker: takes the next hit of the schedule, waits until it is due, sends it on
/// its own connection. Latency counts from the due time, so a hit that had to wait for a free
/// worker carries its wait (wrk2's correction for coordinated omission).
async fn open_worker<S: Session>(
    shared: Arc<Shared>,
    mut session: S,
    pacer: Pacer,
    start: Instant,
) {
    loop {
        let hit = shared.issued.fetch_add(1, Relaxed);
        let wait = match pacer.pace(start.elapsed(), hit) {
            Pace::Stop => return,
            Pace::Wait(wait) => wait,
        };
        let which = shared.pick(hit);
        let due = start + pacer.due(hit);
        if wait > EARLY_WAKE {
            tokio::time::sleep_until((due - EARLY_WAKE).into()).await;
        }
        let sent = Instant::now();
        let in_flight = shared.in_flight.fetch_add(1, Relaxed) + 1;
        shared.max_in_flight.fetch_max(in_flight, Relaxed);
        let exchange = session.exchange(which, &shared.counts, sent).await;
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
                connect: exchange.opened.map(|o| o.connect),
                handshake: exchange.opened.and_then(|o| o.handshake),
                target: shared.several.then_some(which),
            },
            done,
        );
    }
}
