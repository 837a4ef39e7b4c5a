//! WireMock's recording and webhooks, against real mocks on loopback: a mock records what an
//! upstream answers, writes the mappings, and a new mock serves them with the upstream gone;
//! a stub's webhook reaches a receiver after the response, templated on the served request.
use super::client::{get, request, start, Reply};
use chokepoint_mock::MockConfig;
use serde_json::Value;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A scratch folder in the target dir, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("mappings")).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn post_json(addr: SocketAddr, path: &str, body: &str) -> Reply {
    request(
        addr,
        "POST",
        path,
        &[("Content-Type", "application/json")],
        body,
    )
}

/// The journal's requests, oldest first.
fn received(addr: SocketAddr) -> Vec<Value> {
    let mut all = get(addr, "/__admin/requests").json()["requests"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    all.reverse();
    all
}

/// Waits (at most 20 s) until the receiver's journal holds `count` requests.
fn wait_for_requests(addr: SocketAddr, count: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let found = received(addr);
        if found.len() >= count || Instant::now() > deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn webhooks_reach_the_receiver_after_the_response_templated_on_the_served_request() {
    let receiver = start(MockConfig {
        journal: 100,
        ..MockConfig::default()
    });
    let front_json = format!(
        r#"{{"mappings": [
        {{"request": {{"method": "POST", "urlPath": "/orders"}},
         "response": {{"status": 201, "body": "accepted"}},
         "postServeActions": [{{"name": "webhook", "parameters": {{
            "method": "PUT", "url": "{0}/callbacks/{{{{jsonPath originalRequest.body '$.id'}}}}",
            "headers": {{"Content-Type": "application/json", "X-Trace": "{{{{originalRequest.headers.X-Trace}}}}"}},
            "body": "{{\"order\": \"{{{{jsonPath originalRequest.body '$.id'}}}}\", \"state\": \"done\"}}",
            "delay": {{"type": "fixed", "milliseconds": 3000}}}}}}]}},
        {{"request": {{"urlPath": "/ping"}}, "response": {{"status": 200, "body": "pong"}},
         "serveEventListeners": [{{"name": "webhook", "requestPhases": ["AFTER_COMPLETE"],
            "parameters": {{"url": "{0}/pinged?from={{{{originalRequest.query.from}}}}"}}}}]}},
        {{"request": {{"urlPath": "/nowhere"}}, "response": {{"status": 200, "body": "still served"}},
         "postServeActions": {{"webhook": {{"url": "http://127.0.0.1:9/closed"}}}}}}
    ]}}"#,
        receiver.url()
    );
    let front = start(MockConfig {
        mappings: chokepoint_mock::parse_mappings(&front_json, "front").expect("webhooks load"),
        ..MockConfig::default()
    });
    let reply = request(
        front.addr(),
        "POST",
        "/orders",
        &[("X-Trace", "t-42")],
        r#"{"id": "ord-7"}"#,
    );
    assert_eq!((reply.status, reply.text().as_str()), (201, "accepted"));
    // The response came before the webhook's 3 s delay ended.
    assert!(received(receiver.addr()).is_empty());
    let reply = get(front.addr(), "/nowhere");
    assert_eq!((reply.status, reply.text().as_str()), (200, "still served"));
    assert_eq!(get(front.addr(), "/ping?from=me").text(), "pong");
    let got = wait_for_requests(receiver.addr(), 2);
    assert_eq!(got.len(), 2, "{got:#?}");
    assert_eq!(got[0]["request"]["method"], "POST");
    assert_eq!(got[0]["request"]["url"], "/pinged?from=me");
    assert_eq!(got[1]["request"]["method"], "PUT");
    assert_eq!(got[1]["request"]["url"], "/callbacks/ord-7");
    assert_eq!(got[1]["request"]["headers"]["x-trace"], "t-42");
    assert_eq!(
        got[1]["request"]["body"],
        r#"{"order": "ord-7", "state": "done"}"#
    );
}

/// What a client compares between the recording and the replay.
fn answer(reply: &Reply) -> (u16, String, Option<String>) {
    (
        reply.status,
        reply.text(),
        reply.header("x-upstream").map(str::to_string),
    )
}

fn traffic(addr: SocketAddr) -> Vec<(u16, String, Option<String>)> {
    vec![
        answer(&get(addr, "/users/1?fields=name")),
        answer(&post_json(
            addr,
            "/orders",
            r#"{"sku": "a", "qty": [1, 2]}"#,
        )),
        answer(&get(addr, "/counter")),
        answer(&get(addr, "/counter")),
        answer(&get(addr, "/missing")),
    ]
}

#[test]
fn a_recording_is_written_and_replayed_with_the_upstream_gone() {
    let upstream_json = r#"{"mappings": [
        {"request": {"method": "GET", "urlPath": "/users/1"},
         "response": {"status": 200, "jsonBody": {"id": 1, "name": "ada"},
                      "headers": {"Content-Type": "application/json", "X-Upstream": "users"}}},
        {"request": {"method": "POST", "url": "/orders", "bodyPatterns": [{"matchesJsonPath": "$.sku"}]},
         "response": {"status": 201, "body": "order made", "headers": {"X-Upstream": "orders"}}},
        {"scenarioName": "count", "requiredScenarioState": "Started", "newScenarioState": "two",
         "request": {"urlPath": "/counter"}, "response": {"body": "one"}},
        {"scenarioName": "count", "requiredScenarioState": "two",
         "request": {"urlPath": "/counter"}, "response": {"body": "two"}}
    ]}"#;
    let upstream = start(MockConfig {
        mappings: chokepoint_mock::parse_mappings(upstream_json, "upstream").unwrap(),
        ..MockConfig::default()
    });
    let scratch = Scratch::new("recording");
    let front = start(MockConfig {
        journal: 100,
        recordings_dir: Some(scratch.0.join("mappings")),
        ..MockConfig::default()
    });
    let status = |addr| get(addr, "/__admin/recordings/status").json()["status"].clone();
    assert_eq!(status(front.addr()), "NeverStarted");
    let start_body = format!(r#"{{"targetBaseUrl": "{}"}}"#, upstream.url());
    let reply = post_json(front.addr(), "/__admin/recordings/start", &start_body);
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(status(front.addr()), "Recording");
    let recorded_answers = traffic(front.addr());
    assert_eq!(recorded_answers[0].2.as_deref(), Some("users"));
    assert_eq!(recorded_answers[1].0, 201);
    assert_eq!(
        (
            recorded_answers[2].1.as_str(),
            recorded_answers[3].1.as_str()
        ),
        ("one", "two")
    );
    assert_eq!(recorded_answers[4].0, 404);
    let stopped = post_json(front.addr(), "/__admin/recordings/stop", "");
    assert_eq!(stopped.status, 200, "{}", stopped.text());
    let mappings = stopped.json()["mappings"].as_array().cloned().unwrap();
    assert_eq!(mappings.len(), 5, "{mappings:#?}");
    assert_eq!(status(front.addr()), "Stopped");
    assert_eq!(
        post_json(front.addr(), "/__admin/recordings/stop", "").status,
        400
    );
    let files = std::fs::read_dir(scratch.0.join("mappings"))
        .unwrap()
        .count();
    assert_eq!(files, 5);
    // The recorded stubs are served at once, the proxy stub gone (the upstream's scenario is
    // now the front's: it starts again).
    drop(upstream);
    assert_eq!(
        get(front.addr(), "/users/1?fields=name").text(),
        r#"{"id":1,"name":"ada"}"#
    );
    // A snapshot makes the same mappings from the journal.
    let snapshot = post_json(
        front.addr(),
        "/__admin/recordings/snapshot",
        r#"{"persist": false}"#,
    );
    assert_eq!(
        snapshot.json()["mappings"].as_array().map(Vec::len),
        Some(5)
    );
    drop(front);
    // A new mock on the written folder, the upstream gone, answers as the upstream did; with
    // --delay its answers come after the delay.
    let replay = start(MockConfig {
        mappings: chokepoint_mock::load_mappings(&scratch.0).expect("recorded mappings load"),
        fixed_delay: Some(Duration::from_millis(150)),
        ..MockConfig::default()
    });
    let started = Instant::now();
    assert_eq!(traffic(replay.addr()), recorded_answers);
    assert!(started.elapsed() >= Duration::from_millis(5 * 150));
}

#[test]
fn bad_recording_requests_are_named() {
    let front = start(MockConfig::default());
    let table = [
        // (path, body, what the error names)
        ("/__admin/recordings/start", "{}", "targetBaseUrl"),
        (
            "/__admin/recordings/start",
            r#"{"targetBaseUrl": "ftp://x"}"#,
            "ftp://x",
        ),
        (
            "/__admin/recordings/start",
            r#"{"targetBaseUrl": "http://127.0.0.1:9", "filters": {}}"#,
            "'filters'",
        ),
        ("/__admin/recordings/snapshot", "{}", "--journal"),
    ];
    for (path, body, needle) in table {
        let reply = post_json(front.addr(), path, body);
        assert!(reply.status >= 400, "{path} {body}: {}", reply.status);
        assert!(
            reply.text().contains(needle),
            "{path} {body}: {}",
            reply.text()
        );
    }
    assert_eq!(
        get(front.addr(), "/__admin/recordings/status").json()["status"],
        "NeverStarted"
    );
}
