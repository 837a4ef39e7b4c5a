//! The mock over HTTP/2, against real peers: curl (h2c with prior knowledge on the plain port,
//! h2 by ALPN on the HTTPS port), nghttp (nghttp2-client) and a Go client on one connection
//! (golang.org/x/net/http2). HTTP/1.1 on the same port in the same tests; the stubs, the admin
//! API, the journal, faults and the stream cap (`--max-concurrent-streams`) over h2. Each tool
//! must be there (scripts/install-test-deps.sh installs them): a missing one fails the test.
use super::client::{self, start_with};
use chokepoint_mock::{MockConfig, MockTls, RunningMock};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

const CAP: u32 = 5;
const STREAMS: usize = 20;
const DELAY: Duration = Duration::from_millis(200);

fn run(tool: &str, args: &[&str]) -> Output {
    Command::new(tool)
        .args(args)
        .output()
        .unwrap_or_else(|err| {
            panic!("{tool} cannot run ({err}): install it (scripts/install-test-deps.sh)")
        })
}

/// One request with curl: (status, HTTP version as curl names it, body).
fn curl(mode: &str, url: &str, extra: &[&str]) -> (u16, String, String) {
    let mut args = vec![
        "-sS",
        mode,
        "--max-time",
        "20",
        "-w",
        "\n%{http_code} %{http_version}",
    ];
    args.extend_from_slice(extra);
    args.push(url);
    let out = run("curl", &args);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, tail) = text.rsplit_once('\n').expect("curl's -w line");
    let (code, version) = tail.split_once(' ').expect("code and version");
    (
        code.parse().unwrap_or(0),
        version.to_string(),
        body.to_string(),
    )
}

/// A mock, with an HTTPS listener when `https` (its certificate's PEM file beside it).
fn start_mock(config: MockConfig, https: bool) -> (RunningMock, PathBuf) {
    static SERIAL: AtomicU32 = AtomicU32::new(0);
    let cert = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "h2-mock-{}-{}.pem",
        std::process::id(),
        SERIAL.fetch_add(1, Ordering::Relaxed)
    ));
    let tls = https.then(|| {
        let tls = MockTls::self_signed(&cert).expect("a certificate");
        ("127.0.0.1:0".parse().unwrap(), tls)
    });
    let mock = chokepoint_mock::start_with_https("127.0.0.1:0".parse().unwrap(), tls, config)
        .expect("mock starts");
    (mock, cert)
}

#[test]
fn h2c_and_http1_share_the_plain_port_with_stubs_admin_and_journal() {
    let mock = chokepoint_mock::start(
        "127.0.0.1:0".parse().unwrap(),
        MockConfig {
            mappings: chokepoint_mock::parse_mappings(
                r#"{"request": {"method": "GET", "url": "/hello", "headers": {"Host": {"contains": "127.0.0.1"}}},
                    "response": {"status": 201, "body": "hi", "headers": {"X-Stub": "yes"}}}"#,
                "test",
            )
            .unwrap(),
            journal: 10,
            ..MockConfig::default()
        },
    )
    .expect("mock starts");
    let url = mock.url();
    // The stub matches on Host: over h2 it comes from :authority.
    let h2 = curl("--http2-prior-knowledge", &format!("{url}/hello"), &["-i"]);
    assert_eq!((h2.0, h2.1.as_str()), (201, "2"), "{h2:?}");
    assert!(
        h2.2.contains("x-stub: yes") && h2.2.ends_with("hi"),
        "{h2:?}"
    );
    let h1 = curl("--http1.1", &format!("{url}/hello"), &[]);
    assert_eq!((h1.0, h1.1.as_str(), h1.2.as_str()), (201, "1.1", "hi"));
    // The admin API over h2: add a stub, then it answers (over h2).
    let added = curl(
        "--http2-prior-knowledge",
        &format!("{url}/__admin/mappings"),
        &[
            "-X",
            "POST",
            "--data-binary",
            r#"{"request": {"url": "/added"}, "response": {"status": 202}}"#,
        ],
    );
    assert_eq!((added.0, added.1.as_str()), (201, "2"), "{added:?}");
    let answer = curl("--http2-prior-knowledge", &format!("{url}/added"), &[]);
    assert_eq!(answer.0, 202);
    // The journal holds the three stub requests (admin requests are never journaled).
    let journal = curl(
        "--http2-prior-knowledge",
        &format!("{url}/__admin/requests"),
        &[],
    );
    let journal: serde_json::Value = serde_json::from_str(&journal.2).expect("journal JSON");
    assert_eq!(journal["meta"]["total"], 3, "{journal}");
    let stats = client::stats(mock.addr());
    assert_eq!(stats.requests, 3);
    // 4 h2c connections (each curl), counted whole, admin streams or not; 1 HTTP/1.1.
    assert_eq!(stats.h2_connections_accepted, 4, "{stats:?}");
    assert_eq!(stats.connections_accepted, 5, "{stats:?}");
    assert_eq!(stats.max_streams_per_connection, 1);
}

#[test]
fn h2_by_alpn_on_the_https_port_and_http1_beside_it() {
    let (mock, cert) = start_mock(MockConfig::default(), true);
    let https = mock.https_url().unwrap();
    let cacert = cert.to_str().unwrap();
    let h2 = curl("--http2", &format!("{https}/a"), &["--cacert", cacert]);
    assert_eq!(
        (h2.0, h2.1.as_str(), h2.2.as_str()),
        (200, "2", "OK"),
        "{h2:?}"
    );
    let h1 = curl("--http1.1", &format!("{https}/b"), &["--cacert", cacert]);
    assert_eq!(
        (h1.0, h1.1.as_str(), h1.2.as_str()),
        (200, "1.1", "OK"),
        "{h1:?}"
    );
    let stats = client::stats(mock.addr());
    assert_eq!(
        (stats.requests, stats.h2_connections_accepted),
        (2, 1),
        "{stats:?}"
    );
}

/// Builds crates/mock/tests/fixtures/go-h2-streams (its module from the cache that
/// install-test-deps.sh fills: no network here).
fn go_client() -> PathBuf {
    let binary = Path::new(env!("CARGO_TARGET_TMPDIR")).join("go-h2-streams");
    let out = Command::new("go")
        .args(["build", "-o"])
        .arg(&binary)
        .arg(".")
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/go-h2-streams"))
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", "-mod=mod")
        .env("GOPROXY", "off")
        .output()
        .expect("go is installed (scripts/install-test-deps.sh)");
    assert!(
        out.status.success(),
        "go build of go-h2-streams failed (run scripts/install-test-deps.sh): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    binary
}

#[test]
fn a_go_client_on_one_connection_queues_behind_the_stream_cap() {
    let go = go_client();
    let (mock, cert) = start_mock(
        MockConfig {
            fixed_delay: Some(DELAY),
            max_concurrent_streams: Some(CAP),
            ..MockConfig::default()
        },
        true,
    );
    for url in [mock.url(), mock.https_url().unwrap()] {
        let out = Command::new(&go)
            .args(["-url", &url, "-streams", &STREAMS.to_string()])
            .args(["-cacert", cert.to_str().unwrap()])
            .output()
            .expect("the Go client runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
        // The client reset the window after its warm-up, on the same connection.
        let stats = mock.stats();
        assert_eq!(report["ok"], STREAMS, "{report}");
        assert_eq!(report["protocols"], serde_json::json!(["HTTP/2.0"]));
        // Truth by hand: 20 streams × 200 ms / 5 at once = 4 waves ≈ 800 ms; never less.
        let elapsed = report["elapsed_ms"].as_u64().unwrap();
        assert!(elapsed >= 4 * DELAY.as_millis() as u64 - 5, "{report}");
        assert_eq!(stats.requests, STREAMS as u64, "{stats:?}");
        assert_eq!(stats.max_in_flight, u64::from(CAP), "{stats:?}");
        assert_eq!(stats.max_streams_per_connection, u64::from(CAP));
        assert_eq!(stats.max_connections_open, 1, "one connection: {stats:?}");
        assert_eq!(stats.config.max_concurrent_streams, Some(u64::from(CAP)));
    }
    // HTTP/1.1 on the same port, in the same run.
    let h1 = client::get(mock.addr(), "/plain");
    assert_eq!((h1.status, h1.text().as_str()), (200, "OK"));
}

/// nghttp's frames (-v), counted.
fn nghttp(args: &[&str]) -> String {
    let out = run("nghttp", args);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn nghttp_is_refused_past_the_cap_unless_it_waits_for_the_settings() {
    let (mock, _) = start_mock(
        MockConfig {
            fixed_delay: Some(DELAY),
            max_concurrent_streams: Some(CAP),
            ..MockConfig::default()
        },
        false,
    );
    let url = format!("{}/work", mock.url());
    let streams = STREAMS.to_string();
    // nghttp sends all 20 HEADERS with its preface, before it reads the mock's SETTINGS: the
    // mock refuses the 15 past the cap (REFUSED_STREAM) and answers 5.
    let frames = nghttp(&["-v", "-n", "-m", &streams, &url]);
    let refused = frames.matches("error_code=REFUSED_STREAM").count();
    let answered = frames.matches(":status: 200").count();
    assert_eq!(
        (answered, refused),
        (CAP as usize, STREAMS - CAP as usize),
        "{frames}"
    );
    mock.reset_stats();
    // -M 1: it assumes 1 stream until the SETTINGS say 5, then keeps 5 open: all 20 answered,
    // 5 at a time, on one connection.
    let frames = nghttp(&["-v", "-n", "-M", "1", "-m", &streams, &url]);
    assert_eq!(frames.matches(":status: 200").count(), STREAMS, "{frames}");
    assert!(
        frames.contains("SETTINGS_MAX_CONCURRENT_STREAMS(0x03):5"),
        "{frames}"
    );
    let stats = mock.stats();
    assert_eq!(
        (stats.requests, stats.max_in_flight),
        (STREAMS as u64, 5),
        "{stats:?}"
    );
    assert_eq!(
        (
            stats.h2_connections_accepted,
            stats.max_streams_per_connection
        ),
        (1, 5)
    );
    let metrics = client::get(mock.addr(), "/metrics").text();
    for line in [
        "chokepoint_mock_max_streams_per_connection 5",
        "chokepoint_mock_h2_connections_accepted_total 1",
        "chokepoint_mock_max_concurrent_streams 5",
    ] {
        assert!(
            metrics.contains(&format!("\n{line}\n")),
            "{line}: {metrics}"
        );
    }
}

#[test]
fn a_fault_over_h2_resets_its_own_stream_and_the_others_go_on() {
    let mock = start_with(
        r#"{"mappings": [
            {"request": {"url": "/boom"}, "response": {"fault": "CONNECTION_RESET_BY_PEER"}},
            {"request": {"url": "/ok"}, "response": {"status": 200, "body": "fine", "fixedDelayMilliseconds": 100}}
        ]}"#,
    );
    let base = mock.url();
    // One connection, both streams at once.
    let frames = nghttp(&["-v", &format!("{base}/ok"), &format!("{base}/boom")]);
    assert_eq!(
        frames.matches("error_code=INTERNAL_ERROR").count(),
        1,
        "{frames}"
    );
    assert_eq!(frames.matches(":status: 200").count(), 1, "{frames}");
    let stats = mock.stats();
    assert_eq!(
        (
            stats.requests,
            stats.in_flight,
            stats.h2_connections_accepted
        ),
        (2, 0, 1)
    );
}

#[derive(serde::Deserialize)]
struct Case {
    method: String,
    path: String,
    #[serde(default)]
    headers: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    body_matches: Option<String>,
}

/// The differential fixture folder with `@DOWNSTREAM@` replaced by `downstream`.
fn differential_copy(downstream: SocketAddr) -> PathBuf {
    fn copy(from: &Path, to: &Path, downstream: &str) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy(&entry.path(), &target, downstream);
            } else {
                let bytes = std::fs::read(entry.path()).unwrap();
                let bytes = match String::from_utf8(bytes) {
                    Ok(text) => text.replace("@DOWNSTREAM@", downstream).into_bytes(),
                    Err(err) => err.into_bytes(),
                };
                std::fs::write(target, bytes).unwrap();
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/differential");
    let to = Path::new(env!("CARGO_TARGET_TMPDIR")).join("h2-differential");
    let _ = std::fs::remove_dir_all(&to);
    copy(&root, &to, &downstream.to_string());
    to
}

#[test]
fn a_wiremock_folder_answers_alike_over_h2_and_http1() {
    let downstream = chokepoint_mock::start("127.0.0.1:0".parse().unwrap(), MockConfig::default())
        .expect("downstream starts");
    let root = differential_copy(downstream.addr());
    let cases: Vec<Case> =
        serde_json::from_str(&std::fs::read_to_string(root.join("cases.json")).unwrap()).unwrap();
    let mock = chokepoint_mock::start(
        "127.0.0.1:0".parse().unwrap(),
        MockConfig {
            mappings: chokepoint_mock::load_mappings(&root).expect("the fixtures load"),
            files_root: Some(root.join("__files")),
            ..MockConfig::default()
        },
    )
    .expect("mock starts");
    let pass = |mode: &str| -> Vec<(u16, String)> {
        let reset = client::request(mock.addr(), "POST", "/__admin/scenarios/reset", &[], "");
        assert_eq!(reset.status, 200);
        cases
            .iter()
            .map(|case| {
                let mut extra: Vec<String> = vec!["-X".into(), case.method.clone()];
                for (name, value) in &case.headers {
                    extra.extend(["-H".into(), format!("{name}: {value}")]);
                }
                if let Some(body) = &case.body {
                    extra.extend(["--data-binary".into(), body.clone()]);
                }
                let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
                let (status, version, body) =
                    curl(mode, &format!("{}{}", mock.url(), case.path), &extra);
                let expected = if mode == "--http1.1" { "1.1" } else { "2" };
                assert_eq!(version, expected, "{} {}", case.method, case.path);
                (status, body)
            })
            .collect()
    };
    let over_h1 = pass("--http1.1");
    let over_h2 = pass("--http2-prior-knowledge");
    let mut differ = Vec::new();
    for ((case, h1), h2) in cases.iter().zip(&over_h1).zip(&over_h2) {
        let same = match &case.body_matches {
            // A body that changes on every request (now, random): both match the same shape.
            Some(shape) => {
                let shape = regex::Regex::new(&format!("^(?:{shape})$")).unwrap();
                h1.0 == h2.0 && shape.is_match(&h1.1) && shape.is_match(&h2.1)
            }
            None => h1 == h2,
        };
        if !same {
            differ.push(format!(
                "{} {}: h1 {h1:?} h2 {h2:?}",
                case.method, case.path
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} differ:\n{}",
        differ.len(),
        cases.len(),
        differ.join("\n")
    );
}

/// A gRPC client in Python (grpcio) on one channel, calling methods without generated code:
/// requests and replies are raw protobuf bytes. Prints one JSON line.
const GRPC_CLIENT: &str = r#"
import grpc, json, sys, time
channel = grpc.insecure_channel(sys.argv[1])
say = channel.unary_unary("/demo.Greeter/SayHello")
fail = channel.unary_unary("/demo.Greeter/Fail")
out = {}
reply = say(b"\x0a\x03bob", timeout=20)
out["reply_hex"] = reply.hex()
try:
    fail(b"", timeout=20)
    out["fail"] = "no error"
except grpc.RpcError as err:
    out["fail"] = [err.code().name, err.details()]
# The window starts after the warm-up calls, on the same channel (one connection).
urllib_reset = __import__("urllib.request").request.urlopen(sys.argv[2] + "/__chokepoint/reset", data=b"")
started = time.monotonic()
calls = [say.future(b"\x0a\x03bob", timeout=20) for _ in range(int(sys.argv[3]))]
out["ok"] = sum(1 for call in calls if call.result() == reply)
out["elapsed_ms"] = (time.monotonic() - started) * 1000
print(json.dumps(out))
"#;

#[test]
fn grpc_stubs_answer_a_python_grpc_channel_queued_behind_the_stream_cap() {
    let mappings = chokepoint_mock::parse_mappings(
        r#"{"mappings": [
            {"request": {"method": "POST", "url": "/demo.Greeter/SayHello"},
             "response": {"status": 200, "base64Body": "CgJoaQ==", "fixedDelayMilliseconds": 200,
                          "headers": {"Content-Type": "application/grpc"}}},
            {"request": {"method": "POST", "url": "/demo.Greeter/Fail"},
             "response": {"status": 200, "headers": {"Content-Type": "application/grpc",
                          "grpc-status": "5", "grpc-message": "no such greeting"}}}
        ]}"#,
        "test",
    )
    .unwrap();
    let (mock, _) = start_mock(
        MockConfig {
            mappings,
            max_concurrent_streams: Some(CAP),
            ..MockConfig::default()
        },
        false,
    );
    let out = run(
        "python3",
        &[
            "-c",
            GRPC_CLIENT,
            &mock.addr().to_string(),
            &mock.url(),
            &STREAMS.to_string(),
        ],
    );
    assert!(
        out.status.success(),
        "grpcio (pip install grpcio, scripts/install-test-deps.sh): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    // HelloReply{message: "hi"}, as the stub's base64Body gave it.
    assert_eq!(report["reply_hex"], "0a026869", "{report}");
    assert_eq!(
        report["fail"],
        serde_json::json!(["NOT_FOUND", "no such greeting"])
    );
    assert_eq!(report["ok"], STREAMS, "{report}");
    // Truth by hand: 20 calls × 200 ms / 5 streams = 4 waves ≈ 800 ms; never less.
    assert!(report["elapsed_ms"].as_f64().unwrap() >= 795.0, "{report}");
    let stats = mock.stats();
    assert_eq!(stats.requests, STREAMS as u64, "{stats:?}");
    assert_eq!(stats.max_in_flight, u64::from(CAP), "{stats:?}");
    assert_eq!(
        stats.max_streams_per_connection,
        u64::from(CAP),
        "{stats:?}"
    );
    // The channel's one connection was opened before the window began; no other since.
    assert_eq!(stats.connections_accepted, 0, "{stats:?}");
}

#[test]
fn the_keepalive_timeout_closes_an_idle_h2_connection_with_goaway() {
    use std::io::{Read, Write};
    let keepalive = Duration::from_millis(300);
    let mock = chokepoint_mock::start(
        "127.0.0.1:0".parse().unwrap(),
        MockConfig {
            keepalive_timeout: Some(keepalive),
            ..MockConfig::default()
        },
    )
    .expect("mock starts");
    let mut stream = client::connect(mock.addr());
    let started = std::time::Instant::now();
    // The preface and an empty SETTINGS frame (length 0, type 4, flags 0, stream 0); no stream.
    stream
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        .unwrap();
    stream.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]).unwrap();
    // Frames as they come, until a GOAWAY (hyper's graceful close then waits for the client's
    // PING ack before it closes the socket, which this client does not send).
    let (mut bytes, mut frame_types, mut at) = (Vec::new(), Vec::new(), 0);
    let mut chunk = [0u8; 4096];
    while !frame_types.contains(&7) {
        let n = stream
            .read(&mut chunk)
            .expect("frames before the read timeout");
        assert!(n > 0, "closed without GOAWAY: {frame_types:?}");
        bytes.extend_from_slice(&chunk[..n]);
        while at + 9 <= bytes.len() {
            let length = u32::from_be_bytes([0, bytes[at], bytes[at + 1], bytes[at + 2]]) as usize;
            if at + 9 + length > bytes.len() {
                break;
            }
            frame_types.push(bytes[at + 3]);
            at += 9 + length;
        }
    }
    let goaway = started.elapsed();
    // SETTINGS (4) first, GOAWAY (7) once idle for the keep-alive timeout.
    assert_eq!(frame_types.first(), Some(&4), "{frame_types:?}");
    assert!(goaway >= keepalive, "GOAWAY after {goaway:?}");
    assert_eq!(mock.stats().h2_connections_accepted, 1);
}
