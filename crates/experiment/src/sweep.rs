//! `chokepoint sweep`: one load step per client count, each measured with what the mock and the
//! observer saw, saved as it ends, then diagnosed.
use crate::downstream::MockClient;
use crate::progress::{StepProgress, SweepEvent};
use crate::warmup::{warm_up, WarmCheck};
use crate::watch::StepWatch;
use anyhow::Context;
use chokepoint_diagnose::catalogue::Catalogue;
use chokepoint_diagnose::{assess, SettleRule};
use chokepoint_load::{LoadConfig, LoadEvent};
use chokepoint_observe::stacks::StackOptions;
use chokepoint_observe::{available_cores, CpuScope, StepObservation, TargetSpec};
use chokepoint_remote::client::RemoteObserver;
use chokepoint_result::{
    DownstreamInFlight, DownstreamStep, MockStats, ShardInfo, Step, StepChoice, StepEnd,
    SweepContext, SweepResult, TimelinePoint,
};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use tokio_util::sync::CancellationToken;

/// What to sweep and how.
#[derive(Debug, Clone)]
pub struct SweepConfig {
    /// The request each client sends (URL, method, headers, body, timeout, keep-alive).
    pub base: LoadConfig,
    /// Client counts to run, in order; `None` for the adaptive search.
    pub clients: Option<Vec<u32>>,
    /// The largest client count the adaptive search may try.
    pub max_clients: u32,
    /// The longest a step measures (the ramp comes on top); a step ends sooner when its
    /// figures are known well enough (`settle`), unless `step_fixed`.
    pub step: Duration,
    /// Every step measures the whole `step` (the behaviour before steps could end early).
    pub step_fixed: bool,
    /// When a step knows enough (`chokepoint_diagnose::settle`).
    pub settle: SettleRule,
    /// The longest a step's ramp may take before measuring starts anyway ([`ramp_limit`]:
    /// set with the step by [`SweepConfig::set_step`], or by [`SweepConfig::put_on_clock`]).
    pub ramp_limit: Duration,
    /// Base URL of a running `chokepoint mock` that the target calls.
    pub mock: Option<String>,
    /// Where to save result.json (after each step) and report.html (at the end).
    pub out: Option<PathBuf>,
    /// Whose CPU is the target's: a process tree, or the threads of an in-process target. The
    /// same processes are sampled for threads and connections.
    pub target_cpu: Option<CpuScope>,
    /// How often the target's threads and connections are sampled during a step.
    pub observe_interval: Duration,
    /// Which of the runtime's stack tools the observer may use (`--stacks`, `--jvm`, `--pprof`).
    pub stacks: StackOptions,
    /// The longest to wait, between steps, for the target's backlog to drain.
    pub drain_timeout: Duration,
    /// Start each step on the clock (a sharded sweep: every shard keeps the same schedule).
    pub clock: Option<StepClock>,
    /// This sweep's shard of a run, written into the result with each step's lateness.
    pub shard: Option<ShardInfo>,
    /// The known pools the finding names a setting from (the built-in ones unless the caller
    /// put a user's entries in front).
    pub catalogue: Catalogue,
    /// The longest the unmeasured warm-up before the first step may run (`--warmup`; zero for
    /// none): it ends sooner once the latency stops falling (`crate::warmup`).
    pub warmup_limit: Duration,
    /// The observer beside the target (`--observer`): read instead of this machine's `/proc`.
    pub observer: Option<Arc<RemoteObserver>>,
    /// A forwarder on the URL's port and the process behind it, both in `target_cpu`
    /// ([`SweepConfig::follow_forwarder`]); told in the result's context.
    pub forwarder: Option<chokepoint_result::Forwarder>,
    /// After the finding, predict the pool at this size (`--what-if`; `crate::what_if`).
    pub what_if: Option<crate::PoolSize>,
}

/// The largest client count the adaptive search tries unless told (`--max-clients`).
pub const DEFAULT_MAX_CLIENTS: u32 = 1000;

/// The longest a step measures unless told (`--step`).
pub const DEFAULT_STEP: Duration = Duration::from_secs(10);

/// The longest a step's ramp may take: twice the step, at least 5 s. The ramp waits until every
/// client has had one answer, so that the step measures the clients it names; a target that
/// queues (a pool of 20 behind a 1 s call serves 200 clients' first requests over 10 s) needs as
/// long as a measured step to answer them all, and one that never does must not stall the sweep.
pub fn ramp_limit(step: Duration) -> Duration {
    (step * 2).max(Duration::from_secs(5))
}

/// A schedule on the wall clock: step k starts at `start_at + k × slot` (at once when late).
#[derive(Debug, Clone, Copy)]
pub struct StepClock {
    /// When the first step starts.
    pub start_at: SystemTime,
    /// From one step's start to the next's: ramp, measured step and drain fit in it.
    pub slot: Duration,
}

impl SweepConfig {
    /// A sweep of `target_url` with the defaults: adaptive up to 1000 clients, 10 s steps.
    pub fn new(target_url: &str) -> anyhow::Result<SweepConfig> {
        let base = LoadConfig::new(target_url).map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(SweepConfig {
            base,
            clients: None,
            max_clients: DEFAULT_MAX_CLIENTS,
            step: DEFAULT_STEP,
            step_fixed: false,
            settle: SettleRule::default(),
            ramp_limit: ramp_limit(DEFAULT_STEP),
            mock: None,
            out: None,
            target_cpu: None,
            observe_interval: Duration::from_millis(250),
            stacks: StackOptions::default(),
            drain_timeout: Duration::from_secs(30),
            clock: None,
            shard: None,
            catalogue: Catalogue::built_in().clone(),
            warmup_limit: crate::DEFAULT_WARMUP_LIMIT,
            observer: None,
            forwarder: None,
            what_if: None,
        })
    }

    /// Sets the step's length and, with it, the ramp's limit.
    pub fn set_step(&mut self, step: Duration) {
        self.step = step;
        self.ramp_limit = ramp_limit(step);
    }

    /// Puts the steps on the clock, `slot` apart from `start_at` (a sharded sweep): the ramp and
    /// the drain share what the slot leaves beside the step, and no step ends early (every
    /// shard must measure the same window). Call it after [`SweepConfig::set_step`].
    pub fn put_on_clock(&mut self, start_at: SystemTime, slot: Duration) -> anyhow::Result<()> {
        if slot <= self.step {
            anyhow::bail!(
                "--slot {slot:?} must be longer than --step {:?}: the ramp and the drain need room",
                self.step
            );
        }
        let settle = (slot - self.step) / 2;
        self.ramp_limit = settle;
        self.drain_timeout = settle;
        self.step_fixed = true;
        // Every shard starts its first step at the same instant: no warm-up of its own.
        self.warmup_limit = Duration::ZERO;
        self.clock = Some(StepClock { start_at, slot });
        Ok(())
    }

    /// Observes process `pid` and its descendants as the target.
    pub fn with_target_pid(self, pid: i32) -> SweepConfig {
        self.with_target_pids(vec![pid])
    }

    /// Observes these processes and their descendants as the target.
    pub fn with_target_pids(mut self, roots: Vec<i32>) -> SweepConfig {
        self.target_cpu = Some(CpuScope::Tree(roots));
        self
    }

    /// The processes listening on the swept URL's port when its host is this machine
    /// (`--pid auto`): empty when the host is not a loopback name or nothing this user may
    /// read listens there.
    pub fn listening_target(&self) -> Vec<i32> {
        let Some((host, port)) = host_and_port(&self.base.url) else {
            return Vec::new();
        };
        let local = host == "localhost"
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        if !local {
            return Vec::new();
        }
        chokepoint_observe::listening_processes(port).unwrap_or_default()
    }

    /// The library files the target's processes have mapped or open now that the catalogue
    /// names (a client's jar, a C extension): read once, as a sweep ends.
    fn target_libraries(&self) -> Vec<String> {
        if let Some(remote) = &self.observer {
            let files = remote
                .target_now()
                .map(|target| target.library_files)
                .unwrap_or_default();
            return self.catalogue.known_libraries(&files);
        }
        self.catalogue
            .known_libraries(&chokepoint_observe::files::library_files(
                &self.target_pids(),
            ))
    }

    /// The values the target's processes were started with that size a pool the catalogue
    /// knows (`--workers 2`), and the sizes a JVM's application configuration gives its actor
    /// dispatchers: read once, as a sweep ends. Not through an observer beside the target: it
    /// serves no process's command line, environment or files.
    fn target_stated(&self) -> Vec<chokepoint_result::Stated> {
        if self.observer.is_some() {
            return Vec::new();
        }
        let pids = self.target_pids();
        let (flags, variables) = self.catalogue.stated_names();
        let mut stated = chokepoint_observe::stated::stated_values(&pids, &flags, &variables);
        // A `-D` the catalogue reads (Pekko's built-in blocking-I/O dispatcher's size) is also a
        // dispatcher's sizing key: kept once.
        for size in chokepoint_observe::actor_config::dispatcher_sizes(&pids) {
            if !stated.iter().any(|s| s.name == size.name) {
                stated.push(size);
            }
        }
        stated
    }

    /// The caps its proxies (HAProxy, nginx) are configured with on their upstream servers:
    /// read once, as a sweep ends, not through an observer beside the target (it serves no
    /// file).
    fn target_upstream_caps(&self) -> Vec<chokepoint_result::UpstreamCap> {
        if self.observer.is_some() {
            return Vec::new();
        }
        chokepoint_observe::proxy_config::upstream_caps(&self.target_pids())
    }

    /// The caps its HAProxy processes put on the client connections a frontend accepts: read
    /// as [`Self::target_upstream_caps`] are.
    fn target_front_caps(&self) -> Vec<chokepoint_result::FrontCap> {
        if self.observer.is_some() {
            return Vec::new();
        }
        chokepoint_observe::proxy_config::front_caps(&self.target_pids())
    }

    /// The accept queue of the target's listener on the URL's port (its `listen()` backlog),
    /// read once as a sweep ends from the kernel's socket dump; not through an observer beside
    /// the target, whose network namespace may be another.
    fn target_listen_queue(&self) -> Option<chokepoint_result::ListenQueue> {
        if self.observer.is_some() {
            return None;
        }
        let port = host_and_port(&self.base.url).map(|(_, port)| port)?;
        let inodes: std::collections::HashSet<u64> = self
            .target_pids()
            .into_iter()
            .filter_map(|pid| chokepoint_observe::sockets::socket_inodes(pid).ok())
            .flatten()
            .collect();
        Some(chokepoint_result::ListenQueue {
            port,
            size: chokepoint_observe::inet_diag::accept_queue_size(port, &inodes)?,
            somaxconn: chokepoint_observe::inet_diag::somaxconn(),
        })
    }

    /// The target's processes on this machine now: its roots' trees.
    fn target_pids(&self) -> Vec<i32> {
        let Some(spec) = self.target_spec() else {
            return Vec::new();
        };
        spec.roots
            .iter()
            .flat_map(|&root| chokepoint_observe::process_tree(root).unwrap_or_default())
            .collect()
    }

    /// What the observer samples: the processes of `target_cpu`, the URL's and the mock's ports.
    pub(crate) fn target_spec(&self) -> Option<TargetSpec> {
        let own = std::process::id() as i32;
        let (roots, mut skip) = match self.target_cpu.as_ref()? {
            CpuScope::Tree(roots) => (roots.clone(), Vec::new()),
            CpuScope::Process(pid) | CpuScope::Threads { pid, .. } => (vec![*pid], Vec::new()),
            CpuScope::ThreadsExcept { pid, prefixes } => (vec![*pid], prefixes.clone()),
            CpuScope::Group(_) => return None,
        };
        if roots.contains(&own) {
            // An in-process target: chokepoint's own threads are not the target's.
            skip.extend(["cp-observe", "cp-sweep", "cp-progress"].map(String::from));
        }
        Some(TargetSpec {
            roots,
            skip_thread_prefixes: skip,
            listen_port: host_and_port(&self.base.url).map(|(_, port)| port),
            mock_port: self
                .mock
                .as_deref()
                .and_then(host_and_port)
                .map(|(_, port)| port),
            stacks: self.stacks.clone(),
        })
    }
}

/// The host (without IPv6 brackets) and port of a URL; the scheme's default port when none.
fn host_and_port(url: &str) -> Option<(String, u16)> {
    let uri: http::Uri = url.parse().ok()?;
    let default = if uri.scheme_str() == Some("https") {
        443
    } else {
        80
    };
    let host = uri.host()?.trim_start_matches('[').trim_end_matches(']');
    Some((host.to_string(), uri.port_u16().unwrap_or(default)))
}

/// Runs the sweep. `on_event` sees each step's progress while it runs and each step as it ends.
/// Cancelling `cancel` ends the step under way (it is dropped: only finished steps count) and
/// returns the result of the finished steps, marked interrupted, diagnosed and saved.
pub fn sweep(
    config: &SweepConfig,
    cancel: CancellationToken,
    on_event: &mut dyn FnMut(SweepEvent<'_>),
) -> anyhow::Result<SweepResult> {
    let mock = config.mock.as_deref().map(MockClient::new).transpose()?;
    let first_stats = match &mock {
        Some(mock) => Some(mock.stats().with_context(|| {
            format!(
                "--mock {}: no chokepoint mock answers there; start one (chokepoint mock) or drop --mock",
                mock.base()
            )
        })?),
        None => None,
    };
    first_answer(config, &cancel)?;
    if let Some(out) = &config.out {
        std::fs::create_dir_all(out)
            .with_context(|| format!("--out {}: cannot create the folder", out.display()))?;
    }
    let mut result = SweepResult {
        target: config.base.url.clone(),
        context: context_from(first_stats.as_ref(), config),
        steps: Vec::new(),
        diagnosis: None,
        interrupted: false,
        chokepoint_version: env!("CARGO_PKG_VERSION").to_string(),
        shard: config.shard.clone(),
        merge: None,
        duration_s: 0.0,
        load_s: 0.0,
    };
    let began = Instant::now();
    let cores = result.context.cores;
    let mut planned: Option<VecDeque<u32>> = config.clients.clone().map(VecDeque::from);
    let mut failure = None;
    let first_clients = match &planned {
        Some(queue) => queue.front().copied(),
        None => chokepoint_diagnose::next_step(&[], config.max_clients, cores).map(|(c, _)| c),
    };
    let mut warm_check = first_clients
        .filter(|_| !config.warmup_limit.is_zero())
        .map(|clients| WarmCheck::new(clients, config.base.timeline_bucket));
    // The first step again, after a warm-up that its check asked for.
    let mut again: Option<(u32, StepChoice)> = None;
    loop {
        if cancel.is_cancelled() {
            result.interrupted = true;
            break;
        }
        let next = match (again.take(), &mut planned) {
            (Some(first), _) => Some(first),
            (None, Some(queue)) => queue.pop_front().map(|c| (c, StepChoice::Given)),
            (None, None) => {
                chokepoint_diagnose::next_step(&result.steps, config.max_clients, cores)
            }
        };
        let Some((clients, why)) = next else { break };
        if let Some(clock) = &config.clock {
            if !on_the_clock(clock, result.steps.len(), &mut result.shard, &cancel) {
                result.interrupted = true;
                break;
            }
        }
        let check = warm_check.as_mut().filter(|_| result.steps.is_empty());
        let ran = run_step(config, clients, mock.as_ref(), check, &cancel, on_event);
        if let (Ok(Some(_)), Some(check)) = (&ran, warm_check.take()) {
            if check.still_warming() {
                drain(config, mock.as_ref(), &cancel);
                result.context.warmup = warm_up(config, check, &cancel, on_event)?;
                drain(config, mock.as_ref(), &cancel);
                again = Some((clients, why));
                continue;
            }
            result.context.warmup = check.stood();
        }
        match ran {
            Ok(Some(mut step)) => {
                step.chosen_because = Some(why);
                result.steps.push(step);
                on_event(SweepEvent::Step(result.steps.last().expect("just pushed")));
                save(config, &result, false)?;
            }
            Ok(None) => {
                result.interrupted = true;
                break;
            }
            Err(err) if result.steps.is_empty() => return Err(err),
            Err(err) => {
                result.interrupted = true;
                failure = Some(err);
                break;
            }
        }
        drain(config, mock.as_ref(), &cancel);
    }
    result.duration_s = began.elapsed().as_secs_f64();
    result.load_s = result.steps.iter().map(|s| s.measured_s).sum();
    result.context.downstream_delay_ms = downstream_delay_ms(&result.steps, first_stats.as_ref());
    result.context.target_libraries = config.target_libraries();
    result.context.stated = config.target_stated();
    result.context.upstream_caps = config.target_upstream_caps();
    result.context.front_caps = config.target_front_caps();
    result.context.listen_queue = config.target_listen_queue();
    let mut finding =
        chokepoint_diagnose::diagnose_with(&result.steps, &result.context, &config.catalogue);
    if !result.interrupted {
        let roots = config
            .target_spec()
            .map(|spec| spec.roots)
            .unwrap_or_default();
        let here = config.observer.is_none();
        result.context.h2_peers = crate::h2_peers::ask(&result.steps, &finding, &roots, here);
        if !result.context.h2_peers.is_empty() {
            finding = chokepoint_diagnose::diagnose_with(
                &result.steps,
                &result.context,
                &config.catalogue,
            );
        }
    }
    result.diagnosis = Some(finding.into_diagnosis());
    if let Some(size) = config.what_if.filter(|_| !result.interrupted) {
        let ran = crate::what_if::run(config, size, mock.as_ref(), &mut result, &cancel, on_event);
        failure = failure.or(ran.err());
    }
    save(config, &result, true)?;
    match failure {
        Some(err) => Err(err.context(format!(
            "the sweep stopped after {} finished steps{}",
            result.steps.len(),
            config
                .out
                .as_ref()
                .map(|d| format!(" (saved in {})", d.display()))
                .unwrap_or_default()
        ))),
        None => Ok(result),
    }
}

/// Waits for step `k`'s slot; notes in `shard` how late the step began. False when cancelled.
fn on_the_clock(
    clock: &StepClock,
    k: usize,
    shard: &mut Option<ShardInfo>,
    cancel: &CancellationToken,
) -> bool {
    let due = clock.start_at + clock.slot * k as u32;
    if !chokepoint_load::shard::wait_until(due, cancel) {
        return false;
    }
    let now = SystemTime::now();
    let late = chokepoint_load::shard::lateness(due, now).as_secs_f64();
    if let Some(shard) = shard {
        if k == 0 {
            shard.started_at_unix_s = chokepoint_load::shard::unix_seconds(now);
            shard.late_s = late;
        }
        shard.late |= late > chokepoint_load::shard::LATE_TOLERANCE.as_secs_f64();
        shard.step_late_s.push(late);
    }
    true
}

/// One step: the load run, with the mock's window reset when the measured part begins, its
/// progress sent to `on_event` as it goes. `Ok(None)` when the step was cancelled before it
/// finished.
pub(crate) fn run_step(
    config: &SweepConfig,
    clients: u32,
    mock: Option<&MockClient>,
    mut warm_check: Option<&mut WarmCheck>,
    cancel: &CancellationToken,
    on_event: &mut dyn FnMut(SweepEvent<'_>),
) -> anyhow::Result<Option<Step>> {
    let mut load = config.base.clone();
    load.clients = clients;
    load.duration = Some(config.step);
    load.requests = None;
    load.rate = None;
    load.exclude_ramp = true;
    load.ramp_limit = config.ramp_limit;
    // One interval per timeline bucket: the progress, and for steps that may end early the
    // timeline as it grows.
    load.interval = load.timeline_bucket;
    let bucket_s = load.timeline_bucket.as_secs_f64();
    let run =
        chokepoint_load::start(load, cancel.child_token()).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut progress = StepProgress {
        clients,
        so_far: None,
        ceiling: config.step,
        may_end_early: !config.step_fixed,
    };
    on_event(SweepEvent::Progress(progress));

    let mut watch: Option<StepWatch> = None;
    let mut ramp = Duration::ZERO;
    let mut reset_error = None;
    let mut so_far: Vec<TimelinePoint> = Vec::new();
    let mut settled = false;
    for event in run.events() {
        if let LoadEvent::Interval(summary) = &event {
            progress.so_far = Some(summary.total);
            on_event(SweepEvent::Progress(progress));
            if settled || summary.last {
                continue;
            }
            if let Some(check) = warm_check.as_deref_mut() {
                let answered = summary.interval.requests > summary.interval.errors;
                if check.see(answered.then_some(summary.interval.mean_ms)) {
                    settled = true;
                    run.end_window();
                    continue;
                }
            }
            if config.step_fixed {
                continue;
            }
            so_far.push(TimelinePoint {
                t_s: summary.start.as_secs_f64(),
                completed: summary.interval.requests,
                ok: summary
                    .interval
                    .requests
                    .saturating_sub(summary.interval.errors),
                mean_latency_ms: summary.interval.mean_ms,
                ..TimelinePoint::default()
            });
            // A settled step still waits for the stack tool's first look (the ceiling bounds
            // it): ended before it, the step would have no stacks, and say nothing of why.
            if assess(&so_far, bucket_s, clients, &config.settle).is_settled()
                && watch.as_ref().is_none_or(StepWatch::stacks_looked)
            {
                settled = true;
                run.end_window();
            }
        }
        if let LoadEvent::MeasurementStarted {
            ramp: measured_ramp,
        } = event
        {
            ramp = measured_ramp;
            if let Some(mock) = mock {
                reset_error = mock.reset().err();
            }
            watch = Some(StepWatch::start(config));
        }
    }
    let seen = watch.map(StepWatch::finish).unwrap_or_default();
    let report = run.finish().map_err(|e| anyhow::anyhow!("{e}"))?;
    if report.interrupted {
        return Ok(None);
    }
    if let Some(err) = reset_error {
        return Err(err);
    }
    let stats = mock.map(|m| m.stats()).transpose()?;
    let mut step = Step {
        error_rate: report.error_rate(),
        downstream_inflight: stats.as_ref().map(|s| DownstreamInFlight {
            mean: s.mean_in_flight,
            max: s.max_in_flight,
        }),
        downstream: stats.map(|s| DownstreamStep {
            requests: s.requests,
            stubs: s.stubs,
            max_connections_open: s.max_connections_open,
            connections_accepted: s.connections_accepted,
            in_flight_series: s.in_flight_series,
            h2_connections: s.max_h2_connections_open,
            h2_connections_accepted: s.h2_connections_accepted,
            max_streams_per_connection: s.max_streams_per_connection,
            max_concurrent_streams: s.config.max_concurrent_streams,
        }),
        target_cpu_pct: seen.target_cpu_pct,
        machine_cpu_pct: seen.machine_cpu_pct,
        machine_niced_cpu_pct: seen.machine_niced_cpu_pct,
        observed_pids: Vec::new(),
        threads_by_pool: None,
        connections: None,
        cpu_quota: None,
        stacks: None,
        observation_notes: Vec::new(),
        ramp_s: ramp.as_secs_f64(),
        chosen_because: None,
        measured_s: ramp.as_secs_f64() + report.duration_s,
        ended: Some(if config.step_fixed {
            StepEnd::Fixed
        } else if settled {
            StepEnd::Settled
        } else {
            StepEnd::Ceiling
        }),
        load: report,
    };
    if let Some(observed) = seen.observation {
        add_observation(&mut step, observed);
    }
    Ok(Some(step))
}

/// Puts what the observer saw of the target into the step.
fn add_observation(step: &mut Step, observed: StepObservation) {
    step.observed_pids = observed.observed_pids;
    step.threads_by_pool = observed.threads_by_pool;
    step.connections = observed.connections;
    step.cpu_quota = observed.cpu_quota;
    step.stacks = observed.stacks;
    step.observation_notes = observed.notes;
}

/// `requests` requests as the steps send them (same TLS, same first target), one at a time on the
/// load engine, each waiting at most `timeout` (never longer than the steps' own timeout).
fn probe(config: &SweepConfig, requests: u64, timeout: Duration) -> LoadConfig {
    let mut probe = config.base.clone();
    probe.clients = 1;
    probe.requests = Some(requests);
    probe.duration = None;
    probe.rate = None;
    probe.exclude_ramp = false;
    probe.timeout = config.base.timeout.min(timeout);
    probe.interval = probe.timeout * requests as u32 + Duration::from_secs(1);
    probe
}

/// Refuses a target that answers no request at all, or refuses every one of them: up to three
/// requests, one at a time, that all fail before any response (the connection reset or
/// closed, no HTTP, a TLS failure), or that all get the same client error (a 404 for a wrong
/// path, 401 or 403 without credentials, 405 for a wrong method), end the sweep with one line
/// naming the failure, instead of 20 s of steps that measure how fast the service says no.
/// 408 and 429 are left to the sweep: a service says those under load, and they are part of
/// what it measures. The first other answer ends the check; timeouts and 5xx statuses are
/// answers of a kind, and the sweep measures those too.
fn first_answer(config: &SweepConfig, cancel: &CancellationToken) -> anyhow::Result<()> {
    use chokepoint_result::error_kind::{CONNECT_REFUSED, OTHER, PROTOCOL, RESET, TLS};
    let unanswered = [RESET, PROTOCOL, TLS, CONNECT_REFUSED, OTHER];
    let refused = |kind: &str| {
        kind.strip_prefix("http_")
            .and_then(|code| code.parse::<u16>().ok())
            .is_some_and(|code| (400..500).contains(&code) && code != 408 && code != 429)
    };
    let mut failures: std::collections::BTreeMap<String, u64> = Default::default();
    let mut refusals: std::collections::BTreeMap<String, u64> = Default::default();
    for _ in 0..3 {
        let run = chokepoint_load::start(
            probe(config, 1, Duration::from_secs(5)),
            cancel.child_token(),
        )
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        let report = run.finish().map_err(|e| anyhow::anyhow!("{e}"))?;
        let never_answered = report.ok == 0
            && report.requests > 0
            && report
                .errors
                .keys()
                .all(|k| unanswered.contains(&k.as_str()))
            && report.errors.values().sum::<u64>() == report.requests;
        let all_refused = report.ok == 0
            && report.requests > 0
            && report.errors.keys().all(|k| refused(k))
            && report.errors.values().sum::<u64>() == report.requests;
        if report.interrupted || !(never_answered || all_refused) {
            return Ok(());
        }
        let into = if all_refused {
            &mut refusals
        } else {
            &mut failures
        };
        for (kind, n) in report.errors {
            *into.entry(kind).or_default() += n;
        }
    }
    if failures.is_empty() {
        let statuses: Vec<String> = refusals
            .iter()
            .map(|(kind, n)| format!("{} ×{n}", kind.trim_start_matches("http_")))
            .collect();
        anyhow::bail!(
            "{}: every answer was a client error ({}): the service refused the request itself; check the path (the commonest mistake), the method and any credentials or headers it needs (--header)",
            config.base.url,
            statuses.join(", ")
        );
    }
    let kinds: Vec<String> = failures
        .iter()
        .map(|(kind, n)| format!("{kind} ×{n}"))
        .collect();
    anyhow::bail!(
        "{}: every request failed before any answer ({}); check the URL, its scheme (http or https) and that an HTTP/1.1 service listens there",
        config.base.url,
        kinds.join(", ")
    )
}

/// Waits, bounded, until the target has worked off the requests the last step left queued:
/// one probe request waits behind the backlog of a FIFO pool, then the mock's in-flight count
/// must reach zero.
pub(crate) fn drain(config: &SweepConfig, mock: Option<&MockClient>, cancel: &CancellationToken) {
    let deadline = Instant::now() + config.drain_timeout;
    let probe = probe(config, 1, config.drain_timeout);
    // The probe's answer does not matter, only that it came back (or timed out).
    let _ = chokepoint_load::start(probe, cancel.child_token()).and_then(|run| run.finish());
    if let Some(mock) = mock {
        while Instant::now() < deadline && !cancel.is_cancelled() {
            match mock.stats() {
                Ok(stats) if stats.in_flight > 0 => std::thread::sleep(Duration::from_millis(50)),
                _ => break,
            }
        }
    }
}

fn context_from(stats: Option<&MockStats>, config: &SweepConfig) -> SweepContext {
    SweepContext {
        downstream_delay_ms: stats.and_then(|s| s.config.fixed_delay_ms),
        mock_present: stats.is_some(),
        mock_max_connections: stats.and_then(|s| s.config.max_connections),
        mock_keepalive_timeout_ms: stats.and_then(|s| s.config.keepalive_timeout_ms),
        target_observed: config.target_cpu.is_some() || config.observer.is_some(),
        max_clients: config
            .clients
            .as_ref()
            .and_then(|c| c.iter().copied().max())
            .unwrap_or(config.max_clients),
        cores: Some(match &config.observer {
            Some(remote) => remote.target().cores,
            None => available_cores() as u32,
        }),
        target_libraries: Vec::new(),
        stated: Vec::new(),
        upstream_caps: Vec::new(),
        front_caps: Vec::new(),
        listen_queue: None,
        warmup: None,
        observer: config
            .observer
            .as_ref()
            .map(|remote| remote.url().to_string()),
        forwarder: config.forwarder.clone(),
        h2_peers: Vec::new(),
    }
}

/// The downstream delay the target waits on: the delay of the one stub the sweep's requests hit,
/// or the mock's global delay when no stub says more. `None` when several stubs with different
/// delays were hit (a fan-out: the diagnosis reads the stubs itself).
pub fn downstream_delay_ms(steps: &[Step], first_stats: Option<&MockStats>) -> Option<f64> {
    let mut delays: Vec<f64> = steps
        .iter()
        .filter_map(|s| s.downstream.as_ref())
        .flat_map(|d| d.stubs.iter())
        .filter(|stub| stub.requests > 0)
        .filter_map(|stub| stub.delay_ms)
        .collect();
    delays.sort_by(f64::total_cmp);
    delays.dedup_by(|a, b| (*a - *b).abs() < 0.5);
    match delays.as_slice() {
        [one] => Some(*one),
        [] => first_stats.and_then(|s| s.config.fixed_delay_ms),
        _ => None,
    }
}

fn save(config: &SweepConfig, result: &SweepResult, finished: bool) -> anyhow::Result<()> {
    let Some(dir) = &config.out else {
        return Ok(());
    };
    chokepoint_report::files::write_result(dir, result)
        .with_context(|| format!("cannot write {}/result.json", dir.display()))?;
    if finished {
        chokepoint_report::files::write_html(dir, result)
            .with_context(|| format!("cannot write {}/report.html", dir.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ramp_gets_twice_the_step_and_at_least_five_seconds() {
        let secs = Duration::from_secs_f64;
        for (step, ramp) in [
            (0.5, 5.0),
            (2.5, 5.0),
            (3.0, 6.0),
            (10.0, 20.0),
            (60.0, 120.0),
        ] {
            assert_eq!(ramp_limit(secs(step)), secs(ramp), "step {step} s");
        }
        let mut config = SweepConfig::new("http://127.0.0.1:1/").unwrap();
        assert_eq!(config.ramp_limit, ramp_limit(DEFAULT_STEP));
        config.set_step(secs(3.0));
        assert_eq!((config.step, config.ramp_limit), (secs(3.0), secs(6.0)));
    }

    #[test]
    fn on_the_clock_the_ramp_and_drain_share_the_slot_and_steps_run_whole() {
        let secs = Duration::from_secs_f64;
        let mut config = SweepConfig::new("http://127.0.0.1:1/").unwrap();
        config.set_step(secs(10.0));
        assert!(config.put_on_clock(SystemTime::now(), secs(10.0)).is_err());
        config.put_on_clock(SystemTime::now(), secs(22.0)).unwrap();
        assert_eq!(
            (config.ramp_limit, config.drain_timeout),
            (secs(6.0), secs(6.0))
        );
        assert!(config.step_fixed);
    }
    use chokepoint_result::StubStats;

    fn step_hitting(stubs: &[(u64, Option<f64>)]) -> Step {
        Step {
            downstream: Some(DownstreamStep {
                stubs: stubs
                    .iter()
                    .enumerate()
                    .map(|(i, (requests, delay_ms))| StubStats {
                        id: i.to_string(),
                        name: format!("stub {i}"),
                        requests: *requests,
                        delay_ms: *delay_ms,
                    })
                    .collect(),
                ..DownstreamStep::default()
            }),
            ..Step::default()
        }
    }

    #[test]
    fn ports_come_from_the_urls() {
        let port = |url: &str| host_and_port(url).map(|(_, port)| port);
        assert_eq!(port("http://127.0.0.1:8080/x"), Some(8080));
        assert_eq!(port("http://localhost/"), Some(80));
        assert_eq!(
            host_and_port("http://[::1]:9/"),
            Some(("::1".to_string(), 9))
        );
        assert_eq!(port("not a url"), None);
    }

    #[test]
    fn the_delay_is_the_one_stub_hit() {
        let steps = [step_hitting(&[(10, Some(50.0)), (0, Some(200.0))])];
        assert_eq!(downstream_delay_ms(&steps, None), Some(50.0));
    }

    #[test]
    fn a_fan_out_over_different_delays_has_no_single_delay() {
        let steps = [step_hitting(&[(10, Some(40.0)), (10, Some(120.0))])];
        assert_eq!(downstream_delay_ms(&steps, None), None);
    }

    #[test]
    fn without_stub_delays_the_global_delay_counts() {
        let stats = MockStats {
            config: chokepoint_result::MockConfigView {
                fixed_delay_ms: Some(1000.0),
                ..Default::default()
            },
            ..MockStats::default()
        };
        let steps = [step_hitting(&[(10, None)])];
        assert_eq!(downstream_delay_ms(&steps, Some(&stats)), Some(1000.0));
        assert_eq!(downstream_delay_ms(&[], None), None);
    }
}
