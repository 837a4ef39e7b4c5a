//! The whole-cores rule: a target that keeps a whole number of cores busy from the knee on is
//! CPU-bound on that many cores, whatever else it does (one core: a GIL, `GOMAXPROCS=1`, an
//! event loop; or all of them). When it also calls a downstream, the mock's flat ceiling of calls
//! in flight is then a consequence — as many calls as the core's throughput keeps in flight —
//! not the limit.
//!
//! Two readings of the steps from the knee on, tried in order; the first that holds decides:
//!
//! 1. **Cores busy.** The target's CPU as cores (target CPU % × cores / 100) is a whole number
//!    k ≥ 1: the median within [`WHOLE`] of k, and at least [`MOST_STEPS`] of the steps within
//!    [`EVERY_STEP`] of it (a busy machine may take the core away for one step).
//! 2. **Threads running.** On a machine too busy to give the target its core, its CPU is a
//!    fraction of one and says nothing; but a thread that wants a core is running or runnable
//!    (`R` in /proc) whether or not it gets one. The target's threads running or runnable at once
//!    (the observer's mean, summed over its pools) are a whole number k ≤ cores by the same
//!    test, and no pool had a thread waiting on the network (a pool blocked on a downstream
//!    call waits there, not on a CPU), and they are not more than the cores the target got while
//!    the machine had cores idle for them ([`runnable_beside_idle`]: a runnable thread runs
//!    when a core is free, so the readings disagree).
//!
//! 3. **The interpreter lock.** CPython runs Python in one thread at a time, behind its lock
//!    (the GIL), so a process can keep one core busy with it, whatever the machine has. When
//!    py-spy saw threads queued for that lock at every step from the knee on (at least
//!    [`GIL_QUEUE`] at once on average: a lock with a queue at every look has no idle time to
//!    give, it is the bottleneck), the process kept from half a core to about one busy (a
//!    lock free more than half the time is not the bottleneck; a C call that lets go of the
//!    lock may run beside it, and past one core and [`WHOLE`] the lock is not all that bounds
//!    it), and no thread waited behind another limit (a pool's connection, a semaphore: direct
//!    evidence of it), it is CPU-bound on one core ([`interpreter_lock`]). Its
//!    threads back from a call wait there, in the call's frame: they are no pool blocked on
//!    the network, and its CPU falls short of a whole core by the lock's hand-offs (FastAPI
//!    with AnyIO's limiter raised to 1000, session 27: 45 of 256 workers waiting for the lock
//!    at 256 clients, 0.66 to 0.96 of a core from the knee on).
//!
//! The cores busy are not taken when /proc saw threads waiting on the network while the target
//! held connections out (a pool blocked on calls: 200 threads that burn 26 of 64 cores are a
//! pool), nor alone when the mock saw a pool's ceiling: the very same most
//! calls in flight at every step from the knee on, with its mean within [`FLAT`] of it (every
//! slot always held). A pool of 10 calls of 50 ms whose requests each burn 5 ms of CPU keeps
//! 0.91 of a core busy, near enough a whole one; an event loop's calls come in bursts, so its
//! most in flight moves from step to step and its mean stays below. Then only the threads
//! decide, and only while the throughput follows the CPU the target got
//! ([`throughput_follows_the_cpu`]) and the runtime's stacks did not see the ceiling's calls
//! held by one pool's threads ([`threads_seen_holding_the_calls`]): the ceiling is direct
//! evidence of a pool, the threads seen in the call are the pool itself, and threads runnable
//! on a busy machine outweigh neither.
//!
//! The caller skips the rule when errors decide the kind, and when throughput falls past its
//! peak while the CPU does not ([`fall_follows_the_cpu`]): a thrashing lock keeps its core busy
//! too, spending it on spinning, and the fall is the finding. A fall whose CPU per request held
//! is the machine taking the core away from a target that still wants it.

use crate::place::matches_limit;
use crate::points::{median, Point};
use crate::saturation::{idle_cores, runnable_beside_idle};
use chokepoint_result::{SharedStack, StackSource, WaitKind};

/// How near a whole number the median reading must be, in cores. Absolute, not a share of the
/// number: within 10% of k, every reading from 5 cores up is near some whole number (±0.5),
/// and the rule would say nothing; within 0.1 of a core, a reading that is not whole cores
/// lands there one time in five, on 2 cores as on 64. A saturated thread loses a few
/// hundredths of its core to the scheduler and its own system calls.
pub(crate) const WHOLE: f64 = 0.1;
/// How near the same whole number most steps' readings must be, in cores (a busy machine takes
/// a few tenths of a core from a step now and then).
const EVERY_STEP: f64 = 0.2;
/// The share of the steps whose reading must be that near: one step in three of a busy machine
/// may dip (a live sweep of node-cpu-downstream had one step at 0.42 of a core among steps at
/// 0.8-0.9).
const MOST_STEPS: f64 = 2.0 / 3.0;
/// Threads waiting on the network at once, on average, from which a pool waits on a call.
const SOCKET_WAITING: f64 = 1.0;
/// The mock's mean calls in flight at or above this share of its most: every slot held.
pub(crate) const FLAT: f64 = 0.9;
/// Threads waiting for CPython's interpreter lock at once, on average, from which it has a
/// queue: at least one waiting at the average look.
const GIL_QUEUE: f64 = 1.0;
/// The frame py-spy's reading gives a thread back from a socket call, parked on the futex of
/// the interpreter lock (crates/observe `stacks::pyspy`).
const GIL_FRAME: &str = "the GIL";

/// Which evidence showed the whole cores.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Evidence {
    /// The target's CPU was a whole number of cores.
    CoresBusy,
    /// The target's threads running or runnable were a whole number, none waiting on the
    /// network.
    ThreadsRunning,
    /// py-spy saw threads queued for CPython's interpreter lock at every step, the process on
    /// about one core at most.
    InterpreterLock,
}

/// What the rule found: the cores, which evidence decided, and both readings (medians over the
/// steps from the knee on) when they were there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct WholeCores {
    /// The whole number of cores.
    pub cores: u32,
    pub evidence: Evidence,
    /// Cores the target kept busy.
    pub cores_busy: Option<f64>,
    /// The target's threads running or runnable at once.
    pub threads_running: Option<f64>,
    /// Threads waiting for the interpreter lock at once, the least over the steps, when py-spy
    /// saw them.
    pub lock_waiting: Option<f64>,
}

/// The target's CPU as cores busy: percent of all `cores` turned into cores.
pub(crate) fn busy_cores(target_cpu_pct: f64, cores: u32) -> f64 {
    target_cpu_pct * f64::from(cores) / 100.0
}

/// The whole number (≥ 1) that `value` is within `tolerance` of (both in cores), if any.
pub(crate) fn whole(value: f64, tolerance: f64) -> Option<u32> {
    let k = value.round();
    (k >= 1.0 && (value - k).abs() <= tolerance).then_some(k as u32)
}

/// The whole number the readings hold, with their median: the median within [`WHOLE`], at
/// least [`MOST_STEPS`] of them within [`EVERY_STEP`]. `None` with no readings or a missing one.
fn held(readings: &[Option<f64>]) -> Option<(u32, f64)> {
    let values: Option<Vec<f64>> = readings.iter().copied().collect();
    let values = values.filter(|v| !v.is_empty())?;
    let mid = median(values.iter().copied());
    let k = whole(mid, WHOLE)?;
    let kf = f64::from(k);
    let near = values
        .iter()
        .filter(|v| (*v - kf).abs() <= EVERY_STEP)
        .count();
    (near as f64 >= MOST_STEPS * values.len() as f64).then_some((k, mid))
}

/// Whether /proc saw the target blocked on calls out at any of the points: a pool with threads
/// waiting on the network, on average, while the target held connections of its own to a
/// downstream. Threads on the network without calls out are a server's connection threads
/// waiting for their client's next request (a thread-per-connection Python server held by its
/// GIL has a few there at every step, and is CPU-bound all the same).
fn waits_on_the_network(points: &[Point<'_>]) -> bool {
    points.iter().flat_map(|p| &p.steps).any(|step| {
        let waiting = step.threads_by_pool.as_ref().is_some_and(|threads| {
            threads
                .pools
                .iter()
                .any(|pool| pool.mean.socket_wait >= SOCKET_WAITING)
        });
        let calls_out = step.connections.as_ref().is_some_and(|connections| {
            connections
                .downstream
                .iter()
                .any(|peer| peer.counts.most.established >= 1)
        });
        waiting && calls_out
    })
}

/// Threads running or runnable at once at a point (median over its steps of the sum over the
/// pools), or `None` when /proc was not read or some pool waited on the network.
fn threads_running(p: &Point<'_>) -> Option<f64> {
    let mut running = Vec::new();
    for step in &p.steps {
        let Some(threads) = step.threads_by_pool.as_ref() else {
            continue;
        };
        if threads
            .pools
            .iter()
            .any(|pool| pool.mean.socket_wait >= SOCKET_WAITING)
        {
            return None;
        }
        running.push(threads.pools.iter().map(|pool| pool.mean.running).sum());
    }
    (!running.is_empty()).then(|| median(running))
}

/// Largest change of the CPU per successful request, from the peak to the largest step, for a
/// fall to be the CPU the target got falling with it.
const SAME_WORK: f64 = 0.25;

/// The target's CPU per successful request at the peak (the most successful throughput, the
/// fewest clients among equals) and at the largest step, in percent of all cores per request a
/// second; `None` when either is unknown.
pub(crate) fn cpu_per_request_at_fall(pts: &[Point<'_>]) -> Option<(f64, f64)> {
    let peak = pts
        .iter()
        .reduce(|best, p| if p.ok_x > best.ok_x { p } else { best })?;
    let last = pts.last()?;
    let per_request = |p: &Point<'_>| p.target_cpu.filter(|_| p.ok_x > 0.0).map(|t| t / p.ok_x);
    Some((per_request(peak)?, per_request(last)?))
}

/// Whether a fall of throughput past the peak came with the target's CPU falling alike: the CPU
/// per successful request at the largest step within [`SAME_WORK`] of the peak's. `false` when
/// either CPU is unknown.
pub(crate) fn fall_follows_the_cpu(pts: &[Point<'_>]) -> bool {
    match cpu_per_request_at_fall(pts) {
        Some((at_peak, at_last)) if at_peak > 0.0 => (at_last / at_peak - 1.0).abs() <= SAME_WORK,
        _ => false,
    }
}

/// Whether the throughput at each point followed the CPU the target got: its CPU per successful
/// request within [`SAME_WORK`] of the first point's. A thread that wants a core serves at the
/// rate of the CPU it gets (the work is the same per request), so a target CPU-bound on a core
/// a busy machine withholds serves less as it gets less. `true` when some CPU is unknown (nothing
/// says otherwise).
///
/// With the mock's ceiling flat at the same most calls at every point, a throughput apart from
/// the CPU is the pool binding, and a thread seen runnable is the busy machine's queue for its
/// cores: Reactor Netty's event loop, runnable all the time beside a full pool of 500 held 1 s,
/// got 0.5 then 0.26 of a core while throughput went from 499 to 441 req/s (a full run of
/// `tests/sweeps`, where another lane ran beside it).
fn throughput_follows_the_cpu(pts: &[Point<'_>]) -> bool {
    let per_request: Option<Vec<f64>> = pts
        .iter()
        .map(|p| p.target_cpu.filter(|_| p.ok_x > 0.0).map(|t| t / p.ok_x))
        .collect();
    match per_request.as_deref() {
        Some([first, rest @ ..]) if *first > 0.0 => {
            rest.iter().all(|at| (at / first - 1.0).abs() <= SAME_WORK)
        }
        _ => true,
    }
}

/// Whether the runtime's stacks saw the mock's ceiling held by one pool's threads waiting in
/// the call, at every point that had stacks (one at least): at each, the pool with the most
/// threads on a downstream call held as many as the mock's most calls in flight
/// ([`matches_limit`]). Those threads are the pool, seen blocked where the limit is; a core the
/// target wants cannot keep them there. This is the evidence `/proc` misses when the handlers
/// wait on a future and another thread does the I/O: the JDK `HttpClient`'s handlers park in
/// `futex` while its selector reads (a full run's sweep of tests/targets/java-jdk-httpclient:
/// 12 `http-exec` threads in `HttpClient.send` by jcmd, the mock flat at 12, the target on 0.3
/// of 2 cores of a busy machine with 1.0 of its threads runnable, read `cpu-bound 1.0`).
fn threads_seen_holding_the_calls(past_knee: &[Point<'_>]) -> bool {
    let held_at = |p: &Point<'_>| {
        let in_calls: Vec<f64> = p
            .steps
            .iter()
            .filter_map(|step| step.stacks.as_ref())
            .map(|stacks| {
                stacks
                    .pools
                    .iter()
                    .map(|pool| pool.threads_in(WaitKind::Downstream))
                    .fold(0.0, f64::max)
            })
            .collect();
        (!in_calls.is_empty()).then(|| median(in_calls))
    };
    let seen: Vec<(f64, f64)> = past_knee
        .iter()
        .filter_map(|p| Some((held_at(p)?, p.inflight_max?)))
        .collect();
    !seen.is_empty() && seen.iter().all(|&(held, most)| matches_limit(held, most))
}

/// Whether `running` threads on a CPU or waiting for one (the median from the knee on) were
/// more than the cores the target got while the machine had cores idle for them, its group not
/// throttled ([`crate::saturation::runnable_beside_idle`]): then the threads do not decide.
fn runnable_beside_idle_cores(past_knee: &[Point<'_>], running: f64, cores: u32) -> bool {
    let known = |pick: fn(&Point<'_>) -> Option<f64>| {
        let values: Vec<f64> = past_knee.iter().filter_map(pick).collect();
        (!values.is_empty()).then(|| median(values))
    };
    let throttled = past_knee
        .iter()
        .flat_map(|p| &p.steps)
        .filter_map(|step| step.cpu_quota.as_ref())
        .any(|quota| quota.throttled_periods > 0);
    match (known(|p| p.target_cpu), known(|p| p.machine_cpu)) {
        (Some(target), Some(machine)) => {
            !throttled
                && runnable_beside_idle(
                    running,
                    busy_cores(target, cores),
                    idle_cores(machine, f64::from(cores)),
                )
        }
        _ => false,
    }
}

/// Whether the mock saw a pool's ceiling at every point: the same most calls in flight, with
/// the mean within [`FLAT`] of it.
pub(crate) fn pool_ceiling(past_knee: &[Point<'_>]) -> bool {
    let most = past_knee[0].inflight_max;
    most.is_some_and(|m| m >= 1.0)
        && past_knee.iter().all(|p| {
            p.inflight_max == most
                && p.inflight_mean
                    .zip(p.inflight_max)
                    .is_some_and(|(mean, max)| mean >= FLAT * max)
        })
}

/// Threads of `stack`s that `which` picks at a point, in each of its steps py-spy dumped
/// (summed over the pools); empty when py-spy dumped none.
fn py_spy_threads(p: &Point<'_>, which: impl Fn(&SharedStack) -> bool) -> Vec<f64> {
    p.steps
        .iter()
        .filter_map(|step| step.stacks.as_ref())
        .filter(|stacks| stacks.source == Some(StackSource::PySpy))
        .map(|stacks| {
            stacks
                .pools
                .iter()
                .flat_map(|pool| &pool.stacks)
                .filter(|stack| which(stack))
                .map(|stack| stack.threads)
                .sum()
        })
        .collect()
}

/// Whether `stack` waits for CPython's interpreter lock ([`GIL_FRAME`]).
fn waits_for_the_gil(stack: &SharedStack) -> bool {
    stack.waiting == Some(WaitKind::Lock) && stack.frames.first().is_some_and(|f| f == GIL_FRAME)
}

/// Threads waiting for CPython's interpreter lock at once at a point: the median over its
/// steps py-spy dumped; `None` when it dumped none.
fn waiting_for_the_gil(p: &Point<'_>) -> Option<f64> {
    let waiting = py_spy_threads(p, waits_for_the_gil);
    (!waiting.is_empty()).then(|| median(waiting))
}

/// Threads waiting at a point for something else than the interpreter lock that holds a
/// limit of its own: a pool's resource (a connection, a slot) or another lock or semaphore
/// (`Lock.acquire or the GIL` among them: py-spy cannot tell it from the lock). The most over
/// its steps py-spy dumped.
fn waiting_behind_another_limit(p: &Point<'_>) -> f64 {
    let behind = |stack: &SharedStack| match stack.waiting {
        Some(WaitKind::PoolAcquire) => true,
        Some(WaitKind::Lock) => !waits_for_the_gil(stack),
        _ => false,
    };
    py_spy_threads(p, behind).into_iter().fold(0.0, f64::max)
}

/// The third reading: the least threads waiting for the interpreter lock over the points, when
/// py-spy saw at least [`GIL_QUEUE`] at every point and `busy` (the median of the cores the
/// target kept busy; unknown, the lock decides nothing) is from half a core to one core and
/// [`WHOLE`]: a lock free more than half the time is not the bottleneck, whatever waits on it
/// (CPython's holder keeps it up to 5 ms before it hands it on, so threads queue for it at a
/// fifth of a core). Threads seen waiting behind another limit (a pool's connection, a
/// semaphore) at some point are direct evidence of it: the lock decides nothing then.
fn interpreter_lock(past_knee: &[Point<'_>], busy: Option<f64>) -> Option<f64> {
    let waiting: Option<Vec<f64>> = past_knee.iter().map(waiting_for_the_gil).collect();
    let least = waiting?.into_iter().reduce(f64::min)?;
    let busy = busy?;
    let behind_another = past_knee
        .iter()
        .any(|p| waiting_behind_another_limit(p) >= GIL_QUEUE);
    (least >= GIL_QUEUE && (0.5..=1.0 + WHOLE).contains(&busy) && !behind_another).then_some(least)
}

/// The rule over the points from the knee on (see the module documentation); `cores` is the
/// machine's core count. Needs two points or more.
pub(crate) fn whole_cores(past_knee: &[Point<'_>], cores: u32) -> Option<WholeCores> {
    if past_knee.len() < 2 || cores == 0 {
        return None;
    }
    let busy: Vec<Option<f64>> = past_knee
        .iter()
        .map(|p| p.target_cpu.map(|t| busy_cores(t, cores)))
        .collect();
    let running: Vec<Option<f64>> = past_knee.iter().map(threads_running).collect();
    // Threads seen waiting on the network are a pool blocked on a call, which no CPU reading
    // of whole cores outweighs (a pool of 200 threads that burns 6 of 64 cores is a pool).
    let ceiling = pool_ceiling(past_knee);
    let by_cpu = held(&busy).filter(|_| !ceiling && !waits_on_the_network(past_knee));
    let by_threads = held(&running)
        .filter(|&(k, _)| k <= cores)
        .filter(|&(_, mid)| !runnable_beside_idle_cores(past_knee, mid, cores))
        .filter(|_| {
            !ceiling
                || (throughput_follows_the_cpu(past_knee)
                    && !threads_seen_holding_the_calls(past_knee))
        });
    let busy_median = by_cpu.map(|b| b.1).or_else(|| {
        let known: Vec<f64> = busy.iter().flatten().copied().collect();
        (!known.is_empty()).then(|| median(known))
    });
    let running_median = by_threads.map(|r| r.1).or_else(|| {
        let known: Vec<f64> = running.iter().flatten().copied().collect();
        (!known.is_empty()).then(|| median(known))
    });
    // The lock's queue is direct evidence of its own: it holds beside threads on the network
    // (back from their calls), but not beside a pool's ceiling the mock saw.
    let by_lock = interpreter_lock(past_knee, busy_median).filter(|_| !ceiling);
    let (k, evidence) = match (by_cpu, by_threads, by_lock) {
        (Some((k, _)), _, _) => (k, Evidence::CoresBusy),
        (None, Some((k, _)), _) => (k, Evidence::ThreadsRunning),
        (None, None, Some(_)) => (1, Evidence::InterpreterLock),
        (None, None, None) => return None,
    };
    Some(WholeCores {
        cores: k,
        evidence,
        cores_busy: busy_median,
        threads_running: running_median,
        lock_waiting: by_lock,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chokepoint_result::Step;

    #[test]
    fn whole_numbers_within_a_tenth_of_a_core() {
        // (value, tolerance in cores, whole)
        let table: [(f64, f64, Option<u32>); 11] = [
            (0.95, 0.1, Some(1)),
            (1.09, 0.1, Some(1)),
            (0.88, 0.1, None),
            (1.92, 0.1, Some(2)),
            (1.5, 0.1, None),
            // Less than half a core is no core.
            (0.4, 0.9, None),
            (0.83, 0.2, Some(1)),
            // On 16 and 64 cores the tolerance stays a tenth of a core: 6.3 cores is not whole
            // (10% of 6 would have taken it, and every other reading from 5 cores up).
            (6.3, 0.1, None),
            (5.5, 0.1, None),
            (12.04, 0.1, Some(12)),
            (47.93, 0.1, Some(48)),
        ];
        for (value, tolerance, expected) in table {
            assert_eq!(
                whole(value, tolerance),
                expected,
                "{value} within {tolerance}"
            );
        }
    }

    #[test]
    fn every_reading_holds_the_same_whole_number() {
        // (readings, held)
        let table: [(&[Option<f64>], Option<u32>); 8] = [
            // An event loop on one core, one step of a busy machine dipping to 0.83.
            (&[Some(0.95), Some(0.96), Some(0.83), Some(0.98)], Some(1)),
            // A fraction of a core: a starved target, not whole.
            (&[Some(0.58), Some(0.62), Some(0.96)], None),
            // One step in three far off the rest: a busy machine took the core for a step.
            (&[Some(1.0), Some(1.0), Some(0.6)], Some(1)),
            // Two in four far off: not held.
            (&[Some(1.0), Some(1.0), Some(0.6), Some(0.5)], None),
            // One of two far off: not held.
            (&[Some(1.0), Some(0.6)], None),
            // All of two cores.
            (&[Some(1.93), Some(1.97)], Some(2)),
            // A reading missing (the target not observed at a step).
            (&[Some(1.0), None], None),
            (&[], None),
        ];
        for (readings, expected) in table {
            assert_eq!(held(readings).map(|h| h.0), expected, "{readings:?}");
        }
    }

    /// A step of a CPython process with one unnamed `/proc` pool, `network` of its threads on
    /// the network with calls out, and py-spy's dump: `gil` threads in `lock_frame` (the GIL,
    /// back from a socket call), 4 in the call.
    fn python_step(clients: u32, network: f64, gil: f64, lock_frame: &str) -> Step {
        use chokepoint_result::{
            ConnectionCounts, Connections, LoadReport, PeerConnections, PoolStacks, PoolThreads,
            SharedStack, SocketCounts, StackEvidence, ThreadCounts, ThreadsByPool,
        };
        let stack = |waiting, threads: f64, frames: &[&str]| SharedStack {
            waiting: Some(waiting),
            frames: frames.iter().map(|f| f.to_string()).collect(),
            threads,
            seconds: None,
        };
        Step {
            load: LoadReport {
                clients,
                ..LoadReport::default()
            },
            threads_by_pool: Some(ThreadsByPool {
                interval_ms: 250,
                samples: 12,
                pools: vec![PoolThreads {
                    pool: "python3".into(),
                    mean: ThreadCounts {
                        threads: f64::from(clients) + 1.0,
                        socket_wait: network,
                        running: 3.0,
                        ..ThreadCounts::default()
                    },
                    ..PoolThreads::default()
                }],
            }),
            connections: Some(Connections {
                downstream: vec![PeerConnections {
                    peer_port: 9090,
                    mock: true,
                    counts: ConnectionCounts {
                        most: SocketCounts {
                            established: 80,
                            ..SocketCounts::default()
                        },
                        ..ConnectionCounts::default()
                    },
                    ..PeerConnections::default()
                }],
                ..Connections::default()
            }),
            stacks: Some(StackEvidence {
                source: Some(StackSource::PySpy),
                snapshots: 5,
                recording_s: None,
                pools: vec![PoolStacks {
                    pool: "AnyIO worker thread".into(),
                    threads: f64::from(clients),
                    stacks: vec![
                        stack(
                            WaitKind::Lock,
                            gil,
                            &[lock_frame, "SocketIO.readinto (socket.py)"],
                        ),
                        stack(
                            WaitKind::Downstream,
                            4.0,
                            &["SocketIO.readinto (socket.py)"],
                        ),
                    ],
                    ..PoolStacks::default()
                }],
            }),
            ..Step::default()
        }
    }

    fn point<'a>(step: &'a Step, cores_busy: f64, cores: u32, calls: (f64, f64)) -> Point<'a> {
        Point {
            clients: step.clients,
            ok_x: 1000.0,
            x: 1000.0,
            ok_mean_ms: 120.0,
            ok_p50_ms: 110.0,
            mean_ms: 120.0,
            error_rate: 0.0,
            requests: 4000.0,
            generator_cpu: 1.0,
            target_cpu: Some(cores_busy * 100.0 / f64::from(cores)),
            machine_cpu: Some((cores_busy + 0.1) * 100.0 / f64::from(cores)),
            inflight_max: Some(calls.0),
            inflight_mean: Some(calls.1),
            ds_requests: Some(4000.0),
            ds_max_connections: None,
            steps: vec![step],
        }
    }

    #[test]
    fn threads_queued_for_the_gil_at_every_step_are_one_core_on_any_machine() {
        // FastAPI with AnyIO's limiter raised to 1000 (py-fastapi-sync --thread-limit 1000,
        // session 27) from its knee on: (clients, threads on the network, waiting for the GIL,
        // cores busy, the mock's most and mean calls in flight).
        let fastapi = [
            (92, 30.0, 12.0, 0.66, (81.0, 40.0)),
            (104, 32.0, 18.0, 0.72, (101.0, 42.0)),
            (128, 40.0, 40.0, 0.84, (121.0, 48.0)),
            (162, 50.0, 45.0, 0.90, (152.0, 53.0)),
            (256, 60.0, 58.0, 0.96, (198.0, 57.0)),
        ];
        type Row = (u32, f64, f64, f64, (f64, f64));
        // `pool_waits`: threads also waiting for a client pool's connection (urllib3's
        // `_get_conn`) at each step.
        let read_with = |rows: &[Row], frame: &str, cores: u32, pool_waits: f64| {
            let steps: Vec<Step> = rows
                .iter()
                .map(|&(c, network, gil, ..)| {
                    let mut step = python_step(c, network, gil, frame);
                    if pool_waits > 0.0 {
                        let pools = &mut step.stacks.as_mut().unwrap().pools;
                        pools[0].stacks.push(chokepoint_result::SharedStack {
                            waiting: Some(WaitKind::PoolAcquire),
                            frames: vec!["HTTPConnectionPool._get_conn".into()],
                            threads: pool_waits,
                            seconds: None,
                        });
                    }
                    step
                })
                .collect();
            let points: Vec<Point<'_>> = steps
                .iter()
                .zip(rows)
                .map(|(step, &(.., busy, calls))| point(step, busy, cores, calls))
                .collect();
            whole_cores(&points, cores).map(|w| (w.cores, w.evidence, w.lock_waiting))
        };
        let read = |rows: &[Row], frame: &str, cores: u32| read_with(rows, frame, cores, 0.0);
        let mut starved_step = fastapi;
        starved_step[2].2 = 0.6;
        let mut with_c_beside = fastapi;
        for row in &mut with_c_beside {
            row.3 += 0.6;
        }
        let mut behind_a_pool_of_40 = fastapi;
        for row in &mut behind_a_pool_of_40 {
            row.4 = (40.0, 39.0);
        }
        let mut a_fifth_of_a_core = fastapi;
        for row in &mut a_fifth_of_a_core {
            row.3 = 0.2;
        }
        for cores in [2, 16, 64] {
            assert_eq!(
                read(&fastapi, GIL_FRAME, cores),
                Some((1, Evidence::InterpreterLock, Some(12.0))),
                "the lock's queue at every step, on {cores} cores"
            );
            // (why, rows, frame)
            let refused: [(&str, &[Row], &str); 5] = [
                (
                    "one step with no queue at the lock",
                    &starved_step,
                    GIL_FRAME,
                ),
                (
                    "1.3 to 1.6 cores: C code beside the lock",
                    &with_c_beside,
                    GIL_FRAME,
                ),
                (
                    "the mock's ceiling of 40, every slot held",
                    &behind_a_pool_of_40,
                    GIL_FRAME,
                ),
                (
                    "a lock py-spy cannot tell from the GIL",
                    &fastapi,
                    "Lock.acquire or the GIL",
                ),
                (
                    "a lock free four fifths of the time",
                    &a_fifth_of_a_core,
                    GIL_FRAME,
                ),
            ];
            for (why, rows, frame) in refused {
                assert_eq!(read(rows, frame, cores), None, "{why}, on {cores} cores");
            }
            assert_eq!(
                read_with(&fastapi, GIL_FRAME, cores, 6.0),
                None,
                "threads waiting for a client pool's connection, on {cores} cores"
            );
        }
    }
}
