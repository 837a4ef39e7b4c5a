//! `chokepoint mock` as WireMock's recorder, process against process: a front mock records an
//! upstream mock over HTTPS (its self-signed certificate given with `--proxy-cacert`) into its
//! `--mappings` folder, then, the upstream stopped, a new front on that folder answers alike
//! with `--delay` added. Without `--proxy-cacert` the upstream is not trusted (a 500 saying
//! why); a bad `--proxy-cacert` file is one line and exit 2.
use crate::support::{assert_one_line_error, TempDir};
use chokepoint_testkit::Server;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn chokepoint() -> Command {
    Command::new(env!("CARGO_BIN_EXE_chokepoint"))
}

/// A mock process and the lines it printed at start: (its URL, the certificate path if HTTPS).
fn mock(args: &[&str]) -> (Server, String, Option<String>) {
    let mut server = Server::spawn(
        "mock",
        chokepoint()
            .arg("mock")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    );
    let mut lines = BufReader::new(server.child_mut().stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let url = first
        .split(" listening on ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("no URL in {first}"))
        .to_string();
    let cert = url.starts_with("https").then(|| {
        let line = lines.next().unwrap().unwrap();
        line.split(" certificate at ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or_else(|| panic!("no certificate in {line}"))
            .to_string()
    });
    (server, url, cert)
}

/// One request with `Connection: close`: the status and the body.
fn call(url: &str, method: &str, path: &str, body: &str) -> (u16, String) {
    let addr = url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).expect("read");
    let status = raw[9..12].parse().expect("a status");
    let body = raw
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}

const UPSTREAM: &str = r#"{"mappings": [
  {"request": {"method": "GET", "urlPath": "/users/1"},
   "response": {"status": 200, "jsonBody": {"id": 1, "name": "ada"}}},
  {"request": {"method": "POST", "url": "/orders"},
   "response": {"status": 201, "body": "made {{jsonPath request.body '$.sku'}}",
                "transformers": ["response-template"]}}
]}"#;

fn traffic(url: &str) -> Vec<(u16, String)> {
    vec![
        call(url, "GET", "/users/1", ""),
        call(url, "POST", "/orders", r#"{"sku": "a-1"}"#),
    ]
}

#[test]
fn an_https_upstream_is_recorded_into_the_mappings_folder_and_replayed_without_it() {
    let scratch = TempDir::new("record");
    let upstream_file = scratch.0.join("upstream.json");
    std::fs::write(&upstream_file, UPSTREAM).unwrap();
    let record_root = scratch.0.join("recorded");
    std::fs::create_dir_all(record_root.join("mappings")).unwrap();
    let (upstream, upstream_url, cert) = mock(&[
        "--https-port",
        "0",
        "--mappings",
        upstream_file.to_str().unwrap(),
    ]);
    let cert = cert.expect("the HTTPS upstream prints its certificate");
    // Not trusted without --proxy-cacert: WireMock's 500, saying why.
    let (untrusting, untrusting_url, _) = mock(&["--port", "0", "--proxy-all", &upstream_url]);
    let (status, body) = call(&untrusting_url, "GET", "/users/1", "");
    assert_eq!(status, 500, "{body}");
    assert!(body.contains("certificate"), "{body}");
    drop(untrusting);
    let root = record_root.to_str().unwrap();
    let (front, front_url, _) = mock(&["--port", "0", "--mappings", root, "--proxy-cacert", &cert]);
    let start = format!(r#"{{"targetBaseUrl": "{upstream_url}"}}"#);
    assert_eq!(
        call(&front_url, "POST", "/__admin/recordings/start", &start).0,
        200
    );
    let recorded = traffic(&front_url);
    assert_eq!(recorded[0], (200, r#"{"id":1,"name":"ada"}"#.to_string()));
    assert_eq!(recorded[1], (201, "made a-1".to_string()));
    let (status, stopped) = call(&front_url, "POST", "/__admin/recordings/stop", "");
    assert_eq!(status, 200, "{stopped}");
    assert_eq!(
        std::fs::read_dir(record_root.join("mappings"))
            .unwrap()
            .count(),
        2
    );
    drop(front);
    drop(upstream);
    let (replay, replay_url, _) = mock(&["--port", "0", "--mappings", root, "--delay", "300ms"]);
    let started = Instant::now();
    assert_eq!(traffic(&replay_url), recorded);
    assert!(started.elapsed() >= Duration::from_millis(600));
    drop(replay);
}

#[test]
fn a_bad_proxy_cacert_is_one_line() {
    let scratch = TempDir::new("cacert");
    let not_pem = scratch.0.join("not.pem");
    std::fs::write(&not_pem, "hello").unwrap();
    for (file, needle) in [
        (
            "/no/such.pem",
            "--proxy-cacert /no/such.pem: cannot read it",
        ),
        (not_pem.to_str().unwrap(), "no certificate in it"),
    ] {
        let output = chokepoint()
            .args(["mock", "--port", "0", "--proxy-cacert", file])
            .stdin(Stdio::null())
            .output()
            .expect("the binary runs");
        assert_one_line_error(&output, needle);
    }
}
