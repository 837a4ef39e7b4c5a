//! Proxies that cap the requests they pass to their upstream, with the chokepoint mock as that
//! upstream (issue 22), swept as `chokepoint sweep URL --mock MOCK` runs (`--pid auto`, the
//! mock given before the forwarder is looked for):
//! - `tests/targets/haproxy-maxconn`: HAProxy with `maxconn 8` on its one server. Past 8, a
//!   request waits in the backend's queue, held by no thread: a queue, found as a blocking-pool
//!   of 8. Truth by hand (`wrk -t2 -c32 -d4s`, then `-c16`, 100 ms mock): the mock's 8 in
//!   flight at most, 77.7 and 77.8 req/s, no errors;
//! - `tests/targets/nginx-max-conns`: open-source nginx with `max_conns=8` on its one upstream
//!   server. Without NGINX Plus's `queue` nothing waits past the cap: 502 at once, a shed,
//!   found as error-bound 8. Truth by hand (`wrk -t2 -c32 -d4s`): the mock's 8 in flight at
//!   most, 312 requests answered by it (76 req/s) among 230 128 (229 824 were 502s).
//!
//! HAProxy and nginx are forwarders, but the process they forward to is the mock, whose port
//! the sweep leaves out when it follows one: the proxy alone is observed and
//! `context.forwarder` is empty.
//!
//! No thread holds either limit: the proxies' event loops wait in `epoll_wait`. The place is
//! the cap the proxy's configuration sets on the server its connections went to
//! (`chokepoint_observe::proxy_config`, read from the file its command line names), named when it
//! is the limit (`configured_upstream_cap` in `crates/diagnose/src/place/connections.rs`), with
//! the catalogue's upstream-cap entry. Before that rule both came out unplaced: HAProxy's
//! `maxconn` defaults to no cap, so no default could be matched with the connections seen.
//!
//! - `tests/targets/haproxy-frontend-maxconn`: HAProxy with `maxconn 16` on its frontend: past
//!   16 client connections it accepts none, and the clients past them are never answered: a
//!   connection-limit of 16, placed in the frontend's `maxconn` read from its file.
//!
//! Needs HAProxy (Debian's `haproxy`) and nginx (`nginx-light`): `scripts/install-test-deps.sh`
//! installs them; a missing one fails the test under CI.
use crate::catalogue_pools::{installed, start_quiet, Scratch};
use crate::common;

use chokepoint_diagnose::catalogue::Catalogue;
use chokepoint_experiment::SweepConfig;
use chokepoint_mock::RunningMock;
use chokepoint_result::{Kind, Overload, PlaceKind, PlaceSource, SweepResult};
use common::*;
use std::process::Command;
use std::time::Duration;

/// The cap both proxies put on their upstream.
const CAP: u32 = 8;

/// Each call held this long by the mock: 8 slots serve 80 req/s.
const MOCK_DELAY: Duration = Duration::from_millis(100);

/// The steps: below the cap, then 1.5 and 3 times it.
const CLIENTS: [u32; 4] = [1, 4, 12, 24];

/// The sweep of the proxy on `port` as the CLI runs it: the mock given first, then `--pid auto`
/// (which finds the proxy and looks for a forwarder's upstream, the mock's port left out).
fn sweep_proxy(name: &str, port: u16, proxy_pid: i32, mock: &RunningMock) -> SweepResult {
    let mut config = SweepConfig::new(&format!("http://127.0.0.1:{port}/")).expect("a valid URL");
    config.mock = Some(mock.url());
    let found = config.listening_target();
    assert_eq!(found, vec![proxy_pid], "{name}: --pid auto finds the proxy");
    let config = config.with_listening_target(found);
    sweep_with(name, config, Some(CLIENTS.to_vec()), STEP, 24, Some(mock))
}

/// The checks both proxies share: the truth seen by the mock, the forwarder not followed (its
/// upstream is the mock), and the place: the cap the configuration sets on the mock's port, with
/// the catalogue's setting (`setting` its first words).
fn assert_truth_and_configured_cap(name: &str, result: &SweepResult, program: &str, setting: &str) {
    assert_eq!(
        most_downstream_in_flight(result),
        Some(u64::from(CAP)),
        "{name}: the truth, the mock's calls in flight at most"
    );
    assert_eq!(
        result.context.forwarder, None,
        "{name}: the proxy's upstream is the mock, which is not followed"
    );
    let read: Vec<(&str, u32)> = result
        .context
        .upstream_caps
        .iter()
        .map(|c| (c.program.as_str(), c.cap))
        .collect();
    assert_eq!(
        read,
        vec![(program, CAP)],
        "{name}: the cap read from its file"
    );
    let place = the_place(name, result);
    println!("{name}: {place:?}");
    assert_eq!(place.source, Some(PlaceSource::Config), "{name}");
    assert_eq!(place.pool.as_deref(), Some(program), "{name}");
    assert_eq!(place.size, Some(f64::from(CAP)), "{name}");
    let named = place.setting.as_ref().expect("the catalogue's entry");
    assert!(named.setting.starts_with(setting), "{name}: {named:?}");
}

/// HAProxy with `maxconn 8` on its server: a queue in front of 8 calls, none of its threads
/// waiting in it: placed in the `server` line of its configuration.
#[test]
fn haproxys_server_maxconn_is_a_queue_of_8_placed_in_its_configuration() {
    let Some(haproxy) = installed(&["/usr/sbin/haproxy"], "apt-get install haproxy") else {
        return;
    };
    // Known only as an upstream cap: a CPU-bound HAProxy's threads name no `maxconn`.
    assert_eq!(Catalogue::built_in().setting_for("haproxy"), None);
    let _turn = beside_two_others();
    let mock = mock_with_delay_of(MOCK_DELAY);
    let scratch = Scratch::new("haproxy");
    let upstream = mock.url().trim_start_matches("http://").to_string();
    let (server, port) = start_quiet("haproxy", |port| {
        let conf = scratch.fill(
            "haproxy-maxconn/haproxy.cfg",
            "haproxy.cfg",
            &[("PORT", port.to_string()), ("UPSTREAM", upstream.clone())],
        );
        let mut command = Command::new(&haproxy);
        command.arg("-db").arg("-f").arg(&conf);
        command
    });
    let result = sweep_proxy("haproxy-maxconn", port, server.pid(), &mock);
    drop(server);

    assert_finding(
        "haproxy-maxconn",
        &result,
        Kind::BlockingPool,
        f64::from(CAP),
    );
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    assert!(
        matches!(diagnosis.finding.overload, Some(Overload::Queues { .. })),
        "past the cap requests wait in the backend's queue: {:?}",
        diagnosis.finding.overload
    );
    assert!(
        result.steps.iter().all(|s| s.error_rate == 0.0),
        "none waits out `timeout queue`"
    );
    assert_truth_and_configured_cap("haproxy-maxconn", &result, "haproxy", "maxconn N");
}

/// nginx with `max_conns=8` on its upstream server: past 8, 502 at once, a shed. The limit is
/// what it serves, 8; placed in the `server` line of its `upstream` block, and nginx's own entry
/// (`worker_processes × worker_connections`) not named.
#[test]
fn nginxs_max_conns_sheds_past_8_with_502_placed_in_its_configuration() {
    let Some(nginx) = installed(
        &["/usr/sbin/nginx", "/usr/bin/nginx"],
        "apt-get install nginx-light",
    ) else {
        return;
    };
    let _one = one_at_a_time();
    let mock = mock_with_delay_of(MOCK_DELAY);
    let scratch = Scratch::new("nginx-max-conns");
    let dir = scratch.path("").display().to_string();
    let upstream = mock.url().trim_start_matches("http://").to_string();
    let (server, port) = start_quiet("nginx", |port| {
        let conf = scratch.fill(
            "nginx-max-conns/nginx.conf",
            "nginx.conf",
            &[
                ("DIR", dir.clone()),
                ("PORT", port.to_string()),
                ("UPSTREAM", upstream.clone()),
            ],
        );
        let mut command = Command::new(&nginx);
        command.arg("-c").arg(&conf).arg("-p").arg(&dir);
        command
    });
    let result = sweep_proxy("nginx-max-conns", port, server.pid(), &mock);
    drop(server);

    assert_finding("nginx-max-conns", &result, Kind::ErrorBound, f64::from(CAP));
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    match &diagnosis.finding.overload {
        Some(Overload::Sheds { error_kind, .. }) => assert_eq!(error_kind, "http_502"),
        other => panic!("past the cap nginx answers 502 at once: {other:?}"),
    }
    assert_truth_and_configured_cap("nginx-max-conns", &result, "nginx", "max_conns=N");
}

/// HAProxy's frontend `maxconn 16` in front of a 20 ms mock (tests/targets/haproxy-frontend-
/// maxconn, built after the rule of `crates/diagnose/src/unanswered.rs`): 16 kept-alive client
/// connections served, the others never accepted. Truth by hand (`wrk -t2 -c32 -d4s`, then
/// `-c8`): 730.7 req/s at 21.8 ms, the mock's 16 in flight at most (mean 15.6); 370.8 req/s and
/// 8 at 8 clients. The clients past 16 had no answer in a whole step, so the plateau is a cap
/// on the connections served, not a pool, though the mock saw 16 at once: `connection-limit 16`,
/// placed in the frontend's `maxconn` its configuration sets on the swept port (the connections
/// to the mock are the cap's consequence, not the place). Built before the place rule, after the
/// unanswered one.
#[test]
fn haproxys_frontend_maxconn_leaves_the_clients_past_16_unanswered_a_connection_limit_placed_in_it()
{
    let Some(haproxy) = installed(&["/usr/sbin/haproxy"], "apt-get install haproxy") else {
        return;
    };
    let _turn = beside_one_other();
    let mock = mock_with_delay_of(Duration::from_millis(20));
    let scratch = Scratch::new("haproxy-front");
    let upstream = mock.url().trim_start_matches("http://").to_string();
    let (server, port) = start_quiet("haproxy", |port| {
        let conf = scratch.fill(
            "haproxy-frontend-maxconn/haproxy.cfg",
            "haproxy.cfg",
            &[("PORT", port.to_string()), ("UPSTREAM", upstream.clone())],
        );
        let mut command = Command::new(&haproxy);
        command.arg("-db").arg("-f").arg(&conf);
        command
    });
    let name = "haproxy-frontend-maxconn";
    let mut config = SweepConfig::new(&format!("http://127.0.0.1:{port}/")).expect("a valid URL");
    config.mock = Some(mock.url());
    let found = config.listening_target();
    assert_eq!(
        found,
        vec![server.pid()],
        "{name}: --pid auto finds HAProxy"
    );
    let config = config.with_listening_target(found);
    let result = sweep_with(
        name,
        config,
        Some(vec![4, 8, 32, 64]),
        STEP,
        64,
        Some(&mock),
    );
    drop(server);

    assert_eq!(
        most_downstream_in_flight(&result),
        Some(16),
        "{name}: the truth, the mock's calls in flight at most"
    );
    let past: Vec<(u32, Option<u32>)> = result
        .steps
        .iter()
        .map(|s| (s.clients, s.unanswered_clients))
        .collect();
    assert_eq!(
        past,
        vec![(4, Some(0)), (8, Some(0)), (32, Some(16)), (64, Some(48))],
        "{name}: the clients past 16 never answered"
    );
    assert_finding(name, &result, Kind::ConnectionLimit, 16.0);
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    assert!(
        diagnosis
            .finding
            .facts
            .iter()
            .any(|f| matches!(f, chokepoint_result::Fact::ClientsUnanswered { .. })),
        "{:?}",
        diagnosis.finding.facts
    );
    let read: Vec<(&str, u16, u32)> = result
        .context
        .front_caps
        .iter()
        .map(|c| (c.program.as_str(), c.port, c.cap))
        .collect();
    assert_eq!(
        read,
        vec![("haproxy", port, 16)],
        "{name}: the cap read from its file"
    );
    let place = the_place(name, &result);
    println!("{name}: {place:?}");
    assert_eq!(place.kind, Some(PlaceKind::AcceptCap), "{name}");
    assert_eq!(place.source, Some(PlaceSource::Config), "{name}");
    assert_eq!(place.size, Some(16.0), "{name}");
    assert_eq!(
        place.shown_by.as_deref(),
        Some("frontend front: maxconn 16")
    );
    let named = place
        .setting
        .as_ref()
        .expect("the catalogue's front-cap entry");
    assert!(
        named.setting.starts_with("maxconn N in the frontend"),
        "{name}: {named:?}"
    );
}
