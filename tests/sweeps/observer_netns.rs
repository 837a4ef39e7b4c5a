//! The observer beside the target, across a network namespace (issue 23): a "second host" made
//! by the test (`ip netns add`, a veth pair, 10.201.N.1 on this side and 10.201.N.2 inside),
//! the pool-limited py-threadpool target and `chokepoint observe --token-file` inside it, the
//! mock on this side, and `chokepoint sweep --observer` from here. The finding must be the one a
//! local sweep of the same target gives: kind, limit and place. Needs root (CI runs as root) and
//! `ip` (iproute2): without them the test fails under `CI=1`.
use crate::common::netns::{launch, Netns};
use crate::common::*;
use chokepoint_experiment::SweepConfig;
use chokepoint_mock::MockConfig;
use chokepoint_result::{Kind, PlaceKind, PlaceSource, SweepResult};
use chokepoint_testkit::Server;
use std::path::Path;
use std::process::{Command, Stdio};

const TOKEN: &str = "0b5e2c7d9f1a3e4b6c8d0f2a4b6c8d0e";

const CLIENTS: [u32; 5] = [1, 3, 6, 12, 24];

fn sweep_through_observer(netns: &Netns, dir: &Path) -> SweepResult {
    let mock = chokepoint_mock::start(
        format!("{}:0", netns.here()).parse().expect("an address"),
        MockConfig {
            fixed_delay: Some(DOWNSTREAM_DELAY),
            ..Default::default()
        },
    )
    .expect("the mock starts on this side of the veth");
    let (_target, target_port) = launch(
        "py-threadpool-in-netns",
        netns
            .command("python3")
            .arg(targets_dir().join("py-threadpool/server.py"))
            .args([
                "--host",
                &netns.there(),
                "--port",
                "0",
                "--downstream",
                &mock.url(),
            ]),
    );
    let token_file = dir.join("token");
    std::fs::write(&token_file, TOKEN).expect("the token file");
    let (_observer, observer_port) = launch(
        "observer-in-netns",
        netns
            .command(env!("CARGO_BIN_EXE_chokepoint"))
            .args(["observe", "--listen", &format!("{}:0", netns.there())])
            .arg("--token-file")
            .arg(&token_file),
    );
    let json = dir.join("result.json");
    let clients = CLIENTS.map(|c| c.to_string()).join(",");
    let output = Command::new(env!("CARGO_BIN_EXE_chokepoint"))
        .args(["sweep", &format!("http://{}:{target_port}/", netns.there())])
        .args(["--mock", &mock.url()])
        .args([
            "--observer",
            &format!("http://{}:{observer_port}", netns.there()),
        ])
        .arg("--observer-token-file")
        .arg(&token_file)
        .args(["-c", &clients, "--step", "2s", "--warmup", "0", "--json"])
        .arg(&json)
        .output()
        .expect("the sweep runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{}\n{stderr}", String::from_utf8_lossy(&output.stdout));
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("through the observer at http://10.201."),
        "{stderr}"
    );
    let text = std::fs::read_to_string(&json).expect("the sweep's --json");
    serde_json::from_str(&text).expect("a sweep result")
}

#[test]
fn a_sweep_through_the_observer_in_another_network_namespace_finds_what_a_local_one_does() {
    if !toolchain_present("ip", "-V") || !toolchain_present("python3", "--version") {
        return;
    }
    let _turn = beside_one_other();
    let dir = std::env::temp_dir().join(format!("cp-observer-netns-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let remote = {
        let netns = Netns::new();
        sweep_through_observer(&netns, &dir)
    };
    let _ = std::fs::remove_dir_all(&dir);

    let mock = mock_with_delay();
    let target = launch_py_threadpool(&mock);
    let config = SweepConfig::new(&target.url())
        .expect("a URL")
        .with_target_pid(target.pid());
    let most = CLIENTS[CLIENTS.len() - 1];
    let local = sweep_with(
        "py-threadpool-local",
        config,
        Some(CLIENTS.to_vec()),
        STEP,
        most,
        Some(&mock),
    );

    assert_eq!(local.context.observer, None);
    let observer = remote
        .context
        .observer
        .as_deref()
        .expect("context.observer");
    assert!(observer.starts_with("http://10.201."), "{observer}");
    assert!(remote.context.target_observed);
    for (name, result) in [("local", &local), ("through the observer", &remote)] {
        assert_finding(name, result, Kind::BlockingPool, 6.0);
        let notes: Vec<_> = result
            .steps
            .iter()
            .flat_map(|s| &s.observation_notes)
            .collect();
        assert!(notes.is_empty(), "{name}: {notes:?}");
        assert!(
            result
                .steps
                .iter()
                .all(|s| !s.observed_pids.is_empty() && s.target_cpu_pct.is_some()),
            "{name}: every step saw the target"
        );
    }
    // The same place: a thread pool of the target holding the 6 calls. Its name may come from
    // py-spy's threads (`worker`) or from /proc's (`python3`, CPython names no OS thread): in
    // one full-suite run of 4 the local sweep's py-spy dumps did not place it and /proc did,
    // while the observer's did. Which tool named it is not the finding.
    let place = |result: &SweepResult| {
        let place = result
            .diagnosis
            .as_ref()
            .and_then(|d| d.place.clone())
            .expect("a place");
        println!("{place:?}");
        (place.kind, place.held.map(f64::round))
    };
    assert_eq!(
        place(&remote),
        place(&local),
        "the same place, local and through the observer"
    );
}

/// The port socat listens on inside the namespace (a fresh one: nothing else holds a port).
const FRONT_PORT: u16 = 8080;

/// Behind a forwarder, through the observer (issue 23): socat inside the namespace on
/// 10.201.N.2:8080 passes each connection to go-semaphore (a semaphore of 12 around the
/// downstream call, `net/http/pprof` on) on the namespace's own loopback, as `docker run -p`
/// puts docker-proxy in front of a container. The observer there finds socat on the sweep's
/// port, follows it with its own probe, and reads the Go service first: its pprof dumps place
/// the semaphore as a local sweep does (place.rs's go-semaphore test), and the finding names
/// socat. Built after the observer's forwarder probe.
#[test]
fn a_go_semaphore_behind_socat_in_another_namespace_is_followed_and_placed_by_pprof_through_the_observer(
) {
    if !toolchain_present("ip", "-V")
        || !toolchain_present("socat", "-V")
        || !toolchain_present("go", "version")
    {
        return;
    }
    let _turn = beside_one_other();
    let binary = build_go_target("go-semaphore");
    let dir = std::env::temp_dir().join(format!("cp-observer-forwarder-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let netns = Netns::new();
    let mock = chokepoint_mock::start(
        format!("{}:0", netns.here()).parse().expect("an address"),
        MockConfig {
            fixed_delay: Some(DOWNSTREAM_DELAY),
            ..Default::default()
        },
    )
    .expect("the mock starts on this side of the veth");
    let (target, target_port) = launch(
        "go-semaphore-in-netns",
        netns.command(binary.to_str().expect("a UTF-8 path")).args([
            "-port",
            "0",
            "-downstream",
            &mock.url(),
            "-pprof",
        ]),
    );
    let front = format!("{}:{FRONT_PORT}", netns.there());
    let socat = Server::spawn(
        "socat-in-netns",
        netns
            .command("socat")
            .arg(format!(
                "TCP-LISTEN:{FRONT_PORT},bind={},fork,reuseaddr",
                netns.there()
            ))
            .arg(format!("TCP:127.0.0.1:{target_port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit()),
    );
    wait_for_listener(&front);
    let token_file = dir.join("token");
    std::fs::write(&token_file, TOKEN).expect("the token file");
    let (observer, observer_port) = launch(
        "observer-in-netns",
        netns
            .command(env!("CARGO_BIN_EXE_chokepoint"))
            .args(["observe", "--listen", &format!("{}:0", netns.there())])
            .arg("--token-file")
            .arg(&token_file),
    );
    let json = dir.join("result.json");
    let output = Command::new(env!("CARGO_BIN_EXE_chokepoint"))
        .args(["sweep", &format!("http://{front}/")])
        .args(["--mock", &mock.url()])
        .args([
            "--observer",
            &format!("http://{}:{observer_port}", netns.there()),
        ])
        .arg("--observer-token-file")
        .arg(&token_file)
        .args(["-c", "3,6,24,48", "--step", "2s", "--warmup", "0", "--json"])
        .arg(&json)
        .output()
        .expect("the sweep runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{}\n{stderr}", String::from_utf8_lossy(&output.stdout));
    let target_pid = target.pid();
    drop((observer, socat, target));
    drop(netns);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "a forwarder to port {target_port}, followed to go-semaphore"
        )),
        "{stderr}"
    );
    let text = std::fs::read_to_string(&json).expect("the sweep's --json");
    let _ = std::fs::remove_dir_all(&dir);
    let result: SweepResult = serde_json::from_str(&text).expect("a sweep result");

    let forwarder = result
        .context
        .forwarder
        .as_ref()
        .expect("context.forwarder: socat followed through the observer");
    assert_eq!(forwarder.name, "socat");
    assert_eq!(forwarder.to_port, Some(target_port));
    assert_eq!(forwarder.served_name, "go-semaphore");
    // Both namespaces share one PID namespace here, so the observer's PIDs are this side's.
    assert_eq!(forwarder.served_pids, vec![target_pid]);
    let diagnosis = assert_kind("through the observer", &result, Kind::BlockingPool);
    assert!(
        diagnosis.evidence.iter().any(|line| line.contains("socat")),
        "the finding names the forwarder: {:?}",
        diagnosis.evidence
    );
    let place = diagnosis
        .place
        .clone()
        .unwrap_or_else(|| panic!("no place: {:?}", diagnosis.evidence));
    println!("{place:?}");
    assert_eq!(
        place.source,
        Some(PlaceSource::Stacks(chokepoint_result::StackSource::Pprof)),
        "placed by the Go service's own dumps, read by the observer"
    );
    assert_eq!(place.kind, Some(PlaceKind::Semaphore));
    let held = place.held.unwrap_or(0.0);
    assert!((10.5..=13.5).contains(&held), "{held} of the 12 slots held");
}

/// Waits (10 s at most) until something accepts connections at `address`.
fn wait_for_listener(address: &str) {
    let address: std::net::SocketAddr = address.parse().expect("an address");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::net::TcpStream::connect_timeout(&address, std::time::Duration::from_millis(200))
        .is_err()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "nothing listened on {address} within 10 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
