//! The target (or chokepoint itself) seen from outside, through `/proc`.
//!
//! - [`cpu`]: CPU time of a process, of a process tree, of some threads, of a group of threads
//!   that come and go (the load generator's, see [`ThreadGroupCpu`]), and of the whole machine;
//!   a [`CpuMeter`] turns two readings into a share of the cores.
//! - [`tree`]: which processes are the target: a PID and its descendants, re-listed at every
//!   reading, or the process listening on a port (`--pid auto`).
//! - [`threads`]: each thread's pool (its name without the counter) and what it does or waits
//!   on (running, a socket, a lock, an event loop...).
//! - [`files`]: the library files the target has mapped or open (a jar, a C extension).
//! - [`namespace`]: a target in a PID namespace of its own: its runtime's thread ids mapped to
//!   the host's.
//! - [`forward`]: a forwarder on the URL's port (docker-proxy, socat, nginx...) and the process
//!   it passes connections on to.
//! - [`sockets`]: the target's TCP connections, client side and downstream side, by state.
//! - [`unix_diag`]: the machine's unix stream sockets and their peers (`sock_diag`), to follow a
//!   forwarder to a server on a unix socket; [`inet_diag`]: its listening TCP sockets, with
//!   each accept queue's length and size (the `listen` backlog); [`sock_diag`] the netlink
//!   dump both use.
//! - [`stacks`]: where the threads wait, from the runtime's own tools (`jcmd`, JFR, `py-spy`,
//!   `pprof`), when the target's runtime has one.
//! - [`stated`], [`actor_config`], [`proxy_config`]: the sizes the target's processes were
//!   started with (flags, `-D` properties, variables), an actor system's dispatcher sizes in its
//!   application's configuration, and a proxy's caps in its configuration file.
//! - [`runtime_cores`]: the core count the target's runtime sized itself for (a JVM's, Go's
//!   GOMAXPROCS).
//! - [`sampler`]: an [`Observer`] thread that samples all of it while a step runs and folds the
//!   samples into the step's typed records (`chokepoint_result::observed`).
//! - [`window`]: a step's measuring window: the [`Observer`] and the CPU meters, opened and
//!   closed together (by the sweep, or by the observer beside the target over HTTP).
//!
//! The load engine meters its own threads to say when it is the bottleneck (seed 001); the
//! sweep meters the target's tree and the machine.
#![deny(missing_docs)]

pub mod actor_config;
pub mod cgroup;
pub mod cpu;
pub mod files;
pub mod forward;
pub mod inet_diag;
pub mod namespace;
pub mod niced;
pub mod polled;
pub mod proxy_config;
pub mod runtime_cores;
pub mod sampler;
pub mod sock_diag;
pub mod sockets;
pub mod stacks;
pub mod stated;
pub mod threads;
pub mod tree;
pub mod unix_diag;
pub mod window;

pub use cpu::{
    available_cores, cpu_seconds, machine_cores, machine_ticks, share_percent, CpuMeter, CpuScope,
    GroupMember, MachineCpuMeter, MachineShare, MachineTicks, ThreadGroupCpu,
};
pub use sampler::{Observer, StepObservation, TargetSpec};
pub use tree::{listening_address, listening_processes, process_tree};
pub use window::{ObservedWindow, WindowObservation};

/// Why a reading failed (the process is gone, or `/proc` may not be read).
#[derive(Debug)]
pub struct ObserveError(String);

impl std::fmt::Display for ObserveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ObserveError {}
