//! The target's own accept path as the place of clients left unanswered, read from its client
//! connections: the connections it accepted at once were the clients answered while others
//! waited unaccepted in its listen queue. Sized at 16, 100 and 1000 connections (a cap on
//! connections does not follow the cores), with the controls where the connections explain
//! nothing.
use super::shapes::*;
use super::*;
use chokepoint_result::{
    ConnectionCounts, Connections, DownstreamInFlight, ListenQueue, SocketCounts, ThreadsByPool,
};

/// The target at `clients`, `accepted` of its client connections accepted at once, `waiting`
/// unaccepted on average, `overflows` handshakes dropped in the step.
fn accepting(clients: u32, accepted: u32, waiting: f64, overflows: u64) -> Step {
    half_open(clients, accepted, waiting, 0.0, overflows)
}

/// [`accepting`], with `half_open` clients' connections the target's side has no socket for.
fn half_open(clients: u32, accepted: u32, waiting: f64, half_open: f64, overflows: u64) -> Step {
    let mut step = step(
        clients,
        vec![proc_pool("server", 2.0, 0.0, 0.0, 0.0)],
        None,
        None,
    );
    step.connections = Some(Connections {
        interval_ms: 250,
        samples: 12,
        listen_port: Some(8080),
        client_side: ConnectionCounts {
            most: SocketCounts {
                established: accepted + waiting.ceil() as u32,
                unserved: waiting.ceil() as u32,
                ..SocketCounts::default()
            },
            mean_established: f64::from(accepted) + waiting,
            most_served: accepted,
            mean_unserved: waiting,
            median_served: None,
        },
        downstream: Vec::new(),
        listen_overflows: Some(overflows),
        half_open_clients: half_open,
    });
    step
}

/// `connection-limit` at `limit` clients answered, the clients past it unanswered at `past`.
fn unanswered(limit: f64, knee: u32, past: &[u32]) -> Finding {
    let mut found = finding(Kind::ConnectionLimit, limit, knee);
    found.facts.push(Fact::ClientsUnanswered {
        clients: past.to_vec(),
        unanswered: past.iter().map(|c| c - limit as u32).collect(),
        in_service: past.iter().map(|_| limit).collect(),
        waited_s: 7.0,
    });
    found
}

fn accept_place(facts: &[Fact]) -> Option<&Place> {
    facts.iter().find_map(|fact| match fact {
        Fact::Place { place } if place.kind == Some(PlaceKind::AcceptCap) => Some(&**place),
        _ => None,
    })
}

/// A cap of `n` on the connections accepted (Go's `netutil.LimitListener`): the others wait
/// in the listen queue, which is deep enough to hold them all.
fn capped(n: u32) -> (Vec<Step>, Finding) {
    let steps = [n / 2, n, 2 * n, 4 * n]
        .into_iter()
        .map(|c| accepting(c, c.min(n), f64::from(c.saturating_sub(n)), 0))
        .collect();
    (steps, unanswered(f64::from(n), 2 * n, &[2 * n, 4 * n]))
}

#[test]
fn connections_accepted_at_the_clients_answered_with_others_unaccepted_are_the_place() {
    for n in [16, 100, 1000] {
        let (steps, found) = capped(n);
        let facts = facts(&steps, &found);
        let place = accept_place(&facts).unwrap_or_else(|| panic!("{n}: {facts:?}"));
        assert_eq!(place.source, Some(PlaceSource::Connections));
        assert_eq!(
            (place.size, place.held),
            (Some(f64::from(n)), Some(f64::from(n)))
        );
        assert_eq!(place.unaccepted, Some(f64::from(3 * n)));
        assert_eq!((place.clients, place.peer_port), (4 * n, Some(8080)));
        assert_eq!(place.setting, None, "the connections name no knob");
        let said = crate::describe::place::sentence(&facts[0], &found).unwrap();
        assert!(
            said.contains(&format!(
                "the target's accept path on port 8080: it held {n} client connections at once"
            )) && said.contains(&format!(
                "unserved, on average {} waiting unaccepted in its listen queue",
                3 * n
            )) && !said.contains("dropped"),
            "{said}"
        );
    }
}

#[test]
fn a_cap_whose_samples_overcount_now_and_then_is_sized_by_the_median_served() {
    // Connections opened per request: the most a sample saw is one over the cap at every step
    // past it, the median is the cap. Steps recorded before the median was counted keep the
    // most.
    for n in [8, 100, 1000] {
        let (mut steps, found) = capped(n);
        for step in steps.iter_mut() {
            let client_side = &mut step.connections.as_mut().unwrap().client_side;
            client_side.median_served = Some(f64::from(client_side.most_served));
            client_side.most_served += 1;
        }
        let facts = facts(&steps, &found);
        let place = accept_place(&facts).unwrap_or_else(|| panic!("{n}: {facts:?}"));
        assert_eq!(
            (place.size, place.held),
            (Some(f64::from(n)), Some(f64::from(n)))
        );
    }
}

/// py-warmup's shape: an accept loop keeping ~60 connections in service behind a listen
/// backlog that overflows, the others half-open, `waiting` unaccepted at 128 and 244 clients;
/// and its finding, read from the clients answered.
fn behind_a_small_backlog(waiting: [f64; 2]) -> (Vec<Step>, Finding) {
    let steps = vec![
        accepting(32, 32, 0.0, 0),
        half_open(80, 55, 0.0, 25.0, 0),
        half_open(128, 60, waiting[0], 68.0, 12),
        half_open(244, 77, waiting[1], 167.0, 0),
    ];
    (steps, unanswered(59.5, 68, &[80, 128, 244]))
}

#[test]
fn an_accept_loop_that_falls_behind_a_small_backlog_is_the_place_with_its_drops() {
    // py-warmup's shape: a listen backlog of 5 overflowing behind an accept loop that keeps
    // ~60 connections in service; the others half-open (their handshake's last step dropped),
    // the queue itself seen empty; which clients got in varies.
    let (steps, found) = behind_a_small_backlog([0.0, 0.2]);
    let facts = facts(&steps, &found);
    let place = accept_place(&facts).unwrap_or_else(|| panic!("{facts:?}"));
    assert_eq!((place.size, place.held), (Some(60.0), Some(77.0)));
    assert_eq!(
        (place.half_open, place.listen_overflows),
        (Some(167.0), Some(12))
    );
    let said = crate::describe::place::sentence(&facts[0], &found).unwrap();
    assert!(
        said.contains("it held 60 client connections at once (the median of the steps past them; 77 at 244 clients) and left the others unserved, on average 167 half-open (established at the client's end")
            && said.contains("the kernel dropped 12 handshakes with a listen queue full"),
        "{said}"
    );
}

#[test]
fn the_listen_queue_the_sweep_read_is_told_with_its_size_and_whose_size_it_is() {
    // py-warmup's shape again, with the listener's accept queue read as the sweep ended: the
    // backlog of 5 CPython's socketserver asks for, under a somaxconn of 4096; and a server
    // that asked for more than the kernel's cap of 128 grants.
    let (steps, found) = behind_a_small_backlog([3.0, 5.0]);
    // (the queue read, the words, the words for the half-open clients after them)
    let table = [
        (
            Some((5, Some(4096))),
            "5 waiting unaccepted in its listen queue of 5 (the backlog its `listen()` asked for)",
            "dropped with it full",
        ),
        (
            Some((128, Some(128))),
            "waiting unaccepted in its listen queue of 128 (`net.core.somaxconn`, the most any `listen()` backlog gets on its machine)",
            "dropped with it full",
        ),
        (None, "5 waiting unaccepted in its listen queue and", "dropped with it full"),
    ];
    for (queue, told, after) in table {
        let listen_queue = queue.map(|(size, somaxconn)| ListenQueue {
            port: 8080,
            size,
            somaxconn,
        });
        let known = Known {
            cores: Some(TWO_CPUS),
            listen_queue,
            ..known()
        };
        let facts = super::super::facts(&steps, &found, &known);
        let place = accept_place(&facts).unwrap_or_else(|| panic!("{facts:?}"));
        assert_eq!(place.listen_queue, listen_queue);
        let said = crate::describe::place::sentence(&facts[0], &found).unwrap();
        assert!(said.contains(told) && said.contains(after), "{said}");
    }
}

#[test]
fn connections_that_explain_nothing_name_no_accept_path() {
    let n = 100;
    let past = [2 * n, 4 * n];
    // Every connection accepted at once (a pool queues requests, not connections).
    let all_accepted: Vec<Step> = [50, 100, 200, 400]
        .into_iter()
        .map(|c| accepting(c, c, 0.0, 0))
        .collect();
    // Accepted far past the clients answered: whatever left clients unanswered was inside.
    let more_accepted: Vec<Step> = [50, 100, 200, 400]
        .into_iter()
        .map(|c| accepting(c, c.min(3 * n), f64::from(c.saturating_sub(3 * n)), 0))
        .collect();
    // A queue at one step past the limit, none at the other.
    let mut once = capped(n).0;
    once[3] = accepting(4 * n, n, 0.4, 0);
    // Drops in the namespace alone, no connection seen waiting: another listener's.
    let drops_alone: Vec<Step> = [50, 100, 200, 400]
        .into_iter()
        .map(|c| accepting(c, c.min(n), 0.0, 50))
        .collect();
    for (what, steps) in [
        ("all accepted", all_accepted),
        ("more accepted", more_accepted),
        ("a queue once", once),
        ("drops alone", drops_alone),
    ] {
        let facts = facts(&steps, &unanswered(f64::from(n), 2 * n, &past));
        assert_eq!(accept_place(&facts), None, "{what}: {facts:?}");
    }
    // Without clients left unanswered the accept path is not looked at.
    let (steps, mut found) = capped(n);
    found.facts.clear();
    assert_eq!(accept_place(&facts(&steps, &found)), None);
}

/// `capped(n)` with a goroutine dump at its largest step whose accepting goroutine waits in
/// `frames`.
fn capped_with_accept_stack(n: u32, frames: &[&str]) -> (Vec<Step>, Finding) {
    let (mut steps, found) = capped(n);
    let largest = steps.last_mut().expect("steps");
    largest.stacks = Some(stacks(
        StackSource::Pprof,
        vec![
            stack_pool("main", &[(WaitKind::Other, 1.0, frames)]),
            stack_pool(
                "net/http.(*Server).Serve",
                &[(
                    WaitKind::Downstream,
                    f64::from(n),
                    &["net/http.(*Client).Get"],
                )],
            ),
        ],
    ));
    (steps, found)
}

#[test]
fn the_accepting_parked_in_a_known_cap_names_its_setting() {
    for n in [16, 100, 1000] {
        let (steps, found) = capped_with_accept_stack(
            n,
            &[
                "golang.org/x/net/netutil.(*limitListener).acquire",
                "net/http.Serve",
            ],
        );
        let told = facts(&steps, &found);
        let place = accept_place(&told).unwrap_or_else(|| panic!("{n}: {told:?}"));
        let setting = place.setting.as_ref().expect("LimitListener's n");
        assert!(
            setting.setting.starts_with("n in netutil.LimitListener"),
            "{setting:?}"
        );
        assert_eq!(
            place.shown_by.as_deref(),
            Some("`main` waiting in golang.org/x/net/netutil.(*limitListener).acquire")
        );
        let said = crate::describe::place::sentence(&told[0], &found).unwrap();
        assert!(
            said.contains("its accepting parked on a full cap") && !said.contains("library open"),
            "{said}"
        );
        // Accepting in the listener's own accept, not parked on the cap: no knob.
        let (steps, found) = capped_with_accept_stack(
            n,
            &[
                "net.(*netFD).accept",
                "golang.org/x/net/netutil.(*limitListener).Accept",
            ],
        );
        let told = facts(&steps, &found);
        let place = accept_place(&told).expect("the accept path still");
        assert_eq!(place.setting, None, "{n}");
    }
    // A cap on accepting is never a pool's setting by its frames.
    let frames = ["golang.org/x/net/netutil.(*limitListener).acquire".to_string()];
    assert_eq!(Catalogue::built_in().setting_for_frames(&frames), None);
    assert!(Catalogue::built_in()
        .front_cap_for_frames(&frames)
        .is_some());
}

/// A JVM server whose connector accepts at most `n` connections (Tomcat's `maxConnections`) in
/// front of its request pool, clients answered by turns: jcmd shows the pool's `n` threads in
/// the call and `idle` more waiting for work, and its acceptor parked in `LimitLatch` once the
/// cap is full; the connections `n` accepted and the others waiting unaccepted.
fn connector_capped(clients: u32, n: u32, idle: f64) -> Step {
    let held = f64::from(clients.min(n));
    let acceptor_waits = if clients > n {
        "org.apache.tomcat.util.threads.LimitLatch.countUpOrAwait"
    } else {
        "sun.nio.ch.NioSocketImpl.accept"
    };
    let jcmd = stacks(
        StackSource::JcmdThreadPrint,
        vec![
            stack_pool(
                "http-nio-8080-Acceptor",
                &[(WaitKind::Lock, 1.0, &[acceptor_waits])],
            ),
            stack_pool(
                "http-nio-8080-exec",
                &[
                    (
                        WaitKind::Downstream,
                        held,
                        &["java.net.SocketInputStream.read", "app.Servlet.doGet"],
                    ),
                    (
                        WaitKind::Idle,
                        idle,
                        &["org.apache.tomcat.util.threads.TaskQueue.poll"],
                    ),
                ],
            ),
        ],
    );
    let mut at = accepting(
        clients,
        clients.min(n),
        f64::from(clients.saturating_sub(n)),
        0,
    );
    at.threads_by_pool = None;
    at.stacks = Some(jcmd);
    at
}

#[test]
fn a_connection_cap_in_front_of_a_pool_with_idle_threads_is_the_place_not_the_pools_setting() {
    for n in [16, 100, 1000] {
        let steps: Vec<Step> = [n / 2, n, 2 * n, 4 * n]
            .into_iter()
            .map(|c| connector_capped(c, n, 2.0))
            .collect();
        let found = finding(Kind::BlockingPool, f64::from(n), n);
        let told = facts(&steps, &found);
        let place = accept_place(&told).unwrap_or_else(|| panic!("{n}: {told:?}"));
        assert_eq!(place.size, Some(f64::from(n)));
        let not = place
            .not_sized_by
            .as_ref()
            .expect("maxThreads is not the knob");
        assert!(not.setting.starts_with("maxThreads"), "{not:?}");
        // The acceptor parked in its latch names the connector's cap.
        let named = place.setting.as_ref().expect("maxConnections");
        assert!(named.setting.starts_with("maxConnections"), "{named:?}");
        assert_eq!(
            place.shown_by.as_deref(),
            Some("`http-nio-8080-Acceptor` waiting in org.apache.tomcat.util.threads.LimitLatch.countUpOrAwait")
        );
        let said = crate::describe::place::sentence(&told[0], &found).unwrap();
        assert!(
            said.contains(&format!(
                "`http-nio-8080-exec` had {} threads, {n} of them held and 2 idle while connections waited unaccepted",
                n + 2
            )),
            "{said}"
        );
        // No idle thread beside the held ones: the pool itself may be what accepts.
        let busy: Vec<Step> = [n / 2, n, 2 * n, 4 * n]
            .into_iter()
            .map(|c| connector_capped(c, n, 0.4))
            .collect();
        let told = facts(&busy, &found);
        assert_eq!(accept_place(&told), None, "{n}: {told:?}");
    }
}

#[test]
fn a_pre_fork_pool_read_by_py_spy_or_proc_stays_the_place_whatever_its_idle_members() {
    // uWSGI's 8 workers each accept when free; py-spy counts the master as a ninth, idle. The
    // connections past 8 wait unaccepted in the shared listen queue: the workers are the place.
    let n = 8;
    let steps: Vec<Step> = [4, 8, 16, 32]
        .into_iter()
        .map(|c| {
            let held = f64::from(c.min(n));
            let mut at = accepting(c, c.min(n), f64::from(c.saturating_sub(n)), 0);
            at.threads_by_pool = None;
            at.stacks = Some(stacks(
                StackSource::PySpy,
                vec![stack_pool(
                    "uwsgi",
                    &[
                        (
                            WaitKind::Downstream,
                            held,
                            &["urlopen (urllib/request.py)", "app (app.py:16)"],
                        ),
                        (WaitKind::Idle, 1.0, &["uwsgi_master (uwsgi)"]),
                    ],
                )],
            ));
            at
        })
        .collect();
    let found = finding(Kind::BlockingPool, f64::from(n), n);
    let told = facts(&steps, &found);
    assert_eq!(accept_place(&told), None, "{told:?}");
    assert!(
        told.iter()
            .any(|f| matches!(f, Fact::Place { place } if place.pool.as_deref() == Some("uwsgi"))),
        "{told:?}"
    );
}

/// The same connector cap seen from `/proc` alone (no jcmd): the exec pool's threads, the
/// calls in flight (`n`, or the clients) less `queued_inside` in the call, those queued inside
/// the process and `parked` more in futex; `main_threads` of its threads a process's main
/// thread (`None`: a step recorded before they were counted).
fn connector_capped_in_proc(
    clients: u32,
    n: u32,
    parked: f64,
    main_threads: Option<f64>,
    queued_inside: f64,
) -> Step {
    let in_flight = f64::from(clients.min(n));
    let held = in_flight - queued_inside;
    let mut pool = proc_pool(
        "http-nio-8080-exec",
        in_flight + parked,
        held,
        parked + queued_inside,
        0.0,
    );
    pool.main_threads = main_threads;
    let mut at = accepting(
        clients,
        clients.min(n),
        f64::from(clients.saturating_sub(n)),
        0,
    );
    at.threads_by_pool = Some(ThreadsByPool {
        interval_ms: 250,
        samples: 8,
        pools: vec![pool],
    });
    at.stacks = None;
    at
}

#[test]
fn from_proc_alone_a_connection_cap_in_front_of_threads_that_hold_no_connection_is_the_place() {
    for n in [16, 100, 1000] {
        let found = finding(Kind::BlockingPool, f64::from(n), n);
        // A pool that grows on demand and keeps two threads spare, below the knee and past it.
        let steps = |main_threads: Option<f64>, queued_inside: f64| -> Vec<Step> {
            let mut steps = vec![connector_capped_in_proc(n / 2, n, 2.0, main_threads, 0.0)];
            steps.extend(
                [n, 2 * n, 4 * n]
                    .into_iter()
                    .map(|c| connector_capped_in_proc(c, n, 2.0, main_threads, queued_inside)),
            );
            steps
        };
        let told = facts(&steps(Some(0.0), 0.0), &found);
        let place = accept_place(&told).unwrap_or_else(|| panic!("{n}: {told:?}"));
        assert_eq!(place.size, Some(f64::from(n)));
        assert_eq!(place.source, Some(PlaceSource::Connections));
        let not = place
            .not_sized_by
            .as_ref()
            .unwrap_or_else(|| panic!("{n}: maxThreads is not the knob: {place:?}"));
        assert!(not.setting.starts_with("maxThreads"), "{not:?}");
        // Nothing shows which cap: no knob is named.
        assert_eq!(place.setting, None, "{n}");

        // A pool of processes (a pre-fork server's master and workers), a step recorded
        // before main threads were counted, or two requests queued inside the process (each on
        // an accepted connection, parked for a lease): the pool stays the place.
        for (why, main_threads, queued_inside) in [
            ("processes", Some(1.0), 0.0),
            ("not counted", None, 0.0),
            ("queued inside", Some(0.0), 2.0),
        ] {
            let told = facts(&steps(main_threads, queued_inside), &found);
            assert_eq!(accept_place(&told), None, "{n}, {why}: {told:?}");
        }

        // Two fewer threads seen in the call than connections accepted: the downstream's count
        // tells a gate inside the process (it never passed the threads in the call) from the
        // threads a sample caught between two calls (it reached the connections accepted).
        let with_calls_at_once = |calls: u64| -> Vec<Step> {
            let mut steps = steps(Some(0.0), 2.0);
            for step in &mut steps {
                step.downstream_inflight = Some(DownstreamInFlight {
                    mean: calls.min(u64::from(step.clients)) as f64 - 1.0,
                    max: calls.min(u64::from(step.clients)),
                });
            }
            steps
        };
        let told = facts(&with_calls_at_once(u64::from(n)), &found);
        let place = accept_place(&told).unwrap_or_else(|| panic!("{n}, caught between: {told:?}"));
        assert_eq!(place.size, Some(f64::from(n)));
        let told = facts(&with_calls_at_once(u64::from(n - 2)), &found);
        assert_eq!(accept_place(&told), None, "{n}, a gate inside: {told:?}");
    }
}
