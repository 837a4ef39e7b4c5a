//! A pool-limited service behind a forwarder (issue 23): `socat` on the URL's port passing each
//! connection to tests/targets/py-threadpool (a `ThreadPoolExecutor()` of 6 on 2 cores, calling
//! the mock), as `docker run -p` puts docker-proxy there. `--pid auto` finds socat; the sweep
//! follows it (`SweepConfig::follow_forwarder`) to the Python process and observes both. The
//! finding must be the one the target gets swept directly — same kind, limit and place — with
//! the forwarder named. Built after the rule (`chokepoint_observe::forward`). And nginx in
//! front of gunicorn on a unix socket, followed through the socket.
//!
//! Needs socat (Debian's `socat`), nginx, python3 and gunicorn: `.ci/run` installs them; a
//! missing one fails.
use crate::common;
use crate::common::netns::{launch, Netns};

use chokepoint_experiment::SweepConfig;
use chokepoint_observe::stacks::StackOptions;
use chokepoint_result::{Kind, SweepResult};
use chokepoint_testkit::Server;
use common::*;
use std::process::Command;
use std::time::Duration;

/// The sweep of `url` as `--pid auto --stacks off` runs it, forwarders followed.
fn sweep_auto(name: &str, url: &str, mock: &chokepoint_mock::RunningMock) -> SweepResult {
    let config = SweepConfig::new(url).expect("a valid URL");
    let found = config.listening_target();
    assert_eq!(found.len(), 1, "{name}: --pid auto finds one process");
    let mut config = config.with_listening_target(found);
    config.stacks = StackOptions {
        enabled: false,
        ..StackOptions::default()
    };
    sweep_with(name, config, Some(vec![1, 3, 12, 24]), STEP, 24, Some(mock))
}

/// The finding's kind, its place's held threads (whole) and the place's pool.
fn place_words(name: &str, result: &SweepResult) -> (Kind, f64, String) {
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    let place = diagnosis
        .place
        .as_ref()
        .unwrap_or_else(|| panic!("{name}: no place: {:#?}", diagnosis.evidence));
    println!(
        "{name}: {} {:?}; {}",
        diagnosis.kind(),
        diagnosis.limit(),
        diagnosis.attribution.as_deref().unwrap_or("no place")
    );
    println!("{name}: {place:?}");
    (
        diagnosis.kind(),
        place.held.unwrap_or_default().round(),
        place.pool.clone().unwrap_or_default(),
    )
}

#[test]
fn a_thread_pool_behind_socat_is_found_as_without_it_and_socat_is_named() {
    assert!(
        toolchain_present("socat", "-V"),
        "socat is needed: apt-get install socat (.ci/run does)"
    );
    assert!(toolchain_present("python3", "--version"));
    let _turn = beside_two_others();
    // 200 ms calls: /proc counts a worker held only while it sits in the socket read (see
    // place.rs's py-threadpool test); the forwarder's hop adds nothing to that.
    let mock = mock_with_delay_of(Duration::from_millis(200));
    let target = launch_py_threadpool(&mock);
    let direct = sweep_auto("direct", &target.url(), &mock);
    assert_eq!(direct.context.forwarder, None, "python3 forwards nothing");

    let to = format!(
        "TCP:127.0.0.1:{}",
        target
            .url()
            .trim_end_matches('/')
            .rsplit(':')
            .next()
            .unwrap()
    );
    let (socat, port) = Server::spawn_on_free_port("socat", Duration::from_secs(10), |port| {
        let mut command = Command::new("socat");
        command
            .arg(format!(
                "TCP-LISTEN:{port},fork,reuseaddr,bind=127.0.0.1,backlog=512"
            ))
            .arg(&to);
        command
    });
    let behind = sweep_auto("behind socat", &format!("http://127.0.0.1:{port}/"), &mock);
    drop(socat);
    drop(target);

    let forwarder = behind.context.forwarder.as_ref().expect("socat followed");
    assert_eq!(forwarder.name, "socat");
    assert_eq!(
        forwarder.to_port,
        target_port(&direct),
        "socat forwards to the target's port"
    );
    let (kind, size, pool) = place_words("direct", &direct);
    assert_eq!(
        (kind, size),
        (Kind::BlockingPool, 6.0),
        "the truth: 6 workers"
    );
    assert_finding("behind socat", &behind, Kind::BlockingPool, 6.0);
    assert_eq!(
        place_words("behind socat", &behind),
        (kind, size, pool),
        "the same kind, size and place as without the forwarder"
    );
    let evidence = &behind.diagnosis.as_ref().expect("a diagnosis").evidence;
    assert!(
        evidence
            .iter()
            .any(|e| e.contains("socat") && e.contains("forwarder")),
        "the forwarder named: {evidence:#?}"
    );
}

/// docker's bridge, made by the test (issue 23): py-threadpool (6 workers) inside a network
/// namespace of its own at 10.201.N.2, calling the mock on this side of a veth pair (200 ms),
/// and socat on this side's loopback passing each connection to it, as docker-proxy passes a
/// published port to a container. The forwarder's connections lead to an address no process
/// here listens on; the namespace whose table holds them swapped is the container's
/// (`chokepoint_observe::forward::netns`, built before this test). The finding must be the one
/// the first test gets directly: a pool of 6, placed in the Python workers.
#[test]
fn a_thread_pool_in_another_network_namespace_behind_socat_on_this_side_is_followed_across() {
    assert!(toolchain_present("socat", "-V"), "socat is needed");
    assert!(toolchain_present("ip", "-V"), "ip (iproute2) is needed");
    assert!(toolchain_present("python3", "--version"));
    let _turn = beside_two_others();
    let netns = Netns::new();
    let mock = chokepoint_mock::start(
        format!("{}:0", netns.here()).parse().expect("an address"),
        chokepoint_mock::MockConfig {
            fixed_delay: Some(Duration::from_millis(200)),
            ..Default::default()
        },
    )
    .expect("the mock starts on this side of the veth");
    let mut command = netns.command("python3");
    command
        .arg(targets_dir().join("py-threadpool/server.py"))
        .args(["--host", &netns.there(), "--port", "0"])
        .args(["--downstream", &mock.url()]);
    let (target, target_port) = launch("py-threadpool-in-netns", &mut command);
    let inside = format!("{}:{target_port}", netns.there());
    let (socat, port) = Server::spawn_on_free_port("socat", Duration::from_secs(10), |port| {
        let mut command = Command::new("socat");
        command
            .arg(format!(
                "TCP-LISTEN:{port},fork,reuseaddr,bind=127.0.0.1,backlog=512"
            ))
            .arg(format!("TCP:{inside}"));
        command
    });
    let behind = sweep_auto("across", &format!("http://127.0.0.1:{port}/"), &mock);
    let target_pid = target.pid();
    drop((socat, target));
    drop(netns);

    let forwarder = behind.context.forwarder.as_ref().expect("socat followed");
    assert_eq!(forwarder.name, "socat");
    assert_eq!(forwarder.to_address.as_deref(), Some(inside.as_str()));
    assert_eq!(forwarder.served_name, "python3");
    assert_eq!(forwarder.served_pids, vec![target_pid]);
    assert_finding("across", &behind, Kind::BlockingPool, 6.0);
    let (kind, held, pool) = place_words("across", &behind);
    assert_eq!((kind, held), (Kind::BlockingPool, 6.0), "placed: {pool}");
    let evidence = &behind.diagnosis.as_ref().expect("a diagnosis").evidence;
    assert!(
        evidence
            .iter()
            .any(|e| e.contains("socat") && e.contains("in another network namespace")),
        "the forwarder and its hop named: {evidence:#?}"
    );
}

/// The port the direct sweep's URL named.
fn target_port(result: &SweepResult) -> Option<u16> {
    result
        .target
        .trim_end_matches('/')
        .rsplit(':')
        .next()?
        .parse()
        .ok()
}

/// nginx in front of gunicorn on a unix socket (issue 23), as gunicorn's deployment guide sets
/// it up (`tests/targets/nginx-unix-proxy`): 3 sync workers behind a 200 ms mock, so a limit of
/// 3. `--pid auto` finds nginx; the sweep follows it over the unix socket (the kernel's
/// sock_diag names the other end: `chokepoint_observe::unix_diag`) to gunicorn, which comes
/// first among the roots, and the finding must be gunicorn's workers with `--workers`, nginx
/// named. Built after the unix-socket rule. Needs nginx (Debian's nginx-light) and gunicorn.
#[test]
fn gunicorn_behind_nginx_on_a_unix_socket_is_followed_and_placed_in_its_workers() {
    assert!(
        toolchain_present("nginx", "-v"),
        "nginx is needed: apt-get install nginx-light (.ci/run does)"
    );
    assert!(
        toolchain_present("gunicorn", "--version"),
        "gunicorn is needed: pip install gunicorn (.ci/run does)"
    );
    let _turn = beside_one_other();
    let dir = std::env::temp_dir().join(format!("cp-nginx-unix-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    // A sampled worker is caught in the call for the call's share of its time (see the
    // catalogue's gunicorn test): 200 ms calls.
    let mock = mock_with_delay_of(Duration::from_millis(200));
    let socket = dir.join("gunicorn.sock");
    let mut gunicorn = Server::spawn(
        "gunicorn",
        Command::new("gunicorn")
            .args(["--workers", "3", "--bind"])
            .arg(format!("unix:{}", socket.display()))
            .arg("app:app")
            .env("DOWNSTREAM", mock.url())
            .current_dir(targets_dir().join("py-gunicorn"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null()),
    );
    gunicorn
        .wait_unix_listening(&socket, Duration::from_secs(30))
        .unwrap_or_else(|exit| panic!("gunicorn exited before it listened: {}", exit.0));
    let template = std::fs::read_to_string(targets_dir().join("nginx-unix-proxy/nginx.conf"))
        .expect("the nginx template");
    let (nginx, port) = Server::spawn_on_free_port("nginx", Duration::from_secs(10), |port| {
        let conf = dir.join(format!("nginx-{port}.conf"));
        let text = template
            .replace("{DIR}", &dir.display().to_string())
            .replace("{PORT}", &port.to_string())
            .replace("{SOCKET}", &socket.display().to_string());
        std::fs::write(&conf, text).expect("nginx.conf written");
        let mut command = Command::new("nginx");
        command
            .arg("-c")
            .arg(&conf)
            .arg("-p")
            .arg(format!("{}/", dir.display()))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        command
    });
    let config = SweepConfig::new(&format!("http://127.0.0.1:{port}/")).expect("a valid URL");
    let found = config.listening_target();
    assert_eq!(found, vec![nginx.pid()], "--pid auto finds nginx");
    let config = config.with_listening_target(found);
    let result = sweep_with(
        "nginx-gunicorn",
        config,
        Some(vec![1, 3, 6, 12]),
        STEP,
        12,
        Some(&mock),
    );
    let gunicorn_pid = gunicorn.pid();
    drop(nginx);
    drop(gunicorn);
    let _ = std::fs::remove_dir_all(&dir);

    let forwarder = result.context.forwarder.as_ref().expect("nginx followed");
    assert_eq!(forwarder.name, "nginx");
    assert_eq!(
        (forwarder.to_port, forwarder.to_path.as_deref()),
        (None, socket.to_str())
    );
    assert_eq!(forwarder.served_name, "gunicorn");
    assert_eq!(forwarder.served_pids, vec![gunicorn_pid]);
    assert_finding("nginx-gunicorn", &result, Kind::BlockingPool, 3.0);
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    let place = diagnosis
        .place
        .as_ref()
        .unwrap_or_else(|| panic!("no place: {:#?}", diagnosis.evidence));
    println!("nginx-gunicorn: {place:?}");
    assert_eq!(place.pool.as_deref(), Some("gunicorn"));
    let setting = place
        .setting
        .as_ref()
        .expect("the catalogue names gunicorn's setting");
    assert!(setting.setting.starts_with("--workers N"), "{setting:?}");
    assert!(
        diagnosis
            .evidence
            .iter()
            .any(|e| e.contains("nginx") && e.contains("the unix socket")),
        "the forwarder and its hop named: {:#?}",
        diagnosis.evidence
    );
}
