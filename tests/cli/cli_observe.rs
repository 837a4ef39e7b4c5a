//! `chokepoint observe`, the observer beside the target, on loopback: its HTTP surface (the
//! token on every request when it has one, one sweep at a time, a window per step), its refusal
//! to serve off loopback without a token, and `sweep --observer` refusing an observer it cannot
//! use with one line before any load. The whole path across a network namespace is
//! `tests/sweeps/observer_netns.rs`.
use super::support::{assert_one_line_error, mock, TempDir};
use chokepoint_testkit::Server;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

const TOKEN: &str = "3f1c0d9a8b7e6f5a4c3b2a1908f7e6d5";

/// `chokepoint observe --listen 127.0.0.1:0` with `args`, and the address it serves on.
fn observer(args: &[&str]) -> (Server, String) {
    let mut server = Server::spawn(
        "observer",
        Command::new(env!("CARGO_BIN_EXE_chokepoint"))
            .args(["observe", "--listen", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    );
    let stdout = server.child_mut().stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let line = lines.next().expect("a start line").unwrap();
    std::thread::spawn(move || for _ in lines {});
    let address = line
        .strip_prefix("chokepoint observer listening on http://")
        .unwrap_or_else(|| panic!("unexpected start line {line:?}"))
        .to_string();
    (server, address)
}

/// One HTTP/1.1 request, `Connection: close`: the status and the body.
fn call(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let mut stream = TcpStream::connect(address).expect("the observer accepts");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {answer:?}"));
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default();
    (status, body)
}

fn json(body: &str) -> serde_json::Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

fn port_of(url: &str) -> u16 {
    url.rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches('/')
        .parse()
        .unwrap()
}

#[test]
fn with_a_token_every_request_needs_it_and_one_sweep_at_a_time_is_served() {
    let dir = TempDir::new("observe-token");
    let token_file = dir.0.join("token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    let (target, target_url) = mock(&[]);
    let target_port = port_of(&target_url).to_string();
    let (_observer, address) = observer(&[
        "--token-file",
        token_file.to_str().unwrap(),
        "--port",
        &target_port,
    ]);
    let bearer = format!("Bearer {TOKEN}");
    let auth = ("Authorization", bearer.as_str());

    // No token, a wrong one, the right one in another scheme: 401 on every route.
    for headers in [
        vec![],
        vec![("Authorization", "Bearer 3f1c0d9a8b7e6f5a4c3b2a1908f7e6d4")],
        vec![("Authorization", TOKEN)],
    ] {
        for (method, path) in [
            ("GET", "/v1/target"),
            ("POST", "/v1/sessions"),
            ("POST", "/v1/steps/start"),
        ] {
            let (status, _) = call(&address, method, path, &headers, "{}");
            assert_eq!(status, 401, "{method} {path} with {headers:?}");
        }
    }

    // The target: the process listening on --port there.
    let (status, body) = call(&address, "GET", "/v1/target", &[auth], "");
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        json(&body)["roots"],
        serde_json::json!([target.pid()]),
        "{body}"
    );

    let session = r#"{"listen_port": 1, "mock_port": null, "interval_ms": 100}"#;
    let (status, body) = call(&address, "POST", "/v1/sessions", &[auth], session);
    assert_eq!(status, 201, "{body}");
    let id = json(&body)["session"].as_str().unwrap().to_string();
    // The observer's --port wins over the sweep's port.
    assert_eq!(
        json(&body)["target"]["listen_port"],
        target_port.parse::<u16>().unwrap()
    );

    // A second sweep is refused while the first holds the observer, and cannot use its windows.
    let (status, body) = call(&address, "POST", "/v1/sessions", &[auth], session);
    assert_eq!(status, 409, "{body}");
    assert!(
        json(&body)["error"]
            .as_str()
            .unwrap()
            .contains("another sweep"),
        "{body}"
    );
    let (status, _) = call(
        &address,
        "POST",
        "/v1/steps/start",
        &[auth, ("x-chokepoint-session", "other")],
        "",
    );
    assert_eq!(status, 409);

    // One window: the target's threads and CPU as the local observer reads them.
    let mine = [auth, ("x-chokepoint-session", id.as_str())];
    assert_eq!(call(&address, "POST", "/v1/steps/start", &mine, "").0, 204);
    assert_eq!(
        call(&address, "POST", "/v1/steps/start", &mine, "").0,
        409,
        "one window at a time"
    );
    std::thread::sleep(Duration::from_millis(400));
    let (status, body) = call(&address, "POST", "/v1/steps/finish", &mine, "");
    assert_eq!(status, 200, "{body}");
    let seen = json(&body);
    assert_eq!(
        seen["observation"]["observed_pids"],
        serde_json::json!([target.pid()]),
        "{body}"
    );
    let pools = seen["observation"]["threads_by_pool"]["pools"]
        .as_array()
        .expect("pools");
    assert!(
        pools
            .iter()
            .any(|p| p["pool"].as_str().unwrap().starts_with("cp-mock")),
        "{body}"
    );
    assert!(seen["target_cpu_pct"].as_f64().is_some(), "{body}");
    assert_eq!(
        call(&address, "POST", "/v1/steps/finish", &mine, "").0,
        409,
        "no window open"
    );

    // Closed by its sweep, the observer serves the next one.
    assert_eq!(
        call(&address, "DELETE", "/v1/sessions/current", &mine, "").0,
        204
    );
    let (status, body) = call(&address, "POST", "/v1/sessions", &[auth], session);
    assert_eq!(status, 201, "{body}");
}

#[test]
fn on_loopback_without_a_token_file_no_token_is_needed() {
    let (_target, target_url) = mock(&[]);
    let (_observer, address) = observer(&[]);
    let path = format!("/v1/target?port={}", port_of(&target_url));
    let (status, body) = call(&address, "GET", &path, &[], "");
    assert_eq!(status, 200, "{body}");
    // Nothing listens on port 1: the target is not found, in one line.
    let (status, body) = call(&address, "GET", "/v1/target?port=1", &[], "");
    assert_eq!(status, 404, "{body}");
    assert!(
        json(&body)["error"].as_str().unwrap().contains("port 1"),
        "{body}"
    );
}

#[test]
fn off_loopback_without_a_token_it_does_not_start() {
    for listen in ["0.0.0.0:0", "10.201.0.2:7070"] {
        let output = Command::new(env!("CARGO_BIN_EXE_chokepoint"))
            .args(["observe", "--listen", listen])
            .output()
            .unwrap();
        assert_one_line_error(&output, "is not a loopback address: give --token-file FILE");
    }
    let dir = TempDir::new("observe-short-token");
    let short = dir.0.join("short");
    std::fs::write(&short, "abc\n").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_chokepoint"))
        .args(["observe", "--listen", "0.0.0.0:0", "--token-file"])
        .arg(&short)
        .output()
        .unwrap();
    assert_one_line_error(&output, "use at least 16");
}

/// The requests the mock (here the swept target) has served so far.
fn served(mock_url: &str) -> u64 {
    let (status, body) = call(
        mock_url.trim_start_matches("http://").trim_end_matches('/'),
        "GET",
        "/__chokepoint/stats",
        &[],
        "",
    );
    assert_eq!(status, 200, "{body}");
    json(&body)["requests"].as_u64().expect("a request count")
}

#[test]
fn a_sweep_through_an_observer_it_cannot_use_stops_before_any_load() {
    let dir = TempDir::new("observe-sweep");
    let (token_file, wrong_file) = (dir.0.join("token"), dir.0.join("wrong"));
    std::fs::write(&token_file, TOKEN).unwrap();
    std::fs::write(&wrong_file, "0000000000000000000000").unwrap();
    let (_target, target_url) = mock(&[]);
    let (_observer, address) = observer(&["--token-file", token_file.to_str().unwrap()]);
    let observer_url = format!("http://{address}");
    let nobody = format!("http://127.0.0.1:{}", chokepoint_testkit::free_port());
    let sweep = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_chokepoint"))
            .args([
                "sweep",
                &target_url,
                "-c",
                "1",
                "--step",
                "1s",
                "--warmup",
                "0",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let cases: [(Vec<&str>, &str); 4] = [
        (vec!["--observer", &nobody], "no observer answers there"),
        (
            vec!["--observer", &observer_url],
            "the observer requires a token (401)",
        ),
        (
            vec![
                "--observer",
                &observer_url,
                "--observer-token-file",
                wrong_file.to_str().unwrap(),
            ],
            "the observer refused the token (401)",
        ),
        (
            vec!["--observer", "ftp://127.0.0.1:1"],
            "not an http:// URL",
        ),
    ];
    for (args, needle) in cases {
        assert_one_line_error(&sweep(&args), needle);
    }
    assert_eq!(
        served(&target_url),
        0,
        "a refused observer must stop the sweep before any load"
    );
}

#[test]
fn a_sweep_is_refused_while_another_holds_the_observer_or_when_no_target_is_there() {
    let (_target, target_url) = mock(&[]);
    let (_observer, address) = observer(&[]);
    let observer_url = format!("http://{address}");
    let sweep = |url: &str| {
        Command::new(env!("CARGO_BIN_EXE_chokepoint"))
            .args(["sweep", url, "-c", "1", "--step", "1s", "--warmup", "0"])
            .args(["--observer", &observer_url])
            .output()
            .unwrap()
    };
    // Nothing listens on the swept URL's port there.
    let nobody = format!("http://127.0.0.1:{}/", chokepoint_testkit::free_port());
    assert_one_line_error(&sweep(&nobody), "the observer finds no target (404)");
    // Another sweep holds the observer.
    let session = format!(
        r#"{{"listen_port": {}, "interval_ms": 250}}"#,
        port_of(&target_url)
    );
    let (status, body) = call(&address, "POST", "/v1/sessions", &[], &session);
    assert_eq!(status, 201, "{body}");
    assert_one_line_error(
        &sweep(&target_url),
        "busy (409): another sweep is using this observer",
    );
    assert_eq!(served(&target_url), 0);
}

#[test]
fn a_target_that_ends_during_a_window_is_a_note_not_an_error() {
    let (mut target, target_url) = mock(&[]);
    let (_observer, address) = observer(&[]);
    let session = format!(
        r#"{{"listen_port": {}, "interval_ms": 50}}"#,
        port_of(&target_url)
    );
    let (status, body) = call(&address, "POST", "/v1/sessions", &[], &session);
    assert_eq!(status, 201, "{body}");
    let id = json(&body)["session"].as_str().unwrap().to_string();
    let mine = [("x-chokepoint-session", id.as_str())];
    assert_eq!(call(&address, "POST", "/v1/steps/start", &mine, "").0, 204);
    let pid = target.pid();
    target.child_mut().kill().unwrap();
    target.child_mut().wait().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let (status, body) = call(&address, "POST", "/v1/steps/finish", &mine, "");
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        json(&body)["observation"]["notes"],
        serde_json::json!([{"note": "process-gone", "pid": pid}]),
        "{body}"
    );
}

#[test]
fn an_observer_that_dies_mid_sweep_leaves_a_note_on_the_later_steps_and_no_hang() {
    let dir = TempDir::new("observe-dies");
    let json_file = dir.0.join("result.json");
    let stderr_file = dir.0.join("stderr");
    let (_target, target_url) = mock(&["--delay", "20ms"]);
    let (mut observer, address) = observer(&[]);
    let observer_url = format!("http://{address}");
    let mut sweep = Server::spawn(
        "sweep",
        Command::new(env!("CARGO_BIN_EXE_chokepoint"))
            .args([
                "sweep",
                &target_url,
                "-c",
                "1,2,3,4",
                "--step",
                "1s",
                "--step-fixed",
            ])
            .args(["--warmup", "0", "--observer", &observer_url, "--json"])
            .arg(&json_file)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr_file).unwrap()),
    );
    let stdout = sweep.child_mut().stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    // The header, then the first step's row: the observer goes away after it.
    let first_row = lines.nth(1).expect("a first step").unwrap();
    assert!(first_row.trim_start().starts_with('1'), "{first_row}");
    observer.child_mut().kill().unwrap();
    observer.child_mut().wait().unwrap();
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = sweep.child_mut().wait().unwrap();
    let said = format!("The target was observed through the observer at {observer_url}");
    assert!(rest.iter().any(|line| line.starts_with(&said)), "{rest:?}");
    assert_eq!(status.code(), Some(0));
    // The terminal hears of it once, not once per step.
    let stderr = std::fs::read_to_string(&stderr_file).unwrap();
    let said = format!("chokepoint: the observer at {observer_url} failed: no answer");
    assert_eq!(stderr.matches(&said).count(), 1, "{stderr}");
    let result = json(&std::fs::read_to_string(&json_file).unwrap());
    assert_eq!(result["context"]["observer"], observer_url.as_str());
    let steps = result["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 4);
    assert!(steps[0]["observation_notes"].is_null(), "{}", steps[0]);
    // The step under way when it went (the second, or on a slow machine the third) and every
    // later one have the note.
    let first_failed = steps
        .iter()
        .position(|step| !step["observation_notes"].is_null())
        .expect("a step with a note");
    assert!(first_failed <= 2, "{steps:?}");
    for step in &steps[first_failed..] {
        let notes = step["observation_notes"].as_array().expect("a note");
        assert_eq!(notes[0]["note"], "observer-failed", "{step}");
        assert_eq!(notes[0]["observer"], observer_url.as_str(), "{step}");
        assert!(step["target_cpu_pct"].is_null(), "{step}");
    }
}
