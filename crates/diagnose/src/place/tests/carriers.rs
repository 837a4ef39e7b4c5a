//! A pool `/proc` saw parked in `futex` at the limit, told held or idle by the runtime's dump
//! of the same step: the JVM's virtual-thread carriers, each pinned by a virtual thread blocked
//! in a call, park in `futex` (the pinned thread parks its carrier) where idle ones park too;
//! the dump shows a carrier's `Continuation.run` while it carries one, `ForkJoinPool.awaitWork`
//! when idle, and never the virtual thread's frames. One carrier per core, so the tables
//! follow the machine: 2, 16 and 64 cores.
use super::shapes::*;
use super::*;

/// The carriers at `clients` on `cores`: `/proc` sees all of them parked (its pool
/// `ForkJoinPool-1`, their names cut at 15 bytes and stripped of what looks like a counter),
/// the dump sees one per client (at most all) running `frame`, the others idle.
fn carriers_at(clients: u32, cores: u32, frame: &str) -> Step {
    let carriers = f64::from(cores);
    let carrying = carriers.min(f64::from(clients));
    let pools = vec![
        proc_pool("ForkJoinPool-1", carriers, 0.0, carriers, 0.0),
        proc_pool("HTTP-Dispatcher", 1.0, 0.0, 0.0, 0.0),
    ];
    let idle: &[&str] = &["java.util.concurrent.ForkJoinPool.awaitWork"];
    let dump = stacks(
        StackSource::JcmdThreadPrint,
        vec![
            stack_pool(
                "ForkJoinPool-1-worker",
                &[
                    (WaitKind::Other, carrying, &[frame]),
                    (WaitKind::Idle, carriers - carrying, idle),
                ],
            ),
            stack_pool(
                "HTTP-Dispatcher",
                &[(WaitKind::Idle, 1.0, &["sun.nio.ch.SelectorImpl.select"])],
            ),
        ],
    );
    step(clients, pools, Some(dump), Some(carrying as u32))
}

fn sweep(cores: u32, frame: &str) -> (Vec<Step>, Finding) {
    let steps: Vec<Step> = [1, cores / 2, cores, 2 * cores, 4 * cores]
        .into_iter()
        .filter(|c| *c >= 1)
        .map(|c| carriers_at(c, cores, frame))
        .collect();
    (steps, finding(Kind::BlockingPool, f64::from(cores), cores))
}

#[test]
fn carriers_parked_while_carrying_are_the_virtual_thread_scheduler_on_2_16_and_64_cores() {
    for cores in [2, 16, 64] {
        let (steps, finding) = sweep(cores, "jdk.internal.vm.Continuation.run");
        let place = place_of(&steps, &finding);
        assert_eq!(place.pool.as_deref(), Some("ForkJoinPool-1"), "{cores}");
        assert_eq!(place.held, Some(f64::from(cores)));
        assert_eq!(place.busy_in_dump, Some(f64::from(cores)));
        let said = crate::describe::place::sentence(
            &Fact::Place {
                place: Box::new(place.clone()),
            },
            &finding,
        )
        .unwrap();
        assert!(
            said.contains(&format!(
                "the runtime's dump of the step showed {cores} of them busy"
            )),
            "{said}"
        );
        let setting = place.setting.expect("the scheduler's setting");
        assert!(
            setting
                .setting
                .starts_with("-Djdk.virtualThreadScheduler.parallelism=N"),
            "{setting:?}"
        );
    }
}

#[test]
fn a_services_own_fork_join_pool_busy_in_the_dump_is_named_without_a_knob() {
    // The same counts, but the dump shows the pool's own work: held, and no setting known.
    for cores in [2, 16, 64] {
        let (steps, finding) = sweep(cores, "java.util.concurrent.ForkJoinPool.runWorker");
        let place = place_of(&steps, &finding);
        assert_eq!(place.pool.as_deref(), Some("ForkJoinPool-1"), "{cores}");
        assert_eq!(place.setting, None, "{cores}");
    }
}

#[test]
fn a_pool_parked_and_idle_in_the_dump_is_not_held() {
    // Every carrier idle in the dump while /proc sees them parked: parked is not held, and
    // the limit is elsewhere.
    for cores in [2, 16, 64] {
        let steps: Vec<Step> = [1, cores, 2 * cores, 4 * cores]
            .map(|c| carriers_at(c, cores, "x"))
            .into_iter()
            .map(|mut step| {
                let dump = step.stacks.as_mut().unwrap();
                let carriers = &mut dump.pools[0];
                for stack in &mut carriers.stacks {
                    stack.waiting = Some(WaitKind::Idle);
                }
                step
            })
            .collect();
        let finding = finding(Kind::BlockingPool, f64::from(cores), cores);
        let (why, _, _) = unclear_of(&steps, &finding);
        assert_eq!(why, PlaceUnclearWhy::NoneMatch, "{cores}");
    }
}
