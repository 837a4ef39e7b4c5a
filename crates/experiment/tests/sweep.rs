//! The sweep end to end, in-process: the demo service's pools behind a chokepoint mock.
//! Tests here share the two cores, so they take turns (one sweep at a time).
use chokepoint_experiment::{sweep, SweepConfig, SweepEvent};
use chokepoint_result::Kind;
use std::sync::Mutex;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

static ONE_SWEEP_AT_A_TIME: Mutex<()> = Mutex::new(());

struct Rig {
    mock: chokepoint_mock::RunningMock,
    service: chokepoint_demo::RunningDemo,
}

fn rig(delay_ms: u64) -> Rig {
    let loopback = "127.0.0.1:0".parse().unwrap();
    let mock = chokepoint_mock::start(
        loopback,
        chokepoint_mock::MockConfig {
            fixed_delay: Some(Duration::from_millis(delay_ms)),
            ..Default::default()
        },
    )
    .unwrap();
    let service = chokepoint_demo::start(
        loopback,
        chokepoint_demo::DemoConfig {
            downstream: mock.url(),
            ..Default::default()
        },
    )
    .unwrap();
    Rig { mock, service }
}

fn config(rig: &Rig, route: &str) -> SweepConfig {
    let mut config = SweepConfig::new(&format!("{}/{route}", rig.service.url())).unwrap();
    config.mock = Some(rig.mock.url());
    config.set_step(Duration::from_millis(1500));
    config.max_clients = 128;
    config.drain_timeout = Duration::from_secs(10);
    config
}

#[test]
fn an_adaptive_sweep_finds_the_pool_of_20_within_30_seconds_of_load() {
    let _turn = ONE_SWEEP_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let rig = rig(50);
    let config = config(&rig, "actors");
    let result = sweep(&config, CancellationToken::new(), &mut |_| {}).unwrap();
    let diagnosis = result.diagnosis.as_ref().unwrap();
    let table: Vec<_> = result
        .steps
        .iter()
        .map(|s| {
            (
                s.clients,
                s.ok_throughput_rps.round(),
                s.latency_ms.mean.round(),
            )
        })
        .collect();
    assert_eq!(
        diagnosis.kind(),
        Kind::BlockingPool,
        "{diagnosis:?} {table:?}"
    );
    let limit = diagnosis.limit().unwrap();
    assert!(
        (18.0..=22.0).contains(&limit),
        "limit {limit}, steps {table:?}"
    );
    // The load budget is counted in steps, not read off a clock.
    let planned_load_s = result.steps.len() as f64 * config.step.as_secs_f64();
    assert!(
        planned_load_s <= 30.0,
        "{} steps: {table:?}",
        result.steps.len()
    );
    // The downstream saw the pool directly.
    let most_in_flight = result
        .steps
        .iter()
        .filter_map(|s| s.downstream_inflight)
        .map(|d| d.max)
        .max()
        .unwrap();
    assert_eq!(most_in_flight, 20, "{table:?}");
    assert!(!result.interrupted);
}

#[test]
fn an_interrupted_sweep_keeps_its_finished_steps_and_writes_the_report() {
    let _turn = ONE_SWEEP_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let rig = rig(20);
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&rig, "dispatcher");
    config.clients = Some(vec![1, 4, 16, 32, 64]);
    config.set_step(Duration::from_millis(700));
    config.out = Some(dir.path().to_path_buf());
    let cancel = CancellationToken::new();
    let stop_after_two = cancel.clone();
    let mut seen = 0;
    let result = sweep(&config, cancel, &mut |event| {
        if let SweepEvent::Step(_) = event {
            seen += 1;
            if seen == 2 {
                stop_after_two.cancel();
            }
        }
    })
    .unwrap();
    assert!(result.interrupted);
    assert_eq!(result.steps.len(), 2);
    assert!(result.diagnosis.is_some());
    let saved: chokepoint_result::SweepResult =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("result.json")).unwrap())
            .unwrap();
    assert_eq!(saved.steps.len(), 2);
    assert!(saved.interrupted);
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("<svg"));
}

#[test]
fn a_listed_sweep_runs_exactly_the_listed_steps_in_order() {
    let _turn = ONE_SWEEP_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let rig = rig(20);
    let mut config = config(&rig, "async");
    config.clients = Some(vec![1, 8, 3]);
    config.set_step(Duration::from_millis(500));
    let result = sweep(&config, CancellationToken::new(), &mut |_| {}).unwrap();
    let clients: Vec<u32> = result.steps.iter().map(|s| s.clients).collect();
    assert_eq!(clients, vec![1, 8, 3]);
    for step in &result.steps {
        assert_eq!(step.ok + step.errors.values().sum::<u64>(), step.requests);
        let downstream = step.downstream.as_ref().expect("the mock was given");
        // One downstream call per request; the mock's window covers the measured part only,
        // so its count sits close to the client's.
        let ratio = downstream.requests as f64 / step.requests.max(1) as f64;
        assert!((0.8..=1.25).contains(&ratio), "{ratio} at {}", step.clients);
    }
    assert_eq!(result.context.downstream_delay_ms, Some(20.0));
}
