//! The connection ceiling (`crates/diagnose/src/connection_ceiling.rs`): with no mock, a pool of
//! connections to a database or a service, each held for part of the request, is sized by the
//! connections the threads hold at once, not by Little's law over the whole request. Tables of
//! model services written from the rule's reasons (not from a recording), at the sizes a 2-,
//! 16- and 64-core machine runs, and the shapes that must not read so: a pre-opened pool that is
//! idle, an event loop.

use crate::common;
use chokepoint_result::{
    ConnectionCounts, Connections, Fact, Kind, PeerConnections, PoolThreads, SocketCounts, Step,
    SweepContext, ThreadCounts, ThreadsByPool,
};
use common::*;

/// A service of `handlers` threads on `cores`; each request holds a pooled connection to port 5432 for
/// `hold_ms` (a network wait: the query) and spends `outside_ms` outside the pool parked (a
/// sleep, a lock, a delayed ACK: no network, no CPU). The pool has `pool` connections, all
/// opened at start. Closed loop at `clients`: X = min(clients, handlers) / (hold + outside)
/// until the pool saturates at pool / hold.
fn service(
    cores: u32,
    handlers: u32,
    pool: u32,
    hold_ms: f64,
    outside_ms: f64,
    clients: u32,
) -> Step {
    let busy_handlers = f64::from(clients.min(handlers));
    let x =
        (busy_handlers * 1000.0 / (hold_ms + outside_ms)).min(f64::from(pool) * 1000.0 / hold_ms);
    let mean_ms = f64::from(clients) / x * 1000.0;
    let mut s = step(clients, x, mean_ms);
    let in_query = x * hold_ms / 1000.0;
    // The handlers not in a query: outside the pool, or queued for a connection; both park.
    let parked = busy_handlers.min(mean_ms * x / 1000.0) - in_query;
    // 0.3 ms of CPU per request: a fraction of one core at every size.
    s.target_cpu_pct = Some(x * 0.3 / 1000.0 * 100.0 / f64::from(cores));
    s.connections = Some(Connections {
        downstream: vec![PeerConnections {
            peer_port: 5432,
            peer_addr: None,
            mock: false,
            counts: ConnectionCounts {
                most: SocketCounts {
                    established: pool,
                    ..Default::default()
                },
                mean_established: f64::from(pool),
                most_served: 0,
                mean_unserved: 0.0,
                median_served: None,
            },
        }],
        ..Default::default()
    });
    let threads = f64::from(handlers);
    s.threads_by_pool = Some(ThreadsByPool {
        interval_ms: 250,
        samples: 8,
        pools: vec![PoolThreads {
            pool: "handler".into(),
            most: ThreadCounts {
                threads,
                socket_wait: in_query.ceil(),
                lock_wait: parked.max(0.0).ceil(),
                ..Default::default()
            },
            mean: ThreadCounts {
                threads,
                socket_wait: in_query,
                lock_wait: parked.max(0.0),
                other: (threads - in_query - parked.max(0.0)).max(0.0),
                ..Default::default()
            },
            waits_on: Vec::new(),
            main_threads: None,
        }],
    });
    s
}

fn observed(cores: u32) -> SweepContext {
    SweepContext {
        target_observed: true,
        cores: Some(cores),
        ..bare_context()
    }
}

fn ceiling(facts: &[Fact]) -> Option<(u32, f64)> {
    facts.iter().find_map(|f| match f {
        Fact::ConnectionCeiling {
            connections,
            hold_ms,
            ..
        } => Some((*connections, *hold_ms)),
        _ => None,
    })
}

#[test]
fn a_pool_held_for_part_of_the_request_is_sized_by_its_connections_on_2_16_and_64_cores() {
    // HikariCP's default of 10 on 2 cores (java-hikari: a 100 ms query in a 144 ms request read
    // as "~14 slots"), and pools of 40 and 160 with handlers to match on bigger machines.
    for (cores, handlers, pool) in [(2u32, 30u32, 10u32), (16, 200, 40), (64, 800, 160)] {
        let steps: Vec<Step> = [2, pool / 2, pool * 2, pool * 4]
            .map(|c| service(cores, handlers, pool, 100.0, 44.0, c))
            .to_vec();
        let d = diagnosed(&steps, &observed(cores));
        assert_eq!(d.kind, Kind::BlockingPool, "{cores} cores: {d:#?}");
        let limit = d.limit.expect("a limit");
        assert_eq!(limit, f64::from(pool), "{cores} cores: {:#?}", d.facts);
        let (connections, hold_ms) = ceiling(&d.facts).expect("the connection ceiling");
        assert_eq!(connections, pool);
        assert_near(hold_ms, 100.0, 0.02);
    }
}

#[test]
fn a_pre_opened_pool_that_is_not_the_limit_does_not_size_it() {
    // 20 handlers, each request 20 ms in a query and 124 ms outside: the handlers are the limit
    // (~20); the pool of 10 opened at start sits mostly idle (2.8 queries at once).
    for (cores, scale) in [(2u32, 1u32), (16, 8), (64, 32)] {
        let handlers = 20 * scale;
        let steps: Vec<Step> = [2, handlers / 2, handlers * 2, handlers * 4]
            .map(|c| service(cores, handlers, 10 * scale, 20.0, 124.0, c))
            .to_vec();
        let d = diagnosed(&steps, &observed(cores));
        assert_eq!(ceiling(&d.facts), None, "{cores} cores: {:#?}", d.facts);
        let limit = d.limit.expect("a limit");
        assert_near(limit, f64::from(handlers), 0.1);
    }
}

#[test]
fn an_event_loop_holds_its_connections_without_threads_and_keeps_littles_law() {
    // No pool's threads in a network wait: the connections alone cannot show the calls busy.
    let steps: Vec<Step> = [2, 5, 20, 40]
        .map(|c| {
            let mut s = service(2, 30, 10, 100.0, 40.0, c);
            s.threads_by_pool = None;
            s
        })
        .to_vec();
    let d = diagnosed(&steps, &observed(2));
    assert_eq!(ceiling(&d.facts), None, "{:#?}", d.facts);
    assert_near(d.limit.expect("a limit"), 14.0, 0.1);
}

/// `service`'s steps with a listener beside the handlers: one more thread of the pool, in a
/// network wait all the time (ThreadingHTTPServer's `serve_forever` polling its socket).
fn with_a_listener(mut s: Step) -> Step {
    let pool = &mut s.threads_by_pool.as_mut().expect("threads").pools[0];
    for counts in [&mut pool.most, &mut pool.mean] {
        counts.threads += 1.0;
        counts.socket_wait += 1.0;
    }
    s
}

#[test]
fn a_listener_beside_a_pool_read_at_one_client_is_not_a_call_on_2_16_and_64_cores() {
    // psycopg_pool's 4 behind ThreadingHTTPServer (py-sqlalchemy --pool psycopg): a 100 ms query
    // in a 145 ms request, a thread per client, the listener polling. At 1 client the query is
    // 0.69 of a thread; 8 samples that caught it 3 times read 1.375 threads in a network wait,
    // listener included. One thread per client taken off that leaves no listener, and the
    // plateau's 4 holders read as 5 (beyond 4 + 15%); the calls in flight by Little's law
    // (6.9 req/s x 100 ms) leave the listener, and the 4.
    for (cores, pool) in [(2u32, 4u32), (16, 40), (64, 160)] {
        let mut steps: Vec<Step> = [1, 2, pool * 2, pool * 4]
            .map(|c| with_a_listener(service(cores, 30 * pool, pool, 100.0, 45.0, c)))
            .to_vec();
        steps[0].threads_by_pool.as_mut().expect("threads").pools[0]
            .mean
            .socket_wait = 1.375;
        let d = diagnosed(&steps, &observed(cores));
        assert_eq!(d.kind, Kind::BlockingPool, "{cores} cores: {d:#?}");
        let (connections, _) = ceiling(&d.facts)
            .unwrap_or_else(|| panic!("{cores} cores: no ceiling: {:#?}", d.facts));
        assert_eq!(connections, pool, "{cores} cores");
        assert_eq!(d.limit, Some(f64::from(pool)), "{cores} cores");
    }
}

#[test]
fn holders_woken_and_waiting_for_a_core_still_hold_their_connections_on_2_16_and_64_cores() {
    // psycopg_pool's 4 swept beside another lane of tests: at one plateau step 3.50 threads in
    // a network wait and 0.88 running or runnable (a holder woken by its answer, waiting for a
    // core). The network waits alone are below 90% of the pool, and Little's law over the
    // whole request read 5.5.
    for (cores, pool) in [(2u32, 4u32), (16, 40), (64, 160)] {
        let mut steps: Vec<Step> = [1, 2, pool * 2, pool * 4]
            .map(|c| service(cores, 30 * pool, pool, 100.0, 46.0, c))
            .to_vec();
        let n = f64::from(pool);
        let last = &mut steps[3].threads_by_pool.as_mut().expect("threads").pools[0];
        last.mean.socket_wait = 0.875 * n;
        last.mean.running = 0.22 * n;
        let d = diagnosed(&steps, &observed(cores));
        let (connections, _) = ceiling(&d.facts)
            .unwrap_or_else(|| panic!("{cores} cores: no ceiling: {:#?}", d.facts));
        assert_eq!(connections, pool, "{cores} cores");
        assert_eq!(d.limit, Some(n), "{cores} cores");
        // Running threads beyond the pool's 15% (a busy pool's CPU work): no reading.
        let last = &mut steps[3].threads_by_pool.as_mut().expect("threads").pools[0];
        last.mean.running = 0.4 * n;
        let d = chokepoint_diagnose::diagnose(&steps, &observed(cores));
        assert_eq!(ceiling(&d.facts), None, "{cores} cores: {:#?}", d.facts);
    }
}
