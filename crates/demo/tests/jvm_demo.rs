//! The JVM twin, `examples/jvm/BlockingDemo.java`, against the mock, driven by the load engine:
//! the same checks as the Rust service's. Skipped, with a note, where `java` is not on the PATH;
//! failed instead under CI (`CI` set, as `.ci/run` sets it), which installs Java.
mod common;

use chokepoint_testkit::Server;
use common::*;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The running JVM; its process group stopped when dropped, whatever the test did.
struct Jvm {
    _server: Server,
    addr: SocketAddr,
}

impl Jvm {
    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

fn java_available() -> bool {
    let found = Command::new("java")
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    assert!(
        found || std::env::var_os("CI").is_none(),
        "`java` is not on the PATH: .ci/run installs it; a CI run must not skip the JVM twin's tests"
    );
    if !found {
        eprintln!("NOTE: `java` is not on the PATH: the JVM twin's tests are skipped");
    }
    found
}

/// Starts `java examples/jvm/BlockingDemo.java --port 0 ...` and reads its port from the first
/// line of its stdout.
fn start_jvm(downstream: &str, extra: &[&str]) -> Jvm {
    let source =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/jvm/BlockingDemo.java");
    let mut server = Server::spawn(
        "jvm-twin",
        Command::new("java")
            .arg(&source)
            .args(["--port", "0", "--downstream", downstream])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit()),
    );
    let stdout = server.child_mut().stdout.take().expect("stdout is piped");
    let mut first = String::new();
    let read = BufReader::new(stdout).read_line(&mut first);
    let port = first
        .trim()
        .rsplit(':')
        .next()
        .and_then(|port| port.parse::<u16>().ok());
    let Some(port) = port.filter(|_| read.is_ok()) else {
        panic!("BlockingDemo did not print its port; its first line was {first:?}");
    };
    Jvm {
        _server: server,
        addr: SocketAddr::from(([127, 0, 0, 1], port)),
    }
}

/// The JVM spends a few milliseconds per call outside the downstream read (HttpClient's
/// hand-offs between threads, on a busy machine): a longer delay keeps that small beside it,
/// and a longer run keeps the one-batch uncertainty of the count small too.
const JVM_DELAY: Duration = Duration::from_millis(150);
const JVM_RUN: Duration = Duration::from_secs(4);

fn pools(size: usize) -> Vec<String> {
    ["--actors", "--cpu-pool", "--client-pool", "--dispatcher"]
        .iter()
        .flat_map(|flag| [flag.to_string(), size.to_string()])
        .collect()
}

#[test]
fn jvm_pool_routes_plateau_at_their_pools_and_async_keeps_up() {
    if !java_available() {
        return;
    }
    let _serial = one_at_a_time();
    let mock = delayed_mock(JVM_DELAY);
    let flags = pools(POOL);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let jvm = start_jvm(&mock.url(), &flags);
    let (status, body) = get(jvm.addr, "/");
    assert_eq!(status, 200, "{body}");
    let listing: serde_json::Value = serde_json::from_str(&body).expect("GET / is JSON");
    assert_eq!(listing["routes"][0]["limit"], POOL);

    // The JIT compiles the hot paths (HttpClient, the HTTP server) in the first seconds, taking
    // CPU from everything else on the machine: warm up before measuring anything.
    load(&format!("{}/async", jvm.url()), 20, Duration::from_secs(3));
    let mut failures = Vec::new();
    for route in ["/actors", "/global", "/blocking", "/dispatcher", "/async"] {
        load(
            &format!("{}{route}", jvm.url()),
            2 * POOL as u32,
            Duration::from_secs(1),
        );
        let outcome = if route == "/async" {
            let measured = measure(
                &jvm.url(),
                route,
                &mock,
                // Four times every pool: the JVM's async client needs CPU that a shared
                // two-core machine may not spare for more (the Rust service gets ten times).
                4 * POOL as u32,
                (JVM_DELAY, JVM_RUN),
            );
            std::panic::catch_unwind(|| assert_keeps_up(&measured))
        } else {
            let measured = measure(
                &jvm.url(),
                route,
                &mock,
                2 * POOL as u32,
                (JVM_DELAY, JVM_RUN),
            );
            std::panic::catch_unwind(|| assert_pool_limit(&measured, POOL))
        };
        if let Err(failure) = outcome {
            failures.push(failure);
        }
    }
    drop(jvm);
    if let Some(failure) = failures.into_iter().next() {
        std::panic::resume_unwind(failure);
    }
}

#[test]
fn jvm_threads_are_named_after_their_pools() {
    if !java_available() {
        return;
    }
    let _serial = one_at_a_time();
    let mock = delayed_mock(Duration::from_millis(1));
    let jvm = start_jvm(&mock.url(), &[]);
    let client = chokepoint_demo::blocking_http::BlockingClient::new(
        jvm.addr,
        &jvm.addr.to_string(),
        None,
        Duration::from_secs(30),
    );
    // The worker header is not in the body: read it from a raw exchange.
    for (route, pool) in [
        ("/actors", "actor-pool-"),
        ("/global", "cpu-pool-"),
        ("/blocking", "elastic-pool-"),
        ("/dispatcher", "blocking-dispatcher-"),
    ] {
        let worker = worker_of(jvm.addr, route);
        assert!(
            worker.starts_with(pool),
            "{route} ran on thread {worker:?}, not a {pool}N thread"
        );
    }
    assert_eq!(client.get("/cpu").expect("cpu").status, 200);
    assert_eq!(client.get("/leaky").expect("leaky").status, 200);
    assert_eq!(client.get("/nope").expect("404").status, 404);
}

/// The `X-Chokepoint-Worker` header of one GET.
fn worker_of(addr: SocketAddr, path: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: demo\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("x-chokepoint-worker")
                .then(|| value.trim().to_string())
        })
        .unwrap_or_default()
}

#[test]
fn jvm_fan_out_costs_the_slowest_call_and_the_serial_one_the_sum() {
    if !java_available() {
        return;
    }
    let _serial = one_at_a_time();
    let mock = product_mock(&PRODUCTS);
    let jvm = start_jvm(&mock.url(), &[]);
    let (status, body) = get(jvm.addr, "/recommendations");
    assert_eq!(status, 200, "{body}");
    let listed: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(listed["recommendations"][3]["id"], "PROD-004", "{body}");
    load(
        &format!("{}/recommendations", jvm.url()),
        1,
        Duration::from_secs(1),
    );
    load(
        &format!("{}/recommendations-serial", jvm.url()),
        1,
        Duration::from_secs(1),
    );
    let parallel = load(&format!("{}/recommendations", jvm.url()), 1, RUN);
    let serial = load(
        &format!("{}/recommendations-serial", jvm.url()),
        1,
        Duration::from_secs(3),
    );
    assert_fan_out(&parallel, &serial);
}

#[test]
fn jvm_refuses_bad_flags_with_one_line() {
    if !java_available() {
        return;
    }
    let source =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/jvm/BlockingDemo.java");
    let output = Command::new("java")
        .arg(&source)
        .args(["--actors", "0"])
        .output()
        .expect("java runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--actors"), "{stderr}");
}
