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
