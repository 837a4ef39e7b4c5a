//! Contention without a fall (`crates/diagnose/src/thrash.rs`): a plateau on which each request
//! costs more CPU the more clients there are, on 2, 16 and 64 cores, and the pools it must
//! leave alone: one the mock sees at its ceiling while its runtime spins a little more, one
//! whose CPU per request rises less than twice, one whose rise adds next to no CPU.

use crate::common;
use chokepoint_result::{Fact, Kind, Step, SweepContext};
use common::*;

/// The client counts swept: below, at and well past the knee (~12).
const CLIENTS: [u32; 7] = [1, 2, 4, 8, 14, 20, 28];
/// Mean latency of one request alone, ms.
const BASE_MS: f64 = 23.0;

/// The observed context of a sweep on `cores` cores, with or without a mock of `delay_ms`.
fn context(cores: u32, delay_ms: Option<f64>) -> SweepContext {
    SweepContext {
        cores: Some(cores),
        target_observed: true,
        downstream_delay_ms: delay_ms,
        mock_present: delay_ms.is_some(),
        max_clients: 1000,
        ..SweepContext::default()
    }
}

/// A service whose throughput stops at `ceiling` req/s from ~12 clients on, each request
/// costing `cpu_ms(c)` of CPU at `c` clients, on `cores` cores.
fn service(cores: u32, ceiling: f64, c: u32, cpu_ms: impl Fn(u32) -> f64) -> Step {
    let mut noise = Noise::new(u64::from(c) * 31 + u64::from(cores));
    let ideal = f64::from(c) * 1000.0 / BASE_MS;
    let x = noise.jitter(ideal.min(ceiling), 0.01);
    let mut s = step(c, x, f64::from(c) / x * 1000.0);
    let cores_busy = x * cpu_ms(c) / 1000.0;
    s.target_cpu_pct = Some(cores_busy / f64::from(cores) * 100.0);
    s
}

/// CPU per request that grows past the knee as a lock spun on does: `base` ms alone, rising by
/// `slope` of it for each client past `12 × scale`, the knee.
fn spinning(base: f64, slope: f64, scale: u32) -> impl Fn(u32) -> f64 {
    move |c| base * (1.0 + slope / f64::from(scale) * f64::from(c.saturating_sub(12 * scale)))
}

fn rises(finding: &chokepoint_diagnose::Finding) -> Option<(u32, u32, f64)> {
    finding.facts.iter().find_map(|f| match f {
        Fact::CpuPerRequestRises {
            from_clients,
            to_clients,
            from_cpu_ms,
            to_cpu_ms,
            ..
        } => Some((*from_clients, *to_clients, to_cpu_ms / from_cpu_ms)),
        _ => None,
    })
}

#[test]
fn a_plateau_whose_cpu_per_request_doubles_is_contention_on_any_machine() {
    // tests/targets/java-thrash's adaptive recording: 540 req/s from 14 clients on, 0.71 ms of
    // CPU a request there, 1.67 ms at 28. A spinlock does not use more cores on a larger
    // machine; a service thrashing over more threads does (`scale` times the clients and the
    // throughput): both, on 2, 16 and 64 cores.
    for (cores, scale) in [(2, 1), (16, 1), (64, 1), (16, 8), (64, 32)] {
        let ceiling = 540.0 * f64::from(scale);
        let steps: Vec<Step> = CLIENTS
            .iter()
            .map(|&c| service(cores, ceiling, c * scale, spinning(0.7, 0.1, scale)))
            .collect();
        let d = diagnosed(&steps, &context(cores, None));
        let (from, to, ratio) = rises(&d).unwrap_or_else(|| {
            panic!(
                "{cores} cores, {ceiling} req/s: no rise read: {:?}",
                d.facts
            )
        });
        assert_eq!(d.kind, Kind::Contention, "{cores} cores, {ceiling} req/s");
        assert_eq!(to, 28 * scale);
        assert!(
            from <= 14 * scale,
            "from the plateau's fewest clients: {from}"
        );
        assert!(ratio >= 2.0, "{ratio}");
        let words = chokepoint_diagnose::describe(&d);
        assert!(
            words
                .summary
                .contains("more clients cost CPU, not throughput"),
            "{}",
            words.summary
        );
    }
}

#[test]
fn a_pool_the_mock_sees_at_its_ceiling_stays_a_pool_when_its_runtime_spins_more() {
    // A pool of 12 held 23 ms each behind the mock, whose runtime's idle workers spin more the
    // more requests wait (a ForkJoinPool scans before it parks): the CPU per request rises as
    // the thrash's does, and the mock's 12 in flight at every plateau step is the pool.
    for cores in [2, 16, 64] {
        let steps: Vec<Step> = CLIENTS
            .iter()
            .map(|&c| {
                let s = service(cores, 12.0 * 1000.0 / BASE_MS, c, spinning(0.7, 0.1, 1));
                with_mock(s, BASE_MS, 1.0, u64::from(c.min(12)))
            })
            .collect();
        let d = diagnosed(&steps, &context(cores, Some(BASE_MS)));
        assert_eq!(d.kind, Kind::BlockingPool, "{cores} cores: {:?}", d.facts);
        assert_eq!(rises(&d), None);
    }
}

#[test]
fn a_pool_whose_cpu_per_request_rises_less_than_twice_or_by_next_to_no_cpu_stays_a_pool() {
    for cores in [2, 16, 64] {
        // 1.6× from 14 to 28 clients: a runtime's extra work under load, not requests
        // burning CPU on each other.
        let mild: Vec<Step> = CLIENTS
            .iter()
            .map(|&c| service(cores, 540.0, c, spinning(0.7, 0.045, 1)))
            .collect();
        let d = diagnosed(&mild, &context(cores, None));
        assert_eq!(
            d.kind,
            Kind::BlockingPool,
            "{cores} cores, mild: {:?}",
            d.facts
        );
        assert_eq!(rises(&d), None);
        // 2.2×, but from 0.03 to 0.06 cores: a pool whose requests wait, with a little
        // bookkeeping per waiter (place/jvm-actors rose 2.3× by 0.1 core).
        let tiny: Vec<Step> = CLIENTS
            .iter()
            .map(|&c| service(cores, 540.0, c, spinning(0.04, 0.1, 1)))
            .collect();
        let d = diagnosed(&tiny, &context(cores, None));
        assert_eq!(
            d.kind,
            Kind::BlockingPool,
            "{cores} cores, tiny: {:?}",
            d.facts
        );
        assert_eq!(rises(&d), None);
    }
}

/// The client counts of go-spin-permits' sweeps: the knee at about 16 permits × `scale`.
const PERMITS_CLIENTS: [u32; 8] = [1, 2, 8, 14, 17, 20, 32, 65];

/// A service of `16 × scale` permits each held 20.3 ms, 0.45 ms of CPU a request while no one
/// waits; past the permits its waiters spin and hold 93% of all `cores` (or, for a service whose
/// CPU is the limit, `work_ms` a request at every step).
fn permits_or_cpu(cores: u32, scale: u32, c: u32, spinning: bool) -> Step {
    let permits = 16 * scale;
    let ceiling = f64::from(permits) * 1000.0 / 20.3;
    let mut noise = Noise::new(u64::from(c) * 13 + u64::from(cores));
    let x = noise.jitter((f64::from(c) * 1000.0 / 20.3).min(ceiling), 0.01);
    let mut s = step(c, x, f64::from(c) / x * 1000.0);
    let busy = if spinning && c > permits {
        0.93 * f64::from(cores)
    } else {
        // Below the permits (or for good, when nothing spins): the work's own cost.
        (x * 0.45 / 1000.0).min(0.93 * f64::from(cores))
    };
    s.target_cpu_pct = Some(busy / f64::from(cores) * 100.0);
    s
}

#[test]
fn a_cpu_saturated_by_waiters_spinning_from_the_knee_is_contention_on_any_machine() {
    // tests/targets/go-spin-permits on 2 cores: the CPU saturates at the knee, so every plateau
    // step costs about the same; the step before the plateau gives the work's cost. Scaled, the
    // same service with 16 × scale permits on 16 and 64 cores, its spinners filling them all.
    for (cores, scale) in [(2, 1), (16, 8), (64, 32)] {
        let steps: Vec<Step> = PERMITS_CLIENTS
            .iter()
            .map(|&c| permits_or_cpu(cores, scale, c * scale, true))
            .collect();
        let d = diagnosed(&steps, &context(cores, None));
        assert_eq!(d.kind, Kind::Contention, "{cores} cores: {:?}", d.facts);
        let (from, to, ratio) = rises(&d).expect("the rise");
        assert!(from < 17 * scale, "{cores} cores: read from {from} clients");
        assert_eq!(to, 65 * scale);
        assert!(ratio >= 2.0, "{cores} cores: {ratio}");
        assert!(
            !d.facts.iter().any(|f| matches!(f, Fact::CoresBusy { .. })),
            "{cores} cores: the cpu-bound reading's size is gone"
        );
    }
}

#[test]
fn a_service_whose_work_fills_the_cores_at_one_cost_stays_cpu_bound_on_any_machine() {
    // No spinning and no permits: each request costs 5 ms of CPU at every step, so throughput
    // stops where the cores are full (93% of them over 5 ms). The cost per request holds: the
    // CPU is the limit.
    for (cores, scale) in [(2, 1), (16, 8), (64, 32)] {
        let full = 0.93 * f64::from(cores) * 1000.0 / 5.0;
        let steps: Vec<Step> = PERMITS_CLIENTS
            .iter()
            .map(|&c| {
                let c = c * scale;
                let mut noise = Noise::new(u64::from(c) * 17 + u64::from(cores));
                let x = noise.jitter((f64::from(c) * 1000.0 / 25.0).min(full), 0.01);
                let mut s = step(c, x, f64::from(c) / x * 1000.0);
                s.target_cpu_pct = Some(x * 5.0 / 1000.0 / f64::from(cores) * 100.0);
                s
            })
            .collect();
        let d = diagnosed(&steps, &context(cores, None));
        assert!(rises(&d).is_none(), "{cores} cores: {:?}", d.facts);
        assert_eq!(d.kind, Kind::CpuBound, "{cores} cores: {:?}", d.facts);
    }
}
