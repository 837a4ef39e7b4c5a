//! No rule overrides direct evidence (issue 22): the mock's ceiling of calls in flight held
//! flat at every step past the knee, with a later step faster at less target CPU, is a pool of
//! that size, however busy the CPU looked. The shape of a Spring Boot service on Tomcat's 200
//! threads that came out `cpu-bound 1.6` on this 2-core machine: the mock flat at 200 from 240
//! to 800 clients, the 800-client step the fastest at 54% target CPU. Tables scaled to 16 and
//! 64 cores too; and the same CPU readings without the inversion stay with the CPU.
use crate::common;
use chokepoint_result::{Fact, Kind, Step, SweepContext};
use common::*;

const DELAY_MS: f64 = 50.0;
const POOL: u64 = 200;

/// Steps of a pool of 200 calls of 50 ms: (clients, req/s, target CPU %, generator CPU %).
fn pool_steps(table: &[(u32, f64, f64, f64)]) -> Vec<Step> {
    table
        .iter()
        .map(|&(clients, x, cpu, generator)| {
            let in_service = f64::from(clients).min(POOL as f64);
            let mean_ms = f64::from(clients) / x * 1000.0;
            let mut s = with_mock(step(clients, x, mean_ms), DELAY_MS, 1.0, in_service as u64);
            if let Some(d) = s.downstream_inflight.as_mut() {
                d.mean = in_service * 0.99;
            }
            s.target_cpu_pct = Some(cpu);
            s.generator_cpu_pct = generator;
            s
        })
        .collect()
}

fn context(cores: u32) -> SweepContext {
    SweepContext {
        cores: Some(cores),
        target_observed: true,
        ..mock_context(DELAY_MS)
    }
}

/// The recorded shape on 2 cores, and the same service's CPU as a share of 16 and 64 cores.
fn tomcat(cores: u32) -> Vec<Step> {
    // CPU in percent of 2 cores, rescaled: the same cores busy on a bigger machine.
    let scale = 2.0 / f64::from(cores);
    pool_steps(&[
        (20, 390.0, 8.0 * scale, 5.0),
        (40, 780.0, 15.0 * scale, 9.0),
        (80, 1560.0, 30.0 * scale, 18.0),
        (160, 3100.0, 58.0 * scale, 30.0),
        (240, 3700.0, 80.0 * scale, 40.0),
        (400, 3750.0, 78.0 * scale, 40.0),
        (800, 3900.0, 54.0 * scale, 42.0),
    ])
}

#[test]
fn a_flat_ceiling_with_a_faster_step_at_less_cpu_is_a_pool_at_any_core_count() {
    for cores in [2, 16, 64] {
        let d = diagnosed(&tomcat(cores), &context(cores));
        assert_eq!(d.kind, Kind::BlockingPool, "{cores} cores: {d:#?}");
        let limit = d.limit.expect("a limit");
        assert!(
            (limit - 200.0).abs() <= 20.0,
            "{cores} cores: limit {limit}"
        );
        // On 2 cores the plateau's 80% is a saturated CPU, which the ceiling overrides and
        // says so; on 16 and 64 the same cores busy are no CPU reading to override.
        let told = has(&d, |f| {
            matches!(
                f,
                Fact::CeilingOverCpu { in_flight, faster, .. }
                    if *in_flight == 200.0 && faster.0 == 800
            )
        });
        assert_eq!(told, cores == 2, "{cores} cores: {:#?}", d.facts);
    }
}

#[test]
fn the_same_cpu_without_a_faster_step_at_less_cpu_is_not_vetoed() {
    // The 800-client step no faster than the 240-client one: nothing contradicts the CPU, and
    // the ceiling-over-CPU fact is not there (whatever the CPU rules then decide).
    let mut steps = tomcat(2);
    let last = steps.last_mut().unwrap();
    last.ok_throughput_rps = 3650.0;
    last.throughput_rps = 3650.0;
    let d = diagnosed(&steps, &context(2));
    assert!(
        !has(&d, |f| matches!(f, Fact::CeilingOverCpu { .. })),
        "{d:#?}"
    );
}

#[test]
fn a_ceiling_that_moves_is_no_veto() {
    // The mock's most in flight grows from step to step: no pool's flat ceiling.
    let mut steps = tomcat(2);
    for (i, s) in steps.iter_mut().enumerate().skip(4) {
        if let Some(d) = s.downstream_inflight.as_mut() {
            d.max = 200 + 20 * i as u64;
        }
    }
    let d = diagnosed(&steps, &context(2));
    assert!(
        !has(&d, |f| matches!(f, Fact::CeilingOverCpu { .. })),
        "{d:#?}"
    );
}

/// Steps of a pool of `pool` around a 50 ms call that each request reaches after `outside_ms`
/// of work outside its slot: (clients, req/s, mean latency ms, the mock's most and mean in
/// flight).
fn outside_the_slot(table: &[(u32, f64, f64, u64, f64)]) -> Vec<Step> {
    table
        .iter()
        .map(|&(clients, x, mean_ms, most, mean)| {
            let mut s = with_mock(step(clients, x, mean_ms), DELAY_MS, 1.0, most);
            if let Some(d) = s.downstream_inflight.as_mut() {
                d.mean = mean;
            }
            s
        })
        .collect()
}

#[test]
fn a_full_ceiling_at_every_step_is_the_pool_when_requests_spend_time_outside_their_slot() {
    // tests/targets/py-warmup --pool 12, live on this machine after its warm-up: 20 ms of sleep
    // before a semaphore of 12 around the mock's 50 ms call. Little's law over the whole
    // request (228 req/s × 76 ms) says 17; the mock held exactly 12, 11.2 to 11.8 on average,
    // at every plateau step.
    let steps = outside_the_slot(&[
        (1, 12.4, 78.7, 1, 0.6),
        (2, 25.3, 75.9, 2, 1.3),
        (8, 106.5, 74.0, 8, 5.3),
        (15, 207.8, 72.6, 12, 10.4),
        (24, 227.1, 103.8, 12, 11.2),
        (32, 228.4, 139.5, 12, 11.7),
        (48, 228.4, 207.9, 12, 11.8),
    ]);
    let d = diagnosed(&steps, &mock_context(DELAY_MS));
    assert_eq!(d.kind, Kind::BlockingPool, "{d:#?}");
    assert_eq!(d.limit, Some(12.0), "{:#?}", d.facts);
    assert!(has(&d, |f| matches!(
        f,
        Fact::MockCeiling {
            reading: chokepoint_result::CeilingReading::FullAtEveryStep,
            ..
        }
    )));
    // The same pool of 200 on a bigger machine: the reading does not depend on the cores.
    let big = outside_the_slot(&[
        (50, 770.0, 65.0, 50, 38.0),
        (100, 1540.0, 65.0, 100, 77.0),
        (300, 3800.0, 79.0, 200, 188.0),
        (600, 3810.0, 157.0, 200, 196.0),
        (1200, 3805.0, 315.0, 200, 197.0),
    ]);
    let d = diagnosed(&big, &context(64));
    assert_eq!(
        (d.kind, d.limit),
        (Kind::BlockingPool, Some(200.0)),
        "{:#?}",
        d.facts
    );
    // A ceiling that moves from step to step (calls in bursts) is no such evidence: Little's
    // law keeps the size.
    let bursts = outside_the_slot(&[
        (1, 12.4, 78.7, 1, 0.6),
        (8, 106.5, 74.0, 8, 5.3),
        (24, 227.1, 103.8, 14, 11.3),
        (32, 228.4, 139.5, 12, 11.4),
        (48, 228.4, 207.9, 16, 11.4),
    ]);
    let d = diagnosed(&bursts, &mock_context(DELAY_MS));
    assert!(
        !has(&d, |f| matches!(
            f,
            Fact::MockCeiling {
                reading: chokepoint_result::CeilingReading::FullAtEveryStep,
                ..
            }
        )),
        "{:#?}",
        d.facts
    );
}

#[test]
fn a_ceiling_held_at_every_step_is_the_pool_though_a_starved_machine_leaves_its_slots_idle_a_while()
{
    // tests/targets/py-warmup --pool 12 in bench/flake-hunt.sh's first round (one core burnt):
    // its warm-up settled at 86 ms, so Little's law over the request (218 req/s × 78 ms) says 17,
    // while the mock held exactly 12 at every plateau step, 10.3 to 11.4 on average (the gap
    // between one call's end and the next waiter's start grows on a starved machine).
    let steps = outside_the_slot(&[
        (1, 12.2, 81.0, 1, 0.6),
        (2, 25.3, 77.5, 2, 1.3),
        (8, 99.6, 79.1, 8, 5.3),
        (14, 185.0, 75.5, 12, 9.5),
        (15, 197.8, 75.3, 12, 10.3),
        (17, 216.2, 78.3, 12, 11.2),
        (20, 217.3, 91.5, 12, 10.3),
        (32, 218.9, 144.9, 12, 10.3),
        (68, 220.5, 197.8, 12, 11.4),
    ]);
    let d = diagnosed(&steps, &mock_context(DELAY_MS));
    assert_eq!(
        (d.kind, d.limit),
        (Kind::BlockingPool, Some(12.0)),
        "{:#?}",
        d.facts
    );
    // The same shape scaled: a pool of 100 on 16 cores and one of 400 on 64, their slots busy
    // 85% of the time.
    for (cores, pool) in [(16, 100u64), (64, 400)] {
        let p = pool as f64;
        let x = 0.85 * p / 0.050;
        let steps = outside_the_slot(&[
            (pool as u32 / 4, p / 4.0 / 0.078, 78.0, pool / 4, 0.16 * p),
            (pool as u32 / 2, p / 2.0 / 0.078, 78.0, pool / 2, 0.32 * p),
            (2 * pool as u32, x, 2.0 * p / x * 1000.0, pool, 0.86 * p),
            (4 * pool as u32, x, 4.0 * p / x * 1000.0, pool, 0.84 * p),
            (8 * pool as u32, x, 8.0 * p / x * 1000.0, pool, 0.85 * p),
        ]);
        let d = diagnosed(&steps, &context(cores));
        assert_eq!(
            (d.kind, d.limit),
            (Kind::BlockingPool, Some(p)),
            "{cores} cores: {:#?}",
            d.facts
        );
    }
    // Slots idle half the time are no such evidence: the ceiling is not shown to be what
    // stops the calls, and Little's law keeps the size.
    let idle = outside_the_slot(&[
        (1, 12.2, 81.0, 1, 0.6),
        (8, 99.6, 79.1, 8, 5.3),
        (17, 216.2, 78.3, 12, 6.0),
        (32, 218.9, 144.9, 12, 5.8),
        (68, 220.5, 197.8, 12, 6.1),
    ]);
    let d = diagnosed(&idle, &mock_context(DELAY_MS));
    assert!(
        !has(&d, |f| matches!(
            f,
            Fact::MockCeiling {
                reading: chokepoint_result::CeilingReading::FullAtEveryStep,
                ..
            }
        )),
        "{:#?}",
        d.facts
    );
}
