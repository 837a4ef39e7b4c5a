//! The place decision and its words on tables of steps shaped like what real targets give: the
//! JVM twin (jcmd's pools, `/proc`'s), a CPython `ThreadPoolExecutor` (py-spy names it, `/proc`
//! shows `python3` for every thread), Go goroutines behind a semaphore (pprof), and pools that
//! match nothing or match twice.
mod accept;
mod carriers;
mod proxies;
mod shapes;
mod shed;
mod stated;

use super::*;
use crate::describe::place::attribution;
use chokepoint_result::StackSource;
use shapes::*;

/// The machine the place tests' targets ran on.
const TWO_CPUS: UsableCores = UsableCores {
    cpus: 2,
    quota: None,
};

/// What names a place in these tests unless a test says more: the built-in catalogue, nothing
/// else known, the cores not counted.
fn known() -> Known<'static> {
    Known {
        dispatchers: &[],
        catalogue: Catalogue::built_in(),
        libraries: &[],
        cores: None,
        h2_peers: &[],
        stated: &[],
        upstream_caps: &[],
        front_caps: &[],
        listen_queue: None,
    }
}

/// The place facts with the built-in catalogue.
fn facts(steps: &[Step], finding: &Finding) -> Vec<Fact> {
    facts_with(steps, finding, &[])
}

/// The place facts with the built-in catalogue, the target having had `libraries` open.
fn facts_with(steps: &[Step], finding: &Finding, libraries: &[String]) -> Vec<Fact> {
    let known = Known {
        libraries,
        cores: Some(TWO_CPUS),
        ..known()
    };
    super::facts(steps, finding, &known)
}

#[test]
fn pgxpools_queue_names_pool_max_conns_with_its_default_on_the_targets_cpus() {
    // (the target's CPUs, the pool's cap, whether that cap is pgxpool's default there).
    let table = [
        (2, 4, true),
        (16, 16, true),
        (64, 64, true),
        (2, 10, false),
        (16, 4, false),
        (64, 16, false),
    ];
    for (cpus, cap, default) in table {
        let steps: Vec<Step> = [cap / 2, cap, 2 * cap, 4 * cap]
            .map(|c| go_pgxpool(c, cap))
            .to_vec();
        let found = finding(Kind::BlockingPool, f64::from(cap), cap);
        let known = Known {
            cores: Some(UsableCores { cpus, quota: None }),
            ..known()
        };
        let place = match super::facts(&steps, &found, &known).as_slice() {
            [Fact::Place { place }] => place.as_ref().clone(),
            other => panic!("{cpus} CPUs, cap {cap}: {other:?}"),
        };
        assert_eq!(place.kind, Some(PlaceKind::ConnectionPool), "{cpus} {cap}");
        assert_eq!(place.held, Some(f64::from(cap)));
        // The goroutines queue in pgxpool's Acquire: its knob, whatever its value.
        let setting = place.setting.clone().expect("pgxpool's entry");
        assert!(
            setting.setting.starts_with("pool_max_conns=N"),
            "{setting:?}"
        );
        let here = setting.default_here.expect("the rule on the target's CPUs");
        assert_eq!(here.size, 4.max(cpus), "{cpus} CPUs");
        let line = attribution(&place);
        assert!(
            line.ends_with(&format!(
                "(default max(4, cpus) = {} on {cpus} CPUs)",
                4.max(cpus)
            )),
            "{line}"
        );
        let said = crate::describe::place::sentence(
            &Fact::Place {
                place: Box::new(place.clone()),
            },
            &found,
        )
        .unwrap_or_default();
        assert_eq!(
            said.contains("so the service sets `pool_max_conns=N"),
            !default,
            "{cpus} CPUs, cap {cap}: {said}"
        );
        assert!(
            said.contains("The catalogue knows the pool they queue for: pgx's pgxpool")
                && said.contains(&format!("; {cap} connections were in use here")),
            "{said}"
        );
        // The handlers' frames name pgxpool too: it is not also the knob to leave alone.
        assert_eq!(place.not_sized_by, None, "{said}");
        assert!(!said.contains("Not `pool_max_conns"), "{said}");
    }
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
        (0.5, 0.5, false), // a limit of less than one thread is no pool
        (0.88, 1.0, true), // one thread in the call 88% of the time (a /proc mean)
        (0.5, 1.0, false), // in the call half the time or less: not held
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
fn workers_caught_inside_the_call_on_a_cpu_or_the_gil_still_hold_their_slots() {
    // Two py-spy dumps at a plateau step of the pool of 6: one worker was reading the answer
    // (running) in one dump, another waiting for the GIL to go on with it in the other. Their
    // slots were held all the while: the pool still holds 6, and the GIL is no queue.
    let call = ["http.client.HTTPResponse.begin", "server.call_downstream"];
    let steps: Vec<Step> = [1, 4, 8, 24]
        .map(|c| {
            let mut step = py_threadpool(c, true);
            if c >= 8 {
                let pool = &mut step.stacks.as_mut().unwrap().pools[0];
                pool.stacks[0].threads = 5.0;
                let mut gil: Vec<String> = vec!["the GIL".into()];
                gil.extend(call.iter().map(|f| f.to_string()));
                for (waiting, frames, threads) in [
                    (
                        WaitKind::Running,
                        call.iter().map(|f| f.to_string()).collect(),
                        0.5,
                    ),
                    (WaitKind::Lock, gil, 0.5),
                ] {
                    pool.stacks.push(SharedStack {
                        waiting: Some(waiting),
                        frames,
                        threads,
                        seconds: None,
                    });
                }
            }
            step
        })
        .to_vec();
    let place = place_of(&steps, &finding(Kind::BlockingPool, 5.8, 8));
    assert_eq!(place.source, Some(PlaceSource::Stacks(StackSource::PySpy)));
    assert_eq!(place.pool.as_deref(), Some("ThreadPoolExecutor-0"));
    assert_eq!(place.held, Some(6.0));
    assert_eq!(place.queued, None, "the GIL inside the call is no queue");
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
    // go-semaphore with a second pool that follows the gate one goroutine per slot (as its HTTP
    // client's connection readers did before they were told from calls): it matches the limit
    // too, but the handlers queue for the channel's slots.
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
         the downstream (jcmd Thread.print, 3 dumps); its size: \
         `maximumPoolSize` (default 10)"
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
        ..Default::default()
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

/// A growing pool `pool` that grew to 129 threads at 128 clients past a knee at 32, stopped by
/// the CPU.
fn growing_finding(pool: &str) -> Finding {
    let mut growing = finding(Kind::GrowingPool, 1.6, 32);
    growing.facts.push(Fact::GrowingPool {
        pool: pool.to_string(),
        clients: vec![8, 32, 128],
        threads: vec![9.0, 33.0, 129.0],
        knee_clients: 32,
        busy_share: 0.9,
        instead_of: Kind::CpuBound,
    });
    growing
}

#[test]
fn a_growing_pool_is_the_place_at_its_largest_step_with_the_catalogues_setting() {
    // (pool, its setting's start when the catalogue knows it)
    let table = [
        ("pool-1-thread", None),
        (
            "RxCachedThreadScheduler",
            Some("RxJava 3's Schedulers.io()"),
        ),
    ];
    for (pool, framework) in table {
        let place = place_of(&[], &growing_finding(pool));
        assert_eq!(place.kind, Some(PlaceKind::GrowingPool), "{pool}");
        assert_eq!(place.pool.as_deref(), Some(pool));
        assert_eq!((place.size, place.clients), (Some(129.0), 128));
        assert_eq!(
            place
                .setting
                .as_ref()
                .map(|s| &s.framework[..framework.map_or(0, str::len)]),
            framework,
            "{pool}"
        );
        assert!(
            attribution(&place).starts_with(&format!(
                "pool `{pool}`, grown to 129 threads at 128 clients, a thread per blocked call (/proc)"
            )),
            "{}",
            attribution(&place)
        );
    }
}

#[test]
fn a_growing_pool_cut_by_proc_is_named_as_the_runtimes_stacks_name_it() {
    // RxJava's `RxCachedThreadScheduler-N`, 15 bytes in /proc, whole in a JVM dump of the
    // largest step (java-rxjava, session 24); without the dump, /proc's name stands.
    let dumped = |clients: u32, pool: &str| Step {
        load: chokepoint_result::LoadReport {
            clients,
            ..Default::default()
        },
        stacks: Some(chokepoint_result::StackEvidence {
            source: Some(StackSource::JcmdThreadPrint),
            snapshots: 2,
            pools: vec![chokepoint_result::PoolStacks {
                pool: pool.to_string(),
                threads: f64::from(clients),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Step::default()
    };
    // (the dump's pool, the place's name)
    let table = [
        (Some("RxCachedThreadScheduler"), "RxCachedThreadScheduler"),
        // A dumped pool that is not /proc's: /proc's name stands.
        (Some("RxComputationThreadPool"), "RxCachedThreadS"),
        (None, "RxCachedThreadS"),
    ];
    for (in_dump, named) in table {
        let steps: Vec<Step> = [32, 128]
            .map(|c| dumped(c, in_dump.unwrap_or("main")))
            .to_vec();
        let place = place_of(&steps, &growing_finding("RxCachedThreadS"));
        assert_eq!(place.pool.as_deref(), Some(named), "{in_dump:?}");
        assert!(
            place
                .setting
                .as_ref()
                .is_some_and(|s| s.framework.starts_with("RxJava 3's Schedulers.io()")),
            "{in_dump:?}: {:?}",
            place.setting
        );
    }
}

#[test]
fn a_growing_pool_of_threads_proc_cannot_tell_apart_is_named_by_the_dumped_pool_that_grew() {
    // FastAPI with AnyIO's limiter raised to 1000 (py-fastapi-sync --thread-limit 1000, session
    // 27): CPython names no OS thread, so /proc's pool `python3` is the whole process (its main
    // thread among them), 2 threads at 1 client, 257 at 256; py-spy names 256 `AnyIO worker
    // thread` and the `MainThread`.
    let python_step = |clients: u32, main: Option<f64>, dumped: &[(&str, f64)]| {
        let mut proc = proc_pool("python3", f64::from(clients) + 1.0, 40.0, 200.0, 4.0);
        proc.main_threads = main;
        let pools = dumped
            .iter()
            .map(|&(name, threads)| stack_pool(name, &[(WaitKind::Idle, threads, &[])]))
            .collect();
        step(
            clients,
            vec![proc],
            Some(stacks(StackSource::PySpy, pools)),
            None,
        )
    };
    let mut growing = finding(Kind::GrowingPool, 98.0, 128);
    growing.facts.push(Fact::GrowingPool {
        pool: "python3".to_string(),
        clients: vec![1, 32, 128, 256],
        threads: vec![2.0, 33.0, 129.0, 257.0],
        knee_clients: 128,
        busy_share: 0.25,
        instead_of: Kind::BlockingPool,
    });
    // (why, main threads in /proc's pool, the dump at 256 clients, the place's name)
    let anyio = [("AnyIO worker thread", 256.0), ("MainThread", 1.0)];
    type Row<'a> = (&'a str, Option<f64>, &'a [(&'a str, f64)], &'a str);
    let table: [Row; 5] = [
        (
            "the dump's pool holds the 256 the load added",
            Some(1.0),
            &anyio,
            "AnyIO worker thread",
        ),
        (
            "a JVM's /proc pool holds no main thread: a dumped pool of another name is another",
            Some(0.0),
            &anyio,
            "python3",
        ),
        (
            "the dumped pool holds a third of them: not the one that grew",
            Some(1.0),
            &[
                ("AnyIO worker thread", 85.0),
                ("ThreadPoolExecutor-0", 171.0),
            ],
            "python3",
        ),
        (
            "two dumped pools as large: neither is named",
            Some(1.0),
            &[
                ("AnyIO worker thread", 256.0),
                ("ThreadPoolExecutor-0", 250.0),
            ],
            "python3",
        ),
        (
            "steps recorded before main threads were counted",
            None,
            &anyio,
            "python3",
        ),
    ];
    for (why, main, dumped, named) in table {
        let steps = [python_step(256, main, dumped)];
        let place = place_of(&steps, &growing);
        assert_eq!(place.pool.as_deref(), Some(named), "{why}");
        assert_eq!(place.kind, Some(PlaceKind::GrowingPool), "{why}");
        if named == "AnyIO worker thread" {
            let text = crate::describe::place::sentence(
                &Fact::Place {
                    place: Box::new(place.clone()),
                },
                &growing,
            )
            .expect("a sentence");
            assert!(
                text.contains("sized by `anyio.to_thread.current_default_thread_limiter()")
                    && text.contains("(default 40;")
                    && text.contains(
                        "the default is fewer, so the service raised it itself, to 256 or more"
                    ),
                "{text}"
            );
            assert_eq!(
                place.size,
                Some(256.0),
                "{why}: the dump's threads, not the process's"
            );
            let mut placed = growing.clone();
            placed.facts.push(Fact::Place {
                place: Box::new(place.clone()),
            });
            let summary = crate::growing::summary(&placed);
            assert!(
                summary.contains(
                    "pool `AnyIO worker thread` grows a thread per client instead of queueing \
                     (256 threads at 256 clients)"
                ),
                "{summary}"
            );
            assert_eq!(
                place.source,
                Some(PlaceSource::Stacks(StackSource::PySpy)),
                "{why}"
            );
        } else {
            assert_eq!(place.size, Some(257.0), "{why}: /proc's threads");
            assert_eq!(place.source, Some(PlaceSource::Proc), "{why}");
        }
    }
}

/// Spring Boot's Tomcat calling the downstream through a client pool of 5 connections: 10
/// `http-nio` threads alive past the knee, 5 in the call, 5 waiting for a connection.
fn tomcat_behind_a_client_pool(clients: u32, with_stacks: bool) -> Step {
    let threads = f64::from(clients.min(10));
    let held = f64::from(clients.min(5));
    let queued = threads - held;
    let pools = vec![proc_pool("http-nio-8080-e", threads, held, queued, 0.1)];
    let jcmd = with_stacks.then(|| {
        stacks(
            StackSource::JcmdThreadPrint,
            vec![stack_pool(
                "http-nio-8080-exec",
                &[
                    (
                        WaitKind::Downstream,
                        held,
                        &["java.net.SocketInputStream.read", "app.Client.call"],
                    ),
                    (
                        WaitKind::PoolAcquire,
                        queued,
                        &[
                            "org.apache.hc.core5.pool.StrictConnPool.lease",
                            "app.Client.call",
                        ],
                    ),
                ],
            )],
        )
    });
    step(clients, pools, jcmd, Some(held as u32))
}

#[test]
fn a_pool_with_more_threads_than_the_limit_holds_is_not_sized_by_its_setting() {
    // /proc: 5 of 10 Tomcat threads on the network, 5 parked in futex. Tomcat's maxThreads
    // sizes the 10, not the 5 that stop: it is not named as the knob, and why is said.
    let steps: Vec<Step> = [1, 4, 8, 16, 32]
        .map(|c| tomcat_behind_a_client_pool(c, false))
        .to_vec();
    let finding = finding(Kind::BlockingPool, 5.0, 8);
    let place = place_of(&steps, &finding);
    assert_eq!(place.pool.as_deref(), Some("http-nio-8080-e"));
    // Read at the first step where they were most: 8 clients, 8 threads.
    assert_eq!(
        (place.clients, place.size, place.held),
        (8, Some(8.0), Some(5.0))
    );
    assert_eq!(place.setting, None, "maxThreads is not the knob");
    let not = place
        .not_sized_by
        .as_ref()
        .expect("Tomcat's entry, set aside");
    assert!(not.setting.starts_with("maxThreads"), "{not:?}");
    assert!(!attribution(&place).contains("maxThreads"));
    let fact = Fact::Place {
        place: Box::new(place.clone()),
    };
    let said = crate::describe::place::sentence(&fact, &finding).expect("a sentence");
    assert!(
        said.contains("Not `maxThreads") && said.contains("is not what stops at 5"),
        "{said}"
    );
}

#[test]
fn threads_queued_for_an_unknown_clients_connection_do_not_name_their_own_pools_setting() {
    // jcmd: the 5 others wait in HttpClient's lease. Whatever the catalogue knows of that
    // frame, Tomcat's maxThreads is never the knob of a queue for a connection.
    let steps: Vec<Step> = [8, 16, 32]
        .map(|c| tomcat_behind_a_client_pool(c, true))
        .to_vec();
    let place = place_of(&steps, &finding(Kind::BlockingPool, 5.0, 8));
    assert_eq!(place.kind, Some(PlaceKind::ConnectionPool));
    assert!(
        place
            .setting
            .as_ref()
            .is_none_or(|s| !s.setting.starts_with("maxThreads")),
        "{:?}",
        place.setting
    );
    assert!(place
        .not_sized_by
        .as_ref()
        .is_some_and(|s| s.setting.starts_with("maxThreads")));
}

#[test]
fn a_pool_whose_every_thread_is_held_keeps_its_setting_at_any_core_count() {
    // The JVM's common pool of cores − 1, every worker in the call: on 2, 16 and 64 cores the
    // pool is the limit and its parallelism is the knob.
    for cores in [2u32, 16, 64] {
        let size = f64::from(cores - 1);
        let steps: Vec<Step> = [cores, 2 * cores, 4 * cores]
            .map(|c| {
                let held = f64::from(c).min(size);
                let pools = vec![proc_pool("ForkJoinPool.co", size, held, size - held, 0.1)];
                step(c, pools, None, Some(held as u32))
            })
            .to_vec();
        let place = place_of(&steps, &finding(Kind::BlockingPool, size, 2 * cores));
        let setting = place
            .setting
            .unwrap_or_else(|| panic!("{cores} cores: no setting"));
        assert!(setting.setting.contains("parallelism"), "{setting:?}");
        assert_eq!(place.not_sized_by, None);
    }
}

#[test]
fn a_queue_seen_at_one_plateau_step_decides_over_a_step_as_held_that_showed_none() {
    // tests/targets/java-httpclient5 live: at 10 clients one dump caught 5 handlers in the call
    // and 15 idle (the other requests in transit), at 20 the same 5 and 15 queued for a lease.
    let dump = |clients: u32| {
        let others = if clients >= 20 {
            (
                WaitKind::PoolAcquire,
                15.0,
                &[
                    "org.apache.hc.core5.pool.StrictConnPool.lease",
                    "ClientPoolServer.handle",
                ][..],
            )
        } else {
            (
                WaitKind::Idle,
                15.0,
                &["java.util.concurrent.ThreadPoolExecutor.getTask"][..],
            )
        };
        let jcmd = stacks(
            StackSource::JcmdThreadPrint,
            vec![stack_pool(
                "http-exec",
                &[
                    (
                        WaitKind::Downstream,
                        5.0,
                        &[
                            "org.apache.hc.client5.http.impl.classic.CloseableHttpClient.execute",
                            "ClientPoolServer.handle",
                        ],
                    ),
                    others,
                ],
            )],
        );
        step(clients, Vec::new(), Some(jcmd), Some(5))
    };
    let steps: Vec<Step> = [1, 5, 10, 20].map(dump).to_vec();
    let place = place_of(&steps, &finding(Kind::BlockingPool, 5.0, 10));
    assert_eq!(place.kind, Some(PlaceKind::ConnectionPool));
    assert_eq!(place.clients, 20);
    assert!(place
        .setting
        .is_some_and(|s| s.setting.starts_with("setMaxConnPerRoute")));
}

#[test]
fn a_thread_parked_whatever_the_load_does_not_take_the_pools_setting_away() {
    // gunicorn under /proc alone: its processes at every step, one sync worker on the network
    // and one process parked in futex from the first client on (a live run of
    // catalogue_pools): the parked one is no queue, and `--workers` stays the knob.
    let steps: Vec<Step> = [1, 2, 4, 8]
        .map(|c| {
            let pools = vec![proc_pool("gunicorn", 3.0, 1.0, 1.0, 0.0)];
            step(c, pools, None, Some(1))
        })
        .to_vec();
    let place = place_of(&steps, &finding(Kind::BlockingPool, 1.0, 2));
    assert_eq!(place.pool.as_deref(), Some("gunicorn"));
    assert!(
        place
            .setting
            .as_ref()
            .is_some_and(|s| s.setting.starts_with("--workers")),
        "{place:?}"
    );
    assert_eq!(place.not_sized_by, None);
}

/// A catalogue of two connection pools, one known by its library file, one by its threads:
/// the table tests below do not depend on the built-in entries.
fn connection_catalogue() -> Catalogue {
    Catalogue::parse(
        r#"
[[pool]]
framework = "a client with a C extension"
libraries = ["*/client/_speedups.cpython-*.so"]
kind = "connection-pool"
size = 100
setting = "Connector(limit=N)"
default = "100"
source = "https://github.com/example/client/blob/0123456789abcdef0123456789abcdef01234567/connector.py#L1"

[[pool]]
framework = "a JDBC pool with a housekeeper thread"
threads = ["DbPool-# housekeeper"]
kind = "connection-pool"
size = 10
setting = "maximumPoolSize"
default = "10"
source = "https://github.com/example/dbpool/blob/0123456789abcdef0123456789abcdef01234567/Config.java#L1"

[[pool]]
framework = "Tomcat"
threads = ["http-nio-#-exec-#"]
setting = "maxThreads"
default = "200"
source = "https://github.com/example/tomcat/blob/0123456789abcdef0123456789abcdef01234567/Endpoint.java#L1"
"#,
    )
    .expect("the test catalogue parses")
}

/// `step` with the target's connections to one more peer.
fn with_peer(mut step: Step, peer_port: u16, established: u32) -> Step {
    let connections = step.connections.get_or_insert_with(Default::default);
    connections
        .downstream
        .push(chokepoint_result::PeerConnections {
            peer_port,
            peer_addr: None,
            mock: false,
            counts: chokepoint_result::ConnectionCounts {
                most: chokepoint_result::SocketCounts {
                    established,
                    ..Default::default()
                },
                mean_established: f64::from(established),
                most_served: established,
                mean_unserved: 0.0,
                median_served: None,
            },
        });
    step
}

/// The place facts with [`connection_catalogue`], the target having had `libraries` open.
fn connection_facts(steps: &[Step], finding: &Finding, libraries: &[&str]) -> Vec<Fact> {
    let catalogue = connection_catalogue();
    let libraries: Vec<String> = libraries.iter().map(|l| l.to_string()).collect();
    let known = Known {
        catalogue: &catalogue,
        libraries: &libraries,
        cores: Some(TWO_CPUS),
        ..known()
    };
    super::facts(steps, finding, &known)
}

/// An asyncio service: one thread in `epoll_wait` at every load, its calls to the downstream
/// held by a cap of `cap` connections (kept open) beyond which its coroutines queue.
fn event_loop(clients: u32, cap: u32) -> Step {
    let pools = vec![proc_pool("python3", 1.0, 1.0, 0.0, 0.3)];
    step(clients, pools, None, Some(clients.min(cap)))
}

const SPEEDUPS: &str =
    "/usr/lib/python3/dist-packages/client/_speedups.cpython-311-x86_64-linux-gnu.so";

#[test]
fn an_event_loops_connections_held_at_a_known_clients_default_cap_are_its_connection_pool() {
    let steps: Vec<Step> = [25, 50, 100, 200, 400].map(|c| event_loop(c, 100)).to_vec();
    let found = finding(Kind::BlockingPool, 100.0, 200);
    let place = match connection_facts(&steps, &found, &[SPEEDUPS]).as_slice() {
        [Fact::Place { place }] => place.as_ref().clone(),
        other => panic!("expected a place, got {other:?}"),
    };
    assert_eq!(place.kind, Some(PlaceKind::ConnectionPool));
    assert_eq!(place.source, Some(PlaceSource::Connections));
    assert_eq!((place.peer_port, place.size), (Some(9090), Some(100.0)));
    assert_eq!(place.shown_by.as_deref(), Some(SPEEDUPS));
    let setting = place.setting.as_ref().expect("the client's setting");
    assert_eq!(setting.setting, "Connector(limit=N)");
    let fact = Fact::Place {
        place: Box::new(place.clone()),
    };
    let said = crate::describe::place::sentence(&fact, &found).expect("a sentence");
    assert!(
        said.contains("100 connections to the downstream (port 9090), never more")
            && said.contains("its library open")
            && said.contains("its default cap is the 100 connections held here"),
        "{said}"
    );
}

#[test]
fn connections_held_at_a_cap_no_known_default_explains_name_no_knob() {
    // The same event loop behind a semaphore of 8 (or a client pool set to 8): the library's
    // default is 100, so nothing backs a setting; without the library, nothing names one.
    let steps: Vec<Step> = [4, 8, 16, 32].map(|c| event_loop(c, 8)).to_vec();
    let found = finding(Kind::BlockingPool, 8.0, 16);
    for libraries in [&[SPEEDUPS][..], &[][..]] {
        match connection_facts(&steps, &found, libraries).as_slice() {
            [Fact::PlaceUnclear {
                downstream_connections,
                ..
            }] => assert_eq!(*downstream_connections, Some(8)),
            other => panic!("{libraries:?}: expected an unclear place, got {other:?}"),
        }
    }
    // With py-spy's dumps read and no thread held in them, the words say so instead of
    // asking for the stacks.
    let dumped: Vec<Step> = steps
        .iter()
        .cloned()
        .map(|mut s| {
            s.stacks = Some(stacks(StackSource::PySpy, Vec::new()));
            s
        })
        .collect();
    let fact = connection_facts(&dumped, &found, &[]).remove(0);
    assert!(
        matches!(
            fact,
            Fact::PlaceUnclear {
                stacks: Some(StackSource::PySpy),
                ..
            }
        ),
        "{fact:?}"
    );
    let mut told = found.clone();
    told.facts = vec![fact.clone()];
    let said = crate::describe::place::sentence(&fact, &told).expect("a sentence");
    assert!(
        said.contains("showed no thread held in a call either") && !said.contains("would say"),
        "{said}"
    );
    // The library's default cap, with clients never past it: nothing queued for the
    // connections, so they are not the limit's place.
    let few: Vec<Step> = [25, 50, 100, 110].map(|c| event_loop(c, 100)).to_vec();
    let facts = connection_facts(&few, &finding(Kind::BlockingPool, 100.0, 100), &[SPEEDUPS]);
    assert!(
        !matches!(facts.as_slice(), [Fact::Place { .. }]),
        "{facts:?}"
    );
}

/// A JVM on `cores` cores: Tomcat's `threads` handlers, `held` of them in a database call on
/// port 5432, the others parked waiting for a connection; the database pool's housekeeper
/// thread beside them; the JVM's own threads sized by the cores.
fn tomcat_behind_a_database_pool(clients: u32, cores: u32) -> Step {
    let threads = f64::from(clients.min(200));
    let held = f64::from(clients.min(10));
    let mut pools = vec![
        proc_pool("http-nio-8080-e", threads, held, threads - held, 0.2),
        proc_pool("DbPool-1 housek", 1.0, 0.0, 1.0, 0.0),
        proc_pool("GC Thread", f64::from(cores), 0.0, f64::from(cores), 0.0),
        proc_pool("C2 CompilerThre", f64::from(cores / 2), 0.0, 1.0, 0.0),
    ];
    pools.retain(|p| p.most.threads > 0.0);
    with_peer(step(clients, pools, None, None), 5432, held as u32)
}

#[test]
fn a_database_pool_known_by_its_threads_is_the_place_not_the_handlers_at_any_core_count() {
    for cores in [2u32, 16, 64] {
        let steps: Vec<Step> = [2, 5, 10, 20, 40, 80, 400]
            .map(|c| tomcat_behind_a_database_pool(c, cores))
            .to_vec();
        let found = finding(Kind::BlockingPool, 10.0, 20);
        let place = match connection_facts(&steps, &found, &[]).as_slice() {
            [Fact::Place { place }] => place.as_ref().clone(),
            other => panic!("{cores} cores: expected a place, got {other:?}"),
        };
        assert_eq!(place.kind, Some(PlaceKind::ConnectionPool), "{cores} cores");
        assert_eq!((place.peer_port, place.size), (Some(5432), Some(10.0)));
        assert_eq!(
            place.setting.as_ref().map(|s| s.setting.as_str()),
            Some("maximumPoolSize")
        );
        assert_eq!(place.shown_by.as_deref(), Some("threads `DbPool-1 housek`"));
        let queued = place.queued_threads.as_ref().expect("the handlers");
        assert_eq!(queued.pool, "http-nio-8080-e");
        assert_eq!(
            place.not_sized_by.as_ref().map(|s| s.setting.as_str()),
            Some("maxThreads"),
            "Tomcat's setting is named as the knob not to turn"
        );
        let fact = Fact::Place {
            place: Box::new(place),
        };
        let said = crate::describe::place::sentence(&fact, &found).expect("a sentence");
        assert!(
            said.contains("Not `maxThreads`") && said.contains("queued for a connection"),
            "{said}"
        );
    }
}

#[test]
fn handlers_whose_every_thread_is_held_stay_the_place_whatever_pool_is_loaded() {
    // Tomcat at maxThreads = 10 with the database pool's default cap of 10 beside it: no
    // handler is parked, so the handlers are the limit (direct evidence), not the pool.
    let steps: Vec<Step> = [5, 10, 20, 40]
        .map(|c| {
            let held = f64::from(c.min(10));
            let pools = vec![
                proc_pool("http-nio-8080-e", 10.0, held, 10.0 - held, 0.2),
                proc_pool("DbPool-1 housek", 1.0, 0.0, 1.0, 0.0),
            ];
            with_peer(step(c, pools, None, None), 5432, held as u32)
        })
        .to_vec();
    let found = finding(Kind::BlockingPool, 10.0, 20);
    let place = match connection_facts(&steps, &found, &[]).as_slice() {
        [Fact::Place { place }] => place.as_ref().clone(),
        other => panic!("expected a place, got {other:?}"),
    };
    assert_eq!(place.kind, Some(PlaceKind::ThreadPool));
    assert_eq!(place.pool.as_deref(), Some("http-nio-8080-e"));
    assert_eq!(
        place.setting.as_ref().map(|s| s.setting.as_str()),
        Some("maxThreads")
    );
}

#[test]
fn two_peers_held_at_the_limit_name_no_connection_pool() {
    // Each request calls two downstreams through two pools of 10: the connections alone
    // cannot say which one stops it.
    let steps: Vec<Step> = [5, 10, 20, 40]
        .map(|c| with_peer(tomcat_behind_a_database_pool(c, 2), 6379, c.min(10)))
        .to_vec();
    let found = finding(Kind::BlockingPool, 10.0, 20);
    let facts = connection_facts(&steps, &found, &[]);
    let named_pool = facts.iter().any(
        |f| matches!(f, Fact::Place { place } if place.kind == Some(PlaceKind::ConnectionPool)),
    );
    assert!(!named_pool, "{facts:?}");
}

/// tests/targets/java-httpclient5 from /proc, live: 20 handler threads (`http-exec`) there from
/// the first client on (the warm-up grew the pool), 5 in the call to the mock, the other 15
/// parked at every step: spares at 1 client, a queue for HttpClient 5's 5 connections at 20.
fn handlers_started_whole(clients: u32) -> Step {
    let held = f64::from(clients.min(5)) * if clients < 5 { 0.7 } else { 0.98 };
    let pools = vec![proc_pool("http-exec", 20.0, held, 20.0 - held, 0.1)];
    step(clients, pools, None, Some(clients.min(5)))
}

#[test]
fn a_pool_started_whole_with_its_spares_parked_lets_a_known_connection_pool_be_the_place() {
    let steps: Vec<Step> = [1, 5, 10, 20].map(handlers_started_whole).to_vec();
    let found = finding(Kind::BlockingPool, 5.0, 10);
    let jar = "/root/.cache/chokepoint-bench/httpclient5/httpclient5-5.3.1.jar".to_string();
    let place = match facts_with(&steps, &found, std::slice::from_ref(&jar)).as_slice() {
        [Fact::Place { place }] => place.as_ref().clone(),
        other => panic!("expected a place, got {other:?}"),
    };
    assert_eq!(place.kind, Some(PlaceKind::ConnectionPool));
    assert_eq!(place.shown_by.as_deref(), Some(jar.as_str()));
    assert!(place
        .setting
        .as_ref()
        .is_some_and(|s| s.setting.starts_with("setMaxConnPerRoute")));
    assert_eq!(
        place.queued_threads.as_ref().map(|t| t.pool.as_str()),
        Some("http-exec")
    );
    // Without the jar nothing backs a connection pool: the handlers, as /proc saw them.
    let place = place_of(&steps, &found);
    assert_eq!(place.kind, Some(PlaceKind::ThreadPool));
    assert_eq!(place.pool.as_deref(), Some("http-exec"));
}
