//! The typed facts of a finding: `diagnosis.facts` in `result.json`.
//!
//! The diagnosis decides and records what it read as [`Fact`]s, each with its numbers and the
//! client counts of the steps it was read from; one describer turns them into the summary and
//! evidence sentences; renderers read the same facts (the report page marks the stalls a
//! [`Fact::Stalls`] names). In JSON each fact is an object whose `kind` names it
//! (`{"kind": "little", "clients": [20, 40, 100], ...}`); new kinds may be added, so readers skip
//! kinds they do not know.

use crate::{ErrorCounts, Kind, Overload, Place, PlaceUnclearWhy, PoolSeen, StackSource, WaitKind};
use serde::{Deserialize, Serialize};

/// One thing the diagnosis read from the steps, with its numbers. Latencies are in ms, rates
/// per second, shares in 0..=1, CPU in percent; `clients` names the steps read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Fact {
    /// No step with clients was measured.
    NothingMeasured,
    /// A step at which no request succeeded.
    NoSuccess {
        /// The step.
        clients: u32,
        /// Completed requests per second (all failed).
        throughput_rps: f64,
        /// Its failures by kind.
        errors: ErrorCounts,
    },
    /// From `from_clients` on, not one request completed (answered or failed) within a step's
    /// measured window, after smaller steps were answered: the service stopped answering (a
    /// deadlock, a wait without a timeout). Its limit is unknown: above `answered_clients`, at
    /// or below `from_clients`.
    StoppedAnswering {
        /// The first step that completed nothing.
        from_clients: u32,
        /// Every step that completed nothing (all from `from_clients` on).
        silent: Vec<u32>,
        /// The measured window of the first of them, seconds.
        window_s: f64,
        /// The largest step that was answered.
        answered_clients: u32,
        /// Its completed requests per second.
        answered_throughput_rps: f64,
        /// Where the most threads waited at the first silent step, by the runtime's own stacks
        /// (none when the sweep took none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stuck: Option<Stuck>,
    },
    /// The base latency L0 of the ideal line X(c) = c / L0.
    BaseLatency {
        /// The step with the fewest clients.
        clients: u32,
        /// That step's mean successful latency.
        latency_ms: f64,
        /// L0: the lower mean latency of the two smallest steps, or the downstream delay.
        base_ms: f64,
        /// True when the fewest-clients step had already queued (latency over 1.5× the known
        /// downstream delay) and L0 is the delay.
        from_delay: bool,
    },
    /// One step's figures against the ideal line.
    Step {
        /// The step.
        clients: u32,
        /// Successful requests per second (median of the runs).
        ok_throughput_rps: f64,
        /// Mean successful latency.
        latency_ms: f64,
        /// Requests in service by Little's law: all completions per second × mean latency.
        in_service: f64,
        /// Successful throughput over the ideal line's.
        efficiency: f64,
        /// Downstream slots busy, successful throughput × the known downstream delay.
        downstream_busy: Option<f64>,
        /// The known downstream delay.
        downstream_delay_ms: Option<f64>,
        /// The most calls in flight the mock saw.
        mock_in_flight_max: Option<f64>,
        /// The target's CPU, percent of all cores.
        target_cpu_pct: Option<f64>,
        /// Runs of this client count merged (by their median).
        runs: usize,
    },
    /// A step short of the ideal line while the mock saw every client's call in flight at once:
    /// no pool smaller than the clients allows that, so the step counts as following clients.
    AllInFlight {
        /// The step.
        clients: u32,
        /// Its efficiency as measured.
        efficiency: f64,
    },
    /// Only one step was measured.
    OneStep {
        /// The step.
        clients: u32,
    },
    /// Efficiency drifted under the knee threshold while throughput still grew: contention,
    /// not a limit.
    Contention {
        /// The first step below the threshold.
        from_clients: u32,
        /// The threshold.
        threshold: f64,
        /// The lowest efficiency from there on.
        lowest_efficiency: f64,
        /// The last step before `from_clients`.
        good_clients: u32,
        /// Its successful throughput.
        good_throughput_rps: f64,
        /// The largest step.
        last_clients: u32,
        /// Its successful throughput.
        last_throughput_rps: f64,
    },
    /// The knee: the first step from which every step is below the threshold.
    Knee {
        /// The knee step.
        clients: u32,
        /// Its efficiency.
        efficiency: f64,
        /// The threshold.
        threshold: f64,
    },
    /// The plateau past the knee: throughput within 10% while latency grows.
    Plateau {
        /// The first plateau step.
        from_clients: u32,
        /// The last plateau step.
        to_clients: u32,
        /// The plateau's throughput (median of its steps).
        throughput_rps: f64,
        /// Mean latency at the first plateau step.
        from_latency_ms: f64,
        /// Mean latency at the last plateau step.
        to_latency_ms: f64,
    },
    /// The load generator's CPU was saturated where throughput stopped following clients:
    /// the figures are the generator's.
    GeneratorBound {
        /// The step.
        clients: u32,
        /// The generator's CPU, percent of its cores.
        generator_cpu_pct: f64,
        /// The threshold.
        threshold_pct: f64,
        /// The step's efficiency.
        efficiency: f64,
    },
    /// The generator's CPU was saturated at some step without explaining the finding.
    GeneratorBusy {
        /// The step.
        clients: u32,
        /// The generator's CPU, percent of its cores.
        generator_cpu_pct: f64,
        /// True when a limit showed before that step (else larger steps may show the
        /// generator's limit).
        past_limit: bool,
    },
    /// Periodic stalls in a step's timeline.
    Stalls {
        /// The step.
        clients: u32,
        /// Number of stalls.
        count: usize,
        /// Median stall length, s.
        stall_s: f64,
        /// Median gap between stall starts, s.
        period_s: f64,
        /// Median completions from one stall's start to the next.
        per_burst: f64,
        /// Each stall, in the step's window.
        spans: Vec<Span>,
    },
    /// The mock's connections at its connection cap during the stalling step.
    MockConnectionCap {
        /// The step.
        clients: u32,
        /// The most connections open at the mock.
        max_open: f64,
        /// The mock's `--max-connections`.
        cap: f64,
        /// The mock's `--keepalive-timeout`, ms.
        keepalive_timeout_ms: Option<u64>,
    },
    /// The mock has no connection cap: connections run out on the target's side.
    NoMockConnectionCap,
    /// Errors above the threshold from a step on.
    ErrorsStart {
        /// The first such step.
        clients: u32,
        /// Its error share.
        error_rate: f64,
        /// Its failures by kind.
        errors: ErrorCounts,
        /// Median latency of its failures, when known.
        error_p50_ms: Option<f64>,
        /// The threshold.
        threshold: f64,
    },
    /// What the target served while shedding: the median successful throughput.
    Served {
        /// The first shedding step.
        from_clients: u32,
        /// The steps read.
        clients: Vec<u32>,
        /// Median successful throughput.
        ok_throughput_rps: f64,
    },
    /// Little's law: throughput × service time = requests held at once.
    Little {
        /// The steps read.
        clients: Vec<u32>,
        /// Their throughput.
        throughput_rps: f64,
        /// The time a request holds its slot.
        service_ms: f64,
        /// What that time is.
        service: Service,
        /// throughput × service time.
        in_service: f64,
    },
    /// The most calls in flight the mock saw at the plateau, set against Little's law.
    MockCeiling {
        /// The steps read.
        clients: Vec<u32>,
        /// Median of their most calls in flight.
        max_in_flight: f64,
        /// Median of their time-weighted mean calls in flight.
        mean_in_flight: f64,
        /// Plateau steps the mock counted.
        steps: usize,
        /// How the ceiling reads against Little's law.
        reading: CeilingReading,
    },
    /// No mock counted the calls: the target's connections to one downstream peer were the
    /// same count at every plateau step, each held by a thread of one pool all the time (in a
    /// network wait, or woken by the answer and on a core or waiting for one). That count is the
    /// pool, and Little's law over the whole request is higher.
    ConnectionCeiling {
        /// The plateau steps read.
        clients: Vec<u32>,
        /// The peer's port.
        peer_port: u16,
        /// The connections to it at every one of those steps.
        connections: u32,
        /// The pool whose threads held them.
        pool: String,
        /// Its threads holding them: in a network wait, or woken by the answer and running or
        /// waiting for a core (median over the steps of the mean over samples).
        held_threads: f64,
        /// The time each call holds its connection: connections / plateau throughput, ms.
        hold_ms: f64,
        /// Little's law over the whole request, which it replaces.
        little: f64,
    },
    /// The downstream advertised an HTTP/2 stream cap (SETTINGS_MAX_CONCURRENT_STREAMS) and the
    /// target called it over HTTP/2: the calls in flight at the plateau read against the
    /// streams the target's connections allow (connections × cap, RFC 9113 §5.1.2). Read from
    /// the mock's counts, or (`peer` set) from the target's connections to a peer in `/proc` and
    /// the SETTINGS that peer sent when asked. Told whatever it reads; only
    /// [`StreamCapReading::AtCap`] names the cap as the place.
    StreamCap {
        /// The plateau steps read.
        clients: Vec<u32>,
        /// The cap each HTTP/2 connection advertised.
        cap: u64,
        /// The most HTTP/2 connections the target had open to the downstream at once, per step.
        connections: Vec<u64>,
        /// HTTP/2 connections the downstream accepted during those steps (0 for a client that
        /// keeps its connections); the mock's count, `None` for a peer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        opened: Option<u64>,
        /// The mock's most calls in flight, per step (empty when no mock counted them: the
        /// finding's limit is then the ceiling).
        in_flight: Vec<u64>,
        /// The most streams in flight on one connection over those steps; the mock's count,
        /// `None` for a peer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        streams_per_connection: Option<u64>,
        /// The streams the connections allow (connections × cap) when the connections held one
        /// count; `None` when they changed.
        allowed: Option<u64>,
        /// How the ceiling reads against them.
        reading: StreamCapReading,
        /// The peer asked for its SETTINGS, when the cap is a peer's (a proxy between the target
        /// and the mock); `None` when the mock's counts were read.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        peer: Option<std::net::SocketAddr>,
        /// The program listening at `peer` (`nginx`), when it runs on this machine.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        peer_program: Option<String>,
    },
    /// The target's CPU at the plateau, saturated.
    CpuSaturated {
        /// The plateau steps.
        clients: Vec<u32>,
        /// Target CPU, percent of all cores (median).
        target_cpu_pct: f64,
        /// Generator CPU, percent of its cores (median).
        generator_cpu_pct: f64,
        /// Requests in service the limit stands for.
        in_service: f64,
    },
    /// Each request in service burns a large share of the cores: CPU work on fewer threads
    /// than cores.
    CpuPerRequest {
        /// The fewest-clients step.
        clients: u32,
        /// Its target CPU, percent of all cores.
        target_cpu_pct: f64,
        /// Its requests in service.
        in_service: f64,
        /// CPU per request in service, percent of all cores.
        per_request_pct: f64,
        /// Target CPU at the plateau (median).
        plateau_cpu_pct: f64,
        /// Requests in service the limit stands for.
        limit_in_service: f64,
    },
    /// Throughput held on the plateau while each request's CPU rose with the clients: requests
    /// spending CPU on each other (a spinning lock, retries), where requests waiting for a
    /// pool's slot wait parked and burn none. Contention, before any fall.
    CpuPerRequestRises {
        /// The plateau steps read, fewest clients first.
        clients: Vec<u32>,
        /// The fewest of them.
        from_clients: u32,
        /// Its throughput, every request counted.
        from_throughput_rps: f64,
        /// Its target CPU per request, ms.
        from_cpu_ms: f64,
        /// Its target's cores busy.
        from_cores: f64,
        /// The most clients.
        to_clients: u32,
        /// Its throughput, every request counted.
        to_throughput_rps: f64,
        /// Its target CPU per request, ms.
        to_cpu_ms: f64,
        /// Its target's cores busy.
        to_cores: f64,
    },
    /// The target's CPU at the plateau, not saturated.
    CpuNotLimit {
        /// The plateau steps.
        clients: Vec<u32>,
        /// Target CPU, percent of all cores (median).
        target_cpu_pct: f64,
        /// Generator CPU, percent of its cores (median).
        generator_cpu_pct: f64,
    },
    /// The mock's ceiling of calls in flight held flat at every step from the knee on while a
    /// later step served more at less target CPU: a pool of `in_flight`, which no CPU reading
    /// overrides.
    CeilingOverCpu {
        /// The steps from the knee on.
        clients: Vec<u32>,
        /// The most calls in flight the mock saw, the same at each of them.
        in_flight: f64,
        /// The earlier, slower step: clients, successful req/s, target CPU (percent of all
        /// cores).
        slower: (u32, f64, f64),
        /// The later step that served more at less CPU.
        faster: (u32, f64, f64),
    },
    /// The target's control group hit its CPU quota at the plateau: its cores busy at the quota
    /// and the kernel throttling it, whatever the machine's other cores did.
    CpuQuota {
        /// The plateau steps.
        clients: Vec<u32>,
        /// Cores the quota allows.
        quota_cores: f64,
        /// Cores the target kept busy (median over the plateau).
        cores_busy: f64,
        /// The machine's cores.
        machine_cores: u32,
        /// Share of the CFS periods the group was throttled in (median over the plateau).
        throttled_share: f64,
        /// Time held back by throttling per second of step (median over the plateau).
        throttled_per_s: f64,
        /// The group, as the kernel names it, and its cgroup version.
        group: String,
        /// 1 or 2.
        version: u8,
        /// The core count the target's runtime sized itself for, when it is more than the
        /// quota lets it run ([`crate::RuntimeCores::exceeds`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        runtime_cores: Option<crate::RuntimeCores>,
    },
    /// The cores the target kept busy at the plateau: the size of a CPU limit.
    CoresBusy {
        /// The plateau steps.
        clients: Vec<u32>,
        /// Target CPU, percent of all cores (median).
        target_cpu_pct: f64,
        /// Cores of the machine.
        cores: u32,
        /// target CPU × cores.
        cores_busy: f64,
        /// What Little's law over the base latency gives instead.
        little: f64,
    },
    /// The whole machine's CPU at the plateau.
    MachineCpu {
        /// The plateau steps.
        clients: Vec<u32>,
        /// The machine, percent of all cores (median; its contended share,
        /// `Step::machine_contended_cpu_pct`).
        machine_cpu_pct: f64,
        /// The target.
        target_cpu_pct: f64,
        /// The generator.
        generator_cpu_pct: f64,
        /// Everything else: machine − target − generator.
        others_pct: f64,
        /// True when the machine was busy and others took a good share: the target competed
        /// for cores.
        contended: bool,
    },
    /// The downstream stayed (nearly) idle at the plateau.
    DownstreamIdle {
        /// The plateau steps.
        clients: Vec<u32>,
        /// Downstream calls per target request (median).
        calls_per_request: f64,
        /// Calls in flight at the mock (median of the means), when it counted them.
        in_flight: Option<f64>,
        /// Requests in service at the target, set against it.
        in_service: f64,
    },
    /// The target process was not observed: no CPU figures.
    TargetNotObserved,
    /// No mock was given: no downstream figures.
    NoMock,
    /// One batch (each client sent about one request): the waves of the delay bound the pool.
    Batch {
        /// The step.
        clients: u32,
        /// Requests sent.
        requests: u64,
        /// Successful requests.
        ok: u64,
        /// Seconds they took.
        duration_s: f64,
        /// Waves of the delay in that time.
        waves: f64,
        /// The downstream delay.
        delay_ms: f64,
        /// Fewest slots that serve `ok` in `waves`.
        low: f64,
        /// Most slots that serve `ok` in `waves`.
        high: f64,
    },
    /// Failed requests at a step where errors did not decide the kind.
    Errors {
        /// The step.
        clients: u32,
        /// Its error share.
        error_rate: f64,
        /// Its failures by kind.
        errors: ErrorCounts,
    },
    /// Downstream calls per request above one: parallel or serial.
    FanOut {
        /// The step read.
        clients: u32,
        /// Downstream calls per target request.
        calls_per_request: f64,
        /// The step's mean successful latency.
        latency_ms: f64,
        /// The slowest call's delay.
        slowest_ms: f64,
        /// The calls' delays added up.
        serial_ms: f64,
        /// Which the latency is nearer.
        shape: FanOutShape,
    },
    /// The first step's clients ran unmeasured before it until the latency stopped falling.
    WarmedUp {
        /// The warm-up.
        warmup: crate::Warmup,
    },
    /// The URL's port was a forwarder's, followed to the process behind it; both observed.
    BehindForwarder {
        /// The forwarder and what it passed connections on to.
        forwarder: crate::Forwarder,
    },
    /// The sweep reached its largest allowed client count.
    MaxClientsReached {
        /// `--max-clients`.
        max_clients: u32,
    },
    /// The model that fits better, by RMS error of throughput.
    BetterModel {
        /// The model.
        model: Model,
        /// RMS error of the bounded-pool model, req/s.
        pool_rms_error_rps: f64,
        /// RMS error of the USL, req/s.
        usl_rms_error_rps: f64,
    },
    /// What overload did to the service past the knee (the steps from the knee on).
    Overload {
        /// The behaviour and its figures.
        overload: Overload,
    },
    /// Throughput peaks and falls: retrograde scaling.
    Retrograde {
        /// The peak step.
        peak_clients: u32,
        /// Its successful throughput.
        peak_rps: f64,
        /// The largest step.
        last_clients: u32,
        /// Its successful throughput.
        last_rps: f64,
    },
    /// The whole machine's CPU was saturated at the plateau and the target's CPU could not
    /// tell the limit apart (unknown, or below the generator's): the machine is the limit.
    MachineSaturated {
        /// The plateau steps.
        clients: Vec<u32>,
        /// The machine, percent of all cores (median; its contended share,
        /// `Step::machine_contended_cpu_pct`).
        machine_cpu_pct: f64,
        /// The target, percent of all cores; `None` when not observed.
        target_cpu_pct: Option<f64>,
        /// The generator, percent of all cores.
        generator_cpu_pct: f64,
        /// Everything else: machine − target − generator.
        others_pct: f64,
        /// The pool size the client side alone suggested.
        pool_size: Option<f64>,
    },
    /// Other processes than the target and the generator held the machine's CPU at the steps
    /// below the knee, with less than half a core left idle (a share of all cores that depends
    /// on their number): a plateau or stalls read from the client side may then be the CPU
    /// share the target was given, not a limit of its own. The finding names no limit; what the
    /// client side alone suggested is kept.
    MachineBusyBeforeLoad {
        /// The steps below the knee read.
        clients: Vec<u32>,
        /// The machine, percent of all cores (median over those steps; its contended share,
        /// `Step::machine_contended_cpu_pct`).
        machine_cpu_pct: f64,
        /// Everything but the target and the generator, percent of all cores (median).
        others_pct: f64,
        /// The kind the client side alone suggested (`blocking-pool`, `connection-limit`).
        suggested: Kind,
        /// Its size.
        suggested_limit: Option<f64>,
    },
    /// Past the peak, throughput fell at steps where processes other than the target and the
    /// generator held the machine (its cores all but half a core), while each request cost the
    /// target the CPU it did at the peak: the target served less because it was given less CPU,
    /// not because its requests got in each other's way. The fall is the machine's, so it names
    /// no contention.
    MachineTakenAtFall {
        /// The steps past the peak read (throughput fell there).
        clients: Vec<u32>,
        /// Everything but the target and the generator, percent of all cores (median over those
        /// steps).
        others_pct: f64,
        /// The peak's step.
        peak_clients: u32,
        /// Everything but the target and the generator at the peak, percent of all cores.
        peak_others_pct: f64,
        /// The target's CPU per successful request at the peak and at the largest step, ms.
        cpu_ms: (f64, f64),
        /// The kind the fall alone suggested (`contention`).
        suggested: Kind,
        /// Its size.
        suggested_limit: Option<f64>,
    },
    /// The target's threads (read from /proc) were on a CPU or waiting for one at the plateau,
    /// none of them waiting on the network: its own work, not a pool, stops it.
    ThreadsRunning {
        /// The plateau steps.
        clients: Vec<u32>,
        /// Threads running or runnable at once, mean over the samples (median over the steps).
        running: f64,
        /// All the target's threads (the most one sample saw).
        threads: f64,
    },
    /// From the knee on, some clients had not one request answered in the whole step (ramp
    /// and window) while the others were answered again and again: the target left their
    /// connections unserved (not accepted, or not read), so the plateau is a cap on the
    /// connections it serves, not a pool.
    ClientsUnanswered {
        /// The steps, from the knee on.
        clients: Vec<u32>,
        /// The clients without an answer at each.
        unanswered: Vec<u32>,
        /// Requests in service at once at each by Little's law (throughput × mean latency).
        in_service: Vec<f64>,
        /// How long they waited at least: the shortest step, ramp and window, seconds.
        waited_s: f64,
    },
    /// The target's threads (read from /proc) were on a CPU or waiting for one at the plateau,
    /// more of them than the cores it got, while the machine had cores idle for them: a
    /// runnable thread runs when a core is idle, so the two readings disagree and neither
    /// decided the kind.
    ThreadsRunningBesideIdleCores {
        /// The plateau steps.
        clients: Vec<u32>,
        /// Threads running or runnable at once, mean over the samples (median over the steps).
        running: f64,
        /// Cores the target got, target CPU × the machine's cores (median).
        cores_busy: f64,
        /// Cores the machine left idle (median).
        idle_cores: f64,
        /// The machine's cores.
        machine_cores: u32,
    },
    /// The target kept a whole number of cores busy at every step from the knee on (its CPU
    /// decided): CPU-bound on that many cores, whatever the mock saw.
    WholeCores {
        /// The steps from the knee on.
        clients: Vec<u32>,
        /// The whole number of cores.
        cores: u32,
        /// Cores busy, target CPU × the machine's cores (median over the steps).
        cores_busy: f64,
        /// The machine's cores.
        machine_cores: u32,
        /// The target's threads running or runnable at once (median), when /proc was read.
        threads_running: Option<f64>,
        /// The machine's CPU, percent of all cores (median; its contended share,
        /// `Step::machine_contended_cpu_pct`), when measured.
        machine_cpu_pct: Option<f64>,
        /// The mock's most calls in flight (median), when it saw the calls: a consequence.
        mock_max_in_flight: Option<f64>,
    },
    /// CPython's interpreter lock (the GIL) held the target: from the knee on, py-spy saw its
    /// threads queued for the lock at every step (back from a call, waiting to take it again)
    /// while the process used at most about one core. One thread runs Python at a time, so it
    /// is CPU-bound on one core whatever the machine has.
    InterpreterLock {
        /// The steps from the knee on.
        clients: Vec<u32>,
        /// Threads waiting for the lock at once (py-spy's mean per dump), the least over the
        /// steps.
        waiting: f64,
        /// Cores the target kept busy, target CPU × the machine's cores (median), when measured.
        cores_busy: Option<f64>,
        /// The machine's cores.
        machine_cores: u32,
        /// The mock's most calls in flight (median), when it saw the calls: a consequence.
        mock_max_in_flight: Option<f64>,
    },
    /// The target's threads (read from /proc) were running or runnable a whole number at once at
    /// every step from the knee on, none waiting on the network, while its CPU was a fraction
    /// of that many cores (a busy machine gave it less): CPU-bound on that many cores.
    WholeThreadsRunning {
        /// The steps from the knee on.
        clients: Vec<u32>,
        /// The whole number of threads, and of cores they want.
        cores: u32,
        /// Threads running or runnable at once (median over the steps).
        threads_running: f64,
        /// Cores the target got, target CPU × the machine's cores (median), when measured.
        cores_busy: Option<f64>,
        /// The machine's cores.
        machine_cores: u32,
        /// The machine's CPU, percent of all cores (median; its contended share,
        /// `Step::machine_contended_cpu_pct`), when measured.
        machine_cpu_pct: Option<f64>,
        /// The mock's most calls in flight (median), when it saw the calls: a consequence.
        mock_max_in_flight: Option<f64>,
    },
    /// A pool of the target's threads (read from /proc) waiting on the network at the plateau.
    PoolWaiting {
        /// The step.
        clients: u32,
        /// The pool's name.
        pool: String,
        /// Its threads (the most one sample saw).
        threads: f64,
        /// Its threads in a socket wait at once (the most one sample saw).
        socket_wait: f64,
        /// What most of them waited in (a system call), when known.
        waits_on: Option<String>,
        /// Its threads running, mean over the samples.
        mean_running: f64,
        /// Milliseconds between samples.
        interval_ms: u64,
    },
    /// A pool of the target's threads (read from /proc) that grew with the clients, about a
    /// thread per client in flight, past the point where throughput stopped following them:
    /// it starts a thread per blocked call instead of queueing.
    GrowingPool {
        /// The pool's name.
        pool: String,
        /// The steps, fewest clients first.
        clients: Vec<u32>,
        /// The pool's threads at each step (the most one sample saw).
        threads: Vec<f64>,
        /// The step where throughput stopped following clients.
        knee_clients: u32,
        /// From the knee on, the share of its threads running or waiting on the network or the
        /// disk (the median over those steps of the mean over the samples), not parked behind
        /// something else.
        busy_share: f64,
        /// The kind the plateau alone gave (what stops the pool's threads: the CPU, ...).
        instead_of: Kind,
    },
    /// A pool that gave each request a thread while what it worked on stayed held behind the
    /// finding's limit: it queued in threads, each waiting request holding one, where a bounded
    /// pool would queue them and hold none. The limit is still the finding's; this says the
    /// service puts no bound in front of it.
    PoolGrewInFront {
        /// The pool's name (from /proc).
        pool: String,
        /// The steps, fewest clients first.
        clients: Vec<u32>,
        /// The pool's threads at each step (the most one sample saw).
        threads: Vec<f64>,
        /// The step where throughput stopped following clients.
        knee_clients: u32,
        /// The mock's most calls at once at the largest step, when it counted them: held where
        /// the threads grew.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        calls_at_largest: Option<u64>,
        /// The pool the runtime's stacks name for the threads that grew, when `/proc` saw them
        /// only as the process (CPython names no OS thread: every one is `python3`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        named_in_stacks: Option<String>,
    },
    /// The target's connections to the mock, step by step (read from /proc).
    DownstreamConnections {
        /// The steps.
        clients: Vec<u32>,
        /// The mock's port.
        peer_port: u16,
        /// Established connections at each step (the most one sample saw).
        established: Vec<u32>,
        /// Of those, the ones the mock served (accepted, request read), at each step.
        served: Vec<u32>,
        /// The most the mock served at once over the sweep.
        most_served: u32,
        /// The mock's connection cap, when it has one.
        mock_cap: Option<u64>,
        /// The most in TIME_WAIT at once.
        time_wait: u32,
    },
    /// Where the limit sits, read from the evidence of the steps at or past the knee (the same
    /// record as `diagnosis.place`).
    Place {
        /// The place (boxed: it is the largest fact).
        place: Box<Place>,
    },
    /// The evidence of the steps at or past the knee pointed at no one place: what it saw.
    PlaceUnclear {
        /// The step read.
        clients: u32,
        /// The limit the pools were held against.
        limit: f64,
        /// Why no place was named.
        why: PlaceUnclearWhy,
        /// The pools that matched (two or more), or the nearest ones when none did.
        seen: Vec<PoolSeen>,
        /// The most connections to the downstream (the mock) at once at the steps read, when
        /// observed.
        downstream_connections: Option<u32>,
        /// The most calls the mock saw in flight at once at the steps read, when a mock was
        /// given. An exact count, where `downstream_connections` is the most of samples: past
        /// the limit, it says nothing in front of the downstream stopped at the limit.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        downstream_calls: Option<u32>,
        /// The runtime's tool whose stacks the steps read, when they were read: then they saw
        /// no pool held either (an event loop holds its calls without a thread each).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stacks: Option<crate::StackSource>,
        /// For `setting-disagrees`: the pool's setting, with the size its processes state.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        setting: Option<Box<crate::Setting>>,
    },
}

/// The plateau a limit stands on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plateau {
    /// Its throughput, per second (median of its steps).
    pub throughput_rps: f64,
    /// The first client count on it.
    pub from_clients: u32,
    /// The steps on it.
    pub clients: Vec<u32>,
}

/// A span of time within a step's measured window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Span {
    /// Its start, seconds since the window began.
    pub start_s: f64,
    /// Its length, seconds.
    pub length_s: f64,
}

/// What the time a request holds its slot is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Service {
    /// The known downstream delay (one downstream call per request).
    DownstreamCall,
    /// The base latency: the whole request.
    Request,
}

/// How the mock's most calls in flight read against Little's law.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CeilingReading {
    /// Within 15% of Little's estimate: the ceiling is the limit.
    Agrees,
    /// The very same ceiling at every plateau step, above Little's estimate by at most 1.5×: the
    /// pool, with slots left idle.
    SameAtEveryStep,
    /// The very same ceiling at every plateau step with its slots busy most of the time (the
    /// mock's mean at least 1/1.5 of it), below Little's estimate over the whole request: the
    /// pool, and each request spends part of its time outside its slot.
    FullAtEveryStep,
    /// Neither: Little's law sizes the limit.
    Disagrees,
}

/// How the ceiling (the mock's most calls in flight; without them, the finding's limit) reads
/// against the HTTP/2 streams the target's connections allow ([`Fact::StreamCap`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StreamCapReading {
    /// The same ceiling at every step, equal to connections × cap and to the finding's limit:
    /// the calls in flight stopped at the streams the connections allow.
    AtCap,
    /// The ceiling stayed below connections × cap: something in front of the connections let
    /// fewer calls out (a pool, a semaphore); the cap was not met.
    BelowCap,
    /// More calls in flight than the HTTP/2 streams allow: some came another way (HTTP/1.1, or
    /// connections the count missed).
    AboveCap,
    /// The ceiling moved from step to step: no one count held the calls.
    CeilingMoved,
    /// The target's HTTP/2 connections changed in number, or new ones were opened, during the
    /// steps: no one count of streams held.
    ConnectionsChanged,
    /// The ceiling was connections × cap, but the finding's limit is another number: the cap was
    /// met and something else sized the plateau.
    NotTheLimit,
}

/// Parallel or serial downstream calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FanOutShape {
    /// The latency is nearer the slowest call.
    Parallel,
    /// The latency is nearer the sum of the calls.
    Serial,
}

impl FanOutShape {
    /// `parallel` or `serial`, as in `diagnosis.fan_out`.
    pub fn as_str(self) -> &'static str {
        match self {
            FanOutShape::Parallel => "parallel",
            FanOutShape::Serial => "serial",
        }
    }
}

/// A scalability model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Model {
    /// The bounded pool, X(N) = min(N / L0, plateau).
    BoundedPool,
    /// The Universal Scalability Law.
    Usl,
}

impl Model {
    /// `bounded-pool` or `usl`, as in `diagnosis.better_model`.
    pub fn as_str(self) -> &'static str {
        match self {
            Model::BoundedPool => "bounded-pool",
            Model::Usl => "usl",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_are_tagged_by_kind_in_json() {
        let fact = Fact::Little {
            clients: vec![20, 40],
            throughput_rps: 19.7,
            service_ms: 1000.0,
            service: Service::DownstreamCall,
            in_service: 19.7,
        };
        let json = serde_json::to_value(&fact).unwrap();
        assert_eq!(json["kind"], "little");
        assert_eq!(json["service"], "downstream-call");
        assert_eq!(json["clients"], serde_json::json!([20, 40]));
        assert_eq!(serde_json::from_value::<Fact>(json).unwrap(), fact);
        assert_eq!(
            serde_json::to_value(CeilingReading::SameAtEveryStep).unwrap(),
            "same-at-every-step"
        );
        assert_eq!(
            serde_json::to_value(Fact::NoMock).unwrap(),
            serde_json::json!({"kind": "no-mock"})
        );
    }
}

/// Where a service that stopped answering had its threads: the place of the runtime's stacks
/// with the most threads that were not idle, at the first step that completed nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stuck {
    /// The tool that took the stacks.
    pub source: Option<StackSource>,
    /// The pool.
    pub pool: String,
    /// Its threads there (mean per snapshot).
    pub threads: f64,
    /// What they waited for.
    pub waiting: Option<WaitKind>,
    /// The frames that say where, innermost first.
    pub frames: Vec<String>,
}
