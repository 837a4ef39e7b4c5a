//! Recording beside WireMock's: WireMock 3.9.1's jar and the mock each record the same
//! upstream (a mock on loopback) through `/__admin/recordings/start` and `stop`, on the same
//! requests; the mappings they return must be alike (name, request, status, body, the
//! upstream's headers but `Date`, scenario steps; not the ids, made at random, and not the
//! header names' case: hyper lower-cases them), both write one file per mapping, and both then
//! answer the same requests alike from what they recorded.
use crate::client::{self, Reply};
use crate::wiremock_suite::jvm::WireMock;
use chokepoint_mock::MockConfig;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::PathBuf;

const UPSTREAM: &str = r#"{"mappings": [
  {"request": {"method": "GET", "urlPath": "/api/v1/Users%201"},
   "response": {"status": 200, "jsonBody": {"id": 1}, "headers": {"Content-Type": "application/json"}}},
  {"request": {"method": "POST", "url": "/orders"},
   "response": {"status": 201, "body": "made", "headers": {"X-Upstream": ["a", "b"]}}},
  {"scenarioName": "s", "requiredScenarioState": "Started", "newScenarioState": "2",
   "request": {"urlPath": "/count"}, "response": {"body": "one"}},
  {"scenarioName": "s", "requiredScenarioState": "2", "request": {"urlPath": "/count"},
   "response": {"body": "two"}}
]}"#;

fn traffic(addr: SocketAddr) -> Vec<Reply> {
    let json = [("Content-Type", "application/json")];
    let text = [("Content-Type", "text/plain")];
    vec![
        client::get(addr, "/api/v1/Users%201?q=a"),
        client::request(addr, "POST", "/orders", &json, r#"{"sku": [1, 2]}"#),
        client::request(addr, "POST", "/orders", &text, "plain order"),
        client::get(addr, "/count"),
        client::get(addr, "/count"),
    ]
}

/// A recorded mapping without what is made at random or differs on purpose.
fn comparable(mapping: &Value) -> Value {
    let mut mapping = mapping.clone();
    let object = mapping.as_object_mut().unwrap();
    object.remove("id");
    object.remove("uuid");
    if let Some(Value::Object(headers)) = object
        .get_mut("response")
        .and_then(|r| r.get_mut("headers"))
    {
        let lower: serde_json::Map<String, Value> = headers
            .iter()
            .map(|(name, value)| (name.to_ascii_lowercase(), value.clone()))
            .filter(|(name, _)| !matches!(name.as_str(), "date" | "matched-stub-id"))
            .collect();
        *headers = lower;
    }
    mapping
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("mappings")).unwrap();
    std::fs::create_dir_all(dir.join("__files")).unwrap();
    dir
}

#[test]
fn the_mock_records_as_wiremock_records() {
    let _alone = super::jvm::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let (wiremock_root, mock_root) = (scratch("record-wiremock"), scratch("record-mock"));
    let wiremock = WireMock::start(&wiremock_root);
    let mock = client::start(MockConfig {
        recordings_dir: Some(mock_root.join("mappings")),
        ..MockConfig::default()
    });
    let mut recorded = Vec::new();
    let mut answers = Vec::new();
    for addr in [wiremock.addr, mock.addr()] {
        // A fresh upstream for each, so that both see its scenario from the start.
        let upstream = client::start(MockConfig {
            mappings: chokepoint_mock::parse_mappings(UPSTREAM, "upstream").unwrap(),
            ..MockConfig::default()
        });
        let spec = json!({"targetBaseUrl": upstream.url()}).to_string();
        let started = client::request(addr, "POST", "/__admin/recordings/start", &[], &spec);
        assert_eq!(started.status, 200, "{}", started.text());
        answers.push(traffic(addr));
        let stopped = client::request(addr, "POST", "/__admin/recordings/stop", &[], "");
        assert_eq!(stopped.status, 200, "{}", stopped.text());
        recorded.push(stopped.json()["mappings"].as_array().cloned().unwrap());
        drop(upstream);
        // Served from what was recorded, the upstream gone.
        answers.push(traffic(addr));
    }
    let (wm, cp) = (&recorded[0], &recorded[1]);
    assert_eq!(wm.len(), cp.len(), "WireMock {wm:#?}\nmock {cp:#?}");
    for (w, c) in wm.iter().zip(cp) {
        assert_eq!(comparable(w), comparable(c));
    }
    let files = |root: &PathBuf| std::fs::read_dir(root.join("mappings")).unwrap().count();
    assert_eq!(files(&wiremock_root), wm.len());
    assert_eq!(files(&mock_root), cp.len());
    let summary = |replies: &Vec<Reply>| -> Vec<(u16, String)> {
        replies.iter().map(|r| (r.status, r.text())).collect()
    };
    for (who, replies) in [
        "WireMock recording",
        "WireMock replay",
        "mock recording",
        "mock replay",
    ]
    .iter()
    .zip(&answers)
    {
        assert_eq!(summary(replies), summary(&answers[0]), "{who}");
    }
    println!(
        "recording: {} mappings from WireMock {} and from the mock alike; replays alike",
        wm.len(),
        super::jvm::WIREMOCK_VERSION
    );
}
