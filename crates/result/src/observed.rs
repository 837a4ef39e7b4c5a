//! What chokepoint saw of the target through `/proc` during one step: which processes, their
//! threads by pool and what they waited on, their TCP connections. Sampled (every
//! `interval_ms`), so counts are what the samples saw: `most` is the largest count one sample
//! saw, `mean` the average over the samples.
use serde::{Deserialize, Serialize};

/// The target's threads during a step, grouped into pools by name (`actor-pool-7` →
/// `actor-pool`; Linux keeps the first 15 bytes of a thread's name).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadsByPool {
    /// Milliseconds between samples.
    pub interval_ms: u64,
    /// Samples taken during the step.
    pub samples: u32,
    /// One entry per pool, the largest first.
    pub pools: Vec<PoolThreads>,
}

/// One pool's threads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PoolThreads {
    /// The pool: the thread name without its counter.
    pub pool: String,
    /// The largest count one sample saw, per state.
    pub most: ThreadCounts,
    /// The mean count over the samples, per state.
    pub mean: ThreadCounts,
    /// What the waiting threads waited on (a system call, or the kernel's `wchan` when the
    /// system call cannot be read), with the mean count of threads in it, most first.
    pub waits_on: Vec<WaitReason>,
    /// The most of the pool's threads one sample saw that were their process's main thread: a
    /// pre-fork server's workers and master each are, a thread pool's workers never are.
    /// `None` in steps recorded before it was counted (issue 22).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_threads: Option<f64>,
}

/// Threads by what they were doing when sampled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadCounts {
    /// All threads of the pool.
    pub threads: f64,
    /// On a CPU or ready to run.
    pub running: f64,
    /// Waiting on the network: a read or receive on a socket, or `poll`/`select` on a few
    /// descriptors (how a JVM's blocking socket read with a timeout waits).
    pub socket_wait: f64,
    /// Parked in `futex`: waiting for a lock, a condition or a queue.
    pub lock_wait: f64,
    /// An idle event loop (`epoll_wait`, `io_uring_enter`).
    pub event_wait: f64,
    /// Sleeping on a timer, waiting in `accept`, or reading a connection a client opened to the
    /// target (idle until its next request; from issue 22, a socket wait before).
    pub sleeping: f64,
    /// In uninterruptible (disk) wait.
    pub disk_wait: f64,
    /// Waiting in anything else.
    pub other: f64,
}

/// One thing threads waited on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WaitReason {
    /// A system call (`futex`, `poll`, `recvfrom`, ...) or `wchan:NAME`.
    pub on: String,
    /// Mean number of the pool's threads waiting in it.
    pub mean: f64,
}

/// The target's TCP connections during a step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Connections {
    /// Milliseconds between samples.
    pub interval_ms: u64,
    /// Samples taken during the step.
    pub samples: u32,
    /// The port the target listens on (the swept URL's).
    pub listen_port: Option<u16>,
    /// The client side: connections on the listening port.
    pub client_side: ConnectionCounts,
    /// The downstream side: the target's own outgoing connections, by the peer's address, the
    /// most connections first (the mock's port always kept).
    pub downstream: Vec<PeerConnections>,
    /// Handshakes the kernel dropped during the step because a listen queue was full (`TcpExt
    /// ListenOverflows` of the target's network namespace, read at the step's start and end):
    /// the namespace's count, every listening socket's in it. `None` when unreadable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listen_overflows: Option<u64>,
    /// Mean over the samples of the clients' connections to the listening port, from this
    /// network namespace (the load generator's, beside the target), established at the client's
    /// end with no socket at the target's: the handshake's last step was dropped with the
    /// listen queue full. 0 when the clients are elsewhere.
    #[serde(default)]
    pub half_open_clients: f64,
}

impl Connections {
    /// The connections to the sweep's mock, when the target held any.
    pub fn to_mock(&self) -> Option<&PeerConnections> {
        self.downstream.iter().find(|peer| peer.mock)
    }
}

/// Connections to one peer address.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PeerConnections {
    /// The peer's port.
    pub peer_port: u16,
    /// The peer's address (ip:port); `None` for the mock's entry kept when the target held no
    /// connection to it, and in results from before addresses were recorded (grouped by port).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_addr: Option<std::net::SocketAddr>,
    /// Whether the peer is the sweep's mock.
    pub mock: bool,
    /// The counts.
    pub counts: ConnectionCounts,
}

/// TCP sockets by state: the most one sample saw, and the mean established.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ConnectionCounts {
    /// The most sockets one sample saw, per state.
    pub most: SocketCounts,
    /// Mean established connections over the samples.
    pub mean_established: f64,
    /// The most established connections the peer had accepted, in one sample
    /// (`established - unserved`): what a peer that caps its connections served at once. On
    /// the client side, the most connections the target had accepted at once.
    #[serde(default)]
    pub most_served: u32,
    /// Mean `unserved` over the samples. On the client side: connections established by the
    /// kernel and waiting in the target's listen queue, not yet accepted.
    #[serde(default)]
    pub mean_unserved: f64,
    /// The median over the samples of the established connections served (`established -
    /// unserved`): what a cap held most of the time. A sample reads the kernel's table bucket
    /// by bucket, not at one instant, so with a connection opened per request it now and then
    /// counts a closing connection and its successor together, and the most overstates a cap
    /// (9 for Undertow's high water of 8). `None` in steps recorded before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_served: Option<f64>,
}

/// TCP sockets by state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SocketCounts {
    /// ESTABLISHED.
    pub established: u32,
    /// TIME_WAIT. These belong to no process any more: they are counted by address (the
    /// listening port, or the peer's port), so another process's sockets to the same port count.
    pub time_wait: u32,
    /// CLOSE_WAIT: the peer closed, the target has not.
    pub close_wait: u32,
    /// Any other state (SYN_SENT, FIN_WAIT, ...).
    pub other: u32,
    /// Of the established ones, those the peer (on this machine) was not serving: not accepted
    /// yet, or with the request unread at its end. `established - unserved` is what it served.
    /// On the client side: those the target had not accepted yet (in its listen queue).
    #[serde(default)]
    pub unserved: u32,
}

/// Why some evidence of a step is missing; the sweep went on without it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "note", rename_all = "kebab-case")]
pub enum ObservationNote {
    /// The process did not exist when the step began, or ended during it.
    ProcessGone {
        /// The process id.
        pid: i32,
    },
    /// Part of `/proc` for the process could not be read (permissions).
    Unreadable {
        /// The process id.
        pid: i32,
        /// What could not be read, and why.
        what: String,
    },
    /// A runtime's stack tool (`jcmd`, `jfr`, `py-spy`) is not on the PATH.
    ToolMissing {
        /// The tool.
        tool: String,
        /// How to get it.
        install: String,
    },
    /// A stack tool ran but gave nothing usable (it failed, or did not answer in time).
    ToolFailed {
        /// The tool.
        tool: String,
        /// What happened.
        why: String,
    },
    /// The observer beside the target (`sweep --observer URL`) did not answer, or failed.
    ObserverFailed {
        /// The observer's URL.
        observer: String,
        /// What happened.
        why: String,
    },
}

impl std::fmt::Display for ObservationNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ObservationNote::ProcessGone { pid } => {
                write!(
                    f,
                    "process {pid} was gone during the step: its evidence is missing"
                )
            }
            ObservationNote::Unreadable { pid, what } => {
                write!(
                    f,
                    "process {pid}: {what} could not be read: that evidence is missing"
                )
            }
            ObservationNote::ToolMissing { tool, install } => {
                write!(
                    f,
                    "{tool} is not on the PATH: no stacks from it ({install})"
                )
            }
            ObservationNote::ToolFailed { tool, why } => {
                write!(f, "{tool} gave no stacks: {why}")
            }
            ObservationNote::ObserverFailed { observer, why } => {
                write!(
                    f,
                    "the observer at {observer} failed: {why}: the target's evidence is missing"
                )
            }
        }
    }
}

/// The CFS quota of the target's control group and how often it throttled the target during a
/// step: a container's `--cpus`, a pod's `resources.limits.cpu`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuQuota {
    /// Cores the quota allows (quota / period), the smallest along the group's path.
    pub cores: f64,
    /// The CFS period, microseconds.
    pub period_us: u64,
    /// The group whose quota it is, as the kernel names it (`/docker/0f1e…`, `/kubepods/…`).
    pub group: String,
    /// `1` or `2`: the cgroup version it was read from.
    pub version: u8,
    /// CFS periods that ran during the step.
    pub periods: u64,
    /// Of those, the periods the group was throttled in (it used up its quota early).
    pub throttled_periods: u64,
    /// Time the group's threads were held back by throttling during the step, seconds.
    pub throttled_s: f64,
    /// The core count the target's runtime sized itself for, when it could be read (a JVM's,
    /// a Go program's GOMAXPROCS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_cores: Option<RuntimeCores>,
}

/// The core count a runtime saw and sized its own threads for: a JVM's GC, compiler and
/// common-pool threads, Go's GOMAXPROCS (the goroutines that run at once).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuntimeCores {
    /// Which runtime.
    pub runtime: Runtime,
    /// The count.
    pub cores: u32,
    /// Where it was read, or how it was derived.
    pub source: RuntimeCoresSource,
}

impl RuntimeCores {
    /// Whether the runtime sized itself for more than a quota of `quota_cores` lets it run: more
    /// than the quota rounded up (a runtime counts whole cores; one sized at the quota rounded
    /// up did what it could). Threads beyond it take turns at the quota, each period used up
    /// early and the rest of it waited out throttled.
    pub fn exceeds(&self, quota_cores: f64) -> bool {
        f64::from(self.cores) > quota_cores.ceil()
    }
}

/// A runtime that sizes itself from the core count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Runtime {
    /// A HotSpot JVM.
    Jvm,
    /// A Go program.
    Go,
}

/// Where a [`RuntimeCores`] count comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "from")]
pub enum RuntimeCoresSource {
    /// `jcmd PID VM.info`'s `CPU: total N (initial active M)`: the JVM's active processor
    /// count at its start, what `availableProcessors()` returned as it sized its threads.
    JcmdVmInfo,
    /// `GOMAXPROCS` in the process's environment (`/proc/PID/environ`).
    GomaxprocsEnv,
    /// Go's default for the toolchain that built the binary (its build info): the CPUs it may
    /// run on, and from Go 1.25 (unless `containermaxprocs=0`) at most the quota rounded up,
    /// 2 at least.
    GoDefault {
        /// The toolchain, `go1.24.3`.
        version: String,
        /// Whether that default follows the cgroup's quota.
        follows_quota: bool,
    },
}

impl CpuQuota {
    /// The share of the step's periods the group was throttled in (0 without periods).
    pub fn throttled_share(&self) -> f64 {
        if self.periods == 0 {
            0.0
        } else {
            self.throttled_periods as f64 / self.periods as f64
        }
    }
}
