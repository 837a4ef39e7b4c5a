//! Delays (lower bounds and ordering, never a ceiling), dribbled bodies, and in-flight counting.
use super::client::{connect, get, start, start_with, stats};
use chokepoint_mock::MockConfig;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

const DELAYED: &str = r#"{"mappings": [
  {"name": "fixed 150", "request": {"urlPath": "/fixed"},
   "response": {"body": "f", "fixedDelayMilliseconds": 150}},
  {"name": "slow", "request": {"urlPath": "/slow"},
   "response": {"body": "slow", "fixedDelayMilliseconds": 400}},
  {"name": "fast", "request": {"urlPath": "/fast"},
   "response": {"body": "fast", "fixedDelayMilliseconds": 50}},
  {"name": "uniform", "request": {"urlPath": "/uniform"},
   "response": {"delayDistribution": {"type": "uniform", "lower": 100, "upper": 120}}},
  {"name": "lognormal", "request": {"urlPath": "/lognormal"},
   "response": {"delayDistribution": {"type": "lognormal", "median": 60, "sigma": 0.1, "maxValue": 80}}},
  {"name": "fixed dist", "request": {"urlPath": "/fixed-dist"},
   "response": {"delayDistribution": {"type": "fixed", "milliseconds": 120}}},
  {"name": "dribble", "request": {"urlPath": "/dribble"},
   "response": {"body": "aaaabbbbcccc", "chunkedDribbleDelay": {"numberOfChunks": 3, "totalDuration": 300}}}
]}"#;

fn timed_get(addr: std::net::SocketAddr, path: &str) -> (u16, Duration) {
    let started = Instant::now();
    let reply = get(addr, path);
    (reply.status, started.elapsed())
}

#[test]
fn fixed_and_distributed_delays_are_lower_bounds() {
    let mock = start_with(DELAYED);
    let addr = mock.addr();
    let (status, took) = timed_get(addr, "/fixed");
    assert_eq!(status, 200);
    assert!(took >= Duration::from_millis(150), "{took:?}");
    let (_, took) = timed_get(addr, "/uniform");
    assert!(took >= Duration::from_millis(100), "{took:?}");
    let (_, took) = timed_get(addr, "/fixed-dist");
    assert!(took >= Duration::from_millis(120), "{took:?}");
    // lognormal: median 60, sigma 0.1 -> e^(-0.5) * 60 ≈ 36 ms is far below any draw we accept.
    for _ in 0..5 {
        let (status, took) = timed_get(addr, "/lognormal");
        assert_eq!(status, 200);
        assert!(took >= Duration::from_millis(30), "{took:?}");
    }
    let stats = stats(addr);
    let delay = |name: &str| {
        stats
            .stubs
            .iter()
            .find(|s| s.name == name)
            .unwrap()
            .delay_ms
    };
    assert_eq!(delay("fixed 150"), Some(150.0));
    assert_eq!(delay("lognormal"), Some(60.0));
    assert_eq!(delay("uniform"), Some(110.0));
    assert_eq!(delay("dribble"), None);
}

#[test]
fn a_shorter_delay_finishes_first() {
    let mock = start_with(DELAYED);
    let addr = mock.addr();
    let slow = std::thread::spawn(move || {
        get(addr, "/slow");
        Instant::now()
    });
    std::thread::sleep(Duration::from_millis(20));
    let fast = std::thread::spawn(move || {
        get(addr, "/fast");
        Instant::now()
    });
    let (slow_done, fast_done) = (slow.join().unwrap(), fast.join().unwrap());
    assert!(
        fast_done < slow_done,
        "the 50 ms stub must not wait behind the 400 ms one"
    );
}

#[test]
fn the_global_delay_is_added_to_the_stubs_own() {
    let mappings = chokepoint_mock::parse_mappings(DELAYED, "t").unwrap();
    let mock = start(MockConfig {
        mappings,
        fixed_delay: Some(Duration::from_millis(100)),
        ..MockConfig::default()
    });
    let (_, took) = timed_get(mock.addr(), "/fixed");
    assert!(took >= Duration::from_millis(250), "{took:?}");
    let stats = stats(mock.addr());
    assert_eq!(stats.config.fixed_delay_ms, Some(100.0));
    let fixed = stats.stubs.iter().find(|s| s.name == "fixed 150").unwrap();
    assert_eq!(fixed.delay_ms, Some(250.0));
    let dribble = stats.stubs.iter().find(|s| s.name == "dribble").unwrap();
    assert_eq!(dribble.delay_ms, Some(100.0));
}

#[test]
fn chunked_dribble_spreads_the_body_over_its_duration() {
    let mock = start_with(DELAYED);
    let mut stream = connect(mock.addr());
    let started = Instant::now();
    stream
        .write_all(b"GET /dribble HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 1024];
    let mut reads_with_body = Vec::new();
    loop {
        let n = stream.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
        reads_with_body.push(started.elapsed());
    }
    let total = started.elapsed();
    let reply = super::client::parse(&raw).expect("HTTP");
    assert_eq!(reply.text(), "aaaabbbbcccc");
    assert_eq!(reply.header("transfer-encoding"), Some("chunked"));
    assert!(total >= Duration::from_millis(300), "{total:?}");
    // The pieces came apart in time: the last read is at least two intervals after the first.
    let spread = *reads_with_body.last().unwrap() - reads_with_body[0];
    assert!(spread >= Duration::from_millis(190), "{reads_with_body:?}");
}

#[test]
fn fifty_concurrent_delayed_requests_show_exactly_fifty_in_flight() {
    let mock = start(MockConfig {
        fixed_delay: Some(Duration::from_secs(1)),
        ..MockConfig::default()
    });
    let addr = mock.addr();
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(50));
    let clients: Vec<_> = (0..50)
        .map(|_| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                get(addr, "/anything").status
            })
        })
        .collect();
    let statuses: Vec<u16> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    assert!(statuses.iter().all(|s| *s == 200));
    let stats = stats(addr);
    assert_eq!(stats.requests, 50);
    assert_eq!(stats.max_in_flight, 50);
    assert_eq!(stats.in_flight, 0);
    assert_eq!(
        stats.connections_accepted, 50,
        "the stats connection is not counted"
    );
    assert!(stats.in_flight_series.iter().any(|s| s.in_flight == 50));
    // 50 held for 1 s within a window of a little more than 1 s.
    assert!(stats.mean_in_flight > 10.0, "{}", stats.mean_in_flight);
    assert!(stats.mean_in_flight <= 50.0);

    let reset: chokepoint_result::MockStats =
        serde_json::from_slice(&get(addr, "/__chokepoint/reset").body).unwrap();
    assert_eq!(
        reset.max_in_flight, 50,
        "reset returns the window that ended"
    );
    let fresh = super::client::stats(addr);
    assert_eq!(
        (
            fresh.requests,
            fresh.max_in_flight,
            fresh.connections_accepted
        ),
        (0, 0, 0)
    );
    assert_eq!(fresh.stubs[0].requests, 0);
}
