//! A `blocking-pool` seen from the client side alone, looked at again. A plateau without
//! downstream evidence of a pool (the mock saw no calls, or there is no mock) is
//! - `cpu-bound` when the target's threads (from /proc) were on a CPU or waiting for one at the
//!   plateau, ≥ 0.75 of a thread on average, and none waited on the network: its own work stops
//!   it, however little CPU a crowded machine gave it; unless the machine had idle cores for
//!   those threads and the target did not use them ([`runnable_beside_idle_cores`]): then the
//!   readings disagree, the finding says so and stays as the client side read it;
//! - `machine-saturated` when the whole machine had less than half a core idle there (at most
//!   90% busy is asked of a machine with many cores) and the target cannot tell: its CPU
//!   unknown, or no more than the generator's but at least [`STARVED_CORES`] (a target that
//!   burnt less was not held back by the machine). A one-worker nginx driven flat out, swept
//!   without `--pid`, looked like a pool of 2 to 10 before these rules; on this 2-core machine
//!   with nothing else running, it and the generator kept the machine 82–93% busy at the
//!   plateau (one core for nginx, most of the other for the generator and the kernel's
//!   loopback work), so a flat 90% would call it a pool on a quiet machine.
//!
//! It runs once the kind and the models are decided (stage 6 of the method, [`crate`]): the
//! pool's fits stay those of the pool the client side saw.
use crate::evidence::Evidence;
use crate::finding::Finding;
use chokepoint_result::{median, Fact, Kind, Step, SweepContext};

/// The machine's CPU at or above this share of all cores is saturated on a machine of many
/// cores; fewer cores saturate sooner (see [`saturated_machine_pct`]).
pub const SATURATED_MACHINE_PCT: f64 = 90.0;

/// The busy share (percent of all cores) from which a machine of `cores` cores is saturated:
/// less than half a core idle, or 90%, whichever is lower (75% on 2 cores, 87.5% on 4).
pub fn saturated_machine_pct(cores: f64) -> f64 {
    (100.0 * (1.0 - 0.5 / cores.max(1.0))).min(SATURATED_MACHINE_PCT)
}

/// The least CPU, in cores, a target held back by its share of a busy machine still gets at
/// its plateau. Linux's fair scheduler gives every runnable thread of equal weight an equal
/// share of a core, so a target that got less than a tenth of a core would have waited behind
/// ten runnable threads on every core; one that burnt so little was waiting on something else
/// (a sleep, a lock, a call), and the machine did not hold it back.
pub const STARVED_CORES: f64 = 0.1;

/// Who used the machine's CPU at the plateau, percent of all cores (medians over the plateau).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MachineShares {
    /// The whole machine.
    pub machine_pct: f64,
    /// The target; `None` when it was not observed.
    pub target_pct: Option<f64>,
    /// The load generator, as a share of all cores.
    pub generator_pct: f64,
    /// Everything else.
    pub others_pct: f64,
}

/// What processes other than the target and the generator held of the machine, percent of all
/// cores: the machine's share less theirs (the target's counted as none when unknown).
pub(crate) fn others_pct(machine_pct: f64, target_pct: Option<f64>, generator_pct: f64) -> f64 {
    (machine_pct - target_pct.unwrap_or(0.0) - generator_pct).max(0.0)
}

/// The machine's contended CPU at the plateau (`Step::machine_contended_cpu_pct`), percent of
/// all cores, the median over its steps.
fn plateau_machine_pct(plateau: &[&Step]) -> Option<f64> {
    median(plateau.iter().filter_map(|s| s.machine_contended_cpu_pct()))
}

/// The shares at the plateau, when the machine was saturated there and the target's CPU
/// cannot tell the limit apart: unknown, or no more than the generator's.
/// `generator_cores / machine_cores` turns the generator's figure (percent of the cores it may
/// use) into a share of the machine.
pub fn saturated_machine(
    plateau: &[&Step],
    generator_cores: f64,
    machine_cores: f64,
) -> Option<MachineShares> {
    let machine_pct = plateau_machine_pct(plateau)?;
    if machine_cores <= 0.0 || machine_pct < saturated_machine_pct(machine_cores) {
        return None;
    }
    let target_pct = median(plateau.iter().filter_map(|s| s.target_cpu_pct));
    let generator_pct = median(plateau.iter().map(|s| s.generator_cpu_pct)).unwrap_or(0.0)
        * generator_cores.min(machine_cores)
        / machine_cores;
    if target_pct.is_some_and(|target| target > generator_pct) {
        return None;
    }
    let others_pct = others_pct(machine_pct, target_pct, generator_pct);
    Some(MachineShares {
        machine_pct,
        target_pct,
        generator_pct,
        others_pct,
    })
}

/// Whether the mock saw the target's calls in flight at the plateau: then a pool is measured at
/// the downstream, whatever the machine did.
fn downstream_saw_calls(plateau: &[&Step]) -> bool {
    plateau
        .iter()
        .any(|s| s.downstream_inflight.is_some_and(|d| d.max > 0))
}

/// What the target's threads (from /proc) did at the plateau.
#[derive(Debug, Clone, Copy, PartialEq)]
struct PlateauThreads {
    /// Running or runnable at once, mean over the samples (median over the steps).
    running: f64,
    /// All the target's threads (median over the steps of the most one sample saw).
    threads: f64,
    /// Whether some pool had a thread waiting on the network on average.
    socket_waiting: bool,
}

fn plateau_threads(plateau: &[&Step]) -> Option<PlateauThreads> {
    let observed: Vec<_> = plateau
        .iter()
        .filter_map(|s| s.threads_by_pool.as_ref())
        .collect();
    let sum = |pick: &dyn Fn(&chokepoint_result::PoolThreads) -> f64| {
        median(observed.iter().map(|t| t.pools.iter().map(pick).sum()))
    };
    Some(PlateauThreads {
        running: sum(&|p| p.mean.running)?,
        threads: sum(&|p| p.most.threads)?,
        socket_waiting: observed
            .iter()
            .any(|t| t.pools.iter().any(|p| p.mean.socket_wait >= 1.0)),
    })
}

/// Threads running at once, on average, from which the target's own work is the limit.
const RUNNING_THREADS: f64 = 0.75;
/// Threads running at once, on average, under which the target was waiting, not starved.
const WAITING_THREADS: f64 = 0.25;

/// Turns a `blocking-pool` finding whose only evidence is the client side into `cpu-bound` (its
/// threads were running) or `machine-saturated` (see [`saturated_machine`]), with the fact that
/// decided it first among its facts.
pub(crate) fn reconsider_a_pool(mut finding: Finding, evidence: &Evidence<'_>) -> Finding {
    reconsider(&mut finding, evidence.steps, evidence.context);
    finding
}

fn reconsider(finding: &mut Finding, steps: &[Step], context: &SweepContext) {
    if finding.kind != Kind::BlockingPool {
        return;
    }
    let Some(knee) = finding.knee_clients else {
        return;
    };
    let plateau: Vec<&Step> = steps.iter().filter(|s| s.clients >= knee).collect();
    if downstream_saw_calls(&plateau) {
        return;
    }
    let mut clients: Vec<u32> = plateau.iter().map(|s| s.clients).collect();
    clients.sort_unstable();
    clients.dedup();
    match plateau_threads(&plateau) {
        // A pool waiting on the network is a pool, whatever the machine did.
        Some(threads) if threads.socket_waiting => return,
        Some(threads) if threads.running >= RUNNING_THREADS => {
            if let Some(fact) = runnable_beside_idle_cores(&plateau, threads.running, context) {
                finding.facts.insert(0, fact);
                return;
            }
            finding.facts.insert(
                0,
                Fact::ThreadsRunning {
                    clients,
                    running: threads.running,
                    threads: threads.threads,
                },
            );
            finding.kind = Kind::CpuBound;
            finding.limit = Some(threads.running);
            return;
        }
        // Its threads waited (a lock, a sleep): the machine is not why it stalled.
        Some(threads) if threads.running < WAITING_THREADS => return,
        _ => {}
    }
    let machine_cores = context.cores.map_or(0.0, f64::from);
    let Some(shares) = saturated_machine(&plateau, machine_cores, machine_cores) else {
        return;
    };
    if shares
        .target_pct
        .is_some_and(|target| target * machine_cores / 100.0 < STARVED_CORES)
    {
        return;
    }
    finding.facts.insert(
        0,
        Fact::MachineSaturated {
            clients,
            machine_cpu_pct: shares.machine_pct,
            target_cpu_pct: shares.target_pct,
            generator_cpu_pct: shares.generator_pct,
            others_pct: shares.others_pct,
            pool_size: finding.limit,
        },
    );
    finding.kind = Kind::MachineSaturated;
    finding.limit = None;
}

/// Threads running beyond the cores the target got, on a machine with as many cores idle, from
/// which the two readings disagree. A mean over /proc's samples (a few per step, each thread
/// `R` or not at one instant) is off by a few tenths of a thread; half a thread is more than
/// that, on 2 cores as on 64 (the tolerance is in threads, not a share of the machine).
const DISAGREE_THREADS: f64 = 0.5;

/// The cores a machine of `machine_cores` left idle at `machine_pct` percent busy.
pub(crate) fn idle_cores(machine_pct: f64, machine_cores: f64) -> f64 {
    (machine_cores * (1.0 - machine_pct / 100.0)).max(0.0)
}

/// Whether `running` threads on a CPU or waiting for one disagree with the `cores_busy` the
/// target got, the machine having `idle_cores` ([`runnable_beside_idle_cores`]).
pub(crate) fn runnable_beside_idle(running: f64, cores_busy: f64, idle_cores: f64) -> bool {
    let waited = running - cores_busy;
    waited > DISAGREE_THREADS && idle_cores >= waited
}

/// The fact that the threads-running reading disagrees with the CPU the target got, when it
/// does: then neither decides the kind.
///
/// A thread is `R` in /proc while on a CPU or waiting for one, and it waits for one only when
/// every core it may use is busy: Linux's scheduler puts a runnable thread on an idle core (a
/// CFS quota can hold it back with cores idle, so a throttled target is left to the rule). So
/// the threads running at once, less the cores the target got, are threads that waited for a
/// CPU; when the machine had that many cores idle they could not have, and one of the readings
/// is wrong (/proc's samples caught the threads at a moment that was not typical of the step).
/// tests/targets/py-warmup read 1.3–1.5 threads running at 0.4 of 2 cores, the machine a third
/// busy, in 3 sweeps of 3, and was called CPU-bound while its prose said the CPU was not the
/// limit.
fn runnable_beside_idle_cores(
    plateau: &[&Step],
    running: f64,
    context: &SweepContext,
) -> Option<Fact> {
    let machine_cores = f64::from(context.cores?);
    let target_pct = median(plateau.iter().filter_map(|s| s.target_cpu_pct))?;
    let machine_pct = plateau_machine_pct(plateau)?;
    let throttled = plateau
        .iter()
        .filter_map(|s| s.cpu_quota.as_ref())
        .any(|quota| quota.throttled_periods > 0);
    let cores_busy = target_pct * machine_cores / 100.0;
    let idle_cores = idle_cores(machine_pct, machine_cores);
    (!throttled && runnable_beside_idle(running, cores_busy, idle_cores)).then(|| {
        Fact::ThreadsRunningBesideIdleCores {
            clients: plateau.iter().map(|s| s.clients).collect(),
            running,
            cores_busy,
            idle_cores,
            machine_cores: context.cores.unwrap_or_default(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chokepoint_result::DownstreamInFlight;

    fn step(clients: u32, machine: f64, target: Option<f64>, generator: f64) -> Step {
        Step {
            load: chokepoint_result::LoadReport {
                clients,
                generator_cpu_pct: generator,
                ..Default::default()
            },
            machine_cpu_pct: Some(machine),
            target_cpu_pct: target,
            ..Step::default()
        }
    }

    #[test]
    fn a_machine_is_saturated_when_the_target_cannot_tell() {
        /// (machine %, target %, generator % of its cores, generator cores,
        ///  expected (generator %, others %) of the machine, or not saturated)
        type Row = (f64, Option<f64>, f64, f64, Option<(f64, f64)>);
        let table: [Row; 7] = [
            // Target unknown, machine full: saturated; the generator used half of 2 cores.
            (98.0, None, 50.0, 2.0, Some((50.0, 48.0))),
            // Target known and using less than the generator: saturated.
            (95.0, Some(30.0), 50.0, 2.0, Some((50.0, 15.0))),
            // Target known and using more than the generator: its CPU tells, not saturated.
            (99.0, Some(55.0), 40.0, 2.0, None),
            // The machine has room (more than half a core idle of 2): not saturated.
            (74.0, None, 50.0, 2.0, None),
            // A one-worker nginx and the generator on 2 cores, measured: 85% busy, saturated.
            (85.0, None, 40.0, 2.0, Some((40.0, 45.0))),
            // The generator pinned to 1 of 2 cores and saturating it: 50% of the machine.
            (96.0, None, 100.0, 1.0, Some((50.0, 46.0))),
            // At the threshold of 2 cores.
            (75.0, None, 10.0, 2.0, Some((10.0, 65.0))),
        ];
        for (machine, target, generator, generator_cores, expected) in table {
            let s = step(8, machine, target, generator);
            let got = saturated_machine(&[&s], generator_cores, 2.0)
                .map(|m| (m.generator_pct, m.others_pct));
            match (got, expected) {
                (Some((g, o)), Some((eg, eo))) => {
                    assert!((g - eg).abs() < 1e-9, "{machine} {target:?}: generator {g}");
                    assert!((o - eo).abs() < 1e-9, "{machine} {target:?}: others {o}");
                }
                (got, expected) => {
                    assert_eq!(got.is_some(), expected.is_some(), "{machine} {target:?}")
                }
            }
        }
    }

    #[test]
    fn niced_work_beside_the_target_leaves_it_the_cores_on_any_machine() {
        // A target that burns as little as the generator, on a machine whose busy share is
        // past the saturated threshold because of others: saturated when the others ran at
        // nice 0, not when they ran niced (the fair scheduler gives the target their cores),
        // and saturated again when the niced share is unknown.
        for cores in [2.0, 16.0, 64.0] {
            let threshold = saturated_machine_pct(cores);
            let generator = 50.0 / cores; // half a core
            let target = generator * 0.5;
            let busy = threshold + 0.5 * (100.0 - threshold);
            let others = busy - target - generator;
            let mut at_nice_0 = step(8, busy, Some(target), generator);
            at_nice_0.machine_niced_cpu_pct = Some(0.0);
            let saturated = saturated_machine(&[&at_nice_0], cores, cores)
                .unwrap_or_else(|| panic!("{cores} cores: others at nice 0 saturate it"));
            assert!((saturated.others_pct - others).abs() < 1e-9, "{cores}");

            let mut niced = at_nice_0.clone();
            niced.machine_niced_cpu_pct = Some(others);
            assert_eq!(niced.machine_contended_cpu_pct(), Some(busy - others));
            assert_eq!(saturated_machine(&[&niced], cores, cores), None, "{cores}");

            // Half the others niced: what is left at nice 0 still decides.
            let mut half = at_nice_0.clone();
            half.machine_niced_cpu_pct = Some(others / 2.0);
            let left = busy - others / 2.0;
            assert_eq!(
                saturated_machine(&[&half], cores, cores).is_some(),
                left >= threshold,
                "{cores} cores, {left}% contended"
            );

            let mut unknown = at_nice_0.clone();
            unknown.machine_niced_cpu_pct = None;
            assert!(
                saturated_machine(&[&unknown], cores, cores).is_some(),
                "{cores}"
            );
        }
    }

    #[test]
    fn fewer_cores_saturate_sooner() {
        assert_eq!(saturated_machine_pct(1.0), 50.0);
        assert_eq!(saturated_machine_pct(2.0), 75.0);
        assert_eq!(saturated_machine_pct(4.0), 87.5);
        assert_eq!(saturated_machine_pct(16.0), 90.0);
    }

    fn pool_finding() -> Finding {
        let mut finding = Finding::bare(Kind::BlockingPool, Vec::new());
        finding.limit = Some(2.1);
        finding.knee_clients = Some(4);
        finding
    }

    #[test]
    fn a_pool_seen_only_from_the_client_side_on_a_full_machine_is_the_machine() {
        let context = SweepContext {
            cores: Some(2),
            ..SweepContext::default()
        };
        let steps = [
            step(1, 70.0, None, 40.0),
            step(4, 99.0, None, 45.0),
            step(16, 100.0, None, 45.0),
        ];
        let mut finding = pool_finding();
        reconsider(&mut finding, &steps, &context);
        assert_eq!(finding.kind, Kind::MachineSaturated);
        assert_eq!(finding.limit, None);
        assert_eq!(
            finding.facts[0],
            Fact::MachineSaturated {
                clients: vec![4, 16],
                machine_cpu_pct: 99.5,
                target_cpu_pct: None,
                generator_cpu_pct: 45.0,
                others_pct: 54.5,
                pool_size: Some(2.1),
            }
        );
        let text = crate::describe(&finding);
        assert!(text.summary.contains("machine"), "{}", text.summary);
        assert!(
            text.evidence.iter().any(|s| s.contains("--pid")),
            "{:?}",
            text.evidence
        );

        // The mock saw the calls in flight: the pool is measured there, it stays a pool.
        let mut with_mock = steps.clone();
        for s in &mut with_mock {
            s.downstream_inflight = Some(DownstreamInFlight { mean: 2.0, max: 2 });
        }
        let mut finding = pool_finding();
        reconsider(&mut finding, &with_mock, &context);
        assert_eq!(finding.kind, Kind::BlockingPool);

        // The target's threads observed running (one worker process, always busy): its own
        // work is the limit, whatever the machine did.
        let mut running = steps.clone();
        for s in &mut running {
            s.threads_by_pool = Some(chokepoint_result::ThreadsByPool {
                interval_ms: 250,
                samples: 8,
                pools: vec![chokepoint_result::PoolThreads {
                    pool: "nginx".into(),
                    most: chokepoint_result::ThreadCounts {
                        threads: 2.0,
                        ..Default::default()
                    },
                    mean: chokepoint_result::ThreadCounts {
                        threads: 2.0,
                        running: 0.9,
                        other: 1.1,
                        ..Default::default()
                    },
                    waits_on: Vec::new(),
                    main_threads: None,
                }],
            });
        }
        let mut finding = pool_finding();
        reconsider(&mut finding, &running, &context);
        assert_eq!(finding.kind, Kind::CpuBound);
        assert_eq!(finding.limit, Some(0.9));
        assert!(matches!(finding.facts[0], Fact::ThreadsRunning { running, .. } if running == 0.9));
        // The same threads mostly waiting on the network: a pool.
        for s in &mut running {
            let pools = &mut s.threads_by_pool.as_mut().unwrap().pools;
            pools[0].mean.socket_wait = 1.5;
            pools[0].mean.running = 0.2;
        }
        let mut finding = pool_finding();
        reconsider(&mut finding, &running, &context);
        assert_eq!(finding.kind, Kind::BlockingPool);
        // Threads asleep (a lock, a timer): not the machine's doing.
        for s in &mut running {
            let pools = &mut s.threads_by_pool.as_mut().unwrap().pools;
            pools[0].mean.socket_wait = 0.0;
            pools[0].mean.running = 0.1;
        }
        let mut finding = pool_finding();
        reconsider(&mut finding, &running, &context);
        assert_eq!(finding.kind, Kind::BlockingPool);

        // A machine with room: a pool.
        let quiet = [step(1, 40.0, None, 20.0), step(4, 60.0, None, 30.0)];
        let mut finding = pool_finding();
        reconsider(&mut finding, &quiet, &context);
        assert_eq!(finding.kind, Kind::BlockingPool);
    }

    /// A step whose target ran `running` threads at once (one pool, none on the network), got
    /// `target_cores` of the machine's `cores` and left `idle` cores idle.
    fn runnable_step(clients: u32, cores: u32, running: f64, target_cores: f64, idle: f64) -> Step {
        let pct = |c: f64| 100.0 * c / f64::from(cores);
        let mut step = step(
            clients,
            pct(f64::from(cores) - idle),
            Some(pct(target_cores)),
            5.0,
        );
        step.threads_by_pool = Some(chokepoint_result::ThreadsByPool {
            interval_ms: 250,
            samples: 6,
            pools: vec![chokepoint_result::PoolThreads {
                pool: "python3".into(),
                most: chokepoint_result::ThreadCounts {
                    threads: 65.0,
                    ..Default::default()
                },
                mean: chokepoint_result::ThreadCounts {
                    threads: 65.0,
                    running,
                    other: 65.0 - running,
                    ..Default::default()
                },
                waits_on: Vec::new(),
                main_threads: None,
            }],
        });
        step
    }

    #[test]
    fn threads_runnable_beside_idle_cores_decide_nothing_on_2_16_and_64_cores() {
        // tests/targets/py-warmup's plateau as read in session 19: 1.3-1.5 threads running at
        // once, the target on 0.4 cores, the machine two-thirds idle on 2 cores; the same
        // target on 16 and 64 cores leaves more idle, and reads the same.
        for cores in [2, 16, 64] {
            let context = SweepContext {
                cores: Some(cores),
                ..SweepContext::default()
            };
            let idle = f64::from(cores) - 0.7;
            let steps = [
                runnable_step(4, cores, 0.2, 0.1, idle),
                runnable_step(56, cores, 1.3, 0.38, idle),
                runnable_step(68, cores, 1.5, 0.37, idle),
                runnable_step(128, cores, 1.2, 0.43, idle),
            ];
            let mut finding = pool_finding();
            finding.knee_clients = Some(56);
            reconsider(&mut finding, &steps, &context);
            assert_eq!(finding.kind, Kind::BlockingPool, "{cores} cores");
            assert!(
                matches!(
                    finding.facts[0],
                    Fact::ThreadsRunningBesideIdleCores { running, machine_cores, .. }
                        if running == 1.3 && machine_cores == cores
                ),
                "{cores} cores: {:?}",
                finding.facts
            );
            let text = crate::describe(&finding);
            let all = format!("{} {}", text.summary, text.evidence.join(" "));
            assert!(all.contains("the two readings disagree"), "{all}");
            assert!(!all.contains("its own work is the limit"), "{all}");

            // Controls, each with the threads deciding as before:
            // the machine had no room for them (0.3 of a core idle): they waited for a CPU;
            let busy: Vec<Step> = [0.2, 1.3, 1.5, 1.2]
                .iter()
                .zip([4, 56, 68, 128])
                .map(|(&running, clients)| runnable_step(clients, cores, running, 0.4, 0.3))
                .collect();
            // the CPU the target got agrees with them;
            let agreeing: Vec<Step> = [0.2, 1.3, 1.5, 1.2]
                .iter()
                .zip([4, 56, 68, 128])
                .map(|(&running, clients)| runnable_step(clients, cores, running, 1.1, idle))
                .collect();
            // its control group's quota throttled it, with the machine's cores idle.
            let mut throttled = steps.to_vec();
            for step in &mut throttled {
                step.cpu_quota = Some(chokepoint_result::CpuQuota {
                    cores: 0.5,
                    period_us: 100_000,
                    periods: 15,
                    throttled_periods: 12,
                    throttled_s: 1.1,
                    ..Default::default()
                });
            }
            for (name, steps) in [
                ("busy", busy),
                ("agreeing", agreeing),
                ("throttled", throttled),
            ] {
                let mut finding = pool_finding();
                finding.knee_clients = Some(56);
                reconsider(&mut finding, &steps, &context);
                assert_eq!(finding.kind, Kind::CpuBound, "{name} on {cores} cores");
                assert!(
                    matches!(finding.facts[0], Fact::ThreadsRunning { .. }),
                    "{name} on {cores} cores: {:?}",
                    finding.facts
                );
            }
        }
    }
}
