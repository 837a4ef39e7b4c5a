//! A step's observation of the target: a thread (`cp-observe`) that samples the target's
//! process tree, threads and connections at a fixed interval while the step runs, and folds
//! the samples into the step's typed records ([`ThreadsByPool`], [`Connections`]).
//!
//! Processes come and go between samples: the tree is listed again at every sample. A root
//! process that is gone or unreadable becomes an [`ObservationNote`]; the step goes on.
use crate::cgroup::{QuotaGroup, Throttling};
use crate::runtime_cores;
use crate::sockets::{
    client_side_inodes, count_connections, listen_overflows, socket_inodes, socket_table,
    ConnectionSample, StateCounts,
};
use crate::stacks::{tool_for, StackOptions};
use crate::threads::{sample_threads, Activity, ThreadSample};
use crate::tree::process_tree;
use chokepoint_result::{
    median, ConnectionCounts, Connections, CpuQuota, ObservationNote, PeerConnections, PoolThreads,
    SocketCounts, StackEvidence, ThreadCounts, ThreadsByPool, WaitReason,
};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Downstream peer ports kept per step besides the mock's (the busiest ones).
const PEER_PORTS_KEPT: usize = 8;

/// Which processes and threads are the target, and its ports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TargetSpec {
    /// The target's root processes; each one's descendants are the target too. The first is
    /// the service: its stacks, CPU quota and runtime's core count are read (behind a
    /// forwarder, the process behind it).
    pub roots: Vec<i32>,
    /// Threads whose names start with one of these are not the target's (an in-process target
    /// shares its process with chokepoint's generator and mock).
    pub skip_thread_prefixes: Vec<String>,
    /// The port the target listens on (the swept URL's).
    pub listen_port: Option<u16>,
    /// The mock's port, named among the downstream connections.
    pub mock_port: Option<u16>,
    /// Which runtime stack tools may be used (see [`crate::stacks`]).
    pub stacks: StackOptions,
}

/// What a step's samples add up to (JSON on the wire of the observer beside the target).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepObservation {
    /// Every process seen as the target in some sample.
    pub observed_pids: Vec<i32>,
    /// Threads by pool; `None` when no sample saw a thread.
    pub threads_by_pool: Option<ThreadsByPool>,
    /// Connections; `None` when no sample could read them.
    pub connections: Option<Connections>,
    /// What the runtime's stack tool saw; `None` without one.
    pub stacks: Option<StackEvidence>,
    /// The CPU quota of the first root's group and its throttling during the step; `None`
    /// without a quota.
    pub cpu_quota: Option<CpuQuota>,
    /// Why evidence is missing.
    pub notes: Vec<ObservationNote>,
}

/// One look at the target.
#[derive(Debug, Clone, Default)]
struct Sample {
    pids: Vec<i32>,
    threads: Vec<ThreadSample>,
    connections: Option<ConnectionSample>,
}

/// Samples the target on its own thread until [`Observer::finish`].
#[derive(Debug)]
pub struct Observer {
    stop: mpsc::Sender<()>,
    thread: std::thread::JoinHandle<StepObservation>,
    stacks: Option<StacksWatch>,
    /// The quota's group and its counters at the step's start, and the root it is of.
    quota: Option<(QuotaGroup, Throttling, i32)>,
}

/// The stack tool's thread for the step, or the note saying why there is none.
#[derive(Debug)]
enum StacksWatch {
    Watching {
        stop: mpsc::Sender<()>,
        thread: std::thread::JoinHandle<(Option<StackEvidence>, Vec<ObservationNote>)>,
        /// Set by the tool once it has had its first look at the step.
        looked: Arc<AtomicBool>,
    },
    Unavailable(ObservationNote),
}

impl StacksWatch {
    fn start(spec: &TargetSpec) -> Option<StacksWatch> {
        let root = *spec.roots.first()?;
        let mut tool = match tool_for(root, &spec.stacks) {
            Ok(tool) => tool?,
            Err(note) => return Some(StacksWatch::Unavailable(note)),
        };
        let (stop, stopped) = mpsc::channel::<()>();
        let looked = Arc::new(AtomicBool::new(false));
        let first_look = looked.clone();
        let thread = std::thread::Builder::new()
            .name("cp-stacks".into())
            .spawn(move || tool.watch_step(&stopped, &first_look))
            .ok()?;
        Some(StacksWatch::Watching {
            stop,
            thread,
            looked,
        })
    }

    fn looked(&self) -> bool {
        match self {
            StacksWatch::Watching { looked, .. } => looked.load(Ordering::Acquire),
            StacksWatch::Unavailable(_) => true,
        }
    }

    fn finish(self) -> (Option<StackEvidence>, Vec<ObservationNote>) {
        match self {
            StacksWatch::Watching { stop, thread, .. } => {
                let _ = stop.send(());
                thread.join().unwrap_or_default()
            }
            StacksWatch::Unavailable(note) => (None, vec![note]),
        }
    }
}

impl Observer {
    /// Starts sampling now and every `interval`. `None` when the thread cannot be started.
    pub fn start(spec: TargetSpec, interval: Duration) -> Option<Observer> {
        let stacks = StacksWatch::start(&spec);
        let quota = spec.roots.first().and_then(|&root| {
            let group = QuotaGroup::of(root)?;
            Some((group.throttling()?, group, root))
        });
        let quota = quota.map(|(start, group, root)| (group, start, root));
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("cp-observe".into())
            .spawn(move || {
                let mut samples = Vec::new();
                let mut notes = Vec::new();
                let root = spec.roots.first().copied();
                let overflows_before = root.and_then(listen_overflows);
                loop {
                    samples.push(sample(&spec, &mut notes));
                    match stopped.recv_timeout(interval) {
                        Err(mpsc::RecvTimeoutError::Timeout) => {}
                        _ => break,
                    }
                }
                let overflows = overflows_before
                    .zip(root.and_then(listen_overflows))
                    .and_then(|(before, after)| after.checked_sub(before));
                summarize(&spec, &samples, interval, notes, overflows)
            })
            .ok()?;
        Some(Observer {
            stop,
            thread,
            stacks,
            quota,
        })
    }

    /// Whether the stack tool, if there is one, has had its first look at the step.
    pub fn stacks_looked(&self) -> bool {
        self.stacks.as_ref().is_none_or(StacksWatch::looked)
    }

    /// Stops sampling and returns what the samples add up to.
    pub fn finish(self) -> StepObservation {
        let _ = self.stop.send(());
        let mut observation = self.thread.join().unwrap_or_default();
        observation.cpu_quota = self.quota.map(|(group, start, root)| {
            let mut quota = group.since(start);
            quota.runtime_cores = runtime_cores::of(root, quota.cores);
            quota
        });
        if let Some(stacks) = self.stacks {
            let (evidence, notes) = stacks.finish();
            observation.stacks = evidence;
            for note in notes {
                note_once(&mut observation.notes, note);
            }
        }
        observation
    }
}

fn note_once(notes: &mut Vec<ObservationNote>, note: ObservationNote) {
    if !notes.contains(&note) {
        notes.push(note);
    }
}

/// Lists the target's processes, then reads their threads and sockets.
fn sample(spec: &TargetSpec, notes: &mut Vec<ObservationNote>) -> Sample {
    let mut pids = BTreeSet::new();
    for &root in &spec.roots {
        match process_tree(root) {
            Ok(tree) => pids.extend(tree),
            Err(_) => note_once(notes, ObservationNote::ProcessGone { pid: root }),
        }
    }
    let mut threads = Vec::new();
    let mut owned = HashSet::new();
    let mut sockets_read = false;
    for &pid in &pids {
        match sample_threads(pid) {
            Ok(found) => threads.extend(found.into_iter().filter(|t| {
                !spec
                    .skip_thread_prefixes
                    .iter()
                    .any(|prefix| t.name.starts_with(prefix.as_str()))
            })),
            Err(procfs::ProcError::PermissionDenied(_)) => note_once(
                notes,
                ObservationNote::Unreadable {
                    pid,
                    what: "its threads (/proc/PID/task)".into(),
                },
            ),
            Err(_) => {} // ended since the listing: a worker that came and went
        }
        match socket_inodes(pid) {
            Ok(inodes) => {
                owned.extend(inodes);
                sockets_read = true;
            }
            Err(procfs::ProcError::PermissionDenied(_)) => note_once(
                notes,
                ObservationNote::Unreadable {
                    pid,
                    what: "its sockets (/proc/PID/fd)".into(),
                },
            ),
            Err(_) => {}
        }
    }
    let pids: Vec<i32> = pids.into_iter().collect();
    let connections = sockets_read.then(|| {
        let table = socket_table(&pids);
        let client_side = client_side_inodes(&table, &owned, spec.listen_port);
        for thread in &mut threads {
            thread.idle_on_a_client(&client_side);
        }
        count_connections(&table, &owned, spec.listen_port)
    });
    Sample {
        pids,
        threads,
        connections,
    }
}

fn summarize(
    spec: &TargetSpec,
    samples: &[Sample],
    interval: Duration,
    notes: Vec<ObservationNote>,
    listen_overflows: Option<u64>,
) -> StepObservation {
    let interval_ms = interval.as_millis() as u64;
    let observed_pids: BTreeSet<i32> = samples.iter().flat_map(|s| s.pids.clone()).collect();
    let thread_samples: Vec<&[ThreadSample]> = samples
        .iter()
        .filter(|s| !s.pids.is_empty())
        .map(|s| s.threads.as_slice())
        .collect();
    let connection_samples: Vec<&ConnectionSample> = samples
        .iter()
        .filter_map(|s| s.connections.as_ref())
        .collect();
    StepObservation {
        observed_pids: observed_pids.into_iter().collect(),
        threads_by_pool: (!thread_samples.is_empty())
            .then(|| threads_by_pool(&thread_samples, interval_ms)),
        connections: (!connection_samples.is_empty()).then(|| {
            connections(
                &connection_samples,
                spec.listen_port,
                spec.mock_port,
                interval_ms,
                listen_overflows,
            )
        }),
        stacks: None,
        cpu_quota: None,
        notes,
    }
}

fn count_into(counts: &mut ThreadCounts, activity: Activity) {
    counts.threads += 1.0;
    let field = match activity {
        Activity::Running => &mut counts.running,
        Activity::SocketWait => &mut counts.socket_wait,
        Activity::LockWait => &mut counts.lock_wait,
        Activity::EventWait => &mut counts.event_wait,
        Activity::Sleeping => &mut counts.sleeping,
        Activity::DiskWait => &mut counts.disk_wait,
        Activity::Other => &mut counts.other,
    };
    *field += 1.0;
}

fn fields(counts: &mut ThreadCounts) -> [&mut f64; 8] {
    [
        &mut counts.threads,
        &mut counts.running,
        &mut counts.socket_wait,
        &mut counts.lock_wait,
        &mut counts.event_wait,
        &mut counts.sleeping,
        &mut counts.disk_wait,
        &mut counts.other,
    ]
}

/// Threads by pool over the samples: the most each state had in one sample, the mean, and
/// what the waiting threads waited on. Pools sorted by their most threads, then by name.
pub fn threads_by_pool(samples: &[&[ThreadSample]], interval_ms: u64) -> ThreadsByPool {
    let n = samples.len().max(1) as f64;
    let mut pools: BTreeMap<&str, PoolThreads> = BTreeMap::new();
    let mut waits: BTreeMap<(&str, &str), f64> = BTreeMap::new();
    for sample in samples {
        let mut this: BTreeMap<&str, (ThreadCounts, f64)> = BTreeMap::new();
        for thread in sample.iter() {
            let (counts, main_threads) = this.entry(&thread.pool).or_default();
            count_into(counts, thread.activity);
            *main_threads += f64::from(u8::from(thread.main_thread));
            if let Some(on) = &thread.waits_on {
                *waits.entry((&thread.pool, on)).or_default() += 1.0;
            }
        }
        for (pool, (mut counts, main_threads)) in this {
            let entry = pools.entry(pool).or_insert_with(|| PoolThreads {
                pool: pool.to_string(),
                main_threads: Some(0.0),
                ..PoolThreads::default()
            });
            entry.main_threads = entry.main_threads.map(|most| most.max(main_threads));
            for (most, one) in fields(&mut entry.most).into_iter().zip(fields(&mut counts)) {
                *most = most.max(*one);
            }
            for (sum, one) in fields(&mut entry.mean).into_iter().zip(fields(&mut counts)) {
                *sum += *one;
            }
        }
    }
    let mut pools: Vec<PoolThreads> = pools
        .into_values()
        .map(|mut pool| {
            for sum in fields(&mut pool.mean) {
                *sum /= n;
            }
            let mut reasons: Vec<WaitReason> = waits
                .iter()
                .filter(|((p, _), _)| *p == pool.pool)
                .map(|((_, on), count)| WaitReason {
                    on: on.to_string(),
                    mean: count / n,
                })
                .collect();
            reasons.sort_by(|a, b| b.mean.total_cmp(&a.mean).then(a.on.cmp(&b.on)));
            reasons.truncate(4);
            pool.waits_on = reasons;
            pool
        })
        .collect();
    pools.sort_by(|a, b| {
        b.most
            .threads
            .total_cmp(&a.most.threads)
            .then(a.pool.cmp(&b.pool))
    });
    ThreadsByPool {
        interval_ms,
        samples: samples.len() as u32,
        pools,
    }
}

fn socket_counts(most: &mut SocketCounts, one: &crate::sockets::StateCounts) {
    most.established = most.established.max(one.established);
    most.time_wait = most.time_wait.max(one.time_wait);
    most.close_wait = most.close_wait.max(one.close_wait);
    most.other = most.other.max(one.other);
    most.unserved = most.unserved.max(one.unserved);
}

/// Connections over the samples: per side and peer address, the most in each state in one
/// sample and the mean established. Peers sorted by most established (the mock's first on a
/// tie), at most [`PEER_PORTS_KEPT`] besides the mock's (named by its port: any address).
pub fn connections(
    samples: &[&ConnectionSample],
    listen_port: Option<u16>,
    mock_port: Option<u16>,
    interval_ms: u64,
    listen_overflows: Option<u64>,
) -> Connections {
    let n = samples.len().max(1) as f64;
    let mut client_side = ConnectionCounts::default();
    let mut peers: BTreeMap<SocketAddr, ConnectionCounts> = BTreeMap::new();
    let add = |into: &mut ConnectionCounts, counts: &StateCounts| {
        socket_counts(&mut into.most, counts);
        into.mean_established += f64::from(counts.established) / n;
        into.mean_unserved += f64::from(counts.unserved) / n;
        into.most_served = into
            .most_served
            .max(counts.established.saturating_sub(counts.unserved));
    };
    let served =
        |counts: &StateCounts| f64::from(counts.established.saturating_sub(counts.unserved));
    let mut half_open_clients = 0.0;
    let mut client_served = Vec::new();
    let mut peers_served: BTreeMap<SocketAddr, Vec<f64>> = BTreeMap::new();
    for sample in samples {
        half_open_clients += f64::from(sample.half_open_clients) / n;
        add(&mut client_side, &sample.client_side);
        client_served.push(served(&sample.client_side));
        for (addr, counts) in &sample.downstream {
            add(peers.entry(*addr).or_default(), counts);
            peers_served.entry(*addr).or_default().push(served(counts));
        }
    }
    client_side.median_served = median(client_served);
    for (addr, counts) in peers.iter_mut() {
        // A peer missing from a sample had none served then.
        let mut seen = peers_served.remove(addr).unwrap_or_default();
        seen.resize(samples.len(), 0.0);
        counts.median_served = median(seen);
    }
    let mut downstream: Vec<PeerConnections> = peers
        .into_iter()
        .map(|(addr, counts)| PeerConnections {
            peer_port: addr.port(),
            peer_addr: Some(addr),
            mock: Some(addr.port()) == mock_port,
            counts,
        })
        .collect();
    if let Some(mock) = mock_port.filter(|_| !downstream.iter().any(|peer| peer.mock)) {
        downstream.push(PeerConnections {
            peer_port: mock,
            peer_addr: None,
            mock: true,
            counts: ConnectionCounts::default(),
        });
    }
    downstream.sort_by(|a, b| {
        b.counts
            .most
            .established
            .cmp(&a.counts.most.established)
            .then(b.mock.cmp(&a.mock))
            .then(a.peer_port.cmp(&b.peer_port))
            .then(a.peer_addr.cmp(&b.peer_addr))
    });
    let mut kept = 0;
    downstream.retain(|peer| {
        kept += usize::from(!peer.mock);
        peer.mock || kept <= PEER_PORTS_KEPT
    });
    Connections {
        interval_ms,
        samples: samples.len() as u32,
        listen_port,
        client_side,
        downstream,
        listen_overflows,
        half_open_clients,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread(pool: &str, activity: Activity, on: Option<&str>) -> ThreadSample {
        ThreadSample {
            name: format!("{pool}-1"),
            pool: pool.into(),
            activity,
            waits_on: on.map(str::to_string),
            socket: None,
            main_thread: false,
        }
    }

    #[test]
    fn pools_count_the_most_and_the_mean_per_state() {
        use Activity::*;
        // Two samples of a pool of 3 (two in a socket read, then all three) and a server
        // thread: the pool's most in a socket wait is 3, its mean 2.5.
        let first = vec![
            thread("actor-pool", SocketWait, Some("poll")),
            thread("actor-pool", SocketWait, Some("poll")),
            thread("actor-pool", Running, None),
            thread("HTTP-Dispatcher", EventWait, Some("epoll_wait")),
        ];
        let second = vec![
            thread("actor-pool", SocketWait, Some("poll")),
            thread("actor-pool", SocketWait, Some("poll")),
            thread("actor-pool", SocketWait, Some("recvfrom")),
            thread("HTTP-Dispatcher", Running, None),
        ];
        let seen = threads_by_pool(&[&first, &second], 250);
        assert_eq!(seen.samples, 2);
        assert_eq!(seen.interval_ms, 250);
        let names: Vec<&str> = seen.pools.iter().map(|p| p.pool.as_str()).collect();
        assert_eq!(names, ["actor-pool", "HTTP-Dispatcher"]);
        let actors = &seen.pools[0];
        assert_eq!(actors.most.threads, 3.0);
        assert_eq!(actors.most.socket_wait, 3.0);
        assert_eq!(actors.mean.socket_wait, 2.5);
        assert_eq!(actors.mean.running, 0.5);
        assert_eq!(
            actors.waits_on,
            vec![
                WaitReason {
                    on: "poll".into(),
                    mean: 2.0
                },
                WaitReason {
                    on: "recvfrom".into(),
                    mean: 0.5
                }
            ]
        );
        let dispatcher = &seen.pools[1];
        assert_eq!(dispatcher.most.event_wait, 1.0);
        assert_eq!(dispatcher.mean.event_wait, 0.5);
    }

    #[test]
    fn a_pools_main_threads_are_the_most_one_sample_saw() {
        use Activity::*;
        // A pre-fork server: a master and two workers, each its process's main thread (one
        // worker gone from the second sample); beside it a JVM's pool of threads.
        let process = |activity| ThreadSample {
            main_thread: true,
            ..thread("gunicorn", activity, None)
        };
        let first = vec![process(Sleeping), process(SocketWait), process(SocketWait)];
        let second = vec![
            process(Sleeping),
            process(SocketWait),
            thread("http-nio-exec", LockWait, Some("futex")),
        ];
        let seen = threads_by_pool(&[&first, &second], 250);
        let main_threads = |name: &str| {
            seen.pools
                .iter()
                .find(|p| p.pool == name)
                .and_then(|p| p.main_threads)
        };
        assert_eq!(main_threads("gunicorn"), Some(3.0));
        assert_eq!(main_threads("http-nio-exec"), Some(0.0));
    }

    fn local(port: u16) -> SocketAddr {
        SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), port)
    }

    #[test]
    fn connections_keep_the_most_per_state_and_name_the_mock() {
        let sample = |client: u32, mock: u32, db: u32| ConnectionSample {
            client_side: StateCounts {
                established: client,
                unserved: client / 5,
                ..StateCounts::default()
            },
            downstream: [
                (
                    local(9090),
                    StateCounts {
                        established: mock,
                        time_wait: mock / 2,
                        unserved: mock / 5,
                        ..StateCounts::default()
                    },
                ),
                (
                    local(5432),
                    StateCounts {
                        established: db,
                        ..StateCounts::default()
                    },
                ),
            ]
            .into_iter()
            .collect(),
            half_open_clients: client / 10,
        };
        let (a, b) = (sample(10, 4, 2), sample(20, 10, 2));
        let seen = connections(&[&a, &b], Some(8080), Some(9090), 250, Some(3));
        assert_eq!(seen.client_side.most.established, 20);
        assert_eq!(seen.client_side.mean_established, 15.0);
        // The client side: the most accepted at once, the mean waiting unaccepted.
        assert_eq!(seen.client_side.most_served, 16);
        assert_eq!(seen.client_side.mean_unserved, 3.0);
        assert_eq!(seen.listen_overflows, Some(3));
        assert_eq!(seen.half_open_clients, 1.5);
        assert_eq!(seen.downstream[0].peer_port, 9090);
        assert_eq!(seen.downstream[0].peer_addr, Some(local(9090)));
        assert!(seen.downstream[0].mock);
        assert_eq!(seen.downstream[0].counts.most.established, 10);
        assert_eq!(seen.downstream[0].counts.most.time_wait, 5);
        assert_eq!(seen.downstream[0].counts.mean_established, 7.0);
        assert_eq!(seen.downstream[0].counts.most_served, 8);
        assert_eq!(seen.downstream[1].peer_port, 5432);
        assert!(!seen.downstream[1].mock);
        // A mock the target never called is still named, with nothing.
        let idle = connections(&[], Some(8080), Some(7000), 250, None);
        assert_eq!(idle.downstream.len(), 1);
        assert_eq!(idle.downstream[0].counts, ConnectionCounts::default());
    }

    #[test]
    fn a_cap_held_most_of_the_time_is_the_median_served_not_a_samples_overcount() {
        // A cap of 8 with a connection opened per request: one sample counts a closing
        // connection and its successor together (9), one catches the gap between them (7).
        let sample = |served: u32, waiting: u32| ConnectionSample {
            client_side: StateCounts {
                established: served + waiting,
                unserved: waiting,
                ..StateCounts::default()
            },
            downstream: [(
                local(9090),
                StateCounts {
                    established: served,
                    ..StateCounts::default()
                },
            )]
            .into_iter()
            .collect(),
            half_open_clients: 0,
        };
        let samples = [
            sample(8, 24),
            sample(9, 23),
            sample(8, 24),
            sample(7, 25),
            sample(8, 24),
        ];
        let refs: Vec<&ConnectionSample> = samples.iter().collect();
        let seen = connections(&refs, Some(8080), Some(9090), 250, None);
        assert_eq!(seen.client_side.most_served, 9);
        assert_eq!(seen.client_side.median_served, Some(8.0));
        assert_eq!(seen.downstream[0].counts.median_served, Some(8.0));
        // A peer missing from most samples served none then.
        let mut gone = samples.clone();
        for sample in gone.iter_mut().skip(2) {
            sample.downstream.clear();
        }
        let refs: Vec<&ConnectionSample> = gone.iter().collect();
        let seen = connections(&refs, Some(8080), Some(9090), 250, None);
        assert_eq!(seen.downstream[0].counts.median_served, Some(0.0));
    }

    #[test]
    fn a_process_that_does_not_exist_is_a_note_and_no_evidence() {
        let spec = TargetSpec {
            roots: vec![i32::MAX],
            listen_port: Some(1),
            ..TargetSpec::default()
        };
        let observer = Observer::start(spec, Duration::from_millis(20)).unwrap();
        std::thread::sleep(Duration::from_millis(60));
        let seen = observer.finish();
        assert_eq!(
            seen.notes,
            vec![ObservationNote::ProcessGone { pid: i32::MAX }]
        );
        assert!(seen.observed_pids.is_empty());
        assert_eq!(seen.threads_by_pool, None);
        assert_eq!(seen.connections, None);
    }
}
