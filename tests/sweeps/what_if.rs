//! `sweep --what-if M` checked against the real change: the pool found at N predicted at M by
//! emulation (the mock's delay scaled by N/M), then the service really run with a pool of M and
//! swept; the predicted plateau must be within 15% of the measured one (the goal is
//! 10%; both figures are printed). The demo service's `/actors` (20 → 40), and
//! tests/targets/py-threadpool (`--workers 6` → 12).
use crate::common::{self, beside_two_others, one_at_a_time, sweep_with, Target};
use chokepoint_experiment::{PoolSize, SweepConfig};
use chokepoint_result::{Kind, MeasuredBy, SweepResult};
use std::process::Command;
use std::time::Duration;

/// Predicted against measured may differ by this share.
const WITHIN: f64 = 0.15;

fn config(url: &str, pid: Option<i32>, what_if: Option<u32>) -> SweepConfig {
    let mut config = SweepConfig::new(url).expect("a valid URL");
    if let Some(pid) = pid {
        config = config.with_target_pid(pid);
    }
    config.warmup_limit = Duration::ZERO;
    config.what_if = what_if.map(PoolSize::Pool);
    config
}

fn plateau(result: &SweepResult) -> f64 {
    result
        .diagnosis
        .as_ref()
        .and_then(|d| d.plateau())
        .map(|p| p.throughput_rps)
        .expect("a plateau")
}

/// The what-if's prediction from `predicted` and the plateau of `real`, checked.
fn check(name: &str, predicted: &SweepResult, real: &SweepResult, m: u32) {
    let diagnosis = common::assert_kind(name, predicted, Kind::BlockingPool);
    let what_if = diagnosis.what_if.as_ref().expect("a what-if");
    println!("{name}: what if: {}", what_if.summary);
    assert_eq!(what_if.measured_by, MeasuredBy::Emulation, "{what_if:?}");
    assert_eq!(what_if.pool, Some(m));
    let predicted_rps = what_if.predicted_rps.expect("a prediction");
    common::assert_kind(name, real, Kind::BlockingPool);
    let measured = plateau(real);
    let off = predicted_rps / measured - 1.0;
    println!(
        "{name}: predicted {predicted_rps:.1} req/s for a pool of {m}, measured {measured:.1} req/s ({:+.1}%)",
        off * 100.0
    );
    assert!(
        off.abs() <= WITHIN,
        "{name}: predicted {predicted_rps:.1} req/s, measured {measured:.1} req/s"
    );
}

fn demo(actors: usize, mock: &chokepoint_mock::RunningMock) -> chokepoint_demo::RunningDemo {
    chokepoint_demo::start(
        "127.0.0.1:0".parse().expect("an address"),
        chokepoint_demo::DemoConfig {
            downstream: mock.url(),
            actors,
            ..Default::default()
        },
    )
    .expect("the demo service starts")
}

#[test]
fn the_demo_services_pool_of_20_predicted_at_40_matches_the_pool_of_40() {
    // Beside two others: pools of 20 and 40 behind the mock's delay leave the machine idle (2
    // to 6 % over its turn, sessions 27 and 28); the throughput compared is the pool's over the
    // delay.
    let _turn = beside_two_others();
    let mock = common::mock_with_delay_of(Duration::from_millis(100));
    let at_20 = demo(20, &mock);
    let url = format!("{}/actors", at_20.url());
    let predicted = sweep_with(
        "demo-20",
        config(&url, None, Some(40)),
        Some(vec![10, 20, 40, 80]),
        common::STEP,
        80,
        Some(&mock),
    );
    let delay_now = chokepoint_experiment::downstream::MockClient::new(&mock.url())
        .and_then(|client| client.fixed_delay_ms())
        .expect("the mock's delay");
    assert_eq!(delay_now, Some(100.0), "the delay is put back");
    drop(at_20);
    let at_40 = demo(40, &mock);
    let url = format!("{}/actors", at_40.url());
    let real = sweep_with(
        "demo-40",
        config(&url, None, None),
        Some(vec![40, 80]),
        common::STEP,
        80,
        Some(&mock),
    );
    check("demo", &predicted, &real, 40);
}

fn py_threadpool(workers: u32, mock: &chokepoint_mock::RunningMock) -> Target {
    let mut command = Command::new("python3");
    command
        .arg(common::targets_dir().join("py-threadpool/server.py"))
        .args(["--port", "0", "--downstream", &mock.url()])
        .args(["--workers", &workers.to_string()]);
    Target::launch("py-threadpool", command)
}

#[test]
fn py_threadpools_6_workers_predicted_at_12_match_12_workers() {
    if !common::toolchain_present("python3", "--version") {
        return;
    }
    let _turn = one_at_a_time();
    let mock = common::mock_with_delay();
    let at_6 = py_threadpool(6, &mock);
    let predicted = sweep_with(
        "py-threadpool-6",
        config(&at_6.url(), Some(at_6.pid()), Some(12)),
        Some(vec![3, 6, 12, 24]),
        common::STEP,
        24,
        Some(&mock),
    );
    drop(at_6);
    let at_12 = py_threadpool(12, &mock);
    let real = sweep_with(
        "py-threadpool-12",
        config(&at_12.url(), Some(at_12.pid()), None),
        Some(vec![12, 24]),
        common::STEP,
        24,
        Some(&mock),
    );
    check("py-threadpool", &predicted, &real, 12);
}
