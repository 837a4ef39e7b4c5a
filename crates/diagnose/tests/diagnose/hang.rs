//! A service that stopped answering (`crates/diagnose/src/hang.rs`): the steps of
//! tests/targets/go-h2-client with `-strict` in front of a mock capped at 8 streams (Go's
//! transport deadlocks past the cap), and the sweeps it must leave to the other stages: a pause
//! followed by an answered step, and a pool whose plateau holds.

use crate::common;
use chokepoint_result::{Fact, Kind, Step, SweepContext};
use common::*;

/// The mock's delay, ms.
const DELAY_MS: f64 = 100.0;

/// A step that completed nothing in its window: no answers, no errors.
fn silent(clients: u32) -> Step {
    with_mock(step(clients, 0.0, 0.0), DELAY_MS, 0.0, 0)
}

/// A step answered at `rps` with one call to the mock per request.
fn answered(clients: u32, rps: f64) -> Step {
    let in_flight = (rps * DELAY_MS / 1000.0).round() as u64;
    with_mock(
        step(clients, rps, f64::from(clients) / rps * 1000.0),
        DELAY_MS,
        1.0,
        in_flight,
    )
}

fn context(cores: u32) -> SweepContext {
    SweepContext {
        cores: Some(cores),
        target_observed: true,
        ..mock_context(DELAY_MS)
    }
}

fn stopped_at(finding: &chokepoint_diagnose::Finding) -> Option<u32> {
    finding.facts.iter().find_map(|f| match f {
        Fact::StoppedAnswering { from_clients, .. } => Some(*from_clients),
        _ => None,
    })
}

#[test]
fn a_service_that_answers_nothing_past_some_step_stopped_answering_and_no_knob_is_named() {
    // The go-h2-client -strict sweep: 19 and 37 req/s at 2 and 4 clients, then nothing at 16
    // and 32 (the recorded evidence read "the mock saw exactly 0 calls in flight ... that
    // ceiling is the pool" and the finding was contention).
    for cores in [2, 16, 64] {
        let steps = vec![answered(2, 19.0), answered(4, 37.3), silent(16), silent(32)];
        let d = diagnosed(&steps, &context(cores));
        assert_eq!(stopped_at(&d), Some(16), "{cores} cores: {:?}", d.facts);
        assert_eq!(d.kind, Kind::ErrorBound);
        assert_eq!(d.limit, None, "the limit lies between 4 and 16: unknown");
        let diagnosis = d.into_diagnosis();
        assert_eq!(diagnosis.place, None, "no place, no setting");
        assert!(
            diagnosis
                .summary
                .starts_with("The service stopped answering at 16 clients"),
            "{}",
            diagnosis.summary
        );
    }
}

#[test]
fn a_silent_step_followed_by_an_answered_one_is_left_to_the_other_stages() {
    let steps = vec![
        answered(2, 19.0),
        answered(4, 37.3),
        silent(16),
        answered(32, 79.0),
    ];
    let d = diagnosed(&steps, &context(2));
    assert_eq!(stopped_at(&d), None, "{:?}", d.facts);
}

#[test]
fn a_pool_whose_plateau_holds_did_not_stop_answering() {
    let steps = vec![
        answered(2, 19.6),
        answered(4, 39.2),
        answered(16, 79.0),
        answered(32, 79.4),
    ];
    let d = diagnosed(&steps, &context(2));
    assert_eq!(stopped_at(&d), None);
    assert_eq!(d.kind, Kind::BlockingPool);
}
