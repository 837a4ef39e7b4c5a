//! A machine busy before the load (`crates/diagnose/src/busy.rs`): a one-loop service starved of
//! CPU by other processes reads as a pool from the client side; with others holding the machine
//! from the first steps the finding names no limit, on 2, 16 and 64 cores. Left alone: the same
//! service beside one burnt core (or 13 of 16), a real pool the mock sees at its ceiling on the
//! same busy machine, and a sweep whose target was not observed.

use crate::common;
use chokepoint_result::{Fact, Kind, Step, SweepContext};
use common::*;

const CLIENTS: [u32; 8] = [1, 2, 4, 8, 12, 16, 24, 32];
/// The mock's delay, ms.
const DELAY_MS: f64 = 50.0;
/// The event loop's CPU per request, ms (tests/targets/node-cpu-downstream's ~5 ms).
const CPU_MS: f64 = 5.0;

fn context(cores: u32) -> SweepContext {
    SweepContext {
        cores: Some(cores),
        target_observed: true,
        ..mock_context(DELAY_MS)
    }
}

/// What the machine's `cores` run beside the target: `others` cores of other work, 1% of the
/// generator.
fn machine(mut s: Step, cores: u32, target_cores: Option<f64>, others: f64) -> Step {
    let all = f64::from(cores);
    let generator_pct = 1.0;
    s.generator_cpu_pct = generator_pct;
    s.target_cpu_pct = target_cores.map(|t| t / all * 100.0);
    let busy = others / all * 100.0 + s.target_cpu_pct.unwrap_or(0.0) + generator_pct;
    s.machine_cpu_pct = Some(busy.min(100.0));
    s
}

/// One event loop given `loop_cores` of a core by the scheduler, each request `CPU_MS` of it
/// and one `DELAY_MS` call: throughput stops at `loop_cores / CPU_MS`, and the mock's in-flight
/// count wanders up to the clients (a burst of calls on each of the loop's turns), not at the
/// Little's-law size.
fn starved_loop(c: u32, loop_cores: f64, noise: &mut Noise) -> (Step, f64) {
    let per_client = 1000.0 / (DELAY_MS + CPU_MS);
    let x = noise.jitter(
        (f64::from(c) * per_client).min(loop_cores * 1000.0 / CPU_MS),
        0.02,
    );
    let s = step(c, x, f64::from(c) / x * 1000.0);
    let bursts = u64::from(c).min(11);
    (with_mock(s, DELAY_MS, 1.0, bursts), x * CPU_MS / 1000.0)
}

fn sweep(cores: u32, others: f64, observed: bool) -> Vec<Step> {
    let mut noise = Noise::new(u64::from(cores) * 7 + others as u64);
    CLIENTS
        .iter()
        .map(|&c| {
            let (s, target) = starved_loop(c, 0.4, &mut noise);
            machine(s, cores, observed.then_some(target), others)
        })
        .collect()
}

fn busy_fact(finding: &chokepoint_diagnose::Finding) -> Option<(f64, Kind, Option<f64>)> {
    finding.facts.iter().find_map(|f| match f {
        Fact::MachineBusyBeforeLoad {
            others_pct,
            suggested,
            suggested_limit,
            ..
        } => Some((*others_pct, *suggested, *suggested_limit)),
        _ => None,
    })
}

#[test]
fn a_loop_starved_by_other_processes_from_the_first_step_names_no_limit_on_any_machine() {
    // Others leave less than half a core idle: 1.8 of 2 cores, 15.6 of 16, 63.6 of 64.
    for (cores, others) in [(2, 1.8), (16, 15.6), (64, 63.6)] {
        let d = diagnosed(&sweep(cores, others, true), &context(cores));
        let (others_pct, suggested, suggested_limit) = busy_fact(&d)
            .unwrap_or_else(|| panic!("{cores} cores: no busy machine read: {:?}", d.facts));
        assert_eq!(d.kind, Kind::MachineSaturated, "{cores} cores");
        assert_eq!(d.limit, None, "{cores} cores: no limit is named");
        // The machine is 100% busy: the target's share squeezes the others' a little.
        let planted = others / f64::from(cores) * 100.0;
        assert!(
            (75.0..=planted + 0.5).contains(&others_pct),
            "{cores} cores: others {others_pct}% of {planted}%"
        );
        // What the client side alone read is kept: the pool Little's law gives, 80 × 50 ms.
        assert_eq!(suggested, Kind::BlockingPool, "{cores} cores");
        assert_near(suggested_limit.expect("its size"), 4.0, 0.1);
        let prose = chokepoint_diagnose::describe(&d);
        assert!(
            prose.summary.contains("cannot say what limits it")
                && prose.summary.contains("a pool of ~4"),
            "{}",
            prose.summary
        );
    }
}

#[test]
fn the_same_loop_beside_less_busy_others_is_still_read_as_before() {
    // One burnt core of 2 (half a core and more idle), 13 of 16 (81%, under 90%): the rule does
    // not look, and the finding is what the client side reads.
    for (cores, others) in [(2, 1.0), (16, 13.0)] {
        let d = diagnosed(&sweep(cores, others, true), &context(cores));
        assert!(busy_fact(&d).is_none(), "{cores} cores: {:?}", d.facts);
        assert_ne!(
            d.kind,
            Kind::MachineSaturated,
            "{cores} cores: {:?}",
            d.facts
        );
    }
}

#[test]
fn a_pool_the_mock_sees_at_its_ceiling_stays_a_pool_on_a_busy_machine() {
    // A pool of 6 over the 50 ms call: the mock sees 6 in flight at every plateau step, which is
    // Little's law's size too. Direct evidence: the busy machine changes nothing.
    for cores in [2, 16, 64] {
        let others = f64::from(cores) * 0.9;
        let mut noise = Noise::new(u64::from(cores));
        let steps: Vec<Step> = CLIENTS
            .iter()
            .map(|&c| {
                let s = pool_step(6, DELAY_MS, 2.0, c, &mut noise);
                let target = s.ok_throughput_rps * 0.5 / 1000.0;
                machine(s, cores, Some(target), others)
            })
            .collect();
        let d = diagnosed(&steps, &context(cores));
        assert!(busy_fact(&d).is_none(), "{cores} cores: {:?}", d.facts);
        assert_eq!(d.kind, Kind::BlockingPool, "{cores} cores");
        assert_near(d.limit.expect("a size"), 6.0, 0.1);
    }
}

#[test]
fn a_pool_that_burns_next_to_no_cpu_stays_a_pool_on_a_busy_machine() {
    // py-pool-timeout's shape: 8 slots, each a 100 ms sleep and 0.2 ms of CPU, no mock, on a
    // machine others hold at 100%: at its plateau it used 0.016 of a core, far less than any
    // thread waiting for a CPU gets, so the machine did not hold it back.
    for cores in [2, 16, 64] {
        let others = f64::from(cores) * 0.95;
        let mut noise = Noise::new(u64::from(cores) + 3);
        let steps: Vec<Step> = CLIENTS
            .iter()
            .map(|&c| {
                let x = noise.jitter(f64::from(c.min(8)) * 1000.0 / 100.5, 0.02);
                let s = step(c, x, f64::from(c) / x * 1000.0);
                machine(s, cores, Some(x * 0.2 / 1000.0), others)
            })
            .collect();
        let no_mock = SweepContext {
            cores: Some(cores),
            target_observed: true,
            ..bare_context()
        };
        let d = diagnosed(&steps, &no_mock);
        assert!(busy_fact(&d).is_none(), "{cores} cores: {:?}", d.facts);
        assert_eq!(d.kind, Kind::BlockingPool, "{cores} cores");
        assert_near(d.limit.expect("a size"), 8.0, 0.1);
    }
}

#[test]
fn without_the_target_observed_others_cannot_be_told_from_it() {
    let unobserved = SweepContext {
        target_observed: false,
        ..context(2)
    };
    let d = diagnosed(&sweep(2, 1.8, false), &unobserved);
    assert!(busy_fact(&d).is_none(), "{:?}", d.facts);
}

/// A pool of 10 slots per core, each held for one `DELAY_MS` call and 2 ms of the target's
/// CPU: 200 req/s per core at 40% of the machine, a plateau that is no CPU's (no mock counts
/// the calls: a pool the mock sees at its limit is left as the collapse rule reads it). From four times
/// the pool on, others take all but `starved` cores (a build starting mid-sweep), and the
/// target serves at 2 ms a request on what it is left, or, when `thrashes`, the others stay
/// away and the target's own requests burn the machine (its CPU per request rising tenfold).
fn pool_then_machine_taken(cores: u32, thrashes: bool) -> Vec<Step> {
    const TARGET_MS: f64 = 2.0;
    let pool = 10 * cores;
    let ceiling = f64::from(pool) * 1000.0 / DELAY_MS;
    let starved = 0.3;
    let mut noise = Noise::new(u64::from(cores) * 13 + 2 * u64::from(thrashes));
    [1, pool / 4, pool / 2, pool, 2 * pool, 4 * pool, 8 * pool]
        .into_iter()
        .map(|c| {
            let taken = c >= 4 * pool;
            let per_client = 1000.0 / (DELAY_MS + TARGET_MS);
            let mut x = (f64::from(c) * per_client).min(ceiling);
            let (target_cores, others) = match (taken, thrashes) {
                (true, false) => {
                    x = starved * 1000.0 / TARGET_MS;
                    (starved, f64::from(cores) - starved - 0.05)
                }
                (true, true) => {
                    x = 0.4 * ceiling;
                    (0.95 * f64::from(cores), 0.02)
                }
                (false, _) => (x * TARGET_MS / 1000.0, 0.02),
            };
            let x = noise.jitter(x, 0.01);
            let s = step(c, x, f64::from(c) / x * 1000.0);
            machine(s, cores, Some(target_cores), others)
        })
        .collect()
}

fn taken_fact(finding: &chokepoint_diagnose::Finding) -> Option<(Vec<u32>, f64, Kind)> {
    finding.facts.iter().find_map(|f| match f {
        Fact::MachineTakenAtFall {
            clients,
            others_pct,
            suggested,
            ..
        } => Some((clients.clone(), *others_pct, *suggested)),
        _ => None,
    })
}

#[test]
fn a_fall_while_others_took_the_machine_is_not_contention_on_any_machine() {
    for cores in [2, 16, 64] {
        let pool = 10 * cores;
        // Without a mock: nothing saw the pool, and the fall cannot be the target's: no limit.
        let no_mock = SweepContext {
            cores: Some(cores),
            target_observed: true,
            ..Default::default()
        };
        let d = diagnosed(&pool_then_machine_taken(cores, false), &no_mock);
        let (clients, others_pct, suggested) =
            taken_fact(&d).unwrap_or_else(|| panic!("{cores} cores: {d:?}"));
        assert_eq!(d.kind, Kind::MachineSaturated, "{cores} cores");
        assert_eq!(d.limit, None, "{cores} cores");
        assert_eq!(clients, [4 * pool, 8 * pool], "{cores} cores");
        assert!(others_pct >= 75.0, "{cores} cores: {others_pct}");
        assert_eq!(suggested, Kind::Contention, "{cores} cores");
        let text = chokepoint_diagnose::describe(&d);
        assert!(
            text.summary
                .contains("fell past it while other processes held"),
            "{}",
            text.summary
        );
    }
}

#[test]
fn a_fall_whose_requests_cost_more_or_whose_target_was_not_seen_stays_contention() {
    for cores in [2, 16, 64] {
        let context = SweepContext {
            cores: Some(cores),
            target_observed: true,
            ..Default::default()
        };
        // The target's own requests burn the machine as it falls: contention, as before.
        let d = diagnosed(&pool_then_machine_taken(cores, true), &context);
        assert_eq!(d.kind, Kind::Contention, "{cores} cores thrashing: {d:?}");
        assert!(taken_fact(&d).is_none(), "{cores} cores");
        // Others took the machine, but the target was not observed: its CPU cannot be told
        // from theirs, and the rule reads nothing.
        let mut unseen = pool_then_machine_taken(cores, false);
        for s in &mut unseen {
            s.target_cpu_pct = None;
        }
        let blind = SweepContext {
            target_observed: false,
            ..context.clone()
        };
        let d = diagnosed(&unseen, &blind);
        assert!(taken_fact(&d).is_none(), "{cores} cores unobserved: {d:?}");
    }
}
