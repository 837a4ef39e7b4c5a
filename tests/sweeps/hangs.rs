//! Services that stop answering (`crates/diagnose/src/hang.rs`): from some step on not one
//! request completes, and the finding must say so and name no knob.
//! - `tests/targets/py-lock-order` (built after the rule): two locks taken in opposite orders by
//!   alternate requests, the textbook deadlock; answered at 1 client, nothing from 2 on; py-spy's
//!   stacks at the silent step place it in the handler.
//! - `tests/targets/go-h2-client -strict`: Go's HTTP/2 transport with
//!   `StrictMaxConcurrentRequests` deadlocks once more requests than the downstream's stream cap
//!   arrive at once (golang/go#70809); in front of the mock capped at 8 streams it answers at 4
//!   clients and nothing at 16. Seen before the rule was written: it is why the rule exists.
//!
//! Needs python3 and go (scripts/install-test-deps.sh); a missing one fails the test.
use crate::common;

use chokepoint_mock::MockConfig;
use chokepoint_result::{Fact, Kind, SweepResult};
use common::*;
use std::process::Command;
use std::time::Duration;

/// The finding stopped answering at `from` clients: error-bound, no limit, no place.
fn assert_stopped_answering(name: &str, result: &SweepResult, from: u32) {
    let diagnosis = assert_kind(name, result, Kind::ErrorBound);
    let stopped = diagnosis.facts().iter().find_map(|f| match f {
        Fact::StoppedAnswering { from_clients, .. } => Some(*from_clients),
        _ => None,
    });
    assert_eq!(stopped, Some(from), "{name}: {:#?}", diagnosis.evidence);
    assert_eq!(diagnosis.limit(), None, "{name}");
    assert_eq!(diagnosis.place, None, "{name}: no knob for a deadlock");
    assert!(
        diagnosis.summary.contains("stopped answering"),
        "{}",
        diagnosis.summary
    );
}

#[test]
fn two_locks_taken_in_opposite_orders_stop_answering_at_two_clients() {
    assert!(toolchain_present("python3", "--version"));
    let _turn = beside_one_other();
    let mock = mock_with_delay();
    let mut command = Command::new("python3");
    command
        .arg(targets_dir().join("py-lock-order/server.py"))
        .args(["--port", "0", "--downstream", &mock.url()]);
    let target = Target::launch("py-lock-order", command);
    let result = sweep_target(&target, Some(vec![1, 2]), STEP, 2, Some(&mock));
    drop(target);
    // The truth: answered alone, nothing once two requests meet.
    let completed: Vec<(u32, u64)> = result
        .steps
        .iter()
        .map(|s| (s.clients, s.requests))
        .collect();
    assert!(completed[0].1 > 0, "{completed:?}");
    assert!(completed[1..].iter().all(|&(_, n)| n == 0), "{completed:?}");
    assert_stopped_answering("py-lock-order", &result, 2);
    // py-spy's stacks at the first silent step say where: the handler, stuck on its locks.
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    let stuck = diagnosis.facts().iter().find_map(|f| match f {
        Fact::StoppedAnswering { stuck, .. } => stuck.clone(),
        _ => None,
    });
    let stuck = stuck.unwrap_or_else(|| panic!("no stacks told: {:#?}", diagnosis.evidence));
    println!("{stuck:?}");
    assert!(
        stuck.frames.iter().any(|f| f.contains("do_GET")),
        "the handler's frame: {stuck:?}"
    );
}

#[test]
fn a_strict_go_http2_transport_past_the_streams_cap_stops_answering() {
    assert!(
        toolchain_present("go", "version"),
        "go is needed: install it (scripts/install-test-deps.sh)"
    );
    let binary = build_go_target("go-h2-client");
    let _turn = beside_one_other();
    let mock = chokepoint_mock::start(
        "127.0.0.1:0".parse().expect("a socket address"),
        MockConfig {
            fixed_delay: Some(Duration::from_millis(100)),
            max_concurrent_streams: Some(8),
            ..MockConfig::default()
        },
    )
    .expect("the mock starts on a free port");
    let mut command = Command::new(binary);
    command.args([
        "-port",
        "0",
        "-downstream",
        &mock.addr().to_string(),
        "-strict",
    ]);
    let target = Target::launch("go-h2-client -strict", command);
    // The deadlock sets in once more calls wait for a stream than the cap lets run: at once
    // at 16 clients on a quiet machine, after a wave or two of answers on a busy one (seen in a
    // full run beside another sweep: 16 answered at 16 clients, then none). A step past it
    // finds it set either way.
    // A deadlocked service never drains: each silent step would wait out the 30 s default.
    let mut config = chokepoint_experiment::SweepConfig::new(&target.url())
        .expect("a valid target URL")
        .with_target_pid(target.pid());
    config.drain_timeout = Duration::from_secs(2);
    let result = sweep_with(
        "go-h2-client -strict",
        config,
        Some(vec![4, 16, 24]),
        STEP,
        24,
        Some(&mock),
    );
    drop(target);
    let last = result.steps.last().expect("steps");
    assert_eq!(
        (last.clients, last.requests),
        (24, 0),
        "the truth: Go's deadlock (golang/go#70809); if this fails, Go's strict mode may work now"
    );
    let at_16 = result
        .steps
        .iter()
        .find(|s| s.clients == 16)
        .map(|s| s.requests);
    let from = if at_16 == Some(0) { 16 } else { 24 };
    assert_stopped_answering("go-h2-client -strict", &result, from);
}
