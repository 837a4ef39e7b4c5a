//! `--max-connections` with `--keepalive-timeout`: a client that opens a new connection per
//! request and never closes them stalls in batches of N, one batch per keep-alive period
//! (seed 001). And the stats stay readable at the cap.
use super::client::{connect, read_one, start, stats};
use chokepoint_mock::MockConfig;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

const CAP: usize = 5;
const KEEPALIVE: Duration = Duration::from_millis(300);
const CLIENTS: usize = 15;

#[test]
fn leaky_clients_stall_in_batches_of_the_cap() {
    let mock = start(MockConfig {
        max_connections: Some(CAP),
        keepalive_timeout: Some(KEEPALIVE),
        ..MockConfig::default()
    });
    let addr = mock.addr();
    let started = Instant::now();
    // Each client: one connection, one keep-alive request, never closes; waits for the server
    // to close the idle connection.
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            std::thread::spawn(move || {
                let mut stream = connect(addr);
                stream
                    .write_all(b"GET /leaky HTTP/1.1\r\nHost: t\r\n\r\n")
                    .unwrap();
                let reply = read_one(&mut stream).expect("a response");
                let answered = started.elapsed();
                let mut rest = Vec::new();
                let _ = stream.read_to_end(&mut rest);
                let closed = started.elapsed();
                (reply.status, answered, closed)
            })
        })
        .collect();
    let results: Vec<(u16, Duration, Duration)> =
        clients.into_iter().map(|c| c.join().unwrap()).collect();
    assert!(results.iter().all(|r| r.0 == 200));

    let mut answered: Vec<Duration> = results.iter().map(|r| r.1).collect();
    answered.sort();
    let first_close = results.iter().map(|r| r.2).min().unwrap();
    // Batch 1 is served before any idle connection is closed.
    assert!(
        answered[CAP - 1] < first_close,
        "{answered:?} first close {first_close:?}"
    );
    // Batch 2 waits for batch 1 to idle out, batch 3 for batch 2 (server-side, each gap is at
    // least one keep-alive timeout; 20 ms allows for the clients' own jitter).
    let slack = Duration::from_millis(20);
    assert!(
        answered[CAP] >= first_close.saturating_sub(slack),
        "{answered:?}"
    );
    assert!(
        answered[CAP] - answered[0] >= KEEPALIVE - slack,
        "{answered:?}"
    );
    assert!(
        answered[2 * CAP] - answered[CAP] >= KEEPALIVE - slack,
        "{answered:?}"
    );
    // Every idle connection was held open at least the keep-alive timeout.
    for (_, answered, closed) in &results {
        assert!(*closed - *answered >= KEEPALIVE - slack, "{results:?}");
    }

    let stats = stats(addr);
    assert_eq!(stats.max_connections_open, CAP as u64);
    assert_eq!(stats.connections_accepted, CLIENTS as u64);
    assert_eq!(stats.requests, CLIENTS as u64);
    assert!(
        stats.max_in_flight <= CAP as u64,
        "concurrency is capped by the connections"
    );
    assert_eq!(stats.config.max_connections, Some(CAP as u64));
    assert_eq!(stats.config.keepalive_timeout_ms, Some(300));
}

#[test]
fn stats_answer_while_every_connection_slot_is_taken() {
    let mock = start(MockConfig {
        max_connections: Some(2),
        fixed_delay: Some(Duration::from_secs(2)),
        ..MockConfig::default()
    });
    let addr = mock.addr();
    // Two slow requests take both slots; a third waits for a slot.
    let mut streams: Vec<_> = (0..3)
        .map(|_| {
            let mut stream = connect(addr);
            stream
                .write_all(b"GET /slow HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
                .unwrap();
            stream
        })
        .collect();
    // Wait (bounded) until both slots are busy.
    let mut seen = stats(addr);
    for _ in 0..100 {
        if seen.in_flight == 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
        seen = stats(addr);
    }
    assert_eq!(seen.in_flight, 2, "both slots busy, and stats still answer");
    assert_eq!(seen.connections_open, 2);
    let metrics = super::client::get(addr, "/metrics").text();
    assert!(
        metrics.contains("\nchokepoint_mock_connections_waiting 1\n"),
        "{metrics}"
    );
    for stream in &mut streams {
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).unwrap();
        assert!(raw.starts_with(b"HTTP/1.1 200"));
    }
    assert_eq!(stats(addr).max_in_flight, 2);
}
