//! Steps shaped like what real targets give, for the place's tests: `/proc`'s pools, the
//! runtime's stacks and the connections to the mock, and the targets built from them (the JVM
//! twin, py-threadpool, go-semaphore).
use super::super::*;
use super::facts;
use chokepoint_result::{
    ConnectionCounts, Connections, PeerConnections, PoolThreads, SharedStack, SocketCounts,
    StackEvidence, StackSource, ThreadCounts, ThreadsByPool, WaitReason,
};

/// A `/proc` pool: its threads, and the mean threads in a network wait, in futex, running.
pub(super) fn proc_pool(
    name: &str,
    threads: f64,
    socket: f64,
    futex: f64,
    running: f64,
) -> PoolThreads {
    let counts = ThreadCounts {
        threads,
        running,
        socket_wait: socket,
        lock_wait: futex,
        ..ThreadCounts::default()
    };
    let mut waits_on = Vec::new();
    if socket > 0.0 {
        waits_on.push(WaitReason {
            on: "poll".into(),
            mean: socket,
        });
    }
    if futex > 0.0 {
        waits_on.push(WaitReason {
            on: "futex".into(),
            mean: futex,
        });
    }
    waits_on.sort_by(|a, b| b.mean.total_cmp(&a.mean));
    PoolThreads {
        pool: name.into(),
        most: ThreadCounts {
            socket_wait: socket.ceil(),
            lock_wait: futex.ceil(),
            running: running.ceil(),
            ..counts
        },
        mean: counts,
        waits_on,
        main_threads: None,
    }
}

/// A pool in the runtime's view: its threads by what they did and where.
pub(super) fn stack_pool(name: &str, places: &[(WaitKind, f64, &[&str])]) -> PoolStacks {
    let threads = places.iter().map(|p| p.1).sum();
    PoolStacks {
        pool: name.into(),
        threads,
        most_threads: threads as u32,
        states: Default::default(),
        stacks: places
            .iter()
            .map(|(kind, n, frames)| SharedStack {
                waiting: Some(*kind),
                frames: frames.iter().map(|f| f.to_string()).collect(),
                threads: *n,
                seconds: None,
            })
            .collect(),
        tids: Vec::new(),
    }
}

pub(super) fn stacks(source: StackSource, pools: Vec<PoolStacks>) -> StackEvidence {
    StackEvidence {
        source: Some(source),
        snapshots: 3,
        recording_s: None,
        pools,
    }
}

/// A step with `/proc`'s pools, the runtime's stacks, and the connections to the mock.
pub(super) fn step(
    clients: u32,
    pools: Vec<PoolThreads>,
    stacks: Option<StackEvidence>,
    to_mock: Option<u32>,
) -> Step {
    Step {
        load: chokepoint_result::LoadReport {
            clients,
            ..Default::default()
        },
        threads_by_pool: Some(ThreadsByPool {
            interval_ms: 250,
            samples: 12,
            pools,
        }),
        connections: to_mock.map(|established| Connections {
            interval_ms: 250,
            samples: 12,
            listen_port: Some(8080),
            client_side: ConnectionCounts::default(),
            downstream: vec![PeerConnections {
                peer_port: 9090,
                peer_addr: None,
                mock: true,
                counts: ConnectionCounts {
                    most: SocketCounts {
                        established,
                        ..SocketCounts::default()
                    },
                    mean_established: f64::from(established),
                    most_served: established,
                    mean_unserved: 0.0,
                    median_served: None,
                },
            }],
            listen_overflows: None,
            half_open_clients: 0.0,
        }),
        stacks,
        ..Step::default()
    }
}

pub(super) fn finding(kind: Kind, limit: f64, knee: u32) -> Finding {
    let mut finding = Finding::bare(kind, Vec::new());
    finding.limit = Some(limit);
    finding.knee_clients = Some(knee);
    finding
}

pub(super) fn place_of(steps: &[Step], finding: &Finding) -> Place {
    match facts(steps, finding).as_slice() {
        [Fact::Place { place }] => place.as_ref().clone(),
        other => panic!("expected one place, got {other:?}"),
    }
}

pub(super) fn unclear_of(
    steps: &[Step],
    finding: &Finding,
) -> (PlaceUnclearWhy, Vec<PoolSeen>, Option<u32>) {
    match facts(steps, finding).as_slice() {
        [Fact::PlaceUnclear {
            why,
            seen,
            downstream_connections,
            ..
        }] => (*why, seen.clone(), *downstream_connections),
        other => panic!("expected an unclear place, got {other:?}"),
    }
}

/// The JVM's idle threads, as `/proc` shows them: parked in futex.
pub(super) fn jvm_idle() -> Vec<PoolThreads> {
    vec![
        proc_pool("GC Thread", 2.0, 0.0, 2.0, 0.0),
        proc_pool("C2 CompilerThre", 1.0, 0.0, 1.0, 0.0),
        proc_pool("HttpClient-1-Se", 1.0, 0.0, 0.0, 0.0),
    ]
}

pub(super) const SEND: [&str; 2] = ["java.net.http.HttpClient.send", "BlockingDemo.blockingCall"];

/// The JVM twin's `/actors` with `java.net.http.HttpClient`: the 20 actors park on a future
/// (futex in `/proc`) while a selector thread reads the sockets; a warm pool has 20 threads at
/// every step.
pub(super) fn jvm_twin(clients: u32, with_stacks: bool) -> Step {
    let busy = f64::from(clients.min(20));
    let mut pools = vec![proc_pool("actor-pool", 20.0, 0.0, 20.0, 0.0)];
    pools.extend(jvm_idle());
    let jcmd = stacks(
        StackSource::JcmdThreadPrint,
        vec![
            stack_pool(
                "actor-pool",
                &[
                    (WaitKind::Downstream, busy, &SEND),
                    (
                        WaitKind::Idle,
                        20.0 - busy,
                        &["java.util.concurrent.LinkedBlockingQueue.take"],
                    ),
                ],
            ),
            stack_pool(
                "HttpClient-1-SelectorManager",
                &[(WaitKind::Idle, 1.0, &["sun.nio.ch.EPoll.wait"])],
            ),
            stack_pool("GC Thread", &[(WaitKind::Idle, 2.0, &[])]),
        ],
    );
    step(
        clients,
        pools,
        with_stacks.then_some(jcmd),
        Some(busy as u32),
    )
}

/// py-threadpool: `ThreadingHTTPServer` (a thread per connection, waiting on its future in
/// futex) hands each request to a `ThreadPoolExecutor` of 6 whose workers read the downstream;
/// the main thread polls the listening socket. CPython does not name OS threads: all are
/// `python3` in `/proc`. py-spy names them.
pub(super) fn py_threadpool(clients: u32, with_stacks: bool) -> Step {
    let workers = f64::from(clients.min(6)); // started on demand, all busy up to 6
    let connections = f64::from(clients);
    let pools = vec![proc_pool(
        "python3",
        1.0 + workers + connections,
        1.0 + workers,
        connections,
        0.0,
    )];
    let py_spy = stacks(
        StackSource::PySpy,
        vec![
            stack_pool(
                "ThreadPoolExecutor-0",
                &[(
                    WaitKind::Downstream,
                    workers,
                    &["http.client.HTTPResponse.begin", "server.call_downstream"],
                )],
            ),
            stack_pool(
                "Thread",
                &[(
                    WaitKind::Lock,
                    connections,
                    &["concurrent.futures._base.Future.result"],
                )],
            ),
            stack_pool(
                "MainThread",
                &[(WaitKind::Idle, 1.0, &["selectors.PollSelector.select"])],
            ),
        ],
    );
    step(
        clients,
        pools,
        with_stacks.then_some(py_spy),
        Some(workers as u32),
    )
}

/// go-semaphore: 12 goroutines hold a buffered channel's slots around `http.Client.Get`; the
/// others wait on the channel. `/proc` shows a few OS threads in epoll.
pub(super) fn go_semaphore(clients: u32, with_pprof: bool) -> Step {
    let held = f64::from(clients.min(12));
    let queued = f64::from(clients) - held;
    let pools = vec![PoolThreads {
        pool: "go-semaphore".into(),
        most: ThreadCounts {
            threads: 6.0,
            event_wait: 1.0,
            lock_wait: 5.0,
            ..ThreadCounts::default()
        },
        mean: ThreadCounts {
            threads: 6.0,
            event_wait: 1.0,
            lock_wait: 5.0,
            ..ThreadCounts::default()
        },
        waits_on: vec![],
        main_threads: None,
    }];
    let pprof = stacks(
        StackSource::Pprof,
        vec![stack_pool(
            "net/http.(*Server).Serve",
            &[
                (
                    WaitKind::Downstream,
                    held,
                    &[
                        "net/http.(*persistConn).roundTrip",
                        "net/http.(*Client).Do",
                        "net/http.(*Client).Get",
                        "main.main.func1 (main.go:41)",
                    ],
                ),
                (
                    WaitKind::Lock,
                    queued,
                    &["chan send", "main.main.func1 (main.go:38)"],
                ),
                (WaitKind::Idle, 3.0, &["net/http.(*conn).serve"]),
            ],
        )],
    );
    step(
        clients,
        pools,
        with_pprof.then_some(pprof),
        Some(held as u32),
    )
}

/// A Go service whose handlers each hold one of pgxpool's `cap` connections for a query,
/// the others queued in puddle's `Acquire`, with the frames chokepoint kept of them in a run of
/// tests/targets/go-pgxpool (the wait, the library call the service made, its own frame).
pub(super) fn go_pgxpool(clients: u32, cap: u32) -> Step {
    let held = f64::from(clients.min(cap));
    let queued = f64::from(clients) - held;
    let pprof = stacks(
        StackSource::Pprof,
        vec![stack_pool(
            "net/http.(*Server).Serve",
            &[
                (
                    WaitKind::Downstream,
                    held,
                    &[
                        "net.(*netFD).Read",
                        "github.com/jackc/pgx/v5/pgxpool.(*Pool).Exec",
                        "main.main.func1 (main.go:53)",
                    ],
                ),
                (
                    WaitKind::PoolAcquire,
                    queued,
                    &[
                        "golang.org/x/sync/semaphore.(*Weighted).Acquire",
                        "github.com/jackc/pgx/v5/pgxpool.(*Pool).Exec",
                        "main.main.func1 (main.go:53)",
                    ],
                ),
            ],
        )],
    );
    step(clients, Vec::new(), Some(pprof), None)
}
