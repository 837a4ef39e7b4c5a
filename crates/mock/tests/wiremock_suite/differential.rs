//! The differential test: WireMock's standalone jar and the mock serve the same folder
//! (`tests/fixtures/differential`, written from WireMock's documentation, one mapping file per
//! class of issue 14), get the same requests (`cases.json`) in the same order, and must answer
//! alike: status, body, the headers a stub sets, and a stub's delay within 20 ms (for the cases
//! whose stub declares one, `delay_ms`; every other request must be answered by the mock in under
//! 100 ms). The share that agrees is printed per class.
//!
//! Where the two differ on purpose the comparison says so in `on_purpose`: the text of a 404
//! or 403 is each server's own (WireMock's diff report, Jetty's error page; the mock's near
//! miss), so for those only the status is compared.
use crate::client::{self, Reply};
use crate::wiremock_suite::jvm::WireMock;
use base64::Engine;
use chokepoint_mock::MockConfig;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Debug, Deserialize)]
struct Case {
    class: String,
    method: String,
    path: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    body_base64: Option<String>,
    /// For a body that differs on every request (`now`, `randomValue`): a regex both bodies
    /// must match whole, instead of being equal.
    #[serde(default)]
    body_matches: Option<String>,
    /// A difference kept on purpose (listed in docs/guide/mock.md): reported, not a failure.
    #[serde(default)]
    differs_on_purpose: Option<String>,
    /// The delay the case's stub declares (`fixedDelayMilliseconds`), in ms.
    #[serde(default)]
    delay_ms: Option<u64>,
}

impl Case {
    fn body(&self) -> Vec<u8> {
        match (&self.body, &self.body_base64) {
            (_, Some(b64)) => base64::engine::general_purpose::STANDARD
                .decode(b64)
                .expect("case body is base64"),
            (Some(text), None) => text.clone().into_bytes(),
            (None, None) => Vec::new(),
        }
    }
}

/// Headers each server adds on its own, not from a stub.
const SERVER_HEADERS: &[&str] = &[
    "matched-stub-id",
    "transfer-encoding",
    "content-length",
    "date",
    "server",
    "vary",
    "connection",
    "keep-alive",
    "last-modified",
    "accept-ranges",
];

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/differential")
}

/// Sends one request and times it to the end of the response.
fn send(addr: SocketAddr, case: &Case) -> (Reply, Duration) {
    let body = case.body();
    let mut head = format!(
        "{} {} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        case.method,
        case.path,
        body.len()
    );
    for (name, value) in &case.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let started = Instant::now();
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(&body).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read response");
    let elapsed = started.elapsed();
    let reply = client::parse(&raw)
        .unwrap_or_else(|| panic!("not HTTP: {:?}", String::from_utf8_lossy(&raw)));
    (reply, elapsed)
}

/// The stub-set headers of a reply, lower-cased and sorted.
fn stub_headers(reply: &Reply) -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = reply
        .headers
        .iter()
        .map(|(n, v)| (n.to_ascii_lowercase(), v.clone()))
        .filter(|(n, _)| !SERVER_HEADERS.contains(&n.as_str()))
        .collect();
    headers.sort();
    headers
}

/// What differs between WireMock's reply and the mock's; empty when they agree.
fn differences(case: &Case, wm: &(Reply, Duration), cp: &(Reply, Duration)) -> Vec<String> {
    let mut out = Vec::new();
    if wm.0.status != cp.0.status {
        out.push(format!("status {} vs {}", wm.0.status, cp.0.status));
        return out;
    }
    // On purpose: the text of a 404 or 403 is each server's own.
    let on_purpose = matches!(wm.0.status, 403 | 404);
    if !on_purpose {
        if let Some(pattern) = &case.body_matches {
            let shape = regex::Regex::new(&format!("^(?:{pattern})$")).expect("body_matches");
            for (who, reply) in [("WireMock", &wm.0), ("chokepoint", &cp.0)] {
                if !shape.is_match(&reply.text()) {
                    out.push(format!(
                        "{who}'s body {:?} is not /{pattern}/",
                        reply.text()
                    ));
                }
            }
        } else if wm.0.body != cp.0.body {
            out.push(format!("body {:?} vs {:?}", wm.0.text(), cp.0.text()));
        }
        let (a, b) = (stub_headers(&wm.0), stub_headers(&cp.0));
        if a != b {
            out.push(format!("headers {a:?} vs {b:?}"));
        }
    }
    // The delay is compared where a stub declares one: both sides must take it, within 20 ms
    // of each other. Elsewhere only the mock's time is read (a stub without a delay is answered
    // at once): WireMock's own time then is its JVM's, whose pauses on a busy machine reached
    // 154-289 ms on undelayed stubs in CI.
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    match case.delay_ms {
        Some(delay) => {
            let gap = ms(wm.1) - ms(cp.1);
            if ms(wm.1.min(cp.1)) < delay as f64 || gap.abs() > 20.0 {
                out.push(format!(
                    "time {:.0} ms vs {:.0} ms (the stub's delay is {delay} ms)",
                    ms(wm.1),
                    ms(cp.1)
                ));
            }
        }
        None if cp.1 >= Duration::from_millis(100) => out.push(format!(
            "time {:.0} ms vs {:.0} ms (the stub declares no delay)",
            ms(wm.1),
            ms(cp.1)
        )),
        None => {}
    }
    out
}

/// The downstream's one stub: a templated echo, with a header of its own.
const DOWNSTREAM_ECHO: &str = r#"{"request": {"method": "ANY"}, "response": {
    "status": 201, "transformers": ["response-template"],
    "headers": {"X-Down": "yes", "Content-Type": "text/plain"},
    "body": "{{request.method}} {{{request.url}}} host={{request.headers.host}} extra={{request.headers.x-extra}} secret={{request.headers.x-secret}} kept={{request.headers.x-kept}} body={{{request.body}}}"}}"#;

/// A copy of the fixture folder (in the target dir) with `@DOWNSTREAM@` and
/// `@DOWNSTREAM_TLS@` in the mappings replaced by the downstream's plain and HTTPS addresses.
fn with_downstream(root: &Path, downstream: &[(&str, String)]) -> PathBuf {
    fn copy(from: &Path, to: &Path, downstream: &[(&str, String)]) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy(&entry.path(), &target, downstream);
            } else {
                let bytes = std::fs::read(entry.path()).unwrap();
                let bytes = match String::from_utf8(bytes) {
                    Ok(text) => downstream
                        .iter()
                        .fold(text, |text, (mark, addr)| text.replace(mark, addr))
                        .into_bytes(),
                    Err(err) => err.into_bytes(),
                };
                std::fs::write(target, bytes).unwrap();
            }
        }
    }
    let copy_root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("differential");
    let _ = std::fs::remove_dir_all(&copy_root);
    copy(root, &copy_root, downstream);
    copy_root
}

/// How many cases fire a webhook (one each).
fn webhook_cases(cases: &[Case]) -> usize {
    cases.iter().filter(|c| c.class == "webhooks").count()
}

/// The webhooks the downstream got (method, URL, the headers a webhook sets, body), once at
/// least `count` have come or 20 s have passed.
fn webhooks_received(downstream: SocketAddr, count: usize) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let journal = client::get(downstream, "/__admin/requests").json();
        let hooks: Vec<String> = journal["requests"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|event| &event["request"])
            .filter(|r| r["url"].as_str().is_some_and(|u| u.starts_with("/hook/")))
            .map(|r| {
                let h = &r["headers"];
                format!(
                    "{} {} content-type={} x-kept={} body={}",
                    r["method"], r["url"], h["content-type"], h["x-kept"], r["body"]
                )
            })
            .collect();
        if hooks.len() >= count || Instant::now() > deadline {
            return hooks;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_mock_answers_the_fixtures_as_wiremock_does() {
    let _alone = super::jvm::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    // The downstream that the proxy fixtures forward to (over HTTP and HTTPS, with a
    // self-signed certificate: WireMock trusts any, the mock is given it) and the webhooks
    // reach: a mock whose one stub echoes what it got (the method, the URL, the headers a
    // proxy sets or drops, the body), with a journal.
    let cert = Path::new(env!("CARGO_TARGET_TMPDIR")).join("differential-downstream.pem");
    let local: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let downstream = chokepoint_mock::start_with_https(
        local,
        Some((local, chokepoint_mock::MockTls::self_signed(&cert).unwrap())),
        MockConfig {
            mappings: chokepoint_mock::parse_mappings(DOWNSTREAM_ECHO, "downstream").unwrap(),
            journal: 1000,
            ..MockConfig::default()
        },
    )
    .expect("downstream starts");
    let tls_addr = downstream.https_url().unwrap().replace("https://", "");
    let root = with_downstream(
        &fixture_root(),
        &[
            ("@DOWNSTREAM_TLS@", tls_addr),
            ("@DOWNSTREAM@", downstream.addr().to_string()),
        ],
    );
    let cases: Vec<Case> =
        serde_json::from_str(&std::fs::read_to_string(root.join("cases.json")).unwrap())
            .expect("cases.json parses");
    let wiremock = WireMock::start(&root);
    let mappings = chokepoint_mock::load_mappings(&root).expect("the fixtures load");
    let mock = chokepoint_mock::start(
        "127.0.0.1:0".parse().unwrap(),
        MockConfig {
            mappings,
            files_root: Some(root.join("__files")),
            journal: 1000,
            proxy_cacert: Some(cert.clone()),
            ..MockConfig::default()
        },
    )
    .expect("mock starts");
    // A cold JVM is slow on its first requests: warm WireMock up on every case, then put both
    // back at the start (scenarios, journal).
    for case in &cases {
        send(wiremock.addr, case);
    }
    for addr in [wiremock.addr, mock.addr()] {
        let reply = client::request(addr, "POST", "/__admin/scenarios/reset", &[], "");
        assert_eq!(reply.status, 200, "scenario reset: {}", reply.text());
    }
    // Only the compared requests' webhooks count (after the warm-up's have arrived).
    webhooks_received(downstream.addr(), webhook_cases(&cases));
    client::request(
        downstream.addr(),
        "POST",
        "/__admin/requests/reset",
        &[],
        "",
    );
    let mut per_class: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut disagreements = Vec::new();
    let mut on_purpose = Vec::new();
    for case in &cases {
        let wm = send(wiremock.addr, case);
        let cp = send(mock.addr(), case);
        let mut diffs = differences(case, &wm, &cp);
        // A busy machine may stretch a request: time alone is measured again, twice at most,
        // on a request that changes no state (every class but scenarios).
        for _ in 0..2 {
            if diffs.len() == 1 && diffs[0].starts_with("time") && case.class != "scenarios" {
                diffs = differences(case, &send(wiremock.addr, case), &send(mock.addr(), case));
            }
        }
        let entry = per_class.entry(&case.class).or_default();
        entry.1 += 1;
        if diffs.is_empty() {
            entry.0 += 1;
        } else if let Some(reason) = &case.differs_on_purpose {
            on_purpose.push(format!(
                "{} {} ({}): {reason}",
                case.method, case.path, case.class
            ));
        } else {
            disagreements.push(format!(
                "{} {} ({}): {}",
                case.method,
                case.path,
                case.class,
                diffs.join("; ")
            ));
        }
    }
    // Each webhook case made WireMock and the mock send one webhook each: every webhook the
    // downstream got must have come twice, alike.
    let expected = 2 * webhook_cases(&cases);
    let webhooks = webhooks_received(downstream.addr(), expected);
    let mut alike: BTreeMap<String, usize> = BTreeMap::new();
    for webhook in &webhooks {
        *alike.entry(webhook.clone()).or_default() += 1;
    }
    let entry = per_class.entry("webhooks (as received)").or_default();
    entry.1 += alike.len();
    for (webhook, count) in &alike {
        if count % 2 == 0 {
            entry.0 += 1;
        } else {
            disagreements.push(format!("webhook sent {count} times: {webhook}"));
        }
    }
    if webhooks.len() != expected {
        disagreements.push(format!(
            "{} webhooks received, {expected} expected",
            webhooks.len()
        ));
    }
    let agreed: usize = per_class.values().map(|(a, _)| a).sum();
    let compared: usize = per_class.values().map(|(_, n)| n).sum();
    println!(
        "WireMock {} vs chokepoint mock, per class:",
        super::jvm::WIREMOCK_VERSION
    );
    for (class, (a, n)) in &per_class {
        println!("  {class:<40} {a:>3} of {n:<3} agree");
    }
    println!(
        "agree: {agreed} of {compared} requests and webhooks ({:.0}%)",
        100.0 * agreed as f64 / compared as f64
    );
    for difference in &on_purpose {
        println!("  differs on purpose: {difference}");
    }
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}
