//! Connection pools as places, from `/proc` alone (`--stacks off`): the target's connections
//! to the downstream held at the limit, joined with a connection pool the process shows (a
//! library file it has open or mapped) whose default cap is those connections. Both targets
//! were built after the rule (`crates/diagnose/src/place`):
//! - `tests/targets/java-httpclient5`: 20 handler threads behind Apache HttpClient 5 at its
//!   defaults (5 per route); the JVM holds `httpclient5-5.3.1.jar` open. The handlers park in
//!   `futex` beside the 5 on the network: their pool is not the knob;
//! - `tests/targets/py-aiohttp`: one event loop calling the mock through an `aiohttp`
//!   `ClientSession` at its defaults (`TCPConnector(limit=100)`), whose C extension
//!   (`aiohttp/_http_parser…so`) is mapped; no thread waits at all.
//!
//! Each needs its tool (java and the HttpClient jars from Maven Central; python3 with aiohttp
//! from PyPI): `.ci/run` installs them, and a missing one fails the test.
use crate::common;

use crate::place::sweep_from_proc;
use chokepoint_result::{Kind, Place, PlaceKind, PlaceSource, SweepResult};
use common::*;
use std::process::Command;
use std::time::Duration;

/// The finding's place: a connection pool read from the connections to the mock, `size` of
/// them, with a setting; printed as a user reads it.
fn connection_place(name: &str, result: &SweepResult, size: f64) -> Place {
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    println!(
        "{name}: {} {:?}; {}; libraries {:?}",
        diagnosis.kind(),
        diagnosis.limit(),
        diagnosis.attribution.as_deref().unwrap_or("no place"),
        result.context.target_libraries
    );
    let place = diagnosis
        .place
        .clone()
        .unwrap_or_else(|| panic!("{name}: no place: {:#?}", diagnosis.evidence));
    assert_eq!(place.kind, Some(PlaceKind::ConnectionPool), "{name}");
    assert_eq!(place.source, Some(PlaceSource::Connections), "{name}");
    assert_eq!(place.size, Some(size), "{name}");
    let mock_port = result
        .steps
        .iter()
        .filter_map(|s| s.connections.as_ref()?.to_mock())
        .map(|p| p.peer_port)
        .next();
    assert_eq!(place.peer_port, mock_port, "{name}: the mock's port");
    place
}

#[test]
fn httpclient5s_pool_is_named_from_proc_by_its_jar_and_its_connections() {
    assert!(
        toolchain_present("java", "-version"),
        "java is needed: install it (.ci/run does)"
    );
    let jars = crate::place::httpclient5_jars();
    let _one = one_at_a_time();
    let mock = mock_with_delay_of(Duration::from_millis(100));
    let mut command = Command::new("java");
    command
        .arg("-cp")
        .arg(jars.join("*"))
        .arg(targets_dir().join("java-httpclient5/ClientPoolServer.java"))
        .args(["--port", "0", "--downstream", &format!("{}/", mock.url())]);
    let target = Target::launch("java-httpclient5", command);
    let result = sweep_from_proc(
        "java-httpclient5 (/proc)",
        &target.url(),
        vec![1, 5, 10, 20],
        &mock,
    );
    drop(target);
    assert_eq!(most_downstream_in_flight(&result), Some(5), "the truth");
    assert_finding("java-httpclient5 (/proc)", &result, Kind::BlockingPool, 5.0);
    let place = connection_place("java-httpclient5 (/proc)", &result, 5.0);
    let setting = place.setting.as_ref().expect("HttpClient 5's entry");
    assert!(
        setting.setting.starts_with("setMaxConnPerRoute"),
        "{setting:?}"
    );
    let shown_by = place.shown_by.as_deref().unwrap_or_default();
    assert!(shown_by.ends_with("httpclient5-5.3.1.jar"), "{shown_by}");
    let handlers = place.queued_threads.as_ref().expect("the handlers");
    assert!(
        handlers.threads > handlers.held,
        "handlers parked beside those on the network: {handlers:?}"
    );
}

#[test]
fn an_aiohttp_event_loops_connector_is_named_from_its_connections_and_its_extension() {
    assert!(
        std::process::Command::new("python3")
            .args(["-c", "import aiohttp"])
            .status()
            .is_ok_and(|s| s.success()),
        "python3 with aiohttp is needed: pip install aiohttp (.ci/run does)"
    );
    let _one = one_at_a_time();
    // 100 connections held 500 ms each: 200 req/s, light for one event loop on a busy core.
    let mock = mock_with_delay_of(Duration::from_millis(500));
    let mut command = Command::new("python3");
    command
        .arg(targets_dir().join("py-aiohttp/server.py"))
        .args(["--port", "0", "--downstream", &format!("{}/", mock.url())]);
    let target = Target::launch("py-aiohttp", command);
    let result = sweep_from_proc("py-aiohttp", &target.url(), vec![25, 50, 200, 300], &mock);
    drop(target);
    assert_eq!(most_downstream_in_flight(&result), Some(100), "the truth");
    assert_finding("py-aiohttp", &result, Kind::BlockingPool, 100.0);
    let place = connection_place("py-aiohttp", &result, 100.0);
    let setting = place.setting.as_ref().expect("aiohttp's entry");
    assert!(setting.setting.contains("limit"), "{setting:?}");
    let shown_by = place.shown_by.as_deref().unwrap_or_default();
    assert!(shown_by.contains("/aiohttp/"), "{shown_by}");
    assert_eq!(
        place.queued_threads, None,
        "an event loop: no thread queues"
    );
}
