//! The stream cap (`crates/diagnose/src/stream_cap.rs`): a service whose HTTP/2 (gRPC) client
//! keeps C connections to a downstream that allows N streams on each has at most C × N calls in
//! flight there (RFC 9113 §5.1.2); past that its calls queue inside the client. Tables of model
//! services written from that reason (not from a recording), at the sizes a 2-, 16- and 64-core
//! machine runs (one channel to a cap of 8; two connections to Kestrel's 100; four to Go's 250),
//! and the shapes that must name nothing: a pool in front of the connections (the ceiling below
//! the cap), connections that change, a ceiling that moves, and a pool held at the very same
//! size as the cap (two limits, no one place). Then the same services with the cap held by a
//! proxy in front of the mock (nginx's `http2_max_concurrent_streams`), read from the target's
//! connections to it and the SETTINGS it sent when asked; and which peers may be asked at all.

use crate::common;
use chokepoint_diagnose::multiplexed_peers;
use chokepoint_result::{
    ConnectionCounts, Connections, DownstreamStep, Fact, H2Answer, H2Peer, Kind, PeerConnections,
    PlaceKind, PlaceSource, PlaceUnclearWhy, PoolThreads, SocketCounts, Step, StreamCapReading,
    SweepContext, ThreadCounts, ThreadsByPool,
};
use common::*;

/// The downstream's delay, ms.
const DELAY_MS: f64 = 100.0;

/// One HTTP/2 connection layout of the target's client and the downstream's cap.
#[derive(Clone, Copy)]
struct Streams {
    connections: u64,
    cap: u64,
}

impl Streams {
    fn allowed(self) -> u64 {
        self.connections * self.cap
    }
}

/// A step of a service with a thread per client (an HTTP/1.1 front with enough threads) whose
/// calls go through `gate` slots (a pool in front of the client, or none: `u64::MAX`) and then
/// over `streams`: X = min(clients, gate, C × N) / delay. Every handler thread waits (parked in
/// `futex` on its call's future, as grpcio's and a goroutine's do), whether its call is in
/// flight or queued in the client.
fn service(cores: u32, streams: Streams, gate: u64, clients: u32) -> Step {
    let in_flight = u64::from(clients).min(gate).min(streams.allowed());
    let x = in_flight as f64 * 1000.0 / (DELAY_MS + 1.0);
    // 0.13 ms of CPU a request: a fraction of the cores at every size, never a whole number.
    let mean_ms = f64::from(clients) / x * 1000.0;
    let mut s = with_mock(step(clients, x, mean_ms), DELAY_MS, 1.0, in_flight);
    s.target_cpu_pct = Some(x * 0.13 / 1000.0 * 100.0 / f64::from(cores));
    let ds = s.downstream.as_mut().expect("the mock");
    *ds = DownstreamStep {
        max_connections_open: streams.connections,
        connections_accepted: 0,
        h2_connections: streams.connections,
        h2_connections_accepted: 0,
        max_streams_per_connection: in_flight.div_ceil(streams.connections),
        max_concurrent_streams: Some(streams.cap),
        ..ds.clone()
    };
    let threads = f64::from(clients);
    s.threads_by_pool = Some(ThreadsByPool {
        interval_ms: 250,
        samples: 8,
        pools: vec![PoolThreads {
            pool: "handler".into(),
            most: ThreadCounts {
                threads,
                lock_wait: threads,
                ..Default::default()
            },
            mean: ThreadCounts {
                threads,
                lock_wait: threads,
                ..Default::default()
            },
            waits_on: Vec::new(),
            main_threads: None,
        }],
    });
    s
}

fn context(cores: u32) -> SweepContext {
    SweepContext {
        target_observed: true,
        cores: Some(cores),
        ..mock_context(DELAY_MS)
    }
}

/// The three machines: one gRPC channel to a cap of 8 on 2 cores; two connections to
/// Kestrel's 100 on 16; four to Go's 250 on 64.
const MACHINES: [(u32, Streams); 3] = [
    (
        2,
        Streams {
            connections: 1,
            cap: 8,
        },
    ),
    (
        16,
        Streams {
            connections: 2,
            cap: 100,
        },
    ),
    (
        64,
        Streams {
            connections: 4,
            cap: 250,
        },
    ),
];

/// The clients of a sweep around `limit`: below it, then 2× and 4× past it.
fn clients_around(limit: u64) -> [u32; 4] {
    let limit = limit as u32;
    [2, limit / 2, limit * 2, limit * 4]
}

fn reading(finding: &chokepoint_diagnose::Finding) -> Option<StreamCapReading> {
    finding.facts.iter().find_map(|f| match f {
        Fact::StreamCap { reading, .. } => Some(*reading),
        _ => None,
    })
}

#[test]
fn calls_stopped_at_connections_times_the_cap_name_the_cap_on_2_16_and_64_cores() {
    for (cores, streams) in MACHINES {
        let steps: Vec<Step> = clients_around(streams.allowed())
            .map(|c| service(cores, streams, u64::MAX, c))
            .to_vec();
        let d = diagnosed(&steps, &context(cores));
        let allowed = streams.allowed() as f64;
        assert_eq!(d.kind, Kind::BlockingPool, "{cores} cores: {:#?}", d.facts);
        assert_eq!(d.limit, Some(allowed), "{cores} cores");
        assert_eq!(reading(&d), Some(StreamCapReading::AtCap), "{cores} cores");
        let diagnosis = d.clone().into_diagnosis();
        let place = diagnosis.place.as_ref().expect("a place");
        assert_eq!(place.kind, Some(PlaceKind::StreamCap), "{cores} cores");
        assert_eq!(place.source, Some(PlaceSource::Mock));
        assert_eq!(
            (place.size, place.held),
            (Some(allowed), Some(allowed)),
            "{cores} cores"
        );
        assert_eq!(
            (place.h2_connections, place.stream_cap),
            (Some(streams.connections), Some(streams.cap))
        );
        // Both sides' settings: the downstream's cap and the client's connections.
        let server = place.setting.as_ref().expect("the downstream's setting");
        assert!(
            server.setting.contains("--max-concurrent-streams"),
            "{server:?}"
        );
        assert!(server.setting.contains("http2_max_concurrent_streams"));
        // The defaults are the servers' and gRPC's own, never the values seen: those are told
        // beside them ("8 here; default nginx 128, Go 250").
        assert_eq!(server.default, "nginx 128, Go 250");
        let client = place.client_setting.as_ref().expect("the client's setting");
        assert_eq!(
            client.default, "one per host for a gRPC channel",
            "{client:?}"
        );
        let attribution = diagnosis.attribution.as_deref().unwrap_or_default();
        assert!(
            attribution.contains(&format!("({} here; default nginx 128", streams.cap)),
            "{attribution}"
        );
        let attribution = diagnosis.attribution.as_deref().unwrap_or_default();
        assert!(
            attribution.contains(&format!("× {} streams = {}", streams.cap, allowed)),
            "{attribution}"
        );
        println!("{cores} cores: {attribution}");
    }
}

#[test]
fn a_pool_in_front_of_the_connections_keeps_its_place_and_the_cap_names_nothing() {
    // py-threadpool's 6 workers in front of one channel capped at 8, scaled: the ceiling is the
    // pool's, below the streams allowed.
    for (cores, streams) in MACHINES {
        let gate = streams.allowed() * 3 / 4;
        let steps: Vec<Step> = clients_around(gate)
            .map(|c| {
                let mut s = service(cores, streams, gate, c);
                // The pool's threads hold the calls, blocked on the network.
                let in_flight = s.downstream_inflight.map_or(0, |d| d.max) as f64;
                if let Some(threads) = s.threads_by_pool.as_mut() {
                    threads.pools.push(PoolThreads {
                        pool: "worker".into(),
                        most: ThreadCounts {
                            threads: gate as f64,
                            socket_wait: in_flight,
                            ..Default::default()
                        },
                        mean: ThreadCounts {
                            threads: gate as f64,
                            socket_wait: in_flight,
                            lock_wait: gate as f64 - in_flight,
                            ..Default::default()
                        },
                        waits_on: Vec::new(),
                        main_threads: None,
                    });
                }
                s
            })
            .to_vec();
        let d = diagnosed(&steps, &context(cores));
        assert_eq!(d.limit, Some(gate as f64), "{cores} cores: {:#?}", d.facts);
        assert_eq!(
            reading(&d),
            Some(StreamCapReading::BelowCap),
            "{cores} cores"
        );
        let place = d.into_diagnosis().place.expect("the pool's place");
        assert_eq!(place.kind, Some(PlaceKind::ThreadPool), "{cores} cores");
        assert_eq!(place.pool.as_deref(), Some("worker"));
    }
}

#[test]
fn connections_that_change_name_no_stream_cap() {
    for (cores, streams) in MACHINES {
        // The client opened another connection during the last step (a reconnect, or a
        // transport that opens more past the cap); or held two counts from step to step.
        let reopened = |last: bool, s: &mut Step| {
            let ds = s.downstream.as_mut().expect("the mock");
            if last {
                ds.h2_connections_accepted = 1;
            }
        };
        let grew = |last: bool, s: &mut Step| {
            let ds = s.downstream.as_mut().expect("the mock");
            if last {
                ds.h2_connections += 1;
            }
        };
        let changes: [fn(bool, &mut Step); 2] = [reopened, grew];
        for change in changes {
            let clients = clients_around(streams.allowed());
            let steps: Vec<Step> = clients
                .iter()
                .map(|c| {
                    let mut s = service(cores, streams, u64::MAX, *c);
                    change(*c == clients[3], &mut s);
                    s
                })
                .collect();
            let d = diagnosed(&steps, &context(cores));
            assert_eq!(
                reading(&d),
                Some(StreamCapReading::ConnectionsChanged),
                "{cores} cores: {:#?}",
                d.facts
            );
            let place = d.into_diagnosis().place;
            assert!(
                place
                    .as_ref()
                    .is_none_or(|p| p.kind != Some(PlaceKind::StreamCap)),
                "{cores} cores: {place:?}"
            );
        }
    }
}

#[test]
fn a_ceiling_that_moves_names_no_stream_cap() {
    for (cores, streams) in MACHINES {
        let clients = clients_around(streams.allowed());
        let steps: Vec<Step> = clients
            .iter()
            .map(|c| {
                let mut s = service(cores, streams, u64::MAX, *c);
                // One call fewer at the last step's busiest instant: not one count.
                if *c == clients[3] {
                    if let Some(d) = s.downstream_inflight.as_mut() {
                        d.max -= 1;
                    }
                }
                s
            })
            .collect();
        let d = diagnosed(&steps, &context(cores));
        assert_eq!(
            reading(&d),
            Some(StreamCapReading::CeilingMoved),
            "{cores} cores: {:#?}",
            d.facts
        );
        let place = d.into_diagnosis().place;
        assert!(place.is_none_or(|p| p.kind != Some(PlaceKind::StreamCap)));
    }
}

#[test]
fn a_pool_held_at_the_very_size_of_the_cap_names_no_one_place() {
    // A pool of 8 threads all held on the network in front of one connection capped at 8:
    // both are direct evidence of a limit of 8; raising either alone changes nothing.
    for (cores, streams) in MACHINES {
        let size = streams.allowed();
        // 3× past the size, not 4×: other steps than the cap's own table.
        let mut clients = clients_around(size);
        clients[3] = size as u32 * 3;
        let steps: Vec<Step> = clients
            .map(|c| {
                let mut s = service(cores, streams, size, c);
                let in_flight = s.downstream_inflight.map_or(0, |d| d.max) as f64;
                if let Some(threads) = s.threads_by_pool.as_mut() {
                    threads.pools = vec![PoolThreads {
                        pool: "worker".into(),
                        most: ThreadCounts {
                            threads: size as f64,
                            socket_wait: in_flight,
                            ..Default::default()
                        },
                        mean: ThreadCounts {
                            threads: size as f64,
                            socket_wait: in_flight,
                            other: size as f64 - in_flight,
                            ..Default::default()
                        },
                        waits_on: Vec::new(),
                        main_threads: None,
                    }];
                }
                s
            })
            .to_vec();
        let d = diagnosed(&steps, &context(cores));
        assert_eq!(reading(&d), Some(StreamCapReading::AtCap), "{cores} cores");
        let unclear = d.facts.iter().find_map(|f| match f {
            Fact::PlaceUnclear { why, seen, .. } => Some((*why, seen.len())),
            _ => None,
        });
        assert_eq!(
            unclear,
            Some((PlaceUnclearWhy::SeveralMatch, 2)),
            "{cores} cores: {:#?}",
            d.facts
        );
        assert_eq!(d.into_diagnosis().place, None);
    }
}

#[test]
fn threads_parked_in_futex_at_the_caps_size_do_not_outrank_the_cap() {
    // A Go gRPC client: its OS threads are the runtime's, started as the load came and idle
    // since (parked in `futex`), one fewer than the cap at every step past the knee; the
    // goroutines that wait for a stream are no threads. A sweep in a flake hunt saw 7 of 8 so
    // and named no place. The stream counts are the direct evidence: the cap is the place.
    for (cores, streams) in MACHINES {
        let size = streams.allowed() as f64;
        // 5× past the size: other steps than the cap's own table (the prose is keyed by them).
        let mut clients = clients_around(streams.allowed());
        clients[3] = streams.allowed() as u32 * 5;
        let steps: Vec<Step> = clients
            .map(|c| {
                let mut s = service(cores, streams, u64::MAX, c);
                let threads = f64::from(c).min(size);
                if let Some(pools) = s.threads_by_pool.as_mut() {
                    pools.pools = vec![PoolThreads {
                        pool: "go-grpc-channel".into(),
                        most: ThreadCounts {
                            threads,
                            lock_wait: threads - 1.0,
                            event_wait: 1.0,
                            ..Default::default()
                        },
                        mean: ThreadCounts {
                            threads,
                            lock_wait: threads - 1.0,
                            event_wait: 1.0,
                            ..Default::default()
                        },
                        waits_on: Vec::new(),
                        main_threads: None,
                    }];
                }
                s
            })
            .to_vec();
        let d = diagnosed(&steps, &context(cores));
        assert_eq!(reading(&d), Some(StreamCapReading::AtCap), "{cores} cores");
        let place = d.into_diagnosis().place;
        assert_eq!(
            place.as_ref().and_then(|p| p.kind),
            Some(PlaceKind::StreamCap),
            "{cores} cores: {place:?}"
        );
    }
}

#[test]
fn no_cap_advertised_or_no_http2_tells_nothing_of_streams() {
    let (cores, streams) = MACHINES[0];
    for strip in [
        |ds: &mut DownstreamStep| ds.max_concurrent_streams = None,
        |ds: &mut DownstreamStep| ds.h2_connections = 0,
    ] {
        let steps: Vec<Step> = clients_around(streams.allowed())
            .map(|c| {
                let mut s = service(cores, streams, u64::MAX, c);
                strip(s.downstream.as_mut().expect("the mock"));
                s
            })
            .to_vec();
        let d = diagnosed(&steps, &context(cores));
        assert_eq!(reading(&d), None, "{:#?}", d.facts);
        assert_eq!(d.limit, Some(streams.allowed() as f64));
    }
}

// A cap held by a proxy (nginx's `http2_max_concurrent_streams`, `grpc_pass` to the mock): the
// mock sees the proxy's own upstream connections, one call on each, and advertises no cap; the
// cap is read from the target's connections to the proxy (`/proc`) and the SETTINGS the proxy
// sent when the sweep asked it.

/// The proxy's address.
const PROXY: ([u8; 4], u16) = ([127, 0, 0, 1], 8443);

fn proxy() -> std::net::SocketAddr {
    PROXY.into()
}

/// The proxy as the sweep found it: `program` listening, its answer to the SETTINGS asked.
fn asked(program: Option<&str>, answer: H2Answer) -> H2Peer {
    H2Peer {
        addr: proxy(),
        program: program.map(str::to_string),
        answer,
    }
}

fn capped(cap: u64) -> H2Answer {
    H2Answer::Settings {
        max_concurrent_streams: Some(cap),
    }
}

/// The target's connections in a step: `kept` to the proxy, the most at once and at every
/// sample (the mean).
fn connections(kept: u64) -> Connections {
    Connections {
        interval_ms: 250,
        samples: 8,
        listen_port: Some(8080),
        downstream: vec![PeerConnections {
            peer_port: PROXY.1,
            peer_addr: Some(proxy()),
            mock: false,
            counts: ConnectionCounts {
                most: SocketCounts {
                    established: kept as u32,
                    ..SocketCounts::default()
                },
                mean_established: kept as f64,
                most_served: kept as u32,
                mean_unserved: 0.0,
                median_served: None,
            },
        }],
        ..Connections::default()
    }
}

/// [`service`] with a proxy holding the cap between the target and the mock: the target keeps
/// `streams.connections` to the proxy; the mock (no cap advertised) sees one upstream
/// connection per call in flight, each opened for its call (nginx's `grpc_pass` without
/// keepalive).
fn behind_proxy(cores: u32, streams: Streams, gate: u64, clients: u32) -> Step {
    let mut s = service(cores, streams, gate, clients);
    let in_flight = s.downstream_inflight.map_or(0, |d| d.max);
    let ds = s.downstream.as_mut().expect("the mock");
    ds.max_connections_open = in_flight;
    ds.connections_accepted = ds.requests;
    ds.h2_connections = in_flight;
    ds.h2_connections_accepted = ds.requests;
    ds.max_streams_per_connection = 1;
    ds.max_concurrent_streams = None;
    s.connections = Some(connections(streams.connections));
    s
}

fn proxy_context(cores: u32, peer: H2Peer) -> SweepContext {
    SweepContext {
        h2_peers: vec![peer],
        ..context(cores)
    }
}

fn stream_cap_source(
    finding: &chokepoint_diagnose::Finding,
) -> Option<Option<std::net::SocketAddr>> {
    finding.facts.iter().find_map(|f| match f {
        Fact::StreamCap { peer, .. } => Some(*peer),
        _ => None,
    })
}

#[test]
fn a_proxys_cap_read_from_its_settings_names_the_cap_on_2_16_and_64_cores() {
    for (cores, streams) in MACHINES {
        let steps: Vec<Step> = clients_around(streams.allowed())
            .map(|c| behind_proxy(cores, streams, u64::MAX, c))
            .to_vec();
        let allowed = streams.allowed() as f64;
        // Before the proxy is asked: the limit, and the proxy as the one peer to ask.
        let before = diagnosed(&steps, &context(cores));
        assert_eq!(
            before.limit,
            Some(allowed),
            "{cores} cores: {:#?}",
            before.facts
        );
        assert_eq!(reading(&before), None, "{cores} cores");
        assert_eq!(
            multiplexed_peers(&steps, &before),
            vec![proxy()],
            "{cores} cores"
        );
        // nginx answered with its cap: its own directive is the setting.
        for (program, setting) in [
            (Some("nginx"), "http2_max_concurrent_streams"),
            (Some("envoy"), "SETTINGS_MAX_CONCURRENT_STREAMS"),
            (None, "SETTINGS_MAX_CONCURRENT_STREAMS"),
        ] {
            let context = proxy_context(cores, asked(program, capped(streams.cap)));
            let d = diagnosed(&steps, &context);
            assert_eq!(d.limit, Some(allowed), "{cores} cores");
            assert_eq!(reading(&d), Some(StreamCapReading::AtCap), "{cores} cores");
            assert_eq!(stream_cap_source(&d), Some(Some(proxy())));
            let diagnosis = d.into_diagnosis();
            let place = diagnosis.place.as_ref().expect("a place");
            assert_eq!(place.kind, Some(PlaceKind::StreamCap), "{cores} cores");
            assert_eq!(place.source, Some(PlaceSource::PeerSettings));
            assert_eq!(place.peer_port, Some(PROXY.1));
            assert_eq!(
                (place.size, place.held),
                (Some(allowed), Some(allowed)),
                "{cores} cores"
            );
            assert_eq!(
                (place.h2_connections, place.stream_cap),
                (Some(streams.connections), Some(streams.cap))
            );
            let server = place.setting.as_ref().expect("the downstream's setting");
            assert_eq!(server.setting, setting, "{program:?}");
            // The default is the server's own, never the value seen: that is told beside it.
            assert!(!server.default.contains("here"), "{server:?}");
            let client = place.client_setting.as_ref().expect("the client's setting");
            assert_eq!(client.default, "one per host for a gRPC channel");
            let attribution = diagnosis.attribution.as_deref().unwrap_or_default();
            assert!(
                attribution.contains(&format!("{} here; default ", streams.cap))
                    && attribution.contains(&format!("{} here; default ", streams.connections)),
                "{attribution}"
            );
            assert!(
                attribution.contains(&format!("`{setting}` of ")),
                "{attribution}"
            );
            println!("{cores} cores, {program:?}: {attribution}");
        }
    }
}

#[test]
fn only_a_peer_whose_connections_carry_several_calls_at_once_is_asked() {
    for (cores, streams) in MACHINES {
        let clients = clients_around(streams.allowed());
        let limit = streams.allowed();
        let finding = |steps: &[Step]| chokepoint_diagnose::diagnose(steps, &context(cores));
        // HTTP/1.1: a connection per call in flight (the limit's count, or 1 short of it).
        for short in [0, 1] {
            let steps: Vec<Step> = clients
                .map(|c| {
                    let mut s = behind_proxy(cores, streams, u64::MAX, c);
                    let in_flight = s.downstream_inflight.map_or(0, |d| d.max);
                    s.connections = Some(connections(in_flight.saturating_sub(short).max(1)));
                    s
                })
                .to_vec();
            let at_knee: Vec<u64> = steps
                .iter()
                .filter(|s| u64::from(s.clients) >= limit)
                .map(|s| {
                    s.connections.as_ref().unwrap().downstream[0]
                        .counts
                        .most
                        .established
                        .into()
                })
                .collect();
            assert!(at_knee.iter().all(|n| *n + short == limit), "{at_knee:?}");
            assert_eq!(
                multiplexed_peers(&steps, &finding(&steps)),
                Vec::new(),
                "{cores} cores, {short} short"
            );
        }
        // Connections to the proxy that change from step to step: no one count to read.
        let steps: Vec<Step> = clients
            .map(|c| {
                let mut s = behind_proxy(cores, streams, u64::MAX, c);
                if c == clients[3] {
                    s.connections = Some(connections(streams.connections + 1));
                }
                s
            })
            .to_vec();
        assert_eq!(
            multiplexed_peers(&steps, &finding(&steps)),
            Vec::new(),
            "{cores} cores"
        );
        // The mock is never asked: its own counts say its streams.
        let steps: Vec<Step> = clients
            .map(|c| {
                let mut s = behind_proxy(cores, streams, u64::MAX, c);
                if let Some(conns) = s.connections.as_mut() {
                    conns.downstream[0].mock = true;
                }
                s
            })
            .to_vec();
        assert_eq!(
            multiplexed_peers(&steps, &finding(&steps)),
            Vec::new(),
            "{cores} cores"
        );
    }
}

#[test]
fn behind_a_proxy_a_pool_in_front_or_connections_that_change_name_no_cap() {
    for (cores, streams) in MACHINES {
        let clients = clients_around(streams.allowed());
        let context = proxy_context(cores, asked(Some("nginx"), capped(streams.cap)));
        // A pool of 3/4 of the streams in front of the proxy: the ceiling is below the cap.
        let gate = streams.allowed() * 3 / 4;
        let steps: Vec<Step> = clients_around(gate)
            .map(|c| behind_proxy(cores, streams, gate, c))
            .to_vec();
        let d = chokepoint_diagnose::diagnose(&steps, &context);
        assert_eq!(d.limit, Some(gate as f64), "{cores} cores");
        assert_eq!(
            reading(&d),
            Some(StreamCapReading::BelowCap),
            "{cores} cores"
        );
        let place = d.into_diagnosis().place;
        assert!(place.is_none_or(|p| p.kind != Some(PlaceKind::StreamCap)));
        // One connection more at the last step.
        let steps: Vec<Step> = clients
            .map(|c| {
                let mut s = behind_proxy(cores, streams, u64::MAX, c);
                if c == clients[3] {
                    s.connections = Some(connections(streams.connections + 1));
                }
                s
            })
            .to_vec();
        let d = chokepoint_diagnose::diagnose(&steps, &context);
        assert_eq!(
            reading(&d),
            Some(StreamCapReading::ConnectionsChanged),
            "{cores} cores"
        );
        let place = d.into_diagnosis().place;
        assert!(place.is_none_or(|p| p.kind != Some(PlaceKind::StreamCap)));
    }
}

#[test]
fn a_proxy_without_a_cap_or_not_speaking_http2_tells_nothing_of_streams() {
    let (cores, streams) = MACHINES[0];
    let steps: Vec<Step> = clients_around(streams.allowed())
        .map(|c| behind_proxy(cores, streams, u64::MAX, c))
        .to_vec();
    for answer in [
        H2Answer::Settings {
            max_concurrent_streams: None,
        },
        H2Answer::NotH2 {
            why: "it closed the connection".into(),
        },
    ] {
        let d = chokepoint_diagnose::diagnose(&steps, &proxy_context(cores, asked(None, answer)));
        assert_eq!(reading(&d), None, "{:#?}", d.facts);
        assert_eq!(d.limit, Some(streams.allowed() as f64));
    }
}

#[test]
fn the_mocks_own_counts_win_over_a_peers_settings() {
    // The mock advertised its cap and counted its streams; a peer asked as well answered with
    // another cap: the mock's reading is told, and names the place.
    for (cores, streams) in MACHINES {
        let steps: Vec<Step> = clients_around(streams.allowed())
            .map(|c| {
                let mut s = service(cores, streams, u64::MAX, c);
                s.connections = Some(connections(1));
                s
            })
            .to_vec();
        let context = proxy_context(cores, asked(Some("nginx"), capped(streams.cap * 2)));
        let d = chokepoint_diagnose::diagnose(&steps, &context);
        assert_eq!(stream_cap_source(&d), Some(None), "{cores} cores");
        assert_eq!(reading(&d), Some(StreamCapReading::AtCap));
        let place = d.into_diagnosis().place.expect("a place");
        assert_eq!(place.source, Some(PlaceSource::Mock));
    }
}

#[test]
fn without_a_mock_the_limit_is_read_against_the_proxys_cap() {
    // nginx in front of a downstream the sweep does not control (no mock): Little's law sizes
    // the limit, and it is the ceiling read against 1 × 8, 2 × 100, 4 × 250.
    for (cores, streams) in MACHINES {
        let steps: Vec<Step> = clients_around(streams.allowed())
            .map(|c| {
                let mut s = behind_proxy(cores, streams, u64::MAX, c);
                s.downstream = None;
                s.downstream_inflight = None;
                s
            })
            .to_vec();
        let context = SweepContext {
            h2_peers: vec![asked(Some("nginx"), capped(streams.cap))],
            target_observed: true,
            cores: Some(cores),
            ..bare_context()
        };
        let d = diagnosed(&steps, &context);
        assert_eq!(d.kind, Kind::BlockingPool, "{cores} cores: {:#?}", d.facts);
        let limit = d.limit.expect("a limit");
        assert_near(limit, streams.allowed() as f64, 0.05);
        assert_eq!(
            reading(&d),
            Some(StreamCapReading::AtCap),
            "{cores} cores: {:#?}",
            d.facts
        );
        let place = d.into_diagnosis().place.expect("a place");
        assert_eq!(place.source, Some(PlaceSource::PeerSettings));
        assert_eq!(place.held, Some(limit));
    }
}
