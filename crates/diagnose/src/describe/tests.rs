//! Every fact has words: [`samples`] holds one of each [`Fact`] (checked against the kinds serde
//! knows), and each gets an evidence sentence and a key line from its group's module, and a
//! rank for some kind of finding, unless listed below as told elsewhere or without one.

use super::{curve, fact_sentences, rank, short};
use crate::finding::Finding;
use chokepoint_result::{
    CeilingReading, ErrorCounts, Fact, FanOutShape, Kind, Model, Overload, Place, PlaceUnclearWhy,
    PoolSeen, Service, StreamCapReading, Warmup,
};

/// Facts whose sentence is told in another's: the plateau in the knee's, the models' facts in
/// the models' sentences after the facts.
const NO_SENTENCE: &[&str] = &["plateau", "better-model", "retrograde"];

/// Facts with no key line.
const NO_KEY_LINE: &[&str] = &["all-in-flight", "one-step", "better-model", "retrograde"];

/// The names serde knows for `T`'s variants, in declaration order, read from its error for an
/// unknown one (`unknown variant `?`, expected one of `a`, `b``).
fn variants<T: serde::de::DeserializeOwned>(unknown: serde_json::Value) -> Vec<String> {
    let error = serde_json::from_value::<T>(unknown)
        .err()
        .expect("an unknown variant")
        .to_string();
    let (_, list) = error.split_once("expected one of ").expect(&error);
    list.split(", ")
        .map(|name| name.trim_matches('`').to_string())
        .collect()
}

fn name(fact: &Fact) -> String {
    serde_json::to_value(fact).expect("json")["kind"]
        .as_str()
        .expect("a kind")
        .to_string()
}

fn errors() -> ErrorCounts {
    ErrorCounts::from([("http_503".to_string(), 12)])
}

/// One of every fact, in the enum's order.
fn samples() -> Vec<Fact> {
    let steps = || vec![20, 40];
    vec![
        Fact::NothingMeasured,
        Fact::NoSuccess {
            clients: 8,
            throughput_rps: 100.0,
            errors: errors(),
        },
        Fact::StoppedAnswering {
            from_clients: 16,
            silent: vec![16, 32],
            window_s: 2.0,
            answered_clients: 4,
            answered_throughput_rps: 37.3,
            stuck: None,
        },
        Fact::BaseLatency {
            clients: 1,
            latency_ms: 100.0,
            base_ms: 100.0,
            from_delay: false,
        },
        Fact::Step {
            clients: 20,
            ok_throughput_rps: 190.0,
            latency_ms: 105.0,
            in_service: 20.0,
            efficiency: 0.95,
            downstream_busy: None,
            downstream_delay_ms: None,
            mock_in_flight_max: None,
            target_cpu_pct: None,
            runs: 1,
        },
        Fact::AllInFlight {
            clients: 20,
            efficiency: 0.8,
        },
        Fact::OneStep { clients: 20 },
        Fact::Contention {
            from_clients: 40,
            threshold: 0.85,
            lowest_efficiency: 0.8,
            good_clients: 20,
            good_throughput_rps: 190.0,
            last_clients: 80,
            last_throughput_rps: 300.0,
        },
        Fact::Knee {
            clients: 40,
            efficiency: 0.5,
            threshold: 0.85,
        },
        Fact::Plateau {
            from_clients: 40,
            to_clients: 80,
            throughput_rps: 200.0,
            from_latency_ms: 200.0,
            to_latency_ms: 400.0,
        },
        Fact::GeneratorBound {
            clients: 40,
            generator_cpu_pct: 95.0,
            threshold_pct: 90.0,
            efficiency: 0.5,
        },
        Fact::GeneratorBusy {
            clients: 80,
            generator_cpu_pct: 95.0,
            past_limit: true,
        },
        Fact::Stalls {
            clients: 40,
            count: 3,
            stall_s: 1.0,
            period_s: 2.0,
            per_burst: 10.0,
            spans: Vec::new(),
        },
        Fact::MockConnectionCap {
            clients: 40,
            max_open: 10.0,
            cap: 10.0,
            keepalive_timeout_ms: None,
        },
        Fact::NoMockConnectionCap,
        Fact::ErrorsStart {
            clients: 40,
            error_rate: 0.3,
            errors: errors(),
            error_p50_ms: None,
            threshold: 0.05,
        },
        Fact::Served {
            from_clients: 40,
            clients: steps(),
            ok_throughput_rps: 200.0,
        },
        Fact::Little {
            clients: steps(),
            throughput_rps: 200.0,
            service_ms: 100.0,
            service: Service::DownstreamCall,
            in_service: 20.0,
        },
        Fact::MockCeiling {
            clients: steps(),
            max_in_flight: 20.0,
            mean_in_flight: 19.5,
            steps: 2,
            reading: CeilingReading::Agrees,
        },
        Fact::ConnectionCeiling {
            clients: steps(),
            peer_port: 5432,
            connections: 10,
            pool: "handler".to_string(),
            held_threads: 9.8,
            hold_ms: 102.0,
            little: 14.1,
        },
        Fact::StreamCap {
            clients: steps(),
            cap: 8,
            connections: vec![1, 1],
            opened: Some(0),
            in_flight: vec![8, 8],
            streams_per_connection: Some(8),
            allowed: Some(8),
            reading: StreamCapReading::AtCap,
            peer: None,
            peer_program: None,
        },
        Fact::CpuSaturated {
            clients: steps(),
            target_cpu_pct: 95.0,
            generator_cpu_pct: 10.0,
            in_service: 2.0,
        },
        Fact::CpuPerRequest {
            clients: 1,
            target_cpu_pct: 50.0,
            in_service: 1.0,
            per_request_pct: 50.0,
            plateau_cpu_pct: 95.0,
            limit_in_service: 2.0,
        },
        Fact::CpuPerRequestRises {
            clients: steps(),
            from_clients: 20,
            from_throughput_rps: 530.0,
            from_cpu_ms: 0.7,
            from_cores: 0.37,
            to_clients: 40,
            to_throughput_rps: 545.0,
            to_cpu_ms: 1.7,
            to_cores: 0.93,
        },
        Fact::CpuNotLimit {
            clients: steps(),
            target_cpu_pct: 20.0,
            generator_cpu_pct: 10.0,
        },
        Fact::CeilingOverCpu {
            clients: steps(),
            in_flight: 20.0,
            slower: (20, 190.0, 40.0),
            faster: (40, 200.0, 30.0),
        },
        Fact::CpuQuota {
            clients: steps(),
            quota_cores: 0.5,
            cores_busy: 0.5,
            machine_cores: 2,
            throttled_share: 0.9,
            throttled_per_s: 0.4,
            group: "/docker/x".to_string(),
            version: 2,
            runtime_cores: Some(chokepoint_result::RuntimeCores {
                runtime: chokepoint_result::Runtime::Jvm,
                cores: 2,
                source: chokepoint_result::RuntimeCoresSource::JcmdVmInfo,
            }),
        },
        Fact::CoresBusy {
            clients: steps(),
            target_cpu_pct: 50.0,
            cores: 2,
            cores_busy: 1.0,
            little: 4.0,
        },
        Fact::MachineCpu {
            clients: steps(),
            machine_cpu_pct: 95.0,
            target_cpu_pct: 40.0,
            generator_cpu_pct: 20.0,
            others_pct: 35.0,
            contended: true,
        },
        Fact::DownstreamIdle {
            clients: steps(),
            calls_per_request: 0.0,
            in_flight: None,
            in_service: 20.0,
        },
        Fact::TargetNotObserved,
        Fact::NoMock,
        Fact::Batch {
            clients: 20,
            requests: 20,
            ok: 20,
            duration_s: 2.0,
            waves: 2.0,
            delay_ms: 1000.0,
            low: 10.0,
            high: 19.0,
        },
        Fact::Errors {
            clients: 40,
            error_rate: 0.01,
            errors: errors(),
        },
        Fact::FanOut {
            clients: 20,
            calls_per_request: 2.0,
            latency_ms: 100.0,
            slowest_ms: 100.0,
            serial_ms: 150.0,
            shape: FanOutShape::Parallel,
        },
        // Not settled: a settled warm-up has no key line (it decides nothing).
        Fact::WarmedUp {
            warmup: Warmup {
                clients: 1,
                seconds: 20.0,
                first_ms: 98.0,
                last_ms: 31.0,
                settled: false,
                in_first_step: false,
            },
        },
        Fact::BehindForwarder {
            forwarder: chokepoint_result::Forwarder {
                name: "socat".into(),
                pid: 812,
                to_port: Some(9000),
                to_path: None,
                to_address: None,
                served_name: "python3".into(),
                served_pids: vec![813],
            },
        },
        Fact::MaxClientsReached { max_clients: 80 },
        Fact::BetterModel {
            model: Model::Usl,
            pool_rms_error_rps: 7.0,
            usl_rms_error_rps: 5.0,
        },
        Fact::Overload {
            overload: Overload::Queues {
                from_clients: 40,
                to_clients: 80,
                throughput_rps: 200.0,
                from_latency_ms: 200.0,
                to_latency_ms: 400.0,
            },
        },
        Fact::Retrograde {
            peak_clients: 40,
            peak_rps: 300.0,
            last_clients: 80,
            last_rps: 200.0,
        },
        Fact::MachineSaturated {
            clients: steps(),
            machine_cpu_pct: 98.0,
            target_cpu_pct: None,
            generator_cpu_pct: 40.0,
            others_pct: 10.0,
            pool_size: Some(20.0),
        },
        Fact::MachineBusyBeforeLoad {
            clients: vec![1, 2, 4],
            machine_cpu_pct: 100.0,
            others_pct: 90.0,
            suggested: Kind::BlockingPool,
            suggested_limit: Some(7.3),
        },
        Fact::MachineTakenAtFall {
            clients: vec![64, 128],
            others_pct: 85.0,
            peak_clients: 32,
            peak_others_pct: 3.0,
            cpu_ms: (1.9, 2.0),
            suggested: Kind::Contention,
            suggested_limit: Some(32.0),
        },
        Fact::ThreadsRunning {
            clients: steps(),
            running: 2.0,
            threads: 30.0,
        },
        Fact::ClientsUnanswered {
            clients: vec![32, 64],
            unanswered: vec![16, 48],
            in_service: vec![16.0, 16.1],
            waited_s: 21.5,
        },
        Fact::ThreadsRunningBesideIdleCores {
            clients: steps(),
            running: 1.5,
            cores_busy: 0.4,
            idle_cores: 1.3,
            machine_cores: 2,
        },
        Fact::WholeCores {
            clients: steps(),
            cores: 1,
            cores_busy: 1.0,
            machine_cores: 2,
            threads_running: None,
            machine_cpu_pct: None,
            mock_max_in_flight: None,
        },
        Fact::InterpreterLock {
            clients: steps(),
            waiting: 45.0,
            cores_busy: Some(0.9),
            machine_cores: 2,
            mock_max_in_flight: Some(200.0),
        },
        Fact::WholeThreadsRunning {
            clients: steps(),
            cores: 1,
            threads_running: 1.0,
            cores_busy: None,
            machine_cores: 2,
            machine_cpu_pct: None,
            mock_max_in_flight: None,
        },
        Fact::PoolWaiting {
            clients: 40,
            pool: "http-nio".to_string(),
            threads: 20.0,
            socket_wait: 20.0,
            waits_on: None,
            mean_running: 0.1,
            interval_ms: 100,
        },
        Fact::GrowingPool {
            pool: "pool-1-thread".to_string(),
            clients: steps(),
            threads: vec![21.0, 41.0],
            knee_clients: 20,
            busy_share: 0.9,
            instead_of: Kind::CpuBound,
        },
        Fact::PoolGrewInFront {
            pool: "pool-1-thread".to_string(),
            clients: steps(),
            threads: vec![21.0, 41.0],
            knee_clients: 20,
            calls_at_largest: Some(25),
            named_in_stacks: None,
        },
        Fact::DownstreamConnections {
            clients: steps(),
            peer_port: 9000,
            established: vec![10, 10],
            served: vec![10, 10],
            most_served: 10,
            mock_cap: None,
            time_wait: 0,
        },
        Fact::Place {
            place: Box::new(Place {
                pool: Some("http-nio".to_string()),
                size: Some(20.0),
                held: Some(20.0),
                clients: 40,
                ..Place::default()
            }),
        },
        Fact::PlaceUnclear {
            clients: 40,
            limit: 20.0,
            why: PlaceUnclearWhy::NoneMatch,
            seen: vec![PoolSeen::default()],
            downstream_connections: None,
            downstream_calls: None,
            stacks: None,
            setting: None,
        },
    ]
}

/// The connections sentence of an unclear place, on a table: connections seen (the most of
/// samples), the mock's most calls at once (exact), against a limit of 100.
#[test]
fn connections_at_the_limit_are_a_cap_only_when_the_mocks_calls_did_not_pass_it() {
    let table: [(u32, Option<u32>, &str); 5] = [
        (
            100,
            None,
            "about the limit: something in it lets only that many",
        ),
        (
            100,
            Some(100),
            "about the limit: something in it lets only that many",
        ),
        (
            93,
            Some(108),
            "about the limit: something in it lets only that many",
        ),
        (
            93,
            Some(200),
            "but the mock saw 200 calls at once: nothing in front of the downstream",
        ),
        (
            40,
            Some(40),
            "at most 40 connections to the downstream at once.",
        ),
    ];
    for (connections, calls, says) in table {
        let fact = Fact::PlaceUnclear {
            clients: 256,
            limit: 100.0,
            why: PlaceUnclearWhy::NoneMatch,
            seen: vec![],
            downstream_connections: Some(connections),
            downstream_calls: calls,
            stacks: None,
            setting: None,
        };
        let finding = Finding::bare(Kind::BlockingPool, vec![fact.clone()]);
        let sentence = fact_sentences(&fact, &finding).join(" ");
        assert!(
            sentence.contains(says),
            "{connections} connections, {calls:?} calls: {sentence}"
        );
        let claims_a_cap = sentence.contains("lets only that many");
        assert_eq!(
            claims_a_cap,
            says.contains("lets only"),
            "{connections} connections, {calls:?} calls: {sentence}"
        );
    }
}

#[test]
fn every_fact_has_a_sentence_a_key_line_and_a_rank() {
    let samples = samples();
    assert_eq!(
        samples.iter().map(name).collect::<Vec<_>>(),
        variants::<Fact>(serde_json::json!({"kind": "?"})),
        "one sample of every fact, in the enum's order"
    );
    let kinds: Vec<Kind> = variants::<Kind>(serde_json::json!("?"))
        .into_iter()
        .map(|kind| serde_json::from_value(serde_json::Value::String(kind)).expect("a kind"))
        .collect();
    for fact in &samples {
        let name = name(fact);
        let finding = Finding::bare(Kind::BlockingPool, vec![fact.clone()]);
        let sentences = fact_sentences(fact, &finding);
        assert_eq!(
            sentences.is_empty(),
            NO_SENTENCE.contains(&name.as_str()),
            "{name}: {sentences:?}"
        );
        let line = short(fact, &finding);
        assert_eq!(
            line.is_none(),
            NO_KEY_LINE.contains(&name.as_str()),
            "{name}: {line:?}"
        );
        if line.is_some() {
            assert!(
                kinds.iter().any(|kind| rank(*kind, fact).is_some()),
                "{name}: a key line no kind ranks"
            );
        }
    }
}

#[test]
fn a_peers_stream_cap_names_the_peer_its_program_and_the_limit_without_a_mock() {
    // nginx in front, asked for its SETTINGS; no mock counted the calls: the limit is the ceiling.
    let fact = Fact::StreamCap {
        clients: vec![20, 40],
        cap: 8,
        connections: vec![1, 1],
        opened: None,
        in_flight: Vec::new(),
        streams_per_connection: None,
        allowed: Some(8),
        reading: StreamCapReading::AtCap,
        peer: Some(([127, 0, 0, 1], 8443).into()),
        peer_program: Some("nginx".to_string()),
    };
    let mut finding = Finding::bare(Kind::BlockingPool, vec![fact.clone()]);
    finding.limit = Some(8.0);
    let sentences = fact_sentences(&fact, &finding);
    assert_eq!(sentences.len(), 1);
    assert!(
        sentences[0].starts_with(
            "Over HTTP/2 the target kept 1 connection to 127.0.0.1:8443 (nginx), which allows 8 \
             streams on each (SETTINGS_MAX_CONCURRENT_STREAMS, asked of it after the steps), 8 in \
             all, and the limit found is 8 calls in flight"
        ),
        "{sentences:?}"
    );
    assert_eq!(
        short(&fact, &finding).as_deref(),
        Some("HTTP/2: 8 calls in flight = 1 connection × 8 streams, the cap 127.0.0.1:8443 (nginx) sent.")
    );
}

#[test]
fn the_warm_up_check_says_whether_the_first_step_stood() {
    let stood = Warmup {
        clients: 4,
        seconds: 0.0,
        first_ms: 101.0,
        last_ms: 100.0,
        settled: true,
        in_first_step: true,
    };
    let warmed = Warmup {
        seconds: 6.5,
        first_ms: 90.0,
        last_ms: 22.0,
        in_first_step: false,
        ..stood
    };
    let ran_out = Warmup {
        seconds: 22.0,
        settled: false,
        ..warmed
    };
    let words = |warmup| curve::warmed_up_sentence(&warmup);
    assert!(
        words(stood).contains("it stood and nothing ran unmeasured"),
        "{}",
        words(stood)
    );
    assert!(
        words(warmed).contains("ran unmeasured for 6.5 s while the service warmed up"),
        "{}",
        words(warmed)
    );
    assert!(
        words(warmed).contains("stopped falling"),
        "{}",
        words(warmed)
    );
    assert!(
        words(ran_out).contains("still falling when the warm-up's time ran out"),
        "{}",
        words(ran_out)
    );
}
