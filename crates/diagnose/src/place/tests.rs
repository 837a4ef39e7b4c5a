//! The place decision and its words on tables of steps shaped like what real targets give: the
//! JVM twin (jcmd's pools, `/proc`'s), a CPython `ThreadPoolExecutor` (py-spy names it, `/proc`
//! shows `python3` for every thread), Go goroutines behind a semaphore (pprof), and pools that
//! match nothing or match twice.
use super::*;
use crate::describe::place::attribution;
use chokepoint_result::{
    ConnectionCounts, Connections, PeerConnections, PoolThreads, SharedStack, SocketCounts,
    StackEvidence, StackSource, ThreadCounts, ThreadsByPool, WaitReason,
};

/// A `/proc` pool: its threads, and the mean threads in a network wait, in futex, running.
fn proc_pool(name: &str, threads: f64, socket: f64, futex: f64, running: f64) -> PoolThreads {
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
    }
}

/// A pool in the runtime's view: its threads by what they did and where.
fn stack_pool(name: &str, places: &[(WaitKind, f64, &[&str])]) -> PoolStacks {
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

fn stacks(source: StackSource, pools: Vec<PoolStacks>) -> StackEvidence {
    StackEvidence {
        source: Some(source),
        snapshots: 3,
        recording_s: None,
        pools,
    }
}

/// A step with `/proc`'s pools, the runtime's stacks, and the connections to the mock.
fn step(
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
                mock: true,
                counts: ConnectionCounts {
                    most: SocketCounts {
                        established,
                        ..SocketCounts::default()
                    },
                    mean_established: f64::from(established),
                    most_served: established,
                },
            }],
        }),
        stacks,
        ..Step::default()
    }
}

fn finding(kind: Kind, limit: f64, knee: u32) -> Finding {
    let mut finding = Finding::bare(kind, Vec::new());
    finding.limit = Some(limit);
    finding.knee_clients = Some(knee);
    finding
}

fn place_of(steps: &[Step], finding: &Finding) -> Place {
    match facts(steps, finding).as_slice() {
        [Fact::Place { place }] => place.as_ref().clone(),
        other => panic!("expected one place, got {other:?}"),
    }
}

fn unclear_of(steps: &[Step], finding: &Finding) -> (PlaceUnclearWhy, Vec<PoolSeen>, Option<u32>) {
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
fn jvm_idle() -> Vec<PoolThreads> {
    vec![
        proc_pool("GC Thread", 2.0, 0.0, 2.0, 0.0),
        proc_pool("C2 CompilerThre", 1.0, 0.0, 1.0, 0.0),
        proc_pool("HttpClient-1-Se", 1.0, 0.0, 0.0, 0.0),
    ]
}

const SEND: [&str; 2] = ["java.net.http.HttpClient.send", "BlockingDemo.blockingCall"];

/// The JVM twin's `/actors` with `java.net.http.HttpClient`: the 20 actors park on a future
/// (futex in `/proc`) while a selector thread reads the sockets; a warm pool has 20 threads at
/// every step.
fn jvm_twin(clients: u32, with_stacks: bool) -> Step {
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

#[test]
fn held_counts_match_a_limit_within_15_percent_or_three_quarters_of_a_thread() {
    // (held, limit, matches)
    let table = [
        (20.0, 20.0, true),
        (17.0, 20.0, true),  // 15% of 20 = 3
        (16.0, 20.0, false), // a pool of 16 is not the limit of 20
        (23.0, 20.0, true),
        (6.0, 5.4, true), // 0.6 off: within 15% of 5.4
        (6.0, 5.2, false),
        (7.0, 6.0, false),
        (1.0, 1.0, true),
        (2.0, 1.0, false),
        (0.5, 0.5, false), // less than one thread held is no pool
    ];
    for (held, limit, want) in table {
        assert_eq!(
            matches_limit(held, limit),
            want,
            "{held} held, limit {limit}"
        );
    }
}

#[test]
fn the_jvm_twins_pool_is_named_with_its_frames_from_the_thread_dumps() {
    let steps: Vec<Step> = [4, 20, 40, 80].map(|c| jvm_twin(c, true)).to_vec();
    let place = place_of(&steps, &finding(Kind::BlockingPool, 20.0, 40));
    assert_eq!(place.kind, Some(PlaceKind::ThreadPool));
    assert_eq!(place.pool.as_deref(), Some("actor-pool"));
    assert_eq!((place.size, place.held), (Some(20.0), Some(20.0)));
    assert_eq!(place.waiting, Some(WaitKind::Downstream));
    assert_eq!(place.frames, SEND);
    assert_eq!(
        place.source,
        Some(PlaceSource::Stacks(StackSource::JcmdThreadPrint))
    );
    assert_eq!((place.clients, place.snapshots), (40, Some(3)));
    assert_eq!(
        attribution(&place),
        "pool `actor-pool`: 20 threads, 20 waiting on a downstream call in \
         `java.net.http.HttpClient.send` ← `BlockingDemo.blockingCall` (jcmd Thread.print, 3 dumps)"
    );
}

#[test]
fn a_warm_pool_parked_in_futex_is_not_named_from_proc_alone() {
    // Without the dumps, the same twin shows 20 actors in futex at every step: waiting on a
    // future or idle, /proc cannot tell, and the pool did not grow with clients.
    let steps: Vec<Step> = [4, 20, 40, 80].map(|c| jvm_twin(c, false)).to_vec();
    let (why, seen, connections) = unclear_of(&steps, &finding(Kind::BlockingPool, 20.0, 40));
    assert_eq!(why, PlaceUnclearWhy::NoneMatch);
    assert!(seen.is_empty(), "no pool in a network wait: {seen:?}");
    assert_eq!(connections, Some(20));
}

#[test]
fn a_pool_started_on_demand_parked_in_futex_is_named_when_it_stopped_growing_at_the_knee() {
    // A cold fixed pool starts one thread per task until its size: 4 threads at 4 clients,
    // 20 from the knee on, all of them parked (on a future) past it.
    let cold = |clients: u32| {
        let n = f64::from(clients.min(20));
        let mut pools = vec![proc_pool("actor-pool", n, 0.0, n, 0.0)];
        pools.extend(jvm_idle());
        step(clients, pools, None, Some(n as u32))
    };
    let steps: Vec<Step> = [4, 10, 40, 80].map(cold).to_vec();
    let place = place_of(&steps, &finding(Kind::BlockingPool, 20.0, 40));
    assert_eq!(place.pool.as_deref(), Some("actor-pool"));
    assert_eq!(place.waiting, Some(WaitKind::Lock));
    assert_eq!(place.source, Some(PlaceSource::Proc));
    assert!(
        attribution(&place).contains("20 of 20 threads of `actor-pool` parked in `futex`"),
        "{}",
        attribution(&place)
    );
}

#[test]
fn the_jvm_twin_with_a_blocking_socket_read_is_named_from_proc() {
    // HttpURLConnection: each actor polls its socket for the whole call.
    let twin = |clients: u32| {
        let busy = f64::from(clients.min(20));
        let mut pools = vec![proc_pool("actor-pool", 20.0, busy, 20.0 - busy, 0.1)];
        pools.extend(jvm_idle());
        pools.push(proc_pool("blocking-dispat", 16.0, 0.0, 16.0, 0.0)); // idle, another route's
        step(clients, pools, None, Some(busy as u32))
    };
    let steps: Vec<Step> = [1, 10, 24, 48].map(twin).to_vec();
    let place = place_of(&steps, &finding(Kind::BlockingPool, 19.6, 24));
    assert_eq!(place.pool.as_deref(), Some("actor-pool"));
    assert_eq!((place.size, place.held), (Some(20.0), Some(20.0)));
    assert_eq!(place.syscall.as_deref(), Some("poll"));
    assert_eq!(place.background, None);
    assert_eq!(
        attribution(&place),
        "20 of 20 threads of `actor-pool` blocked on the network, in `poll` (/proc)"
    );
}

/// py-threadpool: `ThreadingHTTPServer` (a thread per connection, waiting on its future in
/// futex) hands each request to a `ThreadPoolExecutor` of 6 whose workers read the downstream;
/// the main thread polls the listening socket. CPython does not name OS threads: all are
/// `python3` in `/proc`. py-spy names them.
fn py_threadpool(clients: u32, with_stacks: bool) -> Step {
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

#[test]
fn a_python_thread_pool_is_named_by_py_spy_with_its_frame() {
    let steps: Vec<Step> = [1, 4, 8, 24].map(|c| py_threadpool(c, true)).to_vec();
    let place = place_of(&steps, &finding(Kind::BlockingPool, 5.8, 8));
    assert_eq!(place.pool.as_deref(), Some("ThreadPoolExecutor-0"));
    assert_eq!(place.held, Some(6.0));
    assert_eq!(place.frames[1], "server.call_downstream");
    assert_eq!(place.source, Some(PlaceSource::Stacks(StackSource::PySpy)));
}

#[test]
fn a_python_thread_pool_is_told_from_proc_by_its_held_threads_less_the_accept_loop() {
    let steps: Vec<Step> = [1, 4, 8, 24].map(|c| py_threadpool(c, false)).to_vec();
    let place = place_of(&steps, &finding(Kind::BlockingPool, 5.8, 8));
    assert_eq!(place.pool.as_deref(), Some("python3"));
    assert_eq!(
        place.held,
        Some(6.0),
        "7 in a network wait, 1 the accept loop"
    );
    assert_eq!(place.background, Some(1.0));
    // Read at the first step where they were most: 8 clients, 15 threads.
    assert_eq!((place.clients, place.size), (8, Some(15.0)));
    assert!(attribution(&place).starts_with(
        "6 of 15 threads of `python3` blocked on the network, in `poll` (/proc; beside 1 more"
    ));
}

/// go-semaphore: 12 goroutines hold a buffered channel's slots around `http.Client.Get`; the
/// others wait on the channel. `/proc` shows a few OS threads in epoll.
fn go_semaphore(clients: u32, with_pprof: bool) -> Step {
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

#[test]
fn go_goroutines_behind_a_semaphore_are_named_by_their_frame_with_pprof() {
    let steps: Vec<Step> = [6, 12, 24, 48].map(|c| go_semaphore(c, true)).to_vec();
    let place = place_of(&steps, &finding(Kind::BlockingPool, 12.0, 24));
    assert_eq!(place.pool.as_deref(), Some("net/http.(*Server).Serve"));
    assert_eq!(place.held, Some(12.0));
    // Read at 24 clients, the first step with all 12 held: the 12 other handlers queued for
    // the channel's slots make the place a semaphore.
    assert_eq!(place.kind, Some(PlaceKind::Semaphore));
    assert_eq!(
        attribution(&place),
        "pool `net/http.(*Server).Serve`: 27 goroutines, 12 waiting on a downstream call in \
         `net/http.(*persistConn).roundTrip` ← `net/http.(*Client).Do` ← … ← \
         `main.main.func1 (main.go:41)`, 12 more waiting for a lock in `chan send` ← \
         `main.main.func1 (main.go:38)`: a lock or semaphore lets 12 through at a time (pprof, 3 dumps)"
    );
}

#[test]
fn of_two_matching_pools_the_one_with_a_queue_is_the_gate() {
    // go-semaphore as pprof showed it: the HTTP client keeps a goroutine reading each of its 12
    // connections; they match the limit too, but the handlers queue for the channel's slots.
    let with_transport = |clients: u32| {
        let mut step = go_semaphore(clients, true);
        let held = f64::from(clients.min(12));
        let stacks = step.stacks.as_mut().expect("pprof");
        stacks.pools.push(stack_pool(
            "net/http.(*Transport).dialConn",
            &[
                (WaitKind::Downstream, held, &["net.(*netFD).Read"]),
                (WaitKind::Idle, held, &["net/http.(*persistConn).writeLoop"]),
            ],
        ));
        step
    };
    let steps: Vec<Step> = [6, 24, 48].map(with_transport).to_vec();
    let place = place_of(&steps, &finding(Kind::BlockingPool, 12.0, 24));
    assert_eq!(place.pool.as_deref(), Some("net/http.(*Server).Serve"));
    assert_eq!(place.kind, Some(PlaceKind::Semaphore));
    // Without the queue (below the knee's clients, say) both match: neither is named.
    let below: Vec<Step> = [12, 13]
        .map(|c| {
            let mut step = with_transport(c);
            let handlers = &mut step.stacks.as_mut().expect("pprof").pools[0];
            handlers
                .stacks
                .retain(|s| s.waiting != Some(WaitKind::Lock));
            step
        })
        .to_vec();
    let (why, seen, _) = unclear_of(&below, &finding(Kind::BlockingPool, 12.0, 12));
    assert_eq!((why, seen.len()), (PlaceUnclearWhy::SeveralMatch, 2));
}

#[test]
fn go_without_pprof_says_what_it_saw_and_what_it_could_not_tell() {
    let steps: Vec<Step> = [6, 12, 24, 48].map(|c| go_semaphore(c, false)).to_vec();
    let found = finding(Kind::BlockingPool, 12.0, 24);
    let (why, seen, connections) = unclear_of(&steps, &found);
    assert_eq!(
        (why, seen.len(), connections),
        (PlaceUnclearWhy::NoneMatch, 0, Some(12))
    );
    let fact = facts(&steps, &found).remove(0);
    let said = crate::describe::place::sentence(&fact, &found).expect("a sentence");
    assert!(
        said.contains("no pool of the target had threads held waiting on the network")
            && said.contains("at most 12 connections to the downstream at once, about the limit")
            && said.contains("--pprof"),
        "{said}"
    );
}

#[test]
fn a_pool_that_matches_nothing_names_no_place_and_keeps_what_it_saw() {
    // A limit of 20 while the one pool on the network held 8: something else holds it.
    let steps: Vec<Step> = [4, 20, 40]
        .map(|c| {
            let pools = vec![
                proc_pool("worker", 8.0, 8.0_f64.min(f64::from(c)), 0.0, 0.0),
                proc_pool("GC Thread", 2.0, 0.0, 2.0, 0.0),
            ];
            step(c, pools, None, Some(8))
        })
        .to_vec();
    let found = finding(Kind::BlockingPool, 20.0, 20);
    let (why, seen, connections) = unclear_of(&steps, &found);
    assert_eq!(why, PlaceUnclearWhy::NoneMatch);
    assert_eq!(seen.len(), 1);
    assert_eq!((seen[0].pool.as_str(), seen[0].held), ("worker", 8.0));
    assert_eq!(connections, Some(8));
    let fact = facts(&steps, &found).remove(0);
    let said = crate::describe::place::sentence(&fact, &found).expect("a sentence");
    assert!(
        said.contains("came near the limit of 20")
            && said.contains("`worker` (8 of 8 threads blocked on the network, /proc)")
            && !said.contains("about the limit"),
        "{said}"
    );
    let diagnosis = {
        let mut f = found.clone();
        f.facts = facts(&steps, &found);
        f.into_diagnosis()
    };
    assert_eq!((diagnosis.place, diagnosis.attribution), (None, None));
}

#[test]
fn two_pools_that_match_the_limit_name_neither() {
    let steps: Vec<Step> = [10, 20, 40]
        .map(|c| {
            let busy = f64::from(c.min(20));
            let pools = vec![
                proc_pool("ingress", 20.0, busy, 20.0 - busy, 0.0),
                proc_pool("egress", 20.0, busy, 20.0 - busy, 0.0),
            ];
            step(c, pools, None, None)
        })
        .to_vec();
    let (why, seen, _) = unclear_of(&steps, &finding(Kind::BlockingPool, 20.0, 20));
    assert_eq!(why, PlaceUnclearWhy::SeveralMatch);
    let mut names: Vec<&str> = seen.iter().map(|p| p.pool.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["egress", "ingress"]);
}

#[test]
fn threads_waiting_for_a_pools_resource_beside_the_held_ones_are_a_connection_pool() {
    // 20 workers, 10 of them in a database read, 10 waiting for a connection of the pool.
    let steps: Vec<Step> = [20, 40]
        .map(|c| {
            let jcmd = stacks(
                StackSource::JcmdThreadPrint,
                vec![stack_pool(
                    "http-nio-8080-exec",
                    &[
                        (
                            WaitKind::Downstream,
                            10.0,
                            &["org.postgresql.core.PGStream.receive", "app.Repo.find"],
                        ),
                        (
                            WaitKind::PoolAcquire,
                            10.0,
                            &["com.zaxxer.hikari.pool.HikariPool.getConnection"],
                        ),
                    ],
                )],
            );
            step(c, Vec::new(), Some(jcmd), Some(10))
        })
        .to_vec();
    let place = place_of(&steps, &finding(Kind::BlockingPool, 10.0, 20));
    assert_eq!(place.kind, Some(PlaceKind::ConnectionPool));
    assert_eq!(place.pool.as_deref(), Some("http-nio-8080-exec"));
    assert_eq!((place.size, place.held), (Some(20.0), Some(10.0)));
    assert_eq!(
        attribution(&place),
        "pool `http-nio-8080-exec`: 20 threads, 10 waiting on a downstream call in \
         `org.postgresql.core.PGStream.receive` ← `app.Repo.find`, 10 more waiting for a pool's \
         resource in `com.zaxxer.hikari.pool.HikariPool.getConnection`: a pool of 10 in front of \
         the downstream (jcmd Thread.print, 3 dumps)"
    );
}

#[test]
fn threads_queued_for_a_lock_beside_the_held_ones_are_a_semaphore_inside_the_pool() {
    // The twin's /blocking as jcmd saw it: a cached pool of 34 threads, 25 in the downstream
    // call with a Semaphore's permit, 7 waiting for one, 2 idle; one thread in a lock is no queue.
    let blocking = |clients: u32, waiting_for_a_permit: f64| {
        let jcmd = stacks(
            StackSource::JcmdThreadPrint,
            vec![stack_pool(
                "elastic-pool",
                &[
                    (
                        WaitKind::Downstream,
                        25.0,
                        &[
                            "java.net.HttpURLConnection.getResponseCode",
                            "BlockingDemo.blockingCall",
                        ],
                    ),
                    (
                        WaitKind::Lock,
                        waiting_for_a_permit,
                        &[
                            "java.util.concurrent.Semaphore.acquire",
                            "BlockingDemo.lambda$route$4",
                        ],
                    ),
                    (
                        WaitKind::Idle,
                        2.0,
                        &["java.util.concurrent.ThreadPoolExecutor.getTask"],
                    ),
                ],
            )],
        );
        step(clients, Vec::new(), Some(jcmd), Some(25))
    };
    let found = finding(Kind::BlockingPool, 25.0, 32);
    let place = place_of(&[blocking(32, 7.0)], &found);
    assert_eq!(place.kind, Some(PlaceKind::Semaphore));
    assert_eq!((place.size, place.held), (Some(34.0), Some(25.0)));
    assert!(
        attribution(&place).contains(
            ", 7 more waiting for a lock in `java.util.concurrent.Semaphore.acquire` ← \
             `BlockingDemo.lambda$route$4`: a lock or semaphore lets 25 through at a time"
        ),
        "{}",
        attribution(&place)
    );
    let place = place_of(&[blocking(32, 1.0)], &found);
    assert_eq!(
        (place.kind, place.queued),
        (Some(PlaceKind::ThreadPool), None)
    );
}

#[test]
fn a_connection_limit_is_the_connections_to_the_downstream_that_never_grew() {
    let steps: Vec<Step> = [(5, 5), (10, 10), (20, 10), (40, 10)]
        .map(|(c, n)| step(c, Vec::new(), None, Some(n)))
        .to_vec();
    let found = finding(Kind::ConnectionLimit, 10.0, 20);
    let place = place_of(&steps, &found);
    assert_eq!(place.kind, Some(PlaceKind::ConnectionPool));
    assert_eq!((place.size, place.peer_port), (Some(10.0), Some(9090)));
    assert_eq!(
        attribution(&place),
        "10 connections to the downstream (port 9090), never more (the target's connections, /proc)"
    );
    // Clients never outnumbered the connections: nothing says they stopped growing.
    let few: Vec<Step> = [(5, 5), (10, 10)]
        .map(|(c, n)| step(c, Vec::new(), None, Some(n)))
        .to_vec();
    assert!(facts(&few, &finding(Kind::ConnectionLimit, 10.0, 10)).is_empty());
}

#[test]
fn a_cpu_limit_names_the_cpu_figure_and_the_busiest_pool_when_it_leads() {
    let cpu_step = |c: u32, work: f64, other: f64| {
        let pools = vec![
            proc_pool("cpu-work", 7.0, 0.0, 7.0 - work, work),
            proc_pool("HTTP-Dispatcher", 1.0, 0.0, 0.0, other),
        ];
        step(c, pools, None, None)
    };
    let mut found = finding(Kind::CpuBound, 1.6, 2);
    found.facts.push(Fact::CpuSaturated {
        clients: vec![2, 4],
        target_cpu_pct: 97.0,
        generator_cpu_pct: 3.0,
        in_service: 1.6,
    });
    let steps = vec![
        cpu_step(1, 1.0, 0.1),
        cpu_step(2, 2.0, 0.2),
        cpu_step(4, 3.9, 0.3),
    ];
    let place = place_of(&steps, &found);
    assert_eq!(place.kind, Some(PlaceKind::Cpu));
    assert_eq!(
        (place.cpu_pct, place.pool.as_deref()),
        (Some(97.0), Some("cpu-work"))
    );
    assert_eq!(
        attribution(&place),
        "the CPU, 97% of all cores at the plateau; the busiest pool `cpu-work`: 3.9 of its 7 threads \
         on a CPU or waiting for one at 4 clients (/proc)"
    );
    // Two pools as busy as each other: the CPU alone.
    let even = vec![cpu_step(2, 2.0, 1.8), cpu_step(4, 2.0, 1.9)];
    let place = place_of(&even, &found);
    assert_eq!((place.cpu_pct, place.pool.as_deref()), (Some(97.0), None));
    assert_eq!(
        attribution(&place),
        "the CPU, 97% of all cores at the plateau"
    );
    // That figure is the CPU facts' own: no sentence of its own repeats it.
    let fact = Fact::Place {
        place: Box::new(place),
    };
    assert_eq!(crate::describe::place::sentence(&fact, &found), None);
    assert_eq!(crate::describe::place::short(&fact), None);
}

#[test]
fn no_place_without_evidence_or_for_a_kind_without_one() {
    let unobserved = [Step::default()];
    assert!(facts(&unobserved, &finding(Kind::BlockingPool, 20.0, 0)).is_empty());
    let steps: Vec<Step> = [4, 20, 40].map(|c| jvm_twin(c, true)).to_vec();
    for kind in [
        Kind::NoLimitFound,
        Kind::MachineSaturated,
        Kind::GeneratorBound,
    ] {
        assert!(facts(&steps, &finding(kind, 20.0, 20)).is_empty(), "{kind}");
    }
    let mut no_knee = finding(Kind::BlockingPool, 20.0, 20);
    no_knee.knee_clients = None;
    assert!(facts(&steps, &no_knee).is_empty());
}

#[test]
fn the_diagnosis_carries_the_place_and_its_one_line_attribution() {
    let steps: Vec<Step> = [4, 20, 40].map(|c| jvm_twin(c, true)).to_vec();
    let mut found = finding(Kind::BlockingPool, 20.0, 40);
    found.facts = facts(&steps, &found);
    let diagnosis = found.into_diagnosis();
    let place = diagnosis.place.as_ref().expect("a place");
    assert_eq!(place.pool.as_deref(), Some("actor-pool"));
    assert_eq!(diagnosis.attribution, Some(attribution(place)));
    assert!(
        diagnosis
            .key_evidence
            .iter()
            .any(|line| line.starts_with("Where: pool `actor-pool`")),
        "{:?}",
        diagnosis.key_evidence
    );
    let json = serde_json::to_value(&diagnosis).expect("JSON");
    assert_eq!(json["place"]["kind"], "thread-pool");
    assert_eq!(json["place"]["source"]["stacks"], "jcmd-thread-print");
    assert_eq!(json["facts"][0]["kind"], "place");
}

#[test]
fn a_known_pool_says_its_setting_beside_its_measured_size() {
    let steps: Vec<Step> = [4, 20, 40].map(|c| jvm_twin(c, true)).to_vec();
    let found = finding(Kind::BlockingPool, 20.0, 40);
    let mut place = place_of(&steps, &found);
    place.setting = Some(chokepoint_result::Setting {
        framework: "BlockingDemo".into(),
        setting: "--actors".into(),
        default: "20".into(),
        source: "examples/jvm/BlockingDemo.java".into(),
    });
    assert!(
        attribution(&place)
            .ends_with("(jcmd Thread.print, 3 dumps); its size: `--actors` (default 20)"),
        "{}",
        attribution(&place)
    );
    let said = crate::describe::place::sentence(
        &Fact::Place {
            place: Box::new(place),
        },
        &found,
    )
    .expect("a sentence");
    assert!(
        said.ends_with(
            "The catalogue knows `actor-pool`: BlockingDemo, sized by `--actors` (default 20; \
             examples/jvm/BlockingDemo.java); it had 20 threads here."
        ),
        "{said}"
    );
}
