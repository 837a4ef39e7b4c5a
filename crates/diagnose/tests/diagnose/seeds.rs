//! The seeds' own tables: seed 000 (JMeter, a router of 20 actors calling a 1 s WireMock) and
//! seed 002 (ab -n 50 -c 50 against a 5 s blocking call).

use crate::common;
use chokepoint_result::{CeilingReading, Fact, Kind, Model, Service, SweepContext};
use common::*;

/// Seed 000 knows the downstream delay (WireMock's 1 s) but had no in-flight counts.
fn seed000_context() -> SweepContext {
    SweepContext {
        downstream_delay_ms: Some(1000.0),
        mock_present: false,
        max_clients: 100,
        ..SweepContext::default()
    }
}

#[test]
fn seed000_before_the_fix_is_a_pool_of_20() {
    // clients, req/s, avg ms: the steady 30 s summaries of each run.
    let steps = vec![
        step(1, 1.0, 1017.0),
        step(5, 5.0, 1017.0),
        step(20, 19.7, 1018.0),
        step(40, 19.8, 2027.0),
        step(100, 19.7, 5070.0),
    ];
    let d = diagnosed(&steps, &seed000_context());
    assert_eq!(d.kind, Kind::BlockingPool, "{d:#?}");
    assert_near(d.limit.unwrap(), 20.0, 0.1);
    // The knee is between 20 and 40: 40 is the first step below 90% of ideal.
    assert_eq!(d.knee_clients, Some(40));
    // 19.7 req/s from 20 clients on...
    let plateau = d.plateau.as_ref().expect("a plateau");
    assert_near(plateau.throughput_rps, 19.7, 0.003);
    assert_eq!(plateau.from_clients, 20);
    // ...a pool of ~20 slots, each held for the whole 1.0 s downstream call.
    let little = facts(&d, |f| match f {
        Fact::Little {
            service_ms,
            service,
            in_service,
            ..
        } => Some((*service_ms, *service, in_service.round())),
        _ => None,
    });
    assert_eq!(little, [(1000.0, Service::DownstreamCall, 20.0)]);
    assert!(has(&d, |f| *f == Fact::NoMock));
    // Throughput flat from 20 to 100 clients while latency grows: a queue behind a fixed pool.
    assert!(has(&d, |f| matches!(
        f,
        Fact::Plateau { from_clients: 20, to_clients: 100, from_latency_ms, to_latency_ms, .. }
            if to_latency_ms > &(4.0 * from_latency_ms)
    )));
    let usl = d.usl.expect("5 client counts give a USL fit");
    let pool = d.pool.expect("a plateau gives a pool fit");
    assert!(pool.r_squared > 0.99, "{pool:?}");
    assert!(usl.r_squared <= pool.r_squared, "{usl:?} vs {pool:?}");
    assert_eq!(d.better_model, Some(Model::BoundedPool));
}

#[test]
fn seed000_the_same_table_in_any_order_with_a_repeat_gives_the_same_finding() {
    let steps = vec![
        step(100, 19.7, 5070.0),
        step(20, 19.7, 1018.0),
        step(40, 19.8, 2027.0),
        step(1, 1.0, 1017.0),
        step(40, 18.9, 2029.0), // the short last summary of the 40-client run
        step(5, 5.0, 1017.0),
        step(40, 19.9, 2027.0),
    ];
    let d = diagnosed(&steps, &seed000_context());
    assert_eq!(d.kind, Kind::BlockingPool);
    assert_near(d.limit.unwrap(), 20.0, 0.1);
    assert_eq!(d.knee_clients, Some(40));
    assert!(has(&d, |f| matches!(
        f,
        Fact::Step {
            clients: 40,
            runs: 3,
            ..
        }
    )));
}

#[test]
fn seed000_after_fix_1_is_a_pool_of_8_with_a_few_timeouts() {
    // 20 clients: 7.9 req/s at 2541 ms. 40 clients: 7.8 req/s at 5073 ms, 29 of 1721 failed
    // (1.7%) as timeouts in another actor.
    let steps = vec![
        step(20, 7.9, 2541.0),
        with_errors(step(40, 7.67, 5073.0), "request_timeout", 0.133, 5073.0),
    ];
    let d = diagnosed(&steps, &seed000_context());
    assert_eq!(d.kind, Kind::BlockingPool, "{d:#?}");
    assert_near(d.limit.unwrap(), 8.0, 0.1);
    // 20 clients already queued (2541 ms against a 1 s call): the knee is the first step.
    assert_eq!(d.knee_clients, Some(20));
    // At 40 clients 1.x% of requests failed, as request timeouts.
    assert!(
        has(&d, |f| matches!(
            f,
            Fact::Errors { clients: 40, error_rate, errors }
                if (0.01..0.02).contains(error_rate) && errors.contains_key("request_timeout")
        )),
        "{d:#?}"
    );
    assert!(has(&d, |f| matches!(
        f,
        Fact::BaseLatency {
            from_delay: true,
            ..
        }
    )));
}

#[test]
fn seed000_with_blocking_is_a_pool_of_25() {
    let steps = vec![step(40, 24.6, 1623.0), step(100, 24.6, 4065.0)];
    let d = diagnosed(&steps, &seed000_context());
    assert_eq!(d.kind, Kind::BlockingPool, "{d:#?}");
    assert_near(d.limit.unwrap(), 25.0, 0.1);
    assert_eq!(d.knee_clients, Some(40));
    // Two client counts are too few for the USL.
    assert!(d.usl.is_none());
}

#[test]
fn seed000_with_a_mock_reporting_in_flight_prefers_its_count() {
    let context = SweepContext {
        mock_present: true,
        ..seed000_context()
    };
    let steps = vec![
        with_mock(step(1, 1.0, 1017.0), 1000.0, 1.0, 1),
        with_mock(step(5, 5.0, 1017.0), 1000.0, 1.0, 5),
        with_mock(step(20, 19.7, 1018.0), 1000.0, 1.0, 20),
        with_mock(step(40, 19.8, 2027.0), 1000.0, 1.0, 20),
        with_mock(step(100, 19.7, 5070.0), 1000.0, 1.0, 20),
    ];
    let d = diagnosed(&steps, &context);
    assert_eq!(d.kind, Kind::BlockingPool);
    assert_eq!(d.limit, Some(20.0));
    assert!(has(&d, |f| matches!(
        f,
        Fact::MockCeiling {
            reading: CeilingReading::Agrees,
            max_in_flight,
            ..
        } if *max_in_flight == 20.0
    )));
    assert!(!has(&d, |f| *f == Fact::NoMock));
}

/// ab -n 50 -c 50: one batch of 50 requests, no steady state; the blocking call sleeps 5 s.
fn seed002_context() -> SweepContext {
    SweepContext {
        downstream_delay_ms: Some(5000.0),
        max_clients: 50,
        ..SweepContext::default()
    }
}

/// ab's figures as one step: ab's "time per request (mean)" is concurrency × time / n.
fn ab_step(ok: u64, failed: u64, seconds: f64, failure_kind: &str) -> chokepoint_result::Step {
    let mut s = step(50, ok as f64 / seconds, 50.0 * seconds * 1000.0 / 50.0);
    s.duration_s = seconds;
    s.ok = ok;
    s.requests = ok;
    s.ok_throughput_rps = ok as f64 / seconds;
    s.throughput_rps = s.ok_throughput_rps;
    if failed > 0 {
        s = with_errors(s, failure_kind, failed as f64 / seconds, seconds * 1000.0);
    }
    s
}

#[test]
fn seed002_blocking_dispatcher_one_batch_gives_a_pool_between_13_and_16() {
    // 50 requests, 0 failed, 20.036 s, 2.50 req/s; the real pool is 16 threads.
    let steps = vec![ab_step(50, 0, 20.036, "")];
    let d = diagnosed(&steps, &seed002_context());
    assert_eq!(d.kind, Kind::BlockingPool, "{d:#?}");
    let limit = d.limit.unwrap();
    assert!((13.0..=16.0).contains(&limit), "{limit}");
    assert!(
        has(&d, |f| matches!(
            f,
            Fact::Batch { low, high, .. } if *low == 13.0 && *high == 16.0
        )),
        "{d:#?}"
    );
    assert!(has(&d, |f| matches!(f, Fact::OneStep { clients: 50 })));
}

#[test]
fn seed002_global_one_batch_with_34_of_50_failing_is_error_bound_at_4() {
    // 50 requests, 34 failed (timeouts), 20.397 s; the real pool is 4 threads (the CPUs).
    let steps = vec![ab_step(16, 34, 20.397, "request_timeout")];
    let d = diagnosed(&steps, &seed002_context());
    assert_eq!(d.kind, Kind::ErrorBound, "{d:#?}");
    assert_near(d.limit.unwrap(), 4.0, 0.1);
    // 68% of requests get timeouts.
    let start = facts(&d, |f| match f {
        Fact::ErrorsStart {
            error_rate, errors, ..
        } => Some(((error_rate * 100.0).round(), errors.clone())),
        _ => None,
    });
    assert_eq!(start.len(), 1);
    assert_eq!(start[0].0, 68.0);
    assert_eq!(start[0].1.get("request_timeout"), Some(&34));
}

#[test]
fn seed002_one_step_without_a_known_delay_says_it_cannot_tell() {
    let steps = vec![ab_step(50, 0, 20.036, "")];
    let context = SweepContext {
        downstream_delay_ms: None,
        ..seed002_context()
    };
    let d = diagnosed(&steps, &context);
    assert_eq!(d.kind, Kind::NoLimitFound);
    assert_eq!(d.limit, None);
    // One step, no known delay: no ideal line to compare with.
    assert!(has(&d, |f| matches!(f, Fact::OneStep { .. })));
    assert!(has(&d, |f| matches!(
        f,
        Fact::Step {
            downstream_delay_ms: None,
            ..
        }
    )));
    assert!(!has(&d, |f| matches!(f, Fact::Knee { .. })));
}
