//! The stream cap (`--max-concurrent-streams`) against clients that keep ONE HTTP/2 connection:
//! a Go client (golang.org/x/net/http2), nghttp (nghttp2-client) and a Python gRPC channel
//! (grpcio) calling the mock's gRPC stubs. Truth by hand: 20 calls of 200 ms, 5 streams at once,
//! 4 waves ≈ 800 ms, the mock sees 5 in flight on 1 connection. Each tool must be there
//! (scripts/install-test-deps.sh installs them): a missing one fails the test.
use super::client;
use super::h2::{nghttp, run, start_mock, CAP, DELAY, STREAMS};
use chokepoint_mock::MockConfig;
use std::path::{Path, PathBuf};
use std::process::Command;

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
