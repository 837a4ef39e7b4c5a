//! A pool that grows instead of queueing (a `newCachedThreadPool`, RxJava's
//! `Schedulers.io()`, Akka's `blocking { }`, a thread per connection): it starts a thread per
//! blocked call, so it keeps up with the clients until the threads cost more than the work, and
//! throughput stops following clients while the pool goes on growing. The plateau alone reads
//! as the CPU or a pool; the threads per pool of each step (`threads_by_pool`, from `/proc`)
//! tell it apart, and the finding becomes `growing-pool` with the pool's thread count per step
//! ([`Fact::GrowingPool`]).
//!
//! A pool grows instead of queueing when, over the steps by clients:
//! 1. it had at least [`THREADS_PER_CLIENT`] threads per client at every step (a thread per
//!    client in flight);
//! 2. the sweep went on to at least [`PAST_THE_KNEE`] × the knee's clients, and there the pool
//!    had at least [`GROWTH`] × the threads of the largest step below the knee: it kept growing
//!    after throughput stopped following. What is claimed is the range swept: a pool whose cap
//!    lies past the largest step (Tomcat's 200, tokio's `spawn_blocking` 512) grows a thread per
//!    client up to it, and no factor of clients tells it apart from one with no cap, only a
//!    larger sweep; a cap inside the range fails rule 1 at the steps past it. Twice the knee
//!    is the least that sets growth apart from the knee's own noise, and no more is asked: the
//!    adaptive search places a knee on a creeping plateau anywhere along it (RxJava's io
//!    scheduler, held out in session 24: knee 56 in one sweep, 128 in the next, both to 256
//!    clients and 240 threads; a factor of 4 made the second `cpu-bound`);
//! 3. it is a pool for blocking calls: at some step from the knee on, at least
//!    [`BLOCKED_THREADS`] more of its threads (the mean over the samples) waited on the network
//!    or the disk than at the fewest clients. A server's own fixed threads wait on the network
//!    at every load (an acceptor in `poll`, a selector), so only the threads the load put in a
//!    call count: Python's `ThreadingHTTPServer` has one thread in `poll` at 1 client and at 16,
//!    while its 16 connection threads wait for the GIL. A pool that grows a thread per request
//!    for CPU work alone is the CPU's limit with many threads (the demo's `/cpu` on tokio's
//!    `spawn_blocking` pool, 40 threads at 32 clients, is `cpu-bound`);
//! 4. what it works on kept growing past the knee, to the largest step from the step at half
//!    its clients (the largest at or below half; the knee is there or below, rule 2). A fixed
//!    limit behind the pool holds that flat once reached, its threads parked in front of it:
//!    queueing, only in threads (the demo's `/blocking`, an elastic pool, 25 of its threads in
//!    the downstream client at once, the rest waiting for a connection; a thread per
//!    connection waiting for a `ThreadPoolExecutor(6)`, py-threadpool; the GIL; a semaphore).
//!    Half the largest step, not the knee: a knee placed below such a limit shows growth up to
//!    it. What is read:
//!    - when the mock counted its calls, the most in flight at once ([`calls_grew`]): direct
//!      evidence, exact, and what the threads are for;
//!    - otherwise its threads at work (running or ready to, waiting on the network or the
//!      disk; the mean over `/proc`'s samples), grown by more than the samples' noise
//!      ([`grew_beyond_noise`]).
//!
//!    No share of the clients is asked of either: a pool stopped by the CPU queues the extra
//!    requests where it can, in front of the pool or on a lock in its own server, so its
//!    threads at work grow slower than the clients, or not at all (java-rxjava, session 26: 80
//!    at 128 clients, 117 at 256, 101 of its threads idle and 43 on the JDK server's lock in
//!    the dumps; java-pools `/cached` on a machine with a load average of 11: 245 at 256
//!    clients, 236 at 512, while the mock's most in flight went from 240 to 512).
//!
//! The rules read the finding's knee and kind; they change only a finding whose plateau says a
//! pool, the CPU, contention or a saturated machine (or stalls with no connection cap at the
//! mock), and keep its limit: what stopped the growing pool (none for stalls). When the mock
//! saw every call in flight at once, the first finding may have no knee at all; it is decided
//! again counting those steps short (see [`reconsider`]; [`crate::diagnose_with`] says how).
use crate::evidence::Evidence;
use crate::finding::Finding;
use chokepoint_result::format::{clients as clients_words, count, rate};
use chokepoint_result::{Fact, Kind, Step, SweepContext, ThreadCounts};
use std::collections::BTreeMap;

/// Threads of the pool per client, at every step.
pub const THREADS_PER_CLIENT: f64 = 0.8;
/// The largest step's clients over the knee's.
pub const PAST_THE_KNEE: f64 = 2.0;
/// The pool's threads at the largest step over those of the largest step below the knee.
pub const GROWTH: f64 = 1.5;
/// Standard errors of the difference of two steps' mean threads at work beyond which it is
/// growth, not noise: a flat count exceeds three about once in 700 reads (one-sided normal).
pub const NOISE_ERRORS: f64 = 3.0;
/// The pool's threads waiting on the network or the disk at once (mean), at some step from the
/// knee on, over those at the fewest clients.
pub const BLOCKED_THREADS: f64 = 1.0;

/// A pool that grew with the clients.
#[derive(Debug, Clone, PartialEq)]
pub struct Growth {
    /// The pool.
    pub pool: String,
    /// The steps, fewest clients first.
    pub clients: Vec<u32>,
    /// Its threads at each (the most one sample saw).
    pub threads: Vec<f64>,
    /// Its threads at work at the largest step over all its threads there.
    pub busy_share: f64,
}

/// A pool at one step, as `/proc`'s samples saw it.
#[derive(Debug, Clone, Copy)]
struct Seen {
    /// The most threads one sample saw.
    threads: f64,
    /// Threads at work, the mean over the samples ([`at_work`]).
    at_work: f64,
    /// Threads waiting on the network or the disk, the mean ([`blocked`]).
    blocked: f64,
    /// The samples the means are over.
    samples: u32,
}

/// The threads of `mean` running or waiting on the network or the disk.
fn at_work(mean: &ThreadCounts) -> f64 {
    mean.running + blocked(mean)
}

/// The threads of `mean` waiting on the network or the disk.
fn blocked(mean: &ThreadCounts) -> f64 {
    mean.socket_wait + mean.disk_wait
}

/// Whether a mean count over samples grew from `earlier` to `later` (each the mean and the
/// samples it is over) by more than [`NOISE_ERRORS`] standard errors of the difference. The
/// threads at work among those a limit holds are a binomial count, whose variance is at most
/// its mean, so a step's mean over `n` samples has a standard error of at most √(mean / n);
/// samples a quarter second apart, of calls shorter than that, are taken as independent.
fn grew_beyond_noise((earlier, n_earlier): (f64, u32), (later, n_later): (f64, u32)) -> bool {
    let variance = |mean: f64, n: u32| mean.max(0.0) / f64::from(n.max(1));
    let error = (variance(earlier, n_earlier) + variance(later, n_later)).sqrt();
    later - earlier > NOISE_ERRORS * error
}

/// The pool that grew instead of queueing over `steps`, with the knee at `knee_clients`; the
/// one with the most threads at the largest step when several did.
pub fn growing_pool(steps: &[Step], knee_clients: u32) -> Option<Growth> {
    largest(
        grown_pools(steps, knee_clients)
            .into_iter()
            .filter_map(|(growth, work_grew)| work_grew.then_some(growth)),
    )
}

/// The pool that gave each request a thread (rules 1 to 3) while what it worked on stayed
/// held (rule 4 refused it), when no pool's work grew: it queued in front of a limit behind it,
/// in threads. A request waiting in a bounded pool's queue holds a few bytes; one waiting in a
/// thread of its own holds the thread and its stack (a JVM's `-Xss`, 1 MiB by default on
/// 64-bit Linux; glibc's 8 MiB of address space), and nothing bounds how many: the service's
/// threads and memory grow with its callers, in front of a limit that serves no more. The
/// demo's `/blocking` (an elastic pool in front of 25 connections), a thread per connection
/// in front of a `ThreadPoolExecutor(6)`.
pub fn pool_grown_in_front(steps: &[Step], knee_clients: u32) -> Option<Growth> {
    let pools = grown_pools(steps, knee_clients);
    if pools.iter().any(|(_, work_grew)| *work_grew) {
        return None;
    }
    largest(pools.into_iter().map(|(growth, _)| growth))
}

/// The one with the most threads at its largest step.
fn largest(pools: impl Iterator<Item = Growth>) -> Option<Growth> {
    pools.max_by(|a, b| {
        let last = |g: &Growth| g.threads.last().copied().unwrap_or(0.0);
        last(a).total_cmp(&last(b))
    })
}

/// Each pool that gave a thread per client past the knee (rules 1 to 3), with whether what it
/// works on kept growing (rule 4).
fn grown_pools(steps: &[Step], knee_clients: u32) -> Vec<(Growth, bool)> {
    let calls = calls_grew(steps);
    // pool → clients → what was seen; repeats of a step keep the most threads.
    let mut pools: BTreeMap<&str, BTreeMap<u32, Seen>> = BTreeMap::new();
    for step in steps {
        let Some(observed) = &step.threads_by_pool else {
            continue;
        };
        for pool in &observed.pools {
            let seen = Seen {
                threads: pool.most.threads,
                at_work: at_work(&pool.mean),
                blocked: blocked(&pool.mean),
                samples: observed.samples,
            };
            let entry = pools
                .entry(pool.pool.as_str())
                .or_default()
                .entry(step.clients)
                .or_insert(seen);
            if seen.threads > entry.threads {
                *entry = seen;
            }
        }
    }
    let every_client: Vec<u32> = {
        let mut all: Vec<u32> = steps.iter().map(|s| s.clients).collect();
        all.sort_unstable();
        all.dedup();
        all
    };
    pools
        .into_iter()
        // Seen at every step: a pool absent from some steps cannot show its growth.
        .filter(|(_, by)| by.len() == every_client.len() && by.len() >= 2)
        .filter_map(|(pool, by)| {
            let (&largest, last) = by.last_key_value()?;
            let most_blocked = by
                .range(knee_clients..)
                .map(|(_, seen)| seen.blocked)
                .fold(0.0, f64::max);
            let blocked_at_fewest = by.first_key_value().map_or(0.0, |(_, seen)| seen.blocked);
            let below_knee = by.range(..knee_clients).next_back()?.1.threads;
            let at_half = by.range(..=largest / 2).next_back()?.1;
            let thread_per_client = by
                .iter()
                .all(|(&c, seen)| seen.threads >= THREADS_PER_CLIENT * f64::from(c))
                && f64::from(largest) >= PAST_THE_KNEE * f64::from(knee_clients)
                && last.threads >= GROWTH * below_knee
                && most_blocked - blocked_at_fewest >= BLOCKED_THREADS;
            let work_grew = calls.unwrap_or_else(|| {
                grew_beyond_noise(
                    (at_half.at_work, at_half.samples),
                    (last.at_work, last.samples),
                )
            });
            thread_per_client.then(|| {
                let growth = Growth {
                    pool: pool.to_string(),
                    clients: by.keys().copied().collect(),
                    threads: by.values().map(|seen| seen.threads).collect(),
                    busy_share: if last.threads > 0.0 {
                        last.at_work / last.threads
                    } else {
                        0.0
                    },
                };
                (growth, work_grew)
            })
        })
        .collect()
}

/// Whether the calls the mock counted kept growing past the knee: its most in flight at once
/// at the largest step more than at every step up to half its clients; `None` when the mock
/// counted none. A limit in front of the calls holds the most at once at its size exactly (a
/// bound, not an average: no noise to allow for), so once a step up to half the largest
/// reached it no later step exceeds it, and the threads that grew wait behind it: the ceiling
/// is the limit, direct evidence no count of threads overrides. socat forks a process per
/// connection, each relaying to a pool of 6: 25 processes at 24 clients, the mock's 6 in
/// flight at 12 clients and at 24. A pool that gives every call a thread makes its calls grow
/// with its threads (java-rxjava: 128 at 128 clients, 256 at 256).
fn calls_grew(steps: &[Step]) -> Option<bool> {
    let largest = steps.iter().map(|s| s.clients).max()?;
    let most_in_flight = |at: &dyn Fn(u32) -> bool| {
        steps
            .iter()
            .filter(|s| at(s.clients))
            .filter_map(|s| s.downstream_inflight.map(|d| d.max))
            .max()
    };
    let at_largest = most_in_flight(&|clients| clients == largest)?;
    let up_to_half = most_in_flight(&|clients| 2 * clients <= largest)?;
    Some(at_largest > up_to_half)
}

/// The finding, made `growing-pool` when a pool grew instead of queueing past its knee.
/// `counting_every_shortfall` decides again with the steps the mock saw all in flight counted
/// as short of the ideal line: when a pool gives every call a thread, the mock sees them all
/// in flight however far throughput falls (the threads wait for the CPU, not for a slot), so
/// the first finding can miss the knee (`no-limit-found`, or stalls found at a later step).
pub(crate) fn reconsider(
    finding: Finding,
    evidence: &Evidence<'_>,
    counting_every_shortfall: impl FnOnce() -> Finding,
) -> Finding {
    let (steps, context) = (evidence.steps, evidence.context);
    if let Some(growing) = with_growing_pool(&finding, steps, context) {
        return growing;
    }
    let all_in_flight = finding
        .facts
        .iter()
        .any(|fact| matches!(fact, Fact::AllInFlight { .. }));
    if all_in_flight {
        let strict = counting_every_shortfall();
        if let Some(growing) = with_growing_pool(&strict, steps, context) {
            return growing;
        }
    }
    with_pool_grown_in_front(finding, steps)
}

/// `finding` with [`Fact::PoolGrewInFront`] when its limit is one the requests wait behind (a
/// pool, a connection limit) and a pool gave each of them a thread in front of it.
fn with_pool_grown_in_front(mut finding: Finding, steps: &[Step]) -> Finding {
    let behind_a_limit = matches!(finding.kind, Kind::BlockingPool | Kind::ConnectionLimit);
    let Some(knee) = finding.knee_clients.filter(|_| behind_a_limit) else {
        return finding;
    };
    let Some(growth) = pool_grown_in_front(steps, knee) else {
        return finding;
    };
    let largest = growth.clients.last().copied();
    let at_largest = || steps.iter().filter(|step| Some(step.clients) == largest);
    let calls_at_largest = at_largest()
        .filter_map(|step| step.downstream_inflight.map(|d| d.max))
        .max();
    let named_in_stacks = at_largest().find_map(|step| {
        crate::place::dumped_pool_that_grew(step, &growth.pool, &growth.clients, &growth.threads)
            .map(|dumped| dumped.pool.clone())
    });
    finding.facts.push(Fact::PoolGrewInFront {
        pool: growth.pool,
        clients: growth.clients,
        threads: growth.threads,
        knee_clients: knee,
        calls_at_largest,
        named_in_stacks,
    });
    finding
}

/// `finding` made `growing-pool`, when a pool grew instead of queueing past its knee.
fn with_growing_pool(finding: &Finding, steps: &[Step], context: &SweepContext) -> Option<Finding> {
    let plateau_kind = match finding.kind {
        Kind::BlockingPool | Kind::CpuBound | Kind::Contention | Kind::MachineSaturated => true,
        Kind::ConnectionLimit => context.mock_max_connections.is_none(),
        _ => false,
    };
    let knee = finding.knee_clients.filter(|_| plateau_kind)?;
    let growth = growing_pool(steps, knee)?;
    let mut growing = finding.clone();
    growing.facts.push(Fact::GrowingPool {
        pool: growth.pool,
        clients: growth.clients,
        threads: growth.threads,
        knee_clients: knee,
        busy_share: growth.busy_share,
        instead_of: finding.kind,
    });
    growing.kind = Kind::GrowingPool;
    // Stalls' limit is the requests between two stalls, no size of this pool.
    if finding.kind == Kind::ConnectionLimit {
        growing.limit = None;
    }
    Some(growing)
}

/// What stopped the growing pool, from the kind the plateau alone gave and its limit, and
/// whether the interpreter lock decided that kind.
fn stopped_by(instead_of: Kind, limit: Option<f64>, interpreter_lock: bool) -> String {
    match (instead_of, limit) {
        (Kind::CpuBound, _) if interpreter_lock => {
            "CPython's interpreter lock (the GIL): one thread runs Python at a time".to_string()
        }
        (Kind::CpuBound, Some(cores)) => format!("the CPU, about {} cores busy", count(cores)),
        (Kind::CpuBound, None) => "the CPU".to_string(),
        (Kind::MachineSaturated, _) => "the machine's CPU".to_string(),
        (Kind::Contention, _) => "contention between its own threads".to_string(),
        (Kind::ConnectionLimit, _) => {
            "something that stalls them all at once, every so often (the stalls below)".to_string()
        }
        (_, Some(held)) => format!(
            "whatever its threads wait for, about {} requests in service at once by Little's law",
            count(held)
        ),
        (_, None) => "whatever its threads wait for".to_string(),
    }
}

/// The summary of a `growing-pool` finding.
pub fn summary(finding: &Finding) -> String {
    let Some(Fact::GrowingPool {
        pool,
        clients,
        threads,
        knee_clients,
        instead_of,
        ..
    }) = finding
        .facts
        .iter()
        .find(|fact| matches!(fact, Fact::GrowingPool { .. }))
    else {
        return String::new();
    };
    let (knee, instead_of) = (*knee_clients, *instead_of);
    let (Some(&largest), Some(&top)) = (clients.last(), threads.last()) else {
        return String::new();
    };
    // The place names the pool as the runtime's stacks do, with their count, where `/proc`
    // saw only the process (CPython): the summary says what the place says.
    let (pool, top, largest) = match finding.facts.iter().find_map(|fact| match fact {
        Fact::Place { place } if place.kind == Some(chokepoint_result::PlaceKind::GrowingPool) => {
            Some(place)
        }
        _ => None,
    }) {
        Some(place) => (
            place.pool.as_deref().unwrap_or(pool),
            place.size.unwrap_or(top),
            place.clients,
        ),
        None => (pool.as_str(), top, largest),
    };
    let stops = match &finding.plateau {
        Some(plateau) => format!(
            "Throughput stops at {} req/s from {} on",
            rate(plateau.throughput_rps),
            clients_words(knee)
        ),
        None => format!(
            "Throughput stops following clients from {} on",
            clients_words(knee)
        ),
    };
    format!(
        "{stops} while pool `{pool}` grows a thread per client instead of queueing ({} threads at \
         {largest} clients); what stops it is {}.",
        count(top),
        stopped_by(
            instead_of,
            finding.limit,
            finding
                .facts
                .iter()
                .any(|fact| matches!(fact, Fact::InterpreterLock { .. }))
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use chokepoint_result::{LoadReport, PoolThreads, ThreadsByPool};

    /// A step at `clients` where `pool` had `threads` threads, `busy` of them at work.
    fn step(clients: u32, pools: &[(&str, f64, f64)]) -> Step {
        Step {
            load: LoadReport {
                clients,
                ..LoadReport::default()
            },
            threads_by_pool: Some(ThreadsByPool {
                interval_ms: 250,
                samples: 12,
                pools: pools
                    .iter()
                    .map(|&(pool, threads, busy)| PoolThreads {
                        pool: pool.to_string(),
                        most: ThreadCounts {
                            threads,
                            ..ThreadCounts::default()
                        },
                        mean: ThreadCounts {
                            threads,
                            running: busy / 2.0,
                            socket_wait: busy / 2.0,
                            lock_wait: threads - busy,
                            ..ThreadCounts::default()
                        },
                        waits_on: Vec::new(),
                        main_threads: None,
                    })
                    .collect(),
            }),
            ..Step::default()
        }
    }

    /// A step where `pool`'s `threads` threads are all computing, `running` at once.
    fn cpu_step(clients: u32, pool: &str, threads: f64, running: f64) -> Step {
        let mut step = step(clients, &[(pool, threads, 0.0)]);
        let observed = step.threads_by_pool.as_mut().unwrap();
        observed.pools[0].mean.running = running;
        observed.pools[0].mean.lock_wait = 0.0;
        step
    }

    /// A step where a server's `threads` (one acceptor among them, in `poll` at every load)
    /// take turns on one interpreter lock, `running` at once on average.
    fn gil_step(clients: u32, threads: f64, running: f64) -> Step {
        let mut step = cpu_step(clients, "python3", threads, running);
        let observed = step.threads_by_pool.as_mut().unwrap();
        observed.pools[0].mean.socket_wait = 1.0;
        observed.pools[0].mean.lock_wait = threads - running - 1.0;
        step
    }

    #[test]
    fn a_cached_pool_that_grows_past_the_knee_is_named_with_its_threads_per_step() {
        // java-pools /cached on the busy 2-core machine (threads: the most one sample saw, at
        // work: running + socket wait, mean): the steps in the order the search ran them, a
        // cached pool keeps idle threads 60 s, so 96 after 128 still has 129.
        let steps = [
            step(1, &[("pool-1-thread", 2.0, 1.0), ("GC Thread", 2.0, 0.0)]),
            step(8, &[("pool-1-thread", 9.0, 8.0), ("GC Thread", 2.0, 0.0)]),
            step(
                16,
                &[("pool-1-thread", 17.0, 15.5), ("GC Thread", 2.0, 0.0)],
            ),
            step(
                32,
                &[("pool-1-thread", 34.0, 29.6), ("GC Thread", 2.0, 0.0)],
            ),
            step(
                64,
                &[("pool-1-thread", 65.0, 49.8), ("GC Thread", 2.0, 0.0)],
            ),
            step(
                128,
                &[("pool-1-thread", 129.0, 97.5), ("GC Thread", 2.0, 0.0)],
            ),
            step(
                96,
                &[("pool-1-thread", 129.0, 32.5), ("GC Thread", 2.0, 0.0)],
            ),
        ];
        let growth = growing_pool(&steps, 32).expect("the cached pool grew");
        assert_eq!(growth.pool, "pool-1-thread");
        assert_eq!(growth.clients, vec![1, 8, 16, 32, 64, 96, 128]);
        assert_eq!(
            growth.threads,
            vec![2.0, 9.0, 17.0, 34.0, 65.0, 129.0, 129.0]
        );
        assert!(
            (growth.busy_share - 97.5 / 129.0).abs() < 1e-9,
            "{}",
            growth.busy_share
        );
    }

    #[test]
    fn a_pool_that_kept_a_thread_per_client_to_twice_a_late_knee_is_named() {
        // java-rxjava (RxJava 3's Schedulers.io(), held out, session 24), its second sweep:
        // the plateau crept on to 256 clients and the search put the knee at 128. Threads: the
        // most one sample saw; at work: running + network, mean; in the order the search ran.
        let steps = [
            step(1, &[("RxCachedThreadS", 2.0, 1.25)]),
            step(8, &[("RxCachedThreadS", 9.0, 5.0)]),
            step(32, &[("RxCachedThreadS", 32.0, 19.8)]),
            step(128, &[("RxCachedThreadS", 120.0, 80.0)]),
            step(80, &[("RxCachedThreadS", 123.0, 43.0)]),
            step(104, &[("RxCachedThreadS", 123.0, 58.6)]),
            step(116, &[("RxCachedThreadS", 123.0, 59.9)]),
            step(256, &[("RxCachedThreadS", 240.0, 135.7)]),
        ];
        let mut steps = steps;
        // The mock's most calls in flight at once: they grew with the threads.
        for (step, most) in steps.iter_mut().zip([1, 8, 32, 108, 80, 104, 116, 255]) {
            step.downstream_inflight = Some(chokepoint_result::DownstreamInFlight {
                mean: most as f64 / 2.0,
                max: most,
            });
        }
        let growth = growing_pool(&steps, 128).expect("the io scheduler grew");
        assert_eq!(growth.pool, "RxCachedThreadS");
        assert_eq!(growth.threads.last(), Some(&240.0));
        // At 1.75× the same knee, the sweep has not shown it kept growing.
        let short: Vec<Step> = steps
            .iter()
            .filter(|s| s.clients < 256)
            .cloned()
            .chain([step(224, &[("RxCachedThreadS", 224.0, 120.0)])])
            .collect();
        assert_eq!(growing_pool(&short, 128), None);
    }

    #[test]
    fn a_pool_stopped_by_the_cpu_whose_threads_at_work_grew_slower_than_its_clients_is_named() {
        // java-rxjava in session 26's first clean-clone run, read from its log (`/proc` per
        // step: most threads, mean running, on the network, parked), where it came out
        // `no-limit-found`: from 128 to 256 clients the threads at work went from 80 to 117,
        // not 1.5×, while 101 of the pool's threads idled and 43 waited on the JDK server's
        // lock. The log printed no row of this pool at 1 client; the steps from 2 on are
        // enough. Samples per step: 8, fewer than the sampler takes in a step, so the noise
        // allowed is larger than it was.
        let seen = |clients, threads, running, network, parked, calls: u64| {
            let mut step = step(clients, &[("RxCachedThreadS", threads, 0.0)]);
            let observed = step.threads_by_pool.as_mut().unwrap();
            observed.samples = 8;
            let mean = &mut observed.pools[0].mean;
            (mean.running, mean.socket_wait, mean.lock_wait) = (running, network, parked);
            step.downstream_inflight = Some(chokepoint_result::DownstreamInFlight {
                mean: calls as f64 / 2.0,
                max: calls,
            });
            step
        };
        let steps = [
            seen(2, 2.0, 0.25, 1.00, 0.75, 2),
            seen(8, 9.0, 0.50, 4.17, 4.33, 8),
            seen(32, 32.0, 2.38, 14.75, 14.88, 26),
            seen(128, 126.0, 32.14, 48.29, 45.29, 128),
            seen(256, 256.0, 34.60, 82.80, 138.60, 256),
        ];
        for knee in [32, 128] {
            let growth = growing_pool(&steps, knee).expect("the io scheduler grew");
            assert_eq!(growth.threads.last(), Some(&256.0), "knee {knee}");
        }
        // Without the mock's counts, `/proc`'s threads at work decide: 80.4 → 117.4 over 8
        // samples each is 7.4 standard errors.
        let no_mock: Vec<Step> = steps
            .iter()
            .cloned()
            .map(|mut s| {
                s.downstream_inflight = None;
                s
            })
            .collect();
        assert!(growing_pool(&no_mock, 128).is_some());
    }

    #[test]
    fn on_64_cores_a_pool_of_1000_behind_a_grown_pool_is_told_from_a_pool_that_grew() {
        // A pool that grew a thread per client to 2048 on a 64-core machine, knee at 512;
        // its work at half the largest step and at the largest: (threads at work, the mock's
        // most in flight). Behind 1000 pooled connections both stay at 1000.
        let scaled = |at_half: (f64, u64), at_largest: (f64, u64), mock: bool| {
            let one = |clients: u32, (working, calls): (f64, u64)| {
                let mut step = step(
                    clients,
                    &[("pool-1-thread", f64::from(clients) + 1.0, working)],
                );
                if mock {
                    step.downstream_inflight = Some(chokepoint_result::DownstreamInFlight {
                        mean: calls as f64 * 0.9,
                        max: calls,
                    });
                }
                step
            };
            let steps = [
                one(64, (64.0, 64)),
                one(256, (250.0, 256)),
                one(512, (480.0, 512)),
                one(1024, at_half),
                one(2048, at_largest),
            ];
            // Named growing, or grown in front of a limit: one or the other, never both.
            match (growing_pool(&steps, 512), pool_grown_in_front(&steps, 512)) {
                (Some(_), None) => true,
                (None, Some(front)) => {
                    assert_eq!(front.threads.last(), Some(&2049.0));
                    false
                }
                other => panic!("{other:?}"),
            }
        };
        for mock in [true, false] {
            assert!(
                !scaled((1000.0, 1000), (1000.0, 1000), mock),
                "capped, mock {mock}"
            );
            assert!(
                scaled((900.0, 1024), (1400.0, 2048), mock),
                "grew, mock {mock}"
            );
        }
        // The calls decide over the threads at work when the mock counted them.
        assert!(!scaled((900.0, 1000), (1400.0, 1000), true));
        assert!(scaled((1000.0, 1024), (1000.0, 2048), true));
    }

    #[test]
    fn a_pool_of_a_thread_per_client_in_front_of_a_limit_is_told_on_any_machine() {
        // (why, threads per step at 1 → 4 → 16 → 64 clients, the mock's most at once at each,
        // told in front). The knee at 16; the pool's threads at work are the calls it holds.
        let table: [(&str, [f64; 4], [u64; 4], bool); 4] = [
            (
                "a thread per connection in front of 6 workers (2 cores)",
                [3.0, 6.0, 18.0, 66.0],
                [1, 4, 6, 6],
                true,
            ),
            (
                "Tomcat's 200 at 64 clients of 256: a bounded pool, not one per client",
                [10.0, 10.0, 16.0, 40.0],
                [1, 4, 16, 40],
                false,
            ),
            (
                "the calls grew with the threads: a growing pool, not one in front",
                [2.0, 5.0, 17.0, 65.0],
                [1, 4, 16, 64],
                false,
            ),
            (
                "a pool fixed at its size from the start: no growth past the knee",
                [65.0, 65.0, 65.0, 65.0],
                [1, 4, 16, 16],
                false,
            ),
        ];
        for (why, threads, calls, told) in table {
            for scale in [1, 8, 32] {
                let steps: Vec<Step> = [1u32, 4, 16, 64]
                    .iter()
                    .zip(threads.iter().zip(calls))
                    .map(|(&clients, (&t, c))| {
                        let clients = clients * scale;
                        let (t, c) = (t * f64::from(scale), c * u64::from(scale));
                        let mut step = step(clients, &[("pool-1-thread", t, c as f64)]);
                        step.downstream_inflight = Some(chokepoint_result::DownstreamInFlight {
                            mean: c as f64 * 0.9,
                            max: c,
                        });
                        step
                    })
                    .collect();
                assert_eq!(
                    pool_grown_in_front(&steps, 16 * scale).is_some(),
                    told,
                    "{why}, ×{scale}"
                );
            }
        }
    }

    #[test]
    fn growth_is_told_from_the_noise_of_a_mean_over_samples() {
        // (why, earlier (mean, samples), later, grew)
        let table = [
            ("a cap of 25 held flat", (25.0, 12), (25.0, 12), false),
            (
                "a cap of 25, one sample's worth apart",
                (24.0, 12),
                (25.5, 12),
                false,
            ),
            (
                "25 to 32 over 12 samples: 3.4 standard errors",
                (25.0, 12),
                (32.0, 12),
                true,
            ),
            ("25 to 32 over 3 samples: 1.7", (25.0, 3), (32.0, 3), false),
            (
                "nothing at work at either step",
                (0.0, 12),
                (0.0, 12),
                false,
            ),
            (
                "a cap of 1000 on 64 cores, 2 % apart",
                (1000.0, 16),
                (1020.0, 16),
                false,
            ),
            ("1000 to 1100 on 64 cores", (1000.0, 16), (1100.0, 16), true),
            ("fewer at the later step", (30.0, 12), (20.0, 12), false),
        ];
        for (why, earlier, later, grew) in table {
            assert_eq!(grew_beyond_noise(earlier, later), grew, "{why}");
        }
    }

    #[test]
    fn processes_that_grow_in_front_of_a_ceiling_the_mock_saw_are_not_a_growing_pool() {
        // socat, a process per connection, in front of a pool of 6 (tests/sweeps/forwarders.rs,
        // session 24's full run): the processes grew a relay per client, the mock's calls
        // stayed at 6.
        let with_calls = |clients: u32, socat: f64, calls: u64| {
            let mut step = step(clients, &[("socat", socat, socat)]);
            step.downstream_inflight = Some(chokepoint_result::DownstreamInFlight {
                mean: calls as f64,
                max: calls,
            });
            step
        };
        let behind_socat = [
            with_calls(1, 2.0, 1),
            with_calls(3, 4.0, 3),
            with_calls(12, 13.0, 6),
            with_calls(24, 25.0, 6),
        ];
        assert_eq!(growing_pool(&behind_socat, 12), None);
        // The same processes with calls that grew with them: a growing pool.
        let calls_grew = [
            with_calls(1, 2.0, 1),
            with_calls(3, 4.0, 3),
            with_calls(12, 13.0, 12),
            with_calls(24, 25.0, 24),
        ];
        assert!(growing_pool(&calls_grew, 12).is_some());
        // No mock: the threads alone decide, as before.
        let no_mock: Vec<Step> = behind_socat
            .iter()
            .cloned()
            .map(|mut s| {
                s.downstream_inflight = None;
                s
            })
            .collect();
        assert!(growing_pool(&no_mock, 12).is_some());
    }

    #[test]
    fn pools_that_do_not_grow_past_the_knee_or_wait_behind_another_limit_are_not_named() {
        // (why, steps, knee)
        let table: Vec<(&str, Vec<Step>, u32)> = vec![
            (
                "a fixed pool of 20 (seed 000's actors)",
                vec![
                    step(10, &[("actor-pool", 20.0, 10.0)]),
                    step(20, &[("actor-pool", 20.0, 20.0)]),
                    step(40, &[("actor-pool", 20.0, 20.0)]),
                    step(80, &[("actor-pool", 20.0, 20.0)]),
                ],
                20,
            ),
            (
                "a fixed pool of 512, larger than the clients (java-thrash)",
                vec![
                    step(8, &[("pool-1-thread", 512.0, 8.0)]),
                    step(16, &[("pool-1-thread", 512.0, 16.0)]),
                    step(64, &[("pool-1-thread", 512.0, 64.0)]),
                ],
                16,
            ),
            (
                "a thread per connection waiting for a ThreadPoolExecutor(6) (py-threadpool)",
                vec![
                    step(3, &[("python3", 10.0, 3.0)]),
                    step(6, &[("python3", 13.0, 6.0)]),
                    step(12, &[("python3", 19.0, 6.0)]),
                    step(24, &[("python3", 31.0, 6.0)]),
                ],
                12,
            ),
            (
                "a pool that grew up to the knee and stopped (a Tomcat at its maxThreads)",
                vec![
                    step(50, &[("http-nio-8080-e", 50.0, 45.0)]),
                    step(100, &[("http-nio-8080-e", 100.0, 95.0)]),
                    step(200, &[("http-nio-8080-e", 200.0, 190.0)]),
                    step(400, &[("http-nio-8080-e", 200.0, 190.0)]),
                ],
                200,
            ),
            (
                "the sweep stopped at the knee: no growth past it to see",
                vec![
                    step(16, &[("pool-1-thread", 17.0, 16.0)]),
                    step(32, &[("pool-1-thread", 33.0, 32.0)]),
                    step(40, &[("pool-1-thread", 41.0, 40.0)]),
                ],
                32,
            ),
            (
                "the demo's /blocking: an elastic pool, 25 of its threads in the downstream \
                 client, the others parked waiting for one of its connections",
                vec![
                    step(8, &[("elastic-pool", 9.0, 8.0)]),
                    step(16, &[("elastic-pool", 17.0, 16.0)]),
                    step(32, &[("elastic-pool", 33.0, 25.0)]),
                    step(50, &[("elastic-pool", 51.0, 25.0)]),
                    step(128, &[("elastic-pool", 129.0, 25.0)]),
                ],
                32,
            ),
            (
                "the demo's /blocking with the knee placed below its 25 connections: its \
                 threads at work grew up to them, and stayed there from half the largest step on",
                vec![
                    step(8, &[("elastic-pool", 9.0, 8.0)]),
                    step(16, &[("elastic-pool", 17.0, 16.0)]),
                    step(32, &[("elastic-pool", 33.0, 25.0)]),
                    step(64, &[("elastic-pool", 65.0, 25.0)]),
                    step(128, &[("elastic-pool", 129.0, 25.0)]),
                ],
                16,
            ),
            (
                "the demo's /cpu on a busy machine: tokio's spawn_blocking pool grew a thread \
                 per client to 2.75× its knee, all of them computing, none blocked",
                vec![
                    cpu_step(1, "cp-demo", 3.0, 1.0),
                    cpu_step(2, "cp-demo", 4.0, 2.0),
                    cpu_step(4, "cp-demo", 6.0, 4.0),
                    cpu_step(8, "cp-demo", 10.0, 8.0),
                    cpu_step(11, "cp-demo", 17.0, 11.0),
                ],
                4,
            ),
            (
                "a pool in blocking calls that grew a thread per client, but the sweep \
                 stopped at 1.75× its knee",
                vec![
                    step(1, &[("pool-1-thread", 2.0, 1.0)]),
                    step(8, &[("pool-1-thread", 9.0, 8.0)]),
                    step(16, &[("pool-1-thread", 17.0, 16.0)]),
                    step(28, &[("pool-1-thread", 29.0, 28.0)]),
                ],
                16,
            ),
            (
                "the demo's /cpu on a quiet machine: tokio's spawn_blocking pool grew to 40 \
                 threads at 32 clients, knee at 2, all of them computing, none blocked",
                vec![
                    cpu_step(1, "cp-demo", 3.0, 1.0),
                    cpu_step(2, "cp-demo", 4.0, 2.0),
                    cpu_step(8, "cp-demo", 10.0, 8.0),
                    cpu_step(16, "cp-demo", 20.0, 16.0),
                    cpu_step(32, "cp-demo", 40.0, 32.0),
                ],
                2,
            ),
            (
                "a thread per connection, 8 of them sleeping in a slot, the rest parked on a \
                 semaphore (py-pool-timeout)",
                vec![
                    step(4, &[("python3", 5.0, 0.0)]),
                    step(8, &[("python3", 9.0, 0.0)]),
                    step(32, &[("python3", 33.0, 0.0)]),
                    step(64, &[("python3", 65.0, 0.0)]),
                ],
                8,
            ),
            (
                "a thread per connection waiting for the GIL (py-cpu-gil, flake-hunt round 5): \
                 one acceptor in poll at every step, 4.1 of 17 threads at work at 16 clients",
                vec![
                    gil_step(1, 2.0, 1.0),
                    gil_step(2, 3.0, 1.5),
                    gil_step(4, 5.0, 1.6),
                    gil_step(8, 9.0, 1.9),
                    gil_step(16, 17.0, 3.1),
                ],
                2,
            ),
            (
                "a pool seen at some steps only",
                vec![
                    step(8, &[("other", 2.0, 1.0)]),
                    step(32, &[("pool-1-thread", 33.0, 32.0)]),
                    step(64, &[("pool-1-thread", 65.0, 64.0)]),
                ],
                8,
            ),
        ];
        for (why, steps, knee) in table {
            assert_eq!(growing_pool(&steps, knee), None, "{why}");
        }
    }

    #[test]
    fn the_finding_says_the_pool_grew_and_what_stopped_it() {
        let steps = [
            step(8, &[("pool-1-thread", 9.0, 8.0)]),
            step(32, &[("pool-1-thread", 33.0, 30.0)]),
            step(128, &[("pool-1-thread", 129.0, 100.0)]),
        ];
        let mut cpu = Finding::bare(Kind::CpuBound, Vec::new());
        cpu.knee_clients = Some(32);
        cpu.limit = Some(1.6);
        let context = SweepContext::default();
        let sweep = Evidence {
            steps: &steps,
            context: &context,
            catalogue: crate::catalogue::Catalogue::built_in(),
        };
        let finding = reconsider(cpu, &sweep, || unreachable!("no step was all in flight"));
        assert_eq!(finding.kind, Kind::GrowingPool);
        assert_eq!(finding.limit, Some(1.6));
        let text = crate::describe(&finding);
        assert!(
            text.summary.contains(
                "pool `pool-1-thread` grows a thread per client instead of queueing (129 threads at 128 clients)"
            ) && text.summary.contains("what stops it is the CPU, about 1.6 cores busy"),
            "{}",
            text.summary
        );
        let evidence = text.evidence.join(" ");
        assert!(
            evidence.contains("9 → 33 → 129 threads at 8 → 32 → 128 clients"),
            "{evidence}"
        );
        assert!(
            text.key_evidence[0].contains("9 → 33 → 129 threads"),
            "{:?}",
            text.key_evidence
        );

        // The CPU of one core by CPython's interpreter lock: the lock is named.
        let mut locked = Finding::bare(Kind::CpuBound, Vec::new());
        locked.knee_clients = Some(32);
        locked.limit = Some(1.0);
        locked.facts.push(Fact::InterpreterLock {
            clients: vec![32, 128],
            waiting: 12.0,
            cores_busy: Some(0.9),
            machine_cores: 2,
            mock_max_in_flight: None,
        });
        let finding = reconsider(locked, &sweep, || unreachable!("no step was all in flight"));
        let text = crate::describe(&finding);
        assert!(
            text.summary.contains(
                "what stops it is CPython's interpreter lock (the GIL): one thread runs Python at a time"
            ),
            "{}",
            text.summary
        );

        // A finding without a plateau is left alone.
        let none = Finding::bare(Kind::NoLimitFound, Vec::new());
        let none = reconsider(none, &sweep, || unreachable!());
        assert_eq!(none.kind, Kind::NoLimitFound);
    }
}
