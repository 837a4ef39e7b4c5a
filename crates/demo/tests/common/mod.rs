//! What the Rust and JVM scenario tests share: a mock downstream, a load run, and the checks
//! the issue asks for (plateau and the mock's most-in-flight within 10% of the pool).
#![allow(dead_code)] // each test binary uses part of it

use chokepoint_demo::blocking_http::BlockingClient;
use chokepoint_mock::{MockConfig, RunningMock};
use chokepoint_result::LoadReport;
use std::net::SocketAddr;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The downstream delay of the pool scenarios.
pub const DELAY: Duration = Duration::from_millis(100);
/// The pool size the pool scenarios configure (small, so the suite stays light).
pub const POOL: usize = 5;
/// How long each measured load run lasts.
pub const RUN: Duration = Duration::from_secs(2);

/// Scenarios measure throughput: run them one at a time so they do not share the two cores.
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A mock answering every request 200 after `delay`.
pub fn delayed_mock(delay: Duration) -> RunningMock {
    chokepoint_mock::start(
        "127.0.0.1:0".parse().expect("address"),
        MockConfig {
            fixed_delay: Some(delay),
            ..Default::default()
        },
    )
    .expect("the mock starts")
}

/// A mock answering `/product/{id}` after the given delay for each id.
pub fn product_mock(products: &[(&str, u64)]) -> RunningMock {
    let stubs: Vec<String> = products
        .iter()
        .map(|(id, delay_ms)| {
            format!(
                r#"{{"request":{{"method":"GET","url":"/product/{id}"}},
                    "response":{{"status":200,"jsonBody":{{"id":"{id}"}},"fixedDelayMilliseconds":{delay_ms}}}}}"#
            )
        })
        .collect();
    let json = format!(r#"{{"mappings":[{}]}}"#, stubs.join(","));
    let mappings = chokepoint_mock::parse_mappings(&json, "test").expect("valid mappings");
    chokepoint_mock::start(
        "127.0.0.1:0".parse().expect("address"),
        MockConfig {
            mappings,
            ..Default::default()
        },
    )
    .expect("the mock starts")
}

/// A closed-loop load run of `clients` for `duration`, the ramp excluded.
pub fn load(url: &str, clients: u32, duration: Duration) -> LoadReport {
    let mut config = chokepoint_load::LoadConfig::new(url).expect("valid URL");
    config.clients = clients;
    config.duration = Some(duration);
    config.exclude_ramp = true;
    config.timeout = Duration::from_secs(20);
    config.interval = Duration::from_secs(60);
    chokepoint_load::start(config, CancellationToken::new())
        .and_then(|run| run.finish())
        .expect("the load run")
}

/// What one scenario measured.
#[derive(Debug)]
pub struct Measured {
    pub route: String,
    pub clients: u32,
    pub throughput_rps: f64,
    /// Throughput × the downstream delay: how many calls the service had at once.
    pub plateau: f64,
    pub max_in_flight: u64,
    pub errors: u64,
    pub report: LoadReport,
}

/// Loads `base + route` with `clients` for `run` and reads what the mock, answering after
/// `delay`, saw meanwhile.
///
/// A pool answers in batches (its threads start together and finish together), so the count in
/// a window is off by up to one batch: keep `run` long beside `delay`.
pub fn measure(
    base: &str,
    route: &str,
    mock: &RunningMock,
    clients: u32,
    (delay, run): (Duration, Duration),
) -> Measured {
    wait_until_idle(mock);
    mock.reset_stats();
    let report = load(&format!("{base}{route}"), clients, run);
    let stats = mock.reset_stats();
    let measured = Measured {
        route: route.to_string(),
        clients,
        throughput_rps: report.throughput_rps,
        plateau: report.throughput_rps * delay.as_secs_f64(),
        max_in_flight: stats.max_in_flight,
        errors: report.error_count(),
        report,
    };
    eprintln!(
        "{route}: {clients} clients, {:.1} req/s, plateau {:.2}, mock max in flight {}, errors {}, p50 {:.1} ms",
        measured.throughput_rps,
        measured.plateau,
        measured.max_in_flight,
        measured.errors,
        measured.report.latency_ms.p50
    );
    measured
}

/// Waits (at most 20 s) until the mock has nothing in flight: calls queued by an earlier run
/// still drain after its clients have gone, and would count in the next run's window.
pub fn wait_until_idle(mock: &RunningMock) {
    for _ in 0..2000 {
        if mock.stats().in_flight == 0 {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The issue's check for a pool route: at twice the pool in clients, the plateau and the mock's
/// most-in-flight both match the pool within 10%.
pub fn assert_pool_limit(measured: &Measured, pool: usize) {
    let pool = pool as f64;
    assert_eq!(measured.errors, 0, "{measured:?}");
    assert!(
        measured.report.requests > 0,
        "{}: nothing completed",
        measured.route
    );
    assert!(
        (measured.plateau - pool).abs() <= 0.1 * pool,
        "{}: plateau {:.2} is not within 10% of the pool {pool}",
        measured.route,
        measured.plateau
    );
    assert!(
        (measured.max_in_flight as f64 - pool).abs() <= 0.1 * pool,
        "{}: the mock saw at most {} in flight, not the pool {pool} (within 10%)",
        measured.route,
        measured.max_in_flight
    );
}

/// `/async` keeps up: throughput follows the clients (well past every pool) and the mock sees
/// about as many calls at once as there are clients.
pub fn assert_keeps_up(measured: &Measured) {
    let clients = measured.clients as f64;
    assert_eq!(measured.errors, 0, "{measured:?}");
    assert!(
        measured.plateau >= 0.8 * clients,
        "{}: plateau {:.2} does not follow {clients} clients",
        measured.route,
        measured.plateau
    );
    assert!(
        measured.max_in_flight as f64 >= 0.9 * clients,
        "{}: the mock saw at most {} in flight for {clients} clients",
        measured.route,
        measured.max_in_flight
    );
}

/// One GET through the demo's own blocking client: (status, body).
pub fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let client = BlockingClient::new(addr, &addr.to_string(), None, Duration::from_secs(30));
    let response = client.get(path).expect("the service answers");
    (
        response.status,
        String::from_utf8_lossy(&response.body).into_owned(),
    )
}

/// The products of the fan-out scenario and their delays: the slowest is 200 ms, the sum 500.
pub const PRODUCTS: [(&str, u64); 4] = [
    ("PROD-001", 50),
    ("PROD-002", 100),
    ("PROD-003", 150),
    ("PROD-004", 200),
];

/// `/recommendations` at one client takes about the slowest product's delay and
/// `/recommendations-serial` about the sum.
pub fn assert_fan_out(parallel: &LoadReport, serial: &LoadReport) {
    let slowest = PRODUCTS.iter().map(|p| p.1).max().unwrap_or_default() as f64;
    let sum = PRODUCTS.iter().map(|p| p.1).sum::<u64>() as f64;
    eprintln!(
        "fan-out: parallel p50 {:.1} ms (slowest {slowest} ms), serial p50 {:.1} ms (sum {sum} ms)",
        parallel.latency_ms.p50, serial.latency_ms.p50
    );
    assert_eq!(parallel.error_count(), 0, "{parallel:?}");
    assert_eq!(serial.error_count(), 0, "{serial:?}");
    // The bounds are the delays, which are real; none is a ratio of the machine's speed. A busy
    // machine slows both routes alike (a cold run of the full suite beside two sweeps read the
    // serial p50 at 802 ms, 1.6 × the sum), so the routes are told apart by what each pays on top
    // of the other: the parallel one less than the sum, the serial one the other calls' delays
    // more than the parallel one.
    let (parallel_ms, serial_ms) = (parallel.latency_ms.p50, serial.latency_ms.p50);
    assert!(
        parallel_ms >= slowest * 0.98,
        "parallel p50 {parallel_ms} ms < slowest {slowest}"
    );
    assert!(
        parallel_ms < sum * 0.98,
        "parallel p50 {parallel_ms} ms is the sum {sum} ms: the calls did not overlap"
    );
    assert!(
        serial_ms >= sum * 0.98,
        "serial p50 {serial_ms} ms < sum {sum}"
    );
    assert!(
        serial_ms - parallel_ms >= (sum - slowest) * 0.9,
        "serial p50 {serial_ms} ms is not the parallel {parallel_ms} ms plus the other calls' {} ms",
        sum - slowest
    );
}
