//! A pool whose processes state its size (`gunicorn --workers W --threads T`): named with what
//! they state when it is what was held, and not named when it is not. gunicorn's documented
//! rule of thumb is `2 × cores + 1` workers, so the tables follow the machine: 2 cores (5
//! workers), 16 (33) and 64 (129), with a few threads each.
use super::shapes::*;
use super::*;
use chokepoint_result::{Stated, StatedIn};

/// The place facts with the built-in catalogue, the target's processes having stated `stated`.
fn facts_stated(steps: &[Step], finding: &Finding, stated: &[Stated]) -> Vec<Fact> {
    let known = Known { stated, ..known() };
    super::super::facts(steps, finding, &known)
}

fn started_with(workers: u32, threads: u32) -> Vec<Stated> {
    [("--workers", workers), ("--threads", threads)]
        .map(|(name, value)| Stated {
            name: name.into(),
            value,
            from: StatedIn::CommandLine,
            file: None,
        })
        .to_vec()
}

/// gunicorn's `/proc` pool at `clients`: a master and `workers` processes of `threads` threads
/// and a main thread each (the threads take the process's name), `held` of them on the network
/// (at most one per client) and the rest parked in futex, idle.
fn gunicorn_at(clients: u32, workers: u32, threads: u32, held: f64) -> Step {
    let all = f64::from(1 + workers * (threads + 1));
    let held = held.min(f64::from(clients));
    let pools = vec![proc_pool("gunicorn", all, held, all - held, 0.0)];
    step(clients, pools, None, Some(held as u32))
}

/// A sweep of gunicorn whose calls stop at `held` at once, by doublings past it.
fn sweep(workers: u32, threads: u32, held: f64) -> Vec<Step> {
    let mut clients = 1;
    let mut steps = Vec::new();
    while f64::from(clients) < 4.0 * held {
        steps.push(gunicorn_at(clients, workers, threads, held));
        clients *= 2;
    }
    steps
}

#[test]
fn gthread_workers_held_at_the_size_they_state_are_named_with_it_on_2_16_and_64_cores() {
    for (workers, threads) in [(5, 4), (33, 2), (129, 4)] {
        let size = workers * threads;
        let steps = sweep(workers, threads, f64::from(size));
        let knee = steps
            .iter()
            .map(|s| s.clients)
            .find(|c| *c >= size)
            .unwrap();
        let finding = finding(Kind::BlockingPool, f64::from(size), knee);
        let facts = facts_stated(&steps, &finding, &started_with(workers, threads));
        let [Fact::Place { place }] = facts.as_slice() else {
            panic!("{workers} × {threads}: expected one place, got {facts:?}");
        };
        assert_eq!(place.pool.as_deref(), Some("gunicorn"));
        let setting = place.setting.as_ref().expect("gunicorn's setting");
        let stated = setting.stated_here.as_ref().expect("the size stated");
        assert_eq!(stated.size, size, "{workers} × {threads}");
        let said = crate::describe::place::sentence(&facts[0], &finding).unwrap();
        println!("{workers} × {threads}: {said}");
        assert!(
            said.contains(&format!(
                "started with `--workers {workers}` and `--threads {threads}` on their command line: {size} at once, as held"
            )),
            "{said}"
        );
    }
}

#[test]
fn gthread_workers_held_at_half_the_size_they_state_name_no_knob_on_2_16_and_64_cores() {
    // The calls stop at half what the workers take: something in front of them (a proxy's
    // cap, a lock taken before the call) lets fewer in, and the other threads idle. A pool
    // whose every thread is not held would otherwise be named with its default's setting.
    for (workers, threads) in [(5, 4), (33, 2), (129, 4)] {
        let size = workers * threads;
        let held = f64::from(size / 2);
        let steps = sweep(workers, threads, held);
        let knee = steps
            .iter()
            .map(|s| s.clients)
            .find(|c| f64::from(*c) >= held)
            .unwrap();
        let finding = finding(Kind::BlockingPool, held, knee);
        let facts = facts_stated(&steps, &finding, &started_with(workers, threads));
        let [Fact::PlaceUnclear { why, setting, .. }] = facts.as_slice() else {
            panic!("{workers} × {threads}: expected no place, got {facts:?}");
        };
        assert_eq!(*why, PlaceUnclearWhy::SettingDisagrees);
        assert_eq!(
            setting
                .as_ref()
                .and_then(|s| s.stated_here.as_ref())
                .map(|s| s.size),
            Some(size)
        );
        let said = crate::describe::place::sentence(&facts[0], &finding).unwrap();
        println!("{workers} × {threads}: {said}");
        assert!(said.contains(&format!("{size} at once")), "{said}");
        assert!(said.contains("is not the knob"), "{said}");
        // Without what the processes state, the same steps name the pool by its default.
        let unstated = facts_stated(&steps, &finding, &[]);
        assert!(
            matches!(unstated.as_slice(), [Fact::Place { .. }]),
            "{workers} × {threads}: {unstated:?}"
        );
    }
}

/// gthread workers as py-spy sees them: each worker's `ThreadPoolExecutor(max_workers=threads)`
/// (unnamed, so CPython's `ThreadPoolExecutor-0` in every worker, pooled as one), `held` of its
/// threads in the call; `/proc` sees every thread as `gunicorn`.
fn gthread_dumped_at(clients: u32, workers: u32, threads: u32, held: f64) -> Step {
    let mut step = gunicorn_at(clients, workers, threads, held);
    let held = held.min(f64::from(clients));
    let pool_threads = f64::from(workers * threads);
    let call: &[&str] = &["SocketIO.readinto (socket.py)", "app (app.py:16)"];
    let idle: &[&str] = &["_worker (concurrent/futures/thread.py)"];
    step.stacks = Some(stacks(
        StackSource::PySpy,
        vec![stack_pool(
            "ThreadPoolExecutor-0",
            &[
                (WaitKind::Downstream, held, call),
                (WaitKind::Idle, pool_threads - held, idle),
            ],
        )],
    ));
    step
}

#[test]
fn gthread_executors_held_at_what_the_workers_state_name_gunicorns_flags_on_2_16_and_64_cores() {
    for (workers, threads) in [(5, 4), (33, 2), (129, 4)] {
        let size = workers * threads;
        let steps: Vec<Step> = sweep(workers, threads, f64::from(size))
            .iter()
            .map(|s| gthread_dumped_at(s.clients, workers, threads, f64::from(size)))
            .collect();
        let knee = steps
            .iter()
            .map(|s| s.clients)
            .find(|c| *c >= size)
            .unwrap();
        let finding = finding(Kind::BlockingPool, f64::from(size), knee);
        let facts = facts_stated(&steps, &finding, &started_with(workers, threads));
        let [Fact::Place { place }] = facts.as_slice() else {
            panic!("{workers} × {threads}: expected one place, got {facts:?}");
        };
        assert_eq!(place.pool.as_deref(), Some("ThreadPoolExecutor-0"));
        let setting = place.setting.as_ref().expect("a setting");
        assert!(setting.setting.starts_with("--workers N"), "{setting:?}");
        assert_eq!(setting.stated_here.as_ref().map(|s| s.size), Some(size));
        // Without what they state, the executor's own entry is all that is known.
        let unstated = facts_stated(&steps, &finding, &[]);
        let [Fact::Place { place }] = unstated.as_slice() else {
            panic!("{unstated:?}");
        };
        let generic = place.setting.as_ref().expect("the executor's entry");
        assert!(
            generic.setting.starts_with("ThreadPoolExecutor("),
            "{generic:?}"
        );
    }
}

/// A Pekko system `svc` whose dispatcher `io` (a thread-pool-executor of `threads`) holds
/// `held` calls at `clients`, its other threads idle in the executor's queue; the default
/// dispatcher beside it, as jcmd shows every system's.
fn pekko_io_at(clients: u32, threads: u32, held: f64) -> Step {
    let held = held.min(f64::from(clients));
    let jcmd = stacks(
        StackSource::JcmdThreadPrint,
        vec![
            stack_pool(
                "svc-io",
                &[
                    (
                        WaitKind::Downstream,
                        held,
                        &[
                            "sun.net.www.protocol.http.HttpURLConnection.getInputStream",
                            "java.util.concurrent.ThreadPoolExecutor.runWorker",
                        ],
                    ),
                    (
                        WaitKind::Idle,
                        f64::from(threads) - held,
                        &["java.util.concurrent.ThreadPoolExecutor.getTask"],
                    ),
                ],
            ),
            stack_pool(
                "svc-pekko.actor.default-dispatcher",
                &[(
                    WaitKind::Idle,
                    8.0,
                    &["java.util.concurrent.ForkJoinPool.awaitWork"],
                )],
            ),
        ],
    );
    step(clients, Vec::new(), Some(jcmd), Some(held as u32))
}

#[test]
fn a_dispatcher_held_at_the_size_its_configuration_gives_is_named_with_it_and_not_otherwise() {
    // (the fixed-pool-size configured, the calls its threads held) on pools sized for 2, 16 and
    // 64 cores: the docs' recipe sizes a blocking dispatcher by the calls it must hold.
    let key = "io.thread-pool-executor.fixed-pool-size";
    for (configured, held) in [
        (16, 16.0),
        (64, 64.0),
        (256, 256.0),
        (16, 5.0),
        (256, 100.0),
    ] {
        let steps: Vec<Step> = [held / 2.0, held, 2.0 * held, 4.0 * held]
            .map(|c| pekko_io_at(c as u32, configured, held))
            .to_vec();
        let found = finding(Kind::BlockingPool, held, held as u32);
        let stated = [Stated {
            name: key.into(),
            value: configured,
            from: StatedIn::Configuration,
            file: Some("/srv/svc.jar!/application.conf".into()),
        }];
        let dispatchers = crate::actor_dispatcher::settings(&steps, &stated);
        let known = Known {
            dispatchers: &dispatchers,
            stated: &stated,
            ..known()
        };
        let facts = super::super::facts(&steps, &found, &known);
        let said = crate::describe::place::sentence(&facts[0], &found).unwrap();
        if f64::from(configured) == held {
            let [Fact::Place { place }] = facts.as_slice() else {
                panic!("{configured} held {held}: expected a place, got {facts:?}");
            };
            assert_eq!(place.pool.as_deref(), Some("svc-io"));
            let here = place.setting.as_ref().and_then(|s| s.stated_here.as_ref());
            assert_eq!(here.map(|h| h.size), Some(configured));
            assert!(
                said.contains(&format!(
                    "`{key} = {configured}` (`/srv/svc.jar!/application.conf`) in their application's configuration: {configured} at once, as held"
                )),
                "{said}"
            );
        } else {
            let [Fact::PlaceUnclear { why, .. }] = facts.as_slice() else {
                panic!("{configured} held {held}: expected no place, got {facts:?}");
            };
            assert_eq!(*why, PlaceUnclearWhy::SettingDisagrees);
            assert!(said.contains(&format!("`{key}` is not the knob")), "{said}");
        }
    }
}
