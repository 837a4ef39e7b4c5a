//! Client connection pools in front of an HTTP downstream, as places, from `/proc` (`--stacks
//! off`) unless said: the target's connections to the downstream held at the limit, joined with
//! a connection pool the process shows (a library file it has open or mapped, its threads'
//! names, or with the stacks on, the frames its threads queue in). Every target was built after
//! the rule (`crates/diagnose/src/place`) or the catalogue entry it tests:
//! - `tests/targets/java-httpclient5`: 20 handler threads behind Apache HttpClient 5 at its
//!   defaults (5 per route); the JVM holds `httpclient5-5.3.1.jar` open. The handlers park in
//!   `futex` beside the 5 on the network: their pool is not the knob;
//! - `tests/targets/java-httpclient4`: the same handlers behind Apache HttpClient 4 at its
//!   defaults (2 per route), `httpclient-4.5.14.jar` open;
//! - `tests/targets/java-reactor-netty`: a Reactor Netty server calling through
//!   `HttpClient.create()` at its defaults (500 per host in the shared pool), no thread waiting;
//! - `tests/targets/py-aiohttp`: one event loop calling the mock through an `aiohttp`
//!   `ClientSession` at its defaults (`TCPConnector(limit=100)`), whose C extension
//!   (`aiohttp/_http_parser…so`) is mapped; no thread waits at all;
//! - `tests/targets/py-requests`: a thread per connection calling through one `requests.Session`:
//!   with `pool_block=True` (10), named by py-spy in urllib3's `_get_conn`; at requests'
//!   defaults, no cap, and no `pool_maxsize` named;
//! - `tests/targets/java-okhttp`: OkHttp at its defaults called with `enqueue`: its Dispatcher's
//!   5 calls per host run on its own threads, renamed after the call's URL while they run;
//! - `tests/targets/go-transport`: Go's `http.Transport` with `MaxConnsPerHost: 10`, named by
//!   pprof in `(*Transport).getConn`;
//! - `tests/targets/node-agent`: Node's `http.Agent` with `maxSockets: 10`: sized, and no knob
//!   named, since nothing in `/proc` tells the agent from any other pool in the same JavaScript;
//! - `tests/targets/node-undici`: undici's `Agent({ connections: 8 })`, the same shape from
//!   another client: sized, and no knob named;
//! - `tests/targets/java-jdk-httpclient`: the JDK's own `HttpClient` at its defaults, which caps
//!   nothing at HTTP/1.1: the service's 12 handler threads are the limit and the place, and no
//!   client setting is named.
//!
//! Each needs its tool (java with the HttpClient and OkHttp jars from Maven Central; python3 with
//! aiohttp and requests from PyPI, py-spy; go; node with undici from npm): `.ci/run` installs
//! them, and a missing one
//! fails the test.
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
        "{name}: {} {:?}; libraries {:?}",
        diagnosis.kind(),
        diagnosis.limit(),
        result.context.target_libraries
    );
    let place = the_place(name, result);
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

/// The JVM target `file` of tests/targets, run on the jars in `jars` with `mock` as its
/// downstream, swept from `/proc` over `clients`.
fn sweep_java_client(
    name: &str,
    jars: &std::path::Path,
    file: &'static str,
    mock: &chokepoint_mock::RunningMock,
    clients: Vec<u32>,
) -> SweepResult {
    assert!(
        toolchain_present("java", "-version"),
        "java is needed: install it (.ci/run does)"
    );
    let folder = file.split('/').next().unwrap_or(file);
    let target = launch_java_target(folder, jars, file, mock, &[]);
    let result = sweep_from_proc(name, &target.url(), clients, mock);
    drop(target);
    result
}

/// A client's pool of `size` connections to the mock, checked against the truth (the mock's
/// most in flight) and named: the catalogue's setting containing `setting`, shown by the jar
/// whose path ends in `jar`.
fn assert_client_pool(
    name: &str,
    result: &SweepResult,
    size: u32,
    setting: &str,
    jar: &str,
) -> Place {
    assert_eq!(
        most_downstream_in_flight(result),
        Some(u64::from(size)),
        "{name}: the truth"
    );
    assert_finding(name, result, Kind::BlockingPool, f64::from(size));
    let place = connection_place(name, result, f64::from(size));
    let named = place.setting.as_ref().expect("the catalogue's entry");
    assert!(named.setting.contains(setting), "{name}: {named:?}");
    let shown_by = place.shown_by.as_deref().unwrap_or_default();
    assert!(shown_by.ends_with(jar), "{name}: {shown_by}");
    place
}

#[test]
fn httpclient5s_pool_is_named_from_proc_by_its_jar_and_its_connections() {
    let jars = crate::place::httpclient5_jars();
    let _turn = beside_one_other();
    let mock = mock_with_delay_of(Duration::from_millis(100));
    let name = "java-httpclient5 (/proc)";
    let file = "java-httpclient5/ClientPoolServer.java";
    let result = sweep_java_client(name, &jars, file, &mock, vec![1, 5, 10, 20]);
    let place = assert_client_pool(
        name,
        &result,
        5,
        "setMaxConnPerRoute",
        "httpclient5-5.3.1.jar",
    );
    let handlers = place.queued_threads.as_ref().expect("the handlers");
    assert!(
        handlers.threads > handlers.held,
        "handlers parked beside those on the network: {handlers:?}"
    );
}

/// tests/targets/java-httpclient4: the same 20 handler threads behind Apache HttpClient 4 at its
/// defaults, `HttpClients.createDefault()`: 2 connections per route. Truth by hand (`wrk` at 8
/// and 20 clients against the 100 ms mock): the mock never saw more than 2 calls in flight,
/// 18–19 req/s.
#[test]
fn httpclient4s_pool_of_2_per_route_is_named_from_proc_by_its_jar_and_its_connections() {
    let jars = crate::place::cached_jars(
        "httpclient4",
        "httpclient-4.5.14.jar",
        "Apache HttpClient 4",
    );
    let _turn = beside_one_other();
    let mock = mock_with_delay_of(Duration::from_millis(100));
    let name = "java-httpclient4 (/proc)";
    let file = "java-httpclient4/ClientPoolServer.java";
    let result = sweep_java_client(name, &jars, file, &mock, vec![1, 2, 4, 8]);
    let place = assert_client_pool(
        name,
        &result,
        2,
        "setDefaultMaxPerRoute",
        "httpclient-4.5.14.jar",
    );
    let setting = place.setting.expect("checked");
    assert!(setting.default.starts_with("2 per route"), "{setting:?}");
}

/// tests/targets/java-reactor-netty: a Reactor Netty server calling the mock through
/// `HttpClient.create()`, WebFlux's WebClient's client, at its defaults: the shared
/// ConnectionProvider's 500 connections per remote host. No thread waits (the event loops hold
/// every call), so the connections and the jar the JVM holds open are the evidence. Truth by
/// hand (`wrk` at 600 and 900 clients against the 1 s mock): the mock saw at most 500 calls in
/// flight on 500 connections, 412 req/s.
#[test]
fn reactor_nettys_shared_pool_of_500_is_named_from_proc_by_its_jar_and_its_connections() {
    let jars = crate::place::cached_jars(
        "reactor-netty",
        "reactor-netty-core-1.2.16.jar",
        "Reactor Netty",
    );
    // Alone: 900 clients and 500 connections keep the machine 43–47 % busy (the turn file),
    // past the pairs' light share, and a paired full run (session 23) read its event loops'
    // threads as wanting a core (`cpu-bound 1`).
    let _turn = one_at_a_time();
    // 500 calls held 1 s each: 500 req/s, light for the event loops on a busy machine.
    let mock = mock_with_delay_of(Duration::from_secs(1));
    let name = "java-reactor-netty (/proc)";
    let file = "java-reactor-netty/WebClientServer.java";
    let result = sweep_java_client(name, &jars, file, &mock, vec![100, 650, 900]);
    assert_client_pool(
        name,
        &result,
        500,
        "maxConnections",
        "reactor-netty-core-1.2.16.jar",
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
    let _turn = beside_one_other();
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

/// tests/targets/py-requests: a thread per connection calling the mock through one
/// `requests.Session` (built after the catalogue's urllib3 entry).
fn py_requests(mock: &chokepoint_mock::RunningMock, pool_block: bool) -> Target {
    assert!(
        Command::new("python3")
            .args(["-c", "import requests"])
            .status()
            .is_ok_and(|s| s.success()),
        "python3 with requests is needed: pip install requests (.ci/run does)"
    );
    let mut command = Command::new("python3");
    command
        .arg(targets_dir().join("py-requests/server.py"))
        .args(["--port", "0", "--downstream", &format!("{}/", mock.url())]);
    if pool_block {
        command.arg("--pool-block");
    }
    Target::launch("py-requests", command)
}

/// requests capped the documented way, `HTTPAdapter(pool_maxsize=10, pool_block=True)`: past
/// 10 calls in flight the handler threads wait in urllib3's `_get_conn`, which py-spy shows.
/// Truth by hand: 10 connections × 100 ms = 100 req/s. urllib3 is pure Python: nothing in
/// `/proc` names it, the stacks do.
#[test]
fn a_requests_session_with_pool_block_is_10_named_by_py_spy_in_get_conn() {
    crate::place::require("py-spy", "--version");
    let _turn = beside_one_other();
    let mock = mock_with_delay_of(Duration::from_millis(100));
    let target = py_requests(&mock, true);
    let name = "py-requests --pool-block";
    let result = crate::place::sweep_auto(name, &target.url(), vec![3, 8, 30, 60], &mock, true);
    drop(target);
    assert_eq!(most_downstream_in_flight(&result), Some(10), "the truth");
    assert_finding(name, &result, Kind::BlockingPool, 10.0);
    let place = the_place(name, &result);
    assert_eq!(place.kind, Some(PlaceKind::ConnectionPool), "{name}");
    // Read from the stacks: `size` is the handler threads seen, `held` those in the call.
    let held = place.held.unwrap_or_default();
    assert!((9.0..=11.0).contains(&held), "{name}: {held} in the call");
    let setting = place.setting.as_ref().expect("urllib3's entry");
    assert!(setting.setting.contains("pool_block=True"), "{setting:?}");
    let queued = place
        .queued
        .as_ref()
        .expect("threads queued for a connection");
    assert!(
        queued.frames.iter().any(|f| f.contains("_get_conn")),
        "{:?}",
        queued.frames
    );
}

/// The same Session at requests' defaults (`pool_block=False`): a call past the pool's 10
/// opens one more connection, so nothing caps the calls, and naming `pool_maxsize` would be a
/// wrong knob. Truth by hand: the mock sees every client's call in flight.
#[test]
fn a_requests_session_at_its_defaults_caps_nothing_and_names_no_pool() {
    crate::place::require("py-spy", "--version");
    let _turn = beside_one_other();
    let mock = mock_with_delay_of(Duration::from_millis(100));
    let target = py_requests(&mock, false);
    let name = "py-requests";
    let result = crate::place::sweep_auto(name, &target.url(), vec![5, 30], &mock, true);
    drop(target);
    let most = most_downstream_in_flight(&result).unwrap_or_default();
    assert!(
        most >= 25,
        "the truth: calls past the pool's 10 go on ({most} in flight)"
    );
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    println!(
        "{name}: {} {:?}; {}",
        diagnosis.kind(),
        diagnosis.limit(),
        diagnosis.attribution.as_deref().unwrap_or("no place")
    );
    let named = diagnosis.place.as_ref().and_then(|p| p.setting.as_ref());
    assert!(
        named.is_none_or(|s| !s.setting.contains("pool_maxsize")),
        "no cap, no pool_maxsize: {named:?}"
    );
}

/// The jars of tests/targets/java-okhttp, which scripts/install-test-deps.sh fetches.
fn okhttp_jars() -> std::path::PathBuf {
    crate::place::cached_jars("okhttp", "okhttp-4.12.0.jar", "OkHttp")
}

/// OkHttp at its defaults, called asynchronously: its Dispatcher runs 5 calls per host on its
/// own `OkHttp Dispatcher` threads, the rest wait in its ready queue holding no thread, and the
/// 20 handlers wait for their answers. Truth by hand: 5 × 100 ms = 50 req/s. The handlers'
/// pool is not the knob; the Dispatcher's `maxRequestsPerHost` is.
#[test]
fn okhttps_dispatcher_is_5_per_host_named_from_proc_by_its_threads() {
    let jars = okhttp_jars();
    let _turn = beside_one_other();
    let mock = mock_with_delay_of(Duration::from_millis(100));
    let name = "java-okhttp (/proc)";
    let file = "java-okhttp/OkHttpServer.java";
    let result = sweep_java_client(name, &jars, file, &mock, vec![1, 3, 10, 20]);
    assert_eq!(most_downstream_in_flight(&result), Some(5), "the truth");
    assert_finding(name, &result, Kind::BlockingPool, 5.0);
    let place = the_place(name, &result);
    // The calls run on the Dispatcher's own threads, each renamed after its call's URL while it
    // runs (`OkHttp http://127.0.0.1:PORT/`, cut at 15 bytes by Linux): 5 of them, all on the
    // network; the handlers wait elsewhere. Read so, the place is that pool of threads. When a
    // sample catches a 6th thread under the name (one call's thread starting as another's ends,
    // once in about 25 full runs), the pool is not all held and the same catalogue entry is
    // named from the 5 connections instead: the same knob, by the connections' evidence.
    match place.kind {
        Some(PlaceKind::ThreadPool) => {
            assert_eq!(place.pool.as_deref(), Some("OkHttp http"), "{name}");
            // `held` is a mean over /proc's samples: a thread caught between two calls reads 4.9.
            let held = place.held.unwrap_or_default();
            assert!((4.25..=5.75).contains(&held), "{name}: {held} held");
        }
        Some(PlaceKind::ConnectionPool) => {
            assert_eq!(place.size, Some(5.0), "{name}: {place:?}");
            assert_eq!(place.source, Some(PlaceSource::Connections), "{name}");
        }
        other => {
            panic!("{name}: the place is neither OkHttp's threads nor its connections: {other:?}")
        }
    }
    let setting = place.setting.as_ref().expect("OkHttp's entry");
    assert!(
        setting.setting.contains("maxRequestsPerHost"),
        "{setting:?}"
    );
}

/// A Node.js target (`folder/server.js`) calling the mock through a client capped at `size`
/// connections by `cap` (its flag and value), swept from `/proc` over `clients`: the truth,
/// the kind and size, and no place. One event loop holds every call without a thread, and
/// Node's modules are read, never mapped: nothing in `/proc` tells one JavaScript client from
/// another, so no knob may be named.
fn assert_node_client_sized_and_unplaced(
    folder: &'static str,
    cap: [&str; 2],
    size: u32,
    clients: Vec<u32>,
) {
    assert!(
        toolchain_present("node", "--version"),
        "node is needed (.ci/run installs it)"
    );
    let _turn = beside_one_other();
    let mock = mock_with_delay_of(Duration::from_millis(100));
    let mut command = Command::new("node");
    command
        .arg(targets_dir().join(folder).join("server.js"))
        .args(["--port", "0", "--downstream", &format!("{}/", mock.url())])
        .args(cap);
    let target = Target::launch(folder, command);
    let name = format!("{folder} {}", cap.join(" "));
    let result = sweep_from_proc(&name, &target.url(), clients, &mock);
    drop(target);
    assert_eq!(
        most_downstream_in_flight(&result),
        Some(u64::from(size)),
        "the truth"
    );
    assert_finding(&name, &result, Kind::BlockingPool, f64::from(size));
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    println!(
        "{name}: {}",
        diagnosis.attribution.as_deref().unwrap_or("no place")
    );
    assert_eq!(
        diagnosis.place, None,
        "{name}: no pool of threads and no library names it: no knob to name"
    );
}

/// Node's `http.Agent` with `maxSockets: 10` (its default is Infinity: no cap). Truth by hand:
/// 10 calls × 100 ms = 100 req/s, the rest queued inside the agent.
#[test]
fn a_node_agents_max_sockets_is_sized_and_left_unplaced_when_nothing_names_it() {
    assert_node_client_sized_and_unplaced(
        "node-agent",
        ["--max-sockets", "10"],
        10,
        vec![3, 8, 30, 60],
    );
}

/// undici's `Agent({ connections: 8 })` (its default is no cap): the same shape as the agent
/// above from another client, built after it. Truth by hand: 8 calls × 100 ms = 80 req/s, the
/// rest queued inside undici's Pool. The finding must not name `http.Agent`'s `maxSockets`
/// either.
#[test]
fn undicis_connections_are_sized_and_no_other_clients_knob_is_named() {
    let modules = targets_dir().join("node-undici/node_modules/undici");
    assert!(
        modules.is_dir(),
        "undici is needed: run npm ci in tests/targets/node-undici (.ci/run does)"
    );
    assert_node_client_sized_and_unplaced(
        "node-undici",
        ["--connections", "8"],
        8,
        vec![3, 6, 24, 48],
    );
}

/// The JDK's own `java.net.http.HttpClient` at its defaults caps nothing at HTTP/1.1: its
/// `ConnectionPool` holds idle connections only. The limit is the service's 12 handler threads,
/// each parked in `HttpClient.send` on a future while the client's selector thread does the
/// I/O. Truth by hand (`wrk` at 24 and 48 clients against the 100 ms mock): the mock's 12 in
/// flight, 117–118 req/s. The handlers are the place, by jcmd's stacks; no client setting may
/// be named, since raising one would change nothing.
#[test]
fn the_jdk_httpclient_caps_nothing_and_the_handler_pool_in_front_of_it_is_named() {
    assert!(
        toolchain_present("java", "-version"),
        "java is needed: install it (.ci/run does)"
    );
    let _turn = beside_one_other();
    let mock = mock_with_delay_of(Duration::from_millis(100));
    let mut command = Command::new("java");
    command
        .arg(targets_dir().join("java-jdk-httpclient/JdkClientServer.java"))
        .args(["--port", "0", "--downstream", &format!("{}/", mock.url())]);
    let target = Target::launch("java-jdk-httpclient", command);
    let name = "java-jdk-httpclient";
    let result = crate::place::sweep_auto(name, &target.url(), vec![2, 6, 24, 48], &mock, true);
    drop(target);
    assert_eq!(most_downstream_in_flight(&result), Some(12), "the truth");
    assert_finding(name, &result, Kind::BlockingPool, 12.0);
    let place = crate::place::stacks_place(name, &result);
    assert_eq!(place.kind, Some(PlaceKind::ThreadPool), "{name}: {place:?}");
    assert_eq!(
        place.pool.as_deref(),
        Some("http-exec"),
        "{name}: {place:?}"
    );
    let held = place.held.unwrap_or_default();
    assert!((10.2..=13.8).contains(&held), "{name}: {held} held");
    assert_eq!(
        place.setting, None,
        "{name}: the service's own pool is in no catalogue, and no client knob applies"
    );
}

/// Go's net/http Transport capped the way services cap it, `MaxConnsPerHost: 10` (its default
/// is no cap), built after the catalogue's entry: past 10 calls in flight the handlers'
/// goroutines wait in `(*Transport).getConn` for a connection, which pprof shows. Truth by hand:
/// 10 calls × 100 ms = 100 req/s, the mock's 10 in flight.
#[test]
fn a_go_transport_capped_by_max_conns_per_host_is_named_by_pprof() {
    assert!(
        toolchain_present("go", "version"),
        "go is needed: install it (.ci/run does)"
    );
    // Built before the sweep's turn: a cold build (CI's first) is no measurement.
    let binary = build_go_target("go-transport");
    let _turn = beside_two_others();
    let mock = mock_with_delay_of(Duration::from_millis(100));
    let mut command = Command::new(binary);
    command
        .args(["-port", "0", "-downstream", &format!("{}/", mock.url())])
        .args(["-max-conns-per-host", "10", "-pprof"]);
    let target = Target::launch("go-transport", command);
    let name = "go-transport -max-conns-per-host 10";
    let result = crate::place::sweep_auto(name, &target.url(), vec![3, 8, 30, 60], &mock, true);
    drop(target);
    // The truth: 10 in flight at the plateau. A call the load generator abandons at a step's
    // end is cancelled, and Go closes its connection and may dial the next before the mock has
    // seen the close: the mock's maximum can read one more for an instant, its mean cannot.
    let plateau = result.steps.last().and_then(|s| s.downstream_inflight);
    let plateau = plateau.expect("the mock's counts");
    assert!(
        (9.0..=10.0).contains(&plateau.mean) && plateau.max <= 11,
        "the truth: {plateau:?}"
    );
    assert_finding(name, &result, Kind::BlockingPool, 10.0);
    let place = the_place(name, &result);
    assert_eq!(place.kind, Some(PlaceKind::ConnectionPool), "{name}");
    let queued = place
        .queued
        .as_ref()
        .expect("goroutines queued for a connection");
    assert!(
        queued
            .frames
            .iter()
            .any(|f| f.starts_with("net/http.(*Transport).")),
        "{:?}",
        queued.frames
    );
    let setting = place.setting.as_ref().expect("the Transport's entry");
    assert_eq!(
        setting.setting, "&http.Transport{MaxConnsPerHost: N}",
        "{setting:?}"
    );
}
