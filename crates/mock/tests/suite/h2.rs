//! The mock over HTTP/2, against real peers: curl (h2c with prior knowledge on the plain port,
//! h2 by ALPN on the HTTPS port) and nghttp (nghttp2-client). HTTP/1.1 on the same port in the
//! same tests; the stubs, the admin API, the journal, faults, the keep-alive timeout and a
//! WireMock folder over h2 (the stream cap is `stream_cap`'s). Each tool must be there
//! (scripts/install-test-deps.sh installs them): a missing one fails the test.
use super::client::{self, start_with};
use chokepoint_mock::{MockConfig, MockTls, RunningMock};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// The stream cap of the capped mocks.
pub const CAP: u32 = 5;
/// Calls sent at once.
pub const STREAMS: usize = 20;
/// Each call's delay at the mock.
pub const DELAY: Duration = Duration::from_millis(200);

pub fn run(tool: &str, args: &[&str]) -> Output {
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

/// nghttp's frames (-v), counted.
pub fn nghttp(args: &[&str]) -> String {
    let out = run("nghttp", args);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A mock, with an HTTPS listener when `https` (its certificate's PEM file beside it).
pub fn start_mock(config: MockConfig, https: bool) -> (RunningMock, PathBuf) {
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
