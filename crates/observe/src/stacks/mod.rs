//! The target's stacks, from its runtime's own tools: the evidence of *where* its threads wait.
//!
//! `/proc` says a thread waits on a socket or a futex; a thread dump says in which call. Each
//! runtime has its tool ([`StackTool`]), picked per target by [`tool_for`]: a JVM's `jcmd`
//! (thread dumps, or a Flight Recorder recording with `--stacks jfr`), CPython's `py-spy`,
//! Go's `net/http/pprof`. A tool watches one step on its own thread (`cp-stacks`, started and
//! stopped with the step's [`crate::Observer`]), takes what it takes (a few dumps at full load, or
//! one recording), and turns each thread it saw into a [`ThreadStack`]: its name, its state, what
//! it was doing ([`WaitKind`], read from the frames) and the frames that say where. [`fold`] adds
//! the snapshots up into the step's [`StackEvidence`], the same way for every runtime.
//!
//! A tool that is missing, slow or refused becomes an [`ObservationNote`]; the sweep goes on
//! without that evidence.
pub mod attach;
pub mod java_frames;
pub mod jfr;
pub mod jvm;
pub mod pprof;
pub mod pyspy;
mod snapshots;
#[cfg(test)]
mod test_support;
pub mod virtual_threads;

use crate::threads::pool_name;
use chokepoint_result::{
    ObservationNote, PoolStacks, SharedStack, StackEvidence, StackSource, WaitKind,
};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;

/// Which stack tools a sweep may use (`--stacks`, `--jvm`, `--pprof`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackOptions {
    /// False with `--stacks off`: `/proc` only.
    pub enabled: bool,
    /// `--jvm`: treat the target as a JVM even when its executable is not called `java`.
    pub force_jvm: bool,
    /// `--pprof URL`: a Go service's `net/http/pprof` base (`http://127.0.0.1:6060/debug/pprof`).
    pub pprof_url: Option<String>,
    /// `--stacks jfr`: a JVM is watched with a Flight Recorder recording per step instead of
    /// thread dumps (see [`jfr`] for what each costs).
    pub jfr: bool,
}

impl Default for StackOptions {
    fn default() -> Self {
        StackOptions {
            enabled: true,
            force_jvm: false,
            pprof_url: None,
            jfr: false,
        }
    }
}

/// One thread (or goroutine) as one snapshot saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadStack {
    /// The runtime's name for it, whole (`actor-pool-7`); goroutines have none (`goroutine`).
    pub name: String,
    /// Its `/proc` thread id, when the runtime says it (a JVM dump's `nid`).
    pub tid: Option<i32>,
    /// The runtime's state name (`WAITING`, `RUNNABLE`, `IO wait`...).
    pub state: String,
    /// What it was doing, read from its frames.
    pub waiting: WaitKind,
    /// The frames that say where, innermost first (the blocking call, then the service's own
    /// first frames); at most a few.
    pub frames: Vec<String>,
}

/// A runtime's tool, run for one step.
pub trait StackTool: Send {
    /// Watches the step until `stop` receives (or its sender is dropped), then returns what it
    /// saw, and notes for what it could not see. It sets `looked` once it has had its first look
    /// at the step (a snapshot kept or failed, a recording started): a step that may end early
    /// waits for that, so that no step ends before its stacks are taken.
    fn watch_step(
        &mut self,
        stop: &mpsc::Receiver<()>,
        looked: &AtomicBool,
    ) -> (Option<StackEvidence>, Vec<ObservationNote>);
}

/// The tool for a target's root process, or a note saying why there is none. `Ok(None)` when the
/// runtime has no stack tool chokepoint knows (`/proc` is then the only evidence, silently).
pub fn tool_for(
    pid: i32,
    options: &StackOptions,
) -> Result<Option<Box<dyn StackTool>>, ObservationNote> {
    if !options.enabled {
        return Ok(None);
    }
    if let Some(found) = pprof::tool_for(pid, options) {
        return found.map(Some);
    }
    if let Some(found) = jvm::tool_for(pid, options) {
        return found.map(Some);
    }
    if let Some(found) = pyspy::tool_for(pid) {
        return found.map(Some);
    }
    Ok(None)
}

/// Adds up a step's snapshots: threads grouped by pool (name without counter), then by what
/// they were doing and where. Counts are means per snapshot.
pub fn fold(source: StackSource, snapshots: &[Vec<ThreadStack>]) -> StackEvidence {
    let n = snapshots.len().max(1) as f64;
    #[derive(Default)]
    struct Pool {
        threads: usize,
        most: u32,
        states: BTreeMap<String, usize>,
        stacks: BTreeMap<(WaitKind, Vec<String>), usize>,
        tids: BTreeSet<i32>,
    }
    let mut pools: BTreeMap<String, Pool> = BTreeMap::new();
    for snapshot in snapshots {
        let mut this_snapshot: BTreeMap<String, u32> = BTreeMap::new();
        for thread in snapshot {
            let name = pool_name(&thread.name);
            *this_snapshot.entry(name.clone()).or_default() += 1;
            let pool = pools.entry(name).or_default();
            pool.threads += 1;
            *pool.states.entry(thread.state.clone()).or_default() += 1;
            *pool
                .stacks
                .entry((thread.waiting, thread.frames.clone()))
                .or_default() += 1;
            pool.tids.extend(thread.tid);
        }
        for (name, count) in this_snapshot {
            let pool = pools.get_mut(&name).expect("counted above");
            pool.most = pool.most.max(count);
        }
    }
    let mut pools: Vec<PoolStacks> = pools
        .into_iter()
        .map(|(name, pool)| {
            let mut stacks: Vec<SharedStack> = pool
                .stacks
                .into_iter()
                .map(|((waiting, frames), count)| SharedStack {
                    waiting: Some(waiting),
                    frames,
                    threads: count as f64 / n,
                    seconds: None,
                })
                .collect();
            stacks.sort_by(|a, b| b.threads.total_cmp(&a.threads));
            PoolStacks {
                pool: name,
                threads: pool.threads as f64 / n,
                most_threads: pool.most,
                states: pool
                    .states
                    .into_iter()
                    .map(|(state, count)| (state, count as f64 / n))
                    .collect(),
                stacks,
                tids: pool.tids.into_iter().collect(),
            }
        })
        .collect();
    pools.sort_by(|a, b| b.threads.total_cmp(&a.threads).then(a.pool.cmp(&b.pool)));
    StackEvidence {
        source: Some(source),
        snapshots: snapshots.len() as u32,
        recording_s: None,
        pools,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread(name: &str, waiting: WaitKind, frames: &[&str]) -> ThreadStack {
        ThreadStack {
            name: name.into(),
            tid: None,
            state: "WAITING".into(),
            waiting,
            frames: frames.iter().map(|f| f.to_string()).collect(),
        }
    }

    #[test]
    fn threads_of_a_pool_in_one_place_are_counted_together_as_means_per_snapshot() {
        let send = ["java.net.http.HttpClient.send", "Demo.callDownstream"];
        let first = vec![
            thread("actor-pool-1", WaitKind::Downstream, &send),
            thread("actor-pool-2", WaitKind::Downstream, &send),
            thread(
                "actor-pool-3",
                WaitKind::Idle,
                &["ThreadPoolExecutor.getTask"],
            ),
            thread("main", WaitKind::Other, &[]),
        ];
        let second = vec![
            thread("actor-pool-1", WaitKind::Downstream, &send),
            thread("actor-pool-2", WaitKind::Downstream, &send),
            thread("actor-pool-3", WaitKind::Downstream, &send),
            thread("actor-pool-4", WaitKind::Downstream, &send),
        ];
        let evidence = fold(StackSource::JcmdThreadPrint, &[first, second]);
        assert_eq!(evidence.snapshots, 2);
        let pool = &evidence.pools[0];
        assert_eq!(
            (pool.pool.as_str(), pool.threads, pool.most_threads),
            ("actor-pool", 3.5, 4)
        );
        assert_eq!(pool.stacks[0].frames, send.map(String::from));
        assert_eq!(pool.threads_in(WaitKind::Downstream), 3.0);
        assert_eq!(pool.threads_in(WaitKind::Idle), 0.5);
        assert_eq!(evidence.pools[1].pool, "main");
        assert_eq!(evidence.pools[1].threads, 0.5);
    }
}
