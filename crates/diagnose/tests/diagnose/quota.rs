//! A CPU quota is a limit of its own (issue 23): a CPU-bound service in a control group allowed
//! half a core keeps 0.5 of a core busy, the kernel throttles it, and the machine's other cores
//! idle. The finding is `cpu-bound` at the quota with the quota as its place and the setting
//! that changes it, on 2, 16 and 64 cores alike; the same service without a quota (or below it,
//! unthrottled) is not told a quota.
use crate::common;
use chokepoint_result::{CpuQuota, Fact, Kind, PlaceKind, Step, SweepContext};
use common::*;

/// A service whose requests each burn `cpu_ms` of one core, in a group allowed `quota` cores,
/// on a machine of `cores`: throughput stops at quota / cpu per request.
fn quota_steps(cores: u32, quota: Option<f64>, cpu_ms: f64) -> Vec<Step> {
    [1u32, 2, 4, 8, 16]
        .iter()
        .map(|&clients| {
            let wanted = f64::from(clients) * 1000.0 / cpu_ms;
            let cap = quota.unwrap_or(f64::from(cores)).min(f64::from(clients)) * 1000.0 / cpu_ms;
            let x = wanted.min(cap);
            let busy = x * cpu_ms / 1000.0;
            let mut s = step(clients, x, f64::from(clients) / x * 1000.0);
            s.target_cpu_pct = Some(busy * 100.0 / f64::from(cores));
            s.machine_cpu_pct = Some(busy * 100.0 / f64::from(cores) + 3.0);
            s.cpu_quota = quota.map(|q| {
                // Throttled in every period the group wanted more than its quota.
                let throttled = if wanted > cap { 50 } else { 0 };
                CpuQuota {
                    cores: q,
                    period_us: 100_000,
                    group: "/cp-quota".into(),
                    version: 1,
                    periods: 50,
                    throttled_periods: throttled,
                    throttled_s: if wanted > cap { 2.4 } else { 0.0 },
                }
            });
            s
        })
        .collect()
}

fn context(cores: u32) -> SweepContext {
    SweepContext {
        cores: Some(cores),
        target_observed: true,
        ..bare_context()
    }
}

#[test]
fn a_service_at_its_half_core_quota_is_cpu_bound_there_on_any_machine() {
    for cores in [2u32, 16, 64] {
        let d = diagnosed(&quota_steps(cores, Some(0.5), 10.0), &context(cores));
        assert_eq!(d.kind, Kind::CpuBound, "{cores} cores: {d:#?}");
        let limit = d.limit.expect("a limit");
        assert!((limit - 0.5).abs() <= 0.05, "{cores} cores: limit {limit}");
        assert!(
            has(
                &d,
                |f| matches!(f, Fact::CpuQuota { quota_cores, .. } if *quota_cores == 0.5)
            ),
            "{cores} cores: {:#?}",
            d.facts
        );
        let diagnosis = d.clone().into_diagnosis();
        let place = diagnosis.place.expect("a place");
        assert_eq!(place.kind, Some(PlaceKind::Cpu));
        assert_eq!(place.cpu_quota, Some(0.5));
        assert!(place.setting.is_some_and(|s| s.setting.contains("--cpus")));
        assert!(
            diagnosis
                .attribution
                .as_deref()
                .is_some_and(|a| a.contains("CPU quota")),
            "{:?}",
            diagnosis.attribution
        );
    }
}

#[test]
fn without_a_quota_or_below_it_no_quota_is_told() {
    // The same work without a quota on 2 cores: the CPU, not a quota.
    let d = diagnosed(&quota_steps(2, None, 10.0), &context(2));
    assert!(!has(&d, |f| matches!(f, Fact::CpuQuota { .. })), "{d:#?}");
    // A quota of 32 cores on 64, above the 16 cores 16 clients can keep busy: never reached,
    // never throttled.
    let d = diagnosed(&quota_steps(64, Some(32.0), 10.0), &context(64));
    assert!(!has(&d, |f| matches!(f, Fact::CpuQuota { .. })), "{d:#?}");
}
