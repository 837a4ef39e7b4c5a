//! What the target's own runtime said its threads were doing during a step: `jcmd Thread.print`
//! or a Flight Recorder recording for a JVM, `py-spy dump` for CPython, the goroutine dump of
//! `net/http/pprof` for Go. `/proc` (see [`crate::observed`]) says a thread waits on a socket or
//! a futex; these say in which call, with the frames.
//!
//! Each thread (or goroutine) of a snapshot is reduced to its pool (its name without the
//! counter, at full length: the runtime's name is not cut to 15 bytes as `/proc`'s is), what it
//! was doing ([`WaitKind`], read from its frames, not only from its state: a JVM thread in
//! `HttpClient.send` is `WAITING (parking)` while its socket read runs on another thread) and the
//! few frames that say where (the blocking call, then the first caller in the service's code).
//! Threads of one pool in the same place are counted together ([`SharedStack`]).
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Which tool the evidence came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StackSource {
    /// `jcmd PID Thread.print`: thread dumps, each one stops the JVM at a safepoint.
    JcmdThreadPrint,
    /// A Flight Recorder recording (`jcmd PID JFR.start` / `JFR.stop`, read with `jfr print
    /// --json`): time spent waiting, per frame.
    Jfr,
    /// `py-spy dump --json --pid PID`.
    PySpy,
    /// `GET /debug/pprof/goroutine?debug=2` of Go's `net/http/pprof`.
    Pprof,
    /// `jcmd PID Thread.print` with `Thread.dump_to_file -format=json` beside each dump (JDK
    /// 21+), which showed virtual threads parked off their carriers: the text dump lists only
    /// platform threads.
    JcmdVirtualThreads,
}

impl StackSource {
    /// The tool's name as a person types it.
    pub fn as_str(self) -> &'static str {
        match self {
            StackSource::JcmdThreadPrint => "jcmd Thread.print",
            StackSource::Jfr => "JFR",
            StackSource::PySpy => "py-spy",
            StackSource::Pprof => "pprof",
            StackSource::JcmdVirtualThreads => "jcmd Thread.print and Thread.dump_to_file",
        }
    }
}

/// What a thread was doing, read from its frames (and its state).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaitKind {
    /// Waiting for a call to another service to answer (a socket read, an HTTP client's send,
    /// a database driver's query), directly or through a future.
    Downstream,
    /// Waiting for a lock or monitor held by another thread, or a permit of a semaphore.
    Lock,
    /// Waiting for a free resource of a pool (a connection of a connection pool, a slot).
    PoolAcquire,
    /// An idle worker waiting for a task (a pool's queue, an event loop with nothing to do).
    Idle,
    /// Sleeping on a timer.
    Sleep,
    /// Running code (on a CPU or ready to run).
    Running,
    /// Waiting in something else.
    Other,
}

impl WaitKind {
    /// What a thread doing this was doing, in words: `waiting on a downstream call`.
    pub fn as_words(self) -> &'static str {
        match self {
            WaitKind::Downstream => "waiting on a downstream call",
            WaitKind::Lock => "waiting for a lock",
            WaitKind::PoolAcquire => "waiting for a pool's resource",
            WaitKind::Idle => "idle",
            WaitKind::Sleep => "sleeping",
            WaitKind::Running => "running",
            WaitKind::Other => "waiting",
        }
    }
}

/// One step's stack evidence.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StackEvidence {
    /// The tool.
    pub source: Option<StackSource>,
    /// Snapshots taken during the step (thread dumps, py-spy dumps, goroutine dumps); 0 for a
    /// recording.
    pub snapshots: u32,
    /// Seconds recorded, for a recording (JFR).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording_s: Option<f64>,
    /// One entry per pool, the most threads first.
    pub pools: Vec<PoolStacks>,
}

/// One pool's threads in the runtime's view.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PoolStacks {
    /// The pool: the thread's full name without its counter (`actor-pool`,
    /// `ThreadPoolExecutor`, `HttpClient-SelectorManager`; `goroutines` for Go).
    pub pool: String,
    /// Mean threads per snapshot (for a recording: threads seen in it).
    pub threads: f64,
    /// The most threads one snapshot saw.
    pub most_threads: u32,
    /// Mean threads per snapshot by the runtime's own state name (`RUNNABLE`, `WAITING`,
    /// `TIMED_WAITING`, `BLOCKED`; Go's `IO wait`, `semacquire`, `chan receive`...).
    pub states: BTreeMap<String, f64>,
    /// Where its threads were, the most threads first.
    pub stacks: Vec<SharedStack>,
    /// `/proc` thread ids of the pool's threads, where the runtime names them (a JVM dump's
    /// `nid`); empty when it does not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tids: Vec<i32>,
}

/// Threads of one pool in the same place.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SharedStack {
    /// What they were doing.
    pub waiting: Option<WaitKind>,
    /// The frames that say where, innermost first: the blocking call, then the first frames of
    /// the service's own code (`java.net.http.HttpClient.send`, `BlockingDemo.callDownstream`).
    pub frames: Vec<String>,
    /// Mean threads per snapshot in this place.
    pub threads: f64,
    /// For a recording: seconds the pool's threads spent in this place, summed over threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
}

impl PoolStacks {
    /// Mean threads of the pool doing `kind`.
    pub fn threads_in(&self, kind: WaitKind) -> f64 {
        self.stacks
            .iter()
            .filter(|stack| stack.waiting == Some(kind))
            .map(|stack| stack.threads)
            .sum()
    }
}
