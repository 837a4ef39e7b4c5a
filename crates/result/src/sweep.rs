//! A sweep: its steps ([`Step`], each a load run plus what was seen around it), what the diagnosis
//! knew besides them ([`SweepContext`]), and the saved `result.json` ([`SweepResult`]).
use crate::{
    Connections, CpuQuota, Diagnosis, DownstreamInFlight, DownstreamStep, LoadReport, MergeInfo,
    ObservationNote, ShardInfo, StackEvidence, ThreadsByPool,
};
use serde::{Deserialize, Serialize};

/// One concurrency level of a sweep: the contract's step record.
///
/// A step is its load run's [`LoadReport`] (flattened into the step's JSON object, so a step
/// carries every figure of `load --json` under the same names) plus what was seen around it: the
/// mock, the target's and the machine's CPU, the ramp. It derefs to the report, so a step's
/// figures read as `step.throughput_rps`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The step's load run (clients, throughput, latency, errors, generator CPU, timeline...).
    #[serde(flatten)]
    pub load: LoadReport,
    /// Failed requests as a share of all requests ([`LoadReport::error_rate`]).
    pub error_rate: f64,
    /// Calls in flight at the mock; `None` when no mock was given.
    pub downstream_inflight: Option<DownstreamInFlight>,
    /// More of what the mock saw; `None` when no mock was given.
    pub downstream: Option<DownstreamStep>,
    /// The target process's CPU use, percent of all cores; `None` when it was not observed.
    pub target_cpu_pct: Option<f64>,
    /// The whole machine's CPU use (every process), percent of all cores; `None` when unread.
    #[serde(default)]
    pub machine_cpu_pct: Option<f64>,
    /// Of `machine_cpu_pct`, the work of processes at a positive nice value (`/proc/stat`'s
    /// `nice` column) in the target's own scheduling group, which gives its cores to the target
    /// (see [`Step::machine_contended_cpu_pct`]); 0 when none ran. `None` when unread, or when
    /// niced work ran that cannot be counted so (the target or chokepoint niced, the target
    /// unobserved, niced work in another CPU cgroup or autogroup).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_niced_cpu_pct: Option<f64>,
    /// The processes observed as the target during the step (a PID and its descendants, listed
    /// again at every sample); empty when the target was not observed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observed_pids: Vec<i32>,
    /// The target's threads by pool and state; `None` when the target was not observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_by_pool: Option<ThreadsByPool>,
    /// The target's TCP connections by side and state; `None` when the target was not observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<Connections>,
    /// The CPU quota of the target's control group and its throttling during the step; `None`
    /// when the target was not observed or its group has no quota.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_quota: Option<CpuQuota>,
    /// What the target's runtime said its threads were doing (thread dumps, a recording,
    /// py-spy, pprof); `None` without such a tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stacks: Option<StackEvidence>,
    /// Why some of that evidence is missing (a process gone, a file unreadable).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observation_notes: Vec<ObservationNote>,
    /// Seconds spent in the ramp (until every client had completed a request), not counted.
    pub ramp_s: f64,
    /// Why the sweep ran this client count; `None` in results written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen_because: Option<StepChoice>,
    /// Seconds of load the step cost: its ramp plus its measured window (`duration_s`), which is
    /// shorter than `--step` when the step ended early because its figures were known well
    /// enough.
    #[serde(default)]
    pub measured_s: f64,
    /// Why the measured window ended: `settled` (known well enough), `ceiling` (`--step` ran
    /// out), `fixed` (`--step-fixed`); `None` in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<StepEnd>,
}

impl std::ops::Deref for Step {
    type Target = LoadReport;

    fn deref(&self) -> &LoadReport {
        &self.load
    }
}

impl std::ops::DerefMut for Step {
    fn deref_mut(&mut self) -> &mut LoadReport {
        &mut self.load
    }
}

impl Step {
    /// The machine's CPU that competed with the target's, percent of all cores: its busy share
    /// less the work of processes at a positive nice value. Linux's fair scheduler weighs a
    /// runnable task by its nice value (`sched_prio_to_weight` in `kernel/sched/core.c`: 1024 at
    /// nice 0, 110 at nice 10, the `nice` command's default, 15 at nice 19), so niced work gets
    /// a tenth of a core or less against each of the target's runnable threads and leaves it
    /// the rest: a niced build beside a sweep does not hold the target back. Work at nice 1 to
    /// 9 yields less (820 at nice 1) and is counted as yielding all the same: `/proc/stat`
    /// lumps every positive nice value together. The whole busy share when the niced share is
    /// unknown.
    pub fn machine_contended_cpu_pct(&self) -> Option<f64> {
        self.machine_cpu_pct
            .map(|busy| (busy - self.machine_niced_cpu_pct.unwrap_or(0.0)).max(0.0))
    }
}

/// Why a sweep ran a client count: the adaptive search's reason, as data.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum StepChoice {
    /// The client count was given with `--clients`.
    Given,
    /// The first step of a search.
    Start,
    /// Throughput still followed clients at the largest step: doubled (or grown four-fold).
    Doubling {
        /// The largest step so far.
        from: u32,
        /// How many times `from` the new count is: 2, or 4 when the largest step kept the base
        /// latency within 5%. Absent in older results (2).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        times: Option<u32>,
    },
    /// Bisection between the last step that followed clients and the first that did not.
    Narrowing {
        /// The last client count whose throughput followed clients.
        last_good: u32,
        /// The first client count whose throughput did not.
        first_bad: u32,
    },
    /// The mock saw a flat ceiling of calls in flight below the clients: one step just past it
    /// confirms it, instead of narrowing down on the knee.
    ConfirmCeiling {
        /// The mock's most calls in flight.
        in_flight: u32,
        /// The step that showed it.
        seen_at: u32,
    },
    /// The target kept a whole number of cores busy past the knee: one step past it confirms it.
    ConfirmCores {
        /// Cores the target kept busy.
        cores: f64,
        /// The step that showed it.
        seen_at: u32,
    },
    /// One step well past the knee, to see the plateau hold.
    ConfirmPlateau {
        /// The size the plateau suggests (plateau throughput × base latency).
        estimate: f64,
    },
    /// The knee is known: a step at a multiple of the estimated limit, to see what overload
    /// does to the service (it queues, sheds, times out or collapses).
    OverloadProbe {
        /// The multiple of the estimate (2 or 4).
        multiple: u32,
        /// The estimated limit, in requests in service.
        estimate: f64,
    },
    /// Doubling would overshoot `--max-clients`: the last step is at the maximum.
    MaxClients,
}

/// Why a step's measured window ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepEnd {
    /// Its throughput was known within the stopping rule's interval.
    Settled,
    /// `--step`, the ceiling, ran out first.
    Ceiling,
    /// Fixed-length steps (`--step-fixed`).
    Fixed,
}

/// What the diagnosis knows besides the steps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SweepContext {
    /// The mock's global fixed delay, in milliseconds, when a mock was given and has one.
    pub downstream_delay_ms: Option<f64>,
    /// Whether a mock was given (downstream evidence exists).
    pub mock_present: bool,
    /// The mock's `--max-connections`, if any.
    pub mock_max_connections: Option<u64>,
    /// The mock's `--keepalive-timeout`, in milliseconds, if any.
    pub mock_keepalive_timeout_ms: Option<u64>,
    /// Whether the target process was observed (so `target_cpu_pct` is meaningful).
    pub target_observed: bool,
    /// The largest client count the sweep was allowed to try.
    pub max_clients: u32,
    /// Cores of the machine the target ran on (what `target_cpu_pct` is a share of), if known.
    #[serde(default)]
    pub cores: Option<u32>,
    /// Files the target's processes had mapped or open when the sweep ended (`/proc/PID/maps`,
    /// `/proc/PID/fd`) that the catalogue names as a client library's (a jar, a C extension):
    /// which client holds the connections a place counts. Empty when none or not observed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_libraries: Vec<String>,
    /// Values the target's processes were started with that size a pool the catalogue knows
    /// (`--workers 2`, `UV_THREADPOOL_SIZE=8`), read once as the sweep ends: only the names the
    /// catalogue reads, only whole numbers. Empty when none or not observed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stated: Vec<crate::Stated>,
    /// The caps on upstream servers of the target's proxies (HAProxy's `maxconn`, nginx's
    /// `max_conns=`), read from the configuration their command line names as the sweep ends.
    /// Empty when none or not observed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub upstream_caps: Vec<crate::UpstreamCap>,
    /// The caps on the client connections the target's proxies accept on a port (HAProxy's
    /// frontend `maxconn`), read from the configuration their command line names as the sweep
    /// ends. Empty when none or not observed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub front_caps: Vec<crate::FrontCap>,
    /// The accept queue of the target's listener on the swept port (its `listen()` backlog),
    /// read as the sweep ends; `None` when not found or not observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listen_queue: Option<crate::ListenQueue>,
    /// The warm-up check: whether the first step found the service warm, and when it did not,
    /// the unmeasured run until its latency stopped falling (a JIT, caches, pools started on
    /// demand); `None` when there was none (`--warmup 0`, shards on a schedule, an older result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<Warmup>,
    /// The observer beside the target that saw it (`sweep --observer URL`): its URL. `None` when
    /// the target was read from this machine's `/proc` (or not observed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observer: Option<String>,
    /// A forwarder on the URL's port (docker-proxy, socat, nginx...) and the process behind it,
    /// both observed as the target (`--pid auto`); `None` when the port's process serves itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forwarder: Option<Forwarder>,
    /// The downstream peers the sweep asked for their HTTP/2 SETTINGS after the steps, because
    /// the target kept fewer connections to them than the calls it had in flight (see
    /// DESIGN.md, "A stream cap"). Empty when none was asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub h2_peers: Vec<H2Peer>,
}

/// A downstream peer asked for its HTTP/2 SETTINGS: one connection, the client preface and an
/// empty SETTINGS, its first SETTINGS read, then GOAWAY.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct H2Peer {
    /// Its address, as the target's connections to it show it.
    pub addr: std::net::SocketAddr,
    /// The program listening there (its `comm`), when it runs on this machine and is readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// What it answered.
    pub answer: H2Answer,
}

/// What a peer asked for its HTTP/2 SETTINGS answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum H2Answer {
    /// It spoke HTTP/2: its SETTINGS_MAX_CONCURRENT_STREAMS (`None`: it set none, unlimited
    /// by RFC 9113 §6.5.2).
    Settings {
        /// The streams it allows on each connection.
        max_concurrent_streams: Option<u64>,
    },
    /// It did not answer as an HTTP/2 server with prior knowledge (h2c) in time: why.
    NotH2 {
        /// The error, or the timeout.
        why: String,
    },
}

impl H2Peer {
    /// The streams it allows on each connection, when it answered with a cap.
    pub fn stream_cap(&self) -> Option<u64> {
        match self.answer {
            H2Answer::Settings {
                max_concurrent_streams,
            } => max_concurrent_streams,
            H2Answer::NotH2 { .. } => None,
        }
    }
}

/// A forwarder on the URL's port, followed to the process it passes connections on to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Forwarder {
    /// The forwarder's program (`socat`, `docker-proxy`, `nginx`).
    pub name: String,
    /// Its process.
    pub pid: i32,
    /// The port of this machine it passed connections on to; absent when that was a unix
    /// socket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_port: Option<u16>,
    /// The unix socket it passed connections on to (nginx → PHP-FPM or gunicorn on a socket),
    /// by its path; absent for a port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_path: Option<String>,
    /// The address it passed connections on to (`10.201.7.2:8000`), when that was in another
    /// network namespace of this machine (a container on docker's bridge); `to_port` is its
    /// port. Absent for a port or a unix socket of the forwarder's own namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_address: Option<String>,
    /// The program listening there, which serves.
    pub served_name: String,
    /// Its processes (the topmost).
    pub served_pids: Vec<i32>,
}

impl Forwarder {
    /// Where it passed connections on, in words (the finding's and the command line's):
    /// `port 9000`, `the unix socket /run/php/php-fpm.sock`,
    /// `172.17.0.2:80 in another network namespace`.
    pub fn hop(&self) -> String {
        match (&self.to_path, &self.to_address, self.to_port) {
            (Some(path), _, _) => format!("the unix socket {path}"),
            (None, Some(address), _) => format!("{address} in another network namespace"),
            (None, None, Some(port)) => format!("port {port}"),
            (None, None, None) => "another process".to_string(),
        }
    }
}

/// The warm-up check of the first step (`chokepoint_diagnose::warmup`): the first step's own
/// latency read while it ran; when it was still falling, the step thrown away and its clients run
/// unmeasured until the mean latency stopped falling, or the time limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Warmup {
    /// The clients it ran (the first step's).
    pub clients: u32,
    /// How long the service ran unmeasured, seconds: the thrown-away first step and the warm-up
    /// after it; 0 when the first step stood.
    pub seconds: f64,
    /// Mean latency over its first second, ms.
    pub first_ms: f64,
    /// Mean latency over its last second, ms.
    pub last_ms: f64,
    /// True when the latency stopped falling; false when the time limit came first (the
    /// service may still be warming up in the first steps).
    pub settled: bool,
    /// True when the first step found the service warm and stood: no time ran unmeasured, and
    /// `first_ms`/`last_ms` are the first step's. False in results from before this field.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_first_step: bool,
}

/// A sweep's saved result: `DIR/result.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepResult {
    /// The URL that was swept.
    pub target: String,
    /// What the diagnosis knew besides the steps.
    pub context: SweepContext,
    /// The steps in the order they ran.
    pub steps: Vec<Step>,
    /// The finding; `None` while the sweep runs (steps are saved as they end).
    pub diagnosis: Option<Diagnosis>,
    /// True when the sweep was interrupted before its planned end.
    pub interrupted: bool,
    /// The chokepoint version that wrote this file.
    pub chokepoint_version: String,
    /// Set when this is one shard of a sweep run by several generators.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// Set when this result was merged from shards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge: Option<MergeInfo>,
    /// Wall time of the whole sweep, seconds: steps, ramps, drains between steps.
    #[serde(default)]
    pub duration_s: f64,
    /// Seconds of load over all steps (the sum of their `measured_s`).
    #[serde(default)]
    pub load_s: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TimelinePoint;
    #[test]
    fn a_last_bucket_cut_short_by_the_window_is_left_out_of_the_whole_timeline() {
        let point = |t_s: f64| TimelinePoint {
            t_s,
            completed: 2,
            ..TimelinePoint::default()
        };
        let step = |duration_s: f64| Step {
            load: LoadReport {
                duration_s,
                timeline_bucket_s: 0.1,
                timeline: vec![point(0.0), point(0.1), point(0.2)],
                ..LoadReport::default()
            },
            ..Step::default()
        };
        assert_eq!(step(0.2009).whole_timeline().len(), 2);
        assert_eq!(step(0.27).whole_timeline().len(), 3);
    }

    #[test]
    fn a_forwarder_to_a_port_keeps_its_json_and_one_to_a_socket_or_a_container_says_where() {
        let to_port = Forwarder {
            name: "socat".into(),
            pid: 812,
            to_port: Some(9000),
            to_path: None,
            to_address: None,
            served_name: "python3".into(),
            served_pids: vec![813],
        };
        let json = serde_json::to_value(&to_port).unwrap();
        assert_eq!(json["to_port"], 9000);
        assert!(json.get("to_path").is_none());
        assert!(json.get("to_address").is_none());
        assert_eq!(to_port.hop(), "port 9000");
        let to_socket = Forwarder {
            to_port: None,
            to_path: Some("/run/php/php-fpm.sock".into()),
            ..to_port
        };
        let json = serde_json::to_value(&to_socket).unwrap();
        assert!(json.get("to_port").is_none());
        assert_eq!(
            serde_json::from_value::<Forwarder>(json).unwrap(),
            to_socket
        );
        assert_eq!(to_socket.hop(), "the unix socket /run/php/php-fpm.sock");
        let to_a_container = Forwarder {
            name: "docker-proxy".into(),
            to_address: Some("172.17.0.2:80".into()),
            to_port: Some(80),
            to_path: None,
            ..to_socket
        };
        let json = serde_json::to_value(&to_a_container).unwrap();
        assert_eq!(json["to_port"], 80);
        assert_eq!(json["to_address"], "172.17.0.2:80");
        assert_eq!(
            to_a_container.hop(),
            "172.17.0.2:80 in another network namespace"
        );
    }

    /// The keys a step had before it held its load report (the contract's and the added ones).
    const STEP_KEYS_BEFORE_FLATTEN: [&str; 19] = [
        "clients",
        "throughput_rps",
        "ok_throughput_rps",
        "requests",
        "ok",
        "latency_ms",
        "ok_latency_ms",
        "error_latency_ms",
        "errors",
        "error_rate",
        "downstream_inflight",
        "downstream",
        "target_cpu_pct",
        "generator_cpu_pct",
        "machine_cpu_pct",
        "duration_s",
        "ramp_s",
        "timeline_bucket_s",
        "timeline",
    ];

    #[test]
    fn a_step_keeps_every_key_it_had_and_reads_a_recorded_step_back_unchanged() {
        let json = serde_json::to_value(Step::default()).unwrap();
        let keys = json.as_object().unwrap();
        for key in STEP_KEYS_BEFORE_FLATTEN {
            assert!(keys.contains_key(key), "the step lost '{key}'");
        }
        // A step as a sweep wrote it before: every value it had reads back the same.
        let recorded = serde_json::json!({
            "clients": 20, "throughput_rps": 19.7, "ok_throughput_rps": 19.5, "requests": 197,
            "ok": 195, "latency_ms": {"min": 1.0, "mean": 2.0, "p50": 2.0, "p90": 3.0,
            "p95": 3.0, "p99": 4.0, "p999": 5.0, "max": 6.0}, "ok_latency_ms": null,
            "error_latency_ms": null, "errors": {"http_503": 2}, "error_rate": 0.01,
            "downstream_inflight": {"mean": 19.8, "max": 20}, "downstream": null,
            "target_cpu_pct": 3.5, "generator_cpu_pct": 1.5, "duration_s": 10.0,
            "ramp_s": 1.0, "timeline_bucket_s": 0.1, "timeline": []
        });
        let step: Step = serde_json::from_value(recorded.clone()).unwrap();
        assert_eq!(
            (step.clients, step.requests, step.errors["http_503"]),
            (20, 197, 2)
        );
        let written = serde_json::to_value(&step).unwrap();
        for (key, value) in recorded.as_object().unwrap() {
            if key == "latency_ms" {
                continue; // written with ab's extra percentiles beside the recorded ones
            }
            assert_eq!(&written[key], value, "'{key}' changed");
        }
    }
}
