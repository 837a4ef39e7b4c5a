//! A CPU quota is a limit of its own (issue 23): a CPU-bound service in a control group allowed
//! half a core keeps 0.5 of a core busy, the kernel throttles it, and the machine's other cores
//! idle. The finding is `cpu-bound` at the quota with the quota as its place and the setting
//! that changes it, on 2, 16 and 64 cores alike; the same service without a quota (or below it,
//! unthrottled) is not told a quota.
use crate::common;
use chokepoint_result::{
    CpuQuota, Fact, Kind, PlaceKind, Runtime, RuntimeCores, RuntimeCoresSource, Step, SweepContext,
};
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
                    runtime_cores: None,
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

/// The steps of [`quota_steps`] with the target's runtime sized for `runtime`.
fn with_runtime(mut steps: Vec<Step>, runtime: &RuntimeCores) -> Vec<Step> {
    for step in &mut steps {
        if let Some(quota) = step.cpu_quota.as_mut() {
            quota.runtime_cores = Some(runtime.clone());
        }
    }
    steps
}

fn runtime(runtime: Runtime, cores: u32, source: RuntimeCoresSource) -> RuntimeCores {
    RuntimeCores {
        runtime,
        cores,
        source,
    }
}

#[test]
fn a_runtime_sized_for_more_cores_than_the_quota_gives_is_told_with_its_setting() {
    let go_default = |follows_quota| RuntimeCoresSource::GoDefault {
        version: "go1.26.8".into(),
        follows_quota,
    };
    for cores in [2u32, 16, 64] {
        // (the runtime, whether the finding tells it, words it says)
        for (sized, told, words) in [
            // A JVM started before its group was capped, or with container support off.
            (
                runtime(Runtime::Jvm, cores, RuntimeCoresSource::JcmdVmInfo),
                true,
                "-XX:ActiveProcessorCount=1",
            ),
            // A JVM started in the half-core group: JDK 10+ rounds the quota up to 1.
            (
                runtime(Runtime::Jvm, 1, RuntimeCoresSource::JcmdVmInfo),
                false,
                "",
            ),
            // Go 1.25+'s default: the quota rounded up, 2 at least.
            (
                runtime(Runtime::Go, 2, go_default(true)),
                true,
                "GOMAXPROCS=1",
            ),
            // A go.mod before 1.25: the machine's CPUs.
            (
                runtime(Runtime::Go, cores, go_default(false)),
                true,
                "the quota not followed",
            ),
            (
                runtime(Runtime::Go, 1, RuntimeCoresSource::GomaxprocsEnv),
                false,
                "",
            ),
        ] {
            let steps = with_runtime(quota_steps(cores, Some(0.5), 10.0), &sized);
            // Not `diagnosed`: prose.jsonl keys steps without the runtime, whose words are new
            // and checked here.
            let d = chokepoint_diagnose::diagnose(&steps, &context(cores));
            let fact = d.facts.iter().find_map(|f| match f {
                Fact::CpuQuota { runtime_cores, .. } => Some(runtime_cores.clone()),
                _ => None,
            });
            let fact = fact.unwrap_or_else(|| panic!("{cores} cores: a quota fact: {d:#?}"));
            assert_eq!(fact.is_some(), told, "{cores} cores, {sized:?}");
            let evidence = d.clone().into_diagnosis().evidence.join(" ");
            assert_eq!(
                evidence.contains("the quota gives 0.5"),
                told,
                "{cores} cores, {sized:?}: {evidence}"
            );
            assert!(evidence.contains(words), "{evidence}");
        }
    }
}
