//! The Rust demo service against the mock, driven by the load engine: each pool route shows its
//! configured limit, `/async` keeps up past every pool, the fan-out costs the slowest call and
//! the serial version the sum; plus `/cpu`, `/leaky`, `GET /`, 502s and stopping.
mod common;

use chokepoint_demo::{DemoConfig, RunningDemo};
use common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The service with every pool (and the client cap) set to `POOL`.
fn demo_with_pools(downstream: &str) -> RunningDemo {
    chokepoint_demo::start(
        "127.0.0.1:0".parse().expect("address"),
        DemoConfig {
            downstream: downstream.to_string(),
            actors: POOL,
            cpu_pool: POOL,
            client_pool: POOL,
            dispatcher: POOL,
            ..DemoConfig::default()
        },
    )
    .expect("the demo service starts")
}

#[test]
fn each_pool_route_plateaus_at_its_pool() {
    let _serial = one_at_a_time();
    let mock = delayed_mock(DELAY);
    let demo = demo_with_pools(&mock.url());
    let mut failures = Vec::new();
    for route in ["/actors", "/global", "/blocking", "/dispatcher"] {
        let measured = measure(&demo.url(), route, &mock, 2 * POOL as u32, (DELAY, RUN));
        // Each route calls the downstream at its own path.
        if let Err(failure) = std::panic::catch_unwind(|| assert_pool_limit(&measured, POOL)) {
            failures.push(failure);
        }
    }
    demo.stop();
    if let Some(failure) = failures.into_iter().next() {
        std::panic::resume_unwind(failure);
    }
}

#[test]
fn the_default_pool_sizes_are_the_seeds() {
    let _serial = one_at_a_time();
    let mock = delayed_mock(DELAY);
    let demo = chokepoint_demo::start(
        "127.0.0.1:0".parse().expect("address"),
        DemoConfig {
            downstream: mock.url(),
            ..DemoConfig::default()
        },
    )
    .expect("the demo service starts");
    // Seed 000's router of 20 actors, at twice its size.
    let measured = measure(&demo.url(), "/actors", &mock, 40, (DELAY, RUN));
    assert_pool_limit(&measured, 20);
}

#[test]
fn async_keeps_up_well_past_every_pool() {
    let _serial = one_at_a_time();
    let mock = delayed_mock(DELAY);
    let demo = demo_with_pools(&mock.url());
    let clients = 10 * POOL as u32;
    let measured = measure(&demo.url(), "/async", &mock, clients, (DELAY, RUN));
    assert_keeps_up(&measured);
    // The same clients on a pool route stay at the pool.
    let pooled = measure(&demo.url(), "/dispatcher", &mock, clients, (DELAY, RUN));
    assert!(
        pooled.plateau <= POOL as f64 * 1.1,
        "/dispatcher plateau {:.2}",
        pooled.plateau
    );
}

#[test]
fn the_fan_out_costs_the_slowest_call_and_the_serial_one_the_sum() {
    let _serial = one_at_a_time();
    let mock = product_mock(&PRODUCTS);
    let demo = chokepoint_demo::start(
        "127.0.0.1:0".parse().expect("address"),
        DemoConfig {
            downstream: mock.url(),
            ..DemoConfig::default()
        },
    )
    .expect("the demo service starts");
    let (status, body) = get(demo.addr(), "/recommendations");
    assert_eq!(status, 200, "{body}");
    let listed: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    let ids: Vec<&str> = listed["recommendations"]
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|product| product["id"].as_str())
        .collect();
    assert_eq!(ids, ["PROD-001", "PROD-002", "PROD-003", "PROD-004"]);
    let parallel = load(&format!("{}/recommendations", demo.url()), 1, RUN);
    let serial = load(
        &format!("{}/recommendations-serial", demo.url()),
        1,
        Duration::from_secs(3),
    );
    assert_fan_out(&parallel, &serial);
}

/// The CPU time this whole process has used (service, mock and load all run in it).
fn process_cpu_time() -> Duration {
    // SAFETY: getrusage writes only the struct we pass, which lives on our stack.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    assert_eq!(rc, 0, "getrusage");
    let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    Duration::from_micros(micros(usage.ru_utime) + micros(usage.ru_stime))
}

#[test]
fn cpu_spends_real_cpu_time_per_request() {
    let _serial = one_at_a_time();
    let demo = chokepoint_demo::start(
        "127.0.0.1:0".parse().expect("address"),
        DemoConfig {
            downstream: "http://127.0.0.1:9".to_string(), // /cpu never calls it
            cpu_ms: 20,
            ..DemoConfig::default()
        },
    )
    .expect("the demo service starts");
    let before = process_cpu_time();
    for _ in 0..10 {
        let (status, body) = get(demo.addr(), "/cpu");
        assert_eq!(status, 200, "{body}");
    }
    let used = process_cpu_time() - before;
    assert!(
        used >= Duration::from_millis(200),
        "10 requests of 20 ms CPU used only {used:?} of CPU"
    );
}

#[test]
fn leaky_opens_a_connection_per_request_and_stalls_at_the_cap() {
    let _serial = one_at_a_time();
    let keepalive = Duration::from_millis(600);
    let mock = chokepoint_mock::start(
        "127.0.0.1:0".parse().expect("address"),
        chokepoint_mock::MockConfig {
            max_connections: Some(3),
            keepalive_timeout: Some(keepalive),
            ..Default::default()
        },
    )
    .expect("the mock starts");
    let demo = demo_with_pools(&mock.url());
    let mut latencies = Vec::new();
    for _ in 0..6 {
        let started = Instant::now();
        let (status, body) = get(demo.addr(), "/leaky");
        latencies.push(started.elapsed());
        assert_eq!(status, 200, "{body}");
    }
    let stats = mock.stats();
    eprintln!("/leaky latencies {latencies:?}, mock {stats:?}");
    assert!(
        stats.connections_accepted >= 6,
        "one new connection per request"
    );
    assert!(stats.max_connections_open <= 3);
    // The first three fit under the cap; the fourth waits for the keep-alive timeout to close
    // one of the connections the service left open.
    let stalled = latencies[3..]
        .iter()
        .filter(|l| **l >= keepalive / 2)
        .count();
    assert!(stalled >= 1, "no request stalled: {latencies:?}");
}

#[test]
fn lists_the_routes_and_answers_502_when_the_downstream_fails() {
    let _serial = one_at_a_time();
    // Nothing listens on the downstream port.
    let unused = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let downstream = format!("http://{}", unused.local_addr().expect("addr"));
    drop(unused);
    let demo = demo_with_pools(&downstream);
    let (status, body) = get(demo.addr(), "/");
    assert_eq!(status, 200);
    let listing: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(listing["routes"][0]["path"], "/actors");
    assert_eq!(listing["routes"][0]["limit"], POOL);
    for route in [
        "/actors",
        "/global",
        "/blocking",
        "/dispatcher",
        "/async",
        "/recommendations",
        "/recommendations-serial",
        "/leaky",
    ] {
        let (status, body) = get(demo.addr(), route);
        assert_eq!(status, 502, "{route}: {body}");
        assert!(body.starts_with(route), "{route}: {body}");
        assert_eq!(body.trim_end().lines().count(), 1, "{route}: {body}");
    }
    assert_eq!(get(demo.addr(), "/nope").0, 404);
}

#[test]
fn a_downstream_error_status_is_a_502() {
    let _serial = one_at_a_time();
    // The product mock has no stub for /actors: it answers 404.
    let mock = product_mock(&PRODUCTS);
    let demo = demo_with_pools(&mock.url());
    let (status, body) = get(demo.addr(), "/actors");
    assert_eq!(status, 502, "{body}");
    assert!(body.contains("404"), "{body}");
}

#[test]
fn stopping_does_not_wait_for_threads_parked_in_downstream_reads() {
    let _serial = one_at_a_time();
    let mock = delayed_mock(Duration::from_secs(30));
    let demo = demo_with_pools(&mock.url());
    // Park a pool thread in a 30 s downstream read.
    let mut caller = TcpStream::connect(demo.addr()).expect("connect");
    caller
        .write_all(b"GET /actors HTTP/1.1\r\nHost: demo\r\n\r\n")
        .expect("send");
    while mock.stats().in_flight == 0 {
        std::thread::sleep(Duration::from_millis(10));
    }
    let (stopped, stop_seen) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        demo.stop();
        let _ = stopped.send(());
    });
    // Far below the 30 s the parked read would take; a hang fails instead of blocking the suite.
    assert!(
        stop_seen.recv_timeout(Duration::from_secs(15)).is_ok(),
        "stop() waited for a parked downstream read"
    );
    let mut rest = Vec::new();
    let _ = caller.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = caller.read_to_end(&mut rest);
}
