//! Where in the target the limit sits (`diagnosis.place` in `result.json`): the pool, what its
//! threads wait in, the setting that sizes it. The diagnosis fills it from the step's evidence
//! (`/proc`, connections, the runtime's stacks) when that evidence points at one place; the
//! describer renders it as the finding's first line of evidence and the one-line `attribution`.
use crate::{SharedStack, StackSource, WaitKind};
use serde::{Deserialize, Serialize};

/// What kind of place holds the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlaceKind {
    /// A fixed pool of threads (or processes, or goroutines behind a semaphore) held while they
    /// wait.
    ThreadPool,
    /// A pool of connections to a downstream: never more than N open.
    ConnectionPool,
    /// A lock or a semaphore inside a larger pool: so many of its threads hold it while they
    /// wait on the downstream, the others wait for it.
    Semaphore,
    /// A pool that starts a thread per blocked call instead of queueing.
    GrowingPool,
    /// The CPU, with the busiest pool named.
    Cpu,
    /// The HTTP/2 streams a downstream allows on the connections the target keeps to it
    /// (connections × SETTINGS_MAX_CONCURRENT_STREAMS): past them, calls queue inside the
    /// target's client.
    StreamCap,
    /// A cap on the client connections the target accepts (HAProxy's frontend `maxconn`, Go's
    /// `netutil.LimitListener`), or an accept loop that stops keeping up: past it, new
    /// connections wait unaccepted in the listen queue (or are dropped with it full), their
    /// clients unanswered.
    AcceptCap,
}

/// Where a place was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlaceSource {
    /// Threads by name and state in `/proc`.
    Proc,
    /// The target's TCP connections.
    Connections,
    /// The runtime's stacks (the tool is named).
    Stacks(StackSource),
    /// The mock's counts: calls in flight, HTTP/2 connections and streams on each.
    Mock,
    /// A proxy's configuration (`haproxy.cfg`, `nginx.conf`): its cap on the upstream the
    /// target's connections went to.
    Config,
    /// The target's connections to a downstream peer (`/proc`) and the HTTP/2 SETTINGS that
    /// peer sent when the sweep asked it: a stream cap held by a peer the mock cannot see (a
    /// proxy in front of it).
    PeerSettings,
}

/// The limit's place in the target.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Place {
    /// What kind of place.
    pub kind: Option<PlaceKind>,
    /// The pool's name (threads without their counter, a process name, `goroutines`).
    pub pool: Option<String>,
    /// The pool's threads (or processes, or connections) at the step read.
    pub size: Option<f64>,
    /// Of those, how many were in the place (`frames`), at the step read.
    pub held: Option<f64>,
    /// What the held threads were doing.
    pub waiting: Option<WaitKind>,
    /// The frames they shared, innermost first (empty without stacks).
    pub frames: Vec<String>,
    /// The step the place was read from.
    pub clients: u32,
    /// Where it was read from.
    pub source: Option<PlaceSource>,
    /// The known setting behind it, when the pool matches the catalogue and the pool's size
    /// is what stops at the limit.
    pub setting: Option<Setting>,
    /// The catalogue's setting of the pool the held threads belong to, when it is not the knob:
    /// the pool had threads beyond the held ones that waited elsewhere (queued for a resource,
    /// or in a wait `/proc` cannot tell), so its size is not what stops at the limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_sized_by: Option<Setting>,
    /// For stacks: the largest group of the pool's other threads waiting to get in (for a lock,
    /// a semaphore's permit or a pool's resource), with where they wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queued: Option<SharedStack>,
    /// For `/proc`: threads of the pool in the same wait that did not follow the load (in it
    /// already at the fewest clients, beyond one per client: an accept loop, a listener); left
    /// out of `held`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<f64>,
    /// For `/proc`: the system call most held threads waited in (`poll`, `recvfrom`, `futex`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syscall: Option<String>,
    /// For stacks: the snapshots (thread dumps, py-spy or goroutine dumps) they came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshots: Option<u32>,
    /// For stacks from a recording (JFR): its length, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording_s: Option<f64>,
    /// For a connection pool: the downstream's port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_port: Option<u16>,
    /// For a connection pool read from the connections: the pool of threads that queued for
    /// them, as `/proc` saw it (its threads on the network, about the connections, and others
    /// parked beside them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queued_threads: Option<PoolSeen>,
    /// What in the process showed the catalogue's pool behind `setting`, when it was not the
    /// pool's own threads: a library file it had open or mapped, or another pool's threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shown_by: Option<String>,
    /// For a pool `/proc` saw parked in `futex`: of its threads, those the runtime's dump of
    /// the same step showed busy (not in its wait for work), which made the parked ones held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_in_dump: Option<f64>,
    /// For the CPU: the target's CPU at the plateau, percent of all cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pct: Option<f64>,
    /// For the CPU: the cores its control group's quota allows, when that is the limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_quota: Option<f64>,
    /// For a stream cap: the HTTP/2 connections the target kept to the downstream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub h2_connections: Option<u64>,
    /// For a stream cap: the SETTINGS_MAX_CONCURRENT_STREAMS the downstream advertised on each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_cap: Option<u64>,
    /// For a stream cap: the client's side of it, the connections (channels) it keeps to the
    /// downstream (`setting` is then the downstream's cap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_setting: Option<Setting>,
    /// For an accept cap read from the connections: the swept port's connections waiting
    /// unaccepted in the target's listen queue, the mean over the step read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unaccepted: Option<f64>,
    /// For an accept cap read from the connections: the handshakes the kernel dropped with a
    /// listen queue full, over the steps past the limit (`TcpExt ListenOverflows`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listen_overflows: Option<u64>,
    /// For an accept cap read from the connections: the clients' connections established at
    /// their end with none at the target's (a handshake dropped with the listen queue full),
    /// the mean over the step read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub half_open: Option<f64>,
    /// For an accept cap read from the connections: the size of the listen queue they waited
    /// in (the `listen()` backlog), when the sweep read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listen_queue: Option<ListenQueue>,
    /// For an accept path in front of a pool: the pool whose threads held the limit with others
    /// idle beside them while connections waited unaccepted (its `setting`, if known, is then
    /// `not_sized_by`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_behind: Option<PoolSeen>,
    /// For an accept cap that sheds: the clients' connections the target closed unanswered
    /// (`reset` errors), per second at the step read. Such a cap closes the connections past it
    /// as it accepts them (Node's `server.maxConnections`) instead of leaving them unaccepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_unanswered_per_s: Option<f64>,
}

/// Why the evidence pointed at no one place (`Fact::PlaceUnclear`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlaceUnclearWhy {
    /// Two pools or more matched the limit as well as each other.
    SeveralMatch,
    /// No pool's held threads came near the limit.
    NoneMatch,
    /// The one pool held at the limit has a size its processes state (`--workers 2 --threads
    /// 4`: 8) that is not what it held: something else stops it (`PlaceUnclear::setting`).
    SettingDisagrees,
}

/// A pool as the place decision saw it at the step read: what it was, what held it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PoolSeen {
    /// The pool's name.
    pub pool: String,
    /// Its threads.
    pub threads: f64,
    /// Of those, the ones held (waiting on the network, a lock or a pool; running, for the CPU).
    pub held: f64,
    /// What the held ones were doing.
    pub waiting: Option<WaitKind>,
    /// Where it was read from.
    pub source: Option<PlaceSource>,
    /// The frames the held ones shared, innermost first (empty without stacks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frames: Vec<String>,
}

/// A framework default from the catalogue of known pools (`catalogue/pools.toml`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setting {
    /// The framework or library whose pool it is.
    pub framework: String,
    /// The setting that changes it, as a user writes it.
    pub setting: String,
    /// Its default.
    pub default: String,
    /// Where the default is documented (the project's docs or code).
    pub source: String,
    /// The default as a rule of the cores, as the catalogue writes it (`max(4, cpus)`), when
    /// it follows them; `None` for a fixed or an unlimited default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_rule: Option<String>,
    /// The default cap on the target: the fixed size, or the rule at the cores the target
    /// counts; `None` when unlimited, a thread pool's (not checked), or the cores are unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_here: Option<DefaultHere>,
    /// The size the target's processes were started with (`--workers 2 --threads 4` on the
    /// command line, `UV_THREADPOOL_SIZE` in the environment), when they state it; `None` when
    /// nothing the catalogue reads was stated (the default stands) or it was not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_here: Option<StatedHere>,
}

/// A pool's size as the target's processes state it: the product of the values that set it
/// (gunicorn's `--workers` × `--threads`), each stated or at its default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatedHere {
    /// The size they give.
    pub size: u32,
    /// The values stated (a factor not stated is at its default, and not listed).
    pub by: Vec<Stated>,
}

/// One whole-number value a target's process was started with: a command-line flag
/// (`--workers 2`, `--threads=4`, `-w 2`), a JVM system property (`-Dname=4`), an environment
/// variable (`UV_THREADPOOL_SIZE=8`), or a size its application's configuration gives an actor
/// dispatcher (`io.thread-pool-executor.fixed-pool-size = 16`). A sweep keeps only the names
/// the catalogue reads and the dispatchers' sizing keys, and only whole numbers: a command
/// line, an environment or a configuration may hold secrets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stated {
    /// The flag, property or variable as the catalogue names it (`--workers`, `-Dname`,
    /// `UV_THREADPOOL_SIZE`).
    pub name: String,
    /// Its value.
    pub value: u32,
    /// Where it was read.
    pub from: StatedIn,
    /// The configuration file it was read from (`/srv/app.jar!/application.conf`), for
    /// [`StatedIn::Configuration`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// A proxy's configured cap on one upstream server: HAProxy's `maxconn` on a `server` line,
/// nginx's `max_conns=` in an `upstream` block. A sweep keeps each cap, the address and the
/// line that set it, read from the configuration the proxy's command line names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpstreamCap {
    /// The proxy (`haproxy`, `nginx`).
    pub program: String,
    /// The server's address as written (`127.0.0.1:9090`, `app.local`, `unix:/run/app.sock`).
    pub address: String,
    /// Its port, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Requests (HAProxy) or connections (nginx) to it at once, at most.
    pub cap: u32,
    /// The line that set it, as read (`server s1 127.0.0.1:9090 maxconn 8`).
    pub directive: String,
}

/// A proxy's configured cap on the client connections one of its frontends accepts: HAProxy's
/// `maxconn` in a `frontend` or `listen` section (or the `defaults` one before it, else the
/// global `maxconn`). A sweep keeps each, with the port it is bound to and the line that set it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrontCap {
    /// The proxy (`haproxy`).
    pub program: String,
    /// The port a `bind` line of the section listens on.
    pub port: u16,
    /// Client connections accepted at once, at most.
    pub cap: u32,
    /// The section and the line that set it, as read (`frontend front: maxconn 16`).
    pub directive: String,
}

/// The accept queue of the target's listener on the swept port, as the sweep read it when it
/// ended (`sock_diag`): the connections the kernel holds, handshake done, until the server
/// accepts them. Past its size the kernel drops the handshake's last step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListenQueue {
    /// The port the listener is bound to.
    pub port: u16,
    /// The queue's size: the backlog the server's `listen()` asked for, at most somaxconn.
    pub size: u32,
    /// The most any `listen()` backlog gets on the target's machine (`net.core.somaxconn`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub somaxconn: Option<u32>,
}

/// Where a process states a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StatedIn {
    /// Its command line (`/proc/PID/cmdline`).
    CommandLine,
    /// Its environment as it started (`/proc/PID/environ`).
    Environment,
    /// Its application's configuration, read where its runtime reads it (a JVM's
    /// `application.conf` on its classpath, or the file `-Dconfig.file` names).
    Configuration,
}

/// A default cap as it comes out on the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DefaultHere {
    /// The cap.
    pub size: u32,
    /// What the rule counted, and how many; `None` for a fixed size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted: Option<(CoreCount, u32)>,
}

/// What a size rule counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CoreCount {
    /// The CPUs the process may run on, whatever its CPU quota (Go's `runtime.NumCPU()`:
    /// `sched_getaffinity`).
    Cpus,
    /// The cores it may use: its CPU quota's, rounded up, when it has one (at most its CPUs),
    /// else its CPUs (the JDK's `availableProcessors()` in a container).
    Cores,
}
