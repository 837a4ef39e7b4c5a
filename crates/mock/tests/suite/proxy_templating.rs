//! Proxy stubs (`proxyBaseUrl`, `--proxy-all`) in front of a real downstream (another mock on
//! loopback), and response templating switched on globally. WireMock's own answers for the same
//! stubs are checked in `tests/wiremock.rs`; these check what only the mock has: in-flight
//! counts and delays on top of the downstream's time, and the 500s.
use super::client::{get, request, start, stats};
use chokepoint_mock::MockConfig;
use std::time::{Duration, Instant};

fn downstream(delay_ms: u64) -> chokepoint_mock::RunningMock {
    let json = format!(
        r#"{{"request": {{"method": "ANY"}}, "response": {{"status": 202, "body": "from downstream",
            "headers": {{"X-Down": "yes"}}, "fixedDelayMilliseconds": {delay_ms}}}}}"#
    );
    start(MockConfig {
        mappings: chokepoint_mock::parse_mappings(&json, "downstream").unwrap(),
        ..MockConfig::default()
    })
}

#[test]
fn proxied_calls_are_counted_in_flight_and_get_the_stubs_delay_on_top() {
    let down = downstream(200);
    let stub = format!(
        r#"{{"request": {{"urlPath": "/slow"}}, "response": {{"proxyBaseUrl": "{}",
            "fixedDelayMilliseconds": 100, "headers": {{"X-Stub": "front"}}}}}}"#,
        down.url()
    );
    let mut mappings = chokepoint_mock::parse_mappings(&stub, "front").unwrap();
    mappings.push(chokepoint_mock::proxy_all(&down.url()).unwrap());
    let front = start(MockConfig {
        mappings,
        ..MockConfig::default()
    });
    let addr = front.addr();
    let clients: Vec<_> = (0..8)
        .map(|_| {
            std::thread::spawn(move || {
                let started = Instant::now();
                let reply = get(addr, "/slow");
                (reply, started.elapsed())
            })
        })
        .collect();
    for client in clients {
        let (reply, took) = client.join().unwrap();
        assert_eq!(reply.status, 202, "{}", reply.text());
        assert_eq!(reply.text(), "from downstream");
        assert_eq!(reply.header("x-down"), Some("yes"));
        assert_eq!(reply.header("x-stub"), Some("front"));
        // The downstream's 200 ms, then the stub's 100 ms.
        assert!(took >= Duration::from_millis(300), "{took:?}");
    }
    let (front_stats, down_stats) = (stats(addr), stats(down.addr()));
    assert_eq!(front_stats.requests, 8);
    assert_eq!(down_stats.requests, 8);
    assert_eq!(front_stats.max_in_flight, 8, "{front_stats:?}");
    assert_eq!(down_stats.max_in_flight, 8, "{down_stats:?}");
    // --proxy-all: what no other stub matches goes to the downstream, without a delay of its own.
    let started = Instant::now();
    let reply = get(addr, "/anything/else?x=1");
    assert_eq!(
        (reply.status, reply.text().as_str()),
        (202, "from downstream")
    );
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert_eq!(stats(down.addr()).requests, 9);
}

#[test]
fn an_unreachable_downstream_gets_wiremocks_500() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let front = start(MockConfig {
        mappings: vec![chokepoint_mock::proxy_all(&format!("http://127.0.0.1:{port}")).unwrap()],
        ..MockConfig::default()
    });
    let reply = get(front.addr(), "/x?y=1");
    assert_eq!(reply.status, 500);
    let expected = format!(
        "Network failure trying to make a proxied request from WireMock to http://127.0.0.1:{port}/x?y=1\r\n"
    );
    assert!(reply.text().starts_with(&expected), "{}", reply.text());
    assert_eq!(stats(front.addr()).in_flight, 0);
}

#[test]
fn global_templating_renders_every_stub_and_a_broken_one_answers_500() {
    let json = r#"{"mappings": [
      {"request": {"urlPath": "/hello"}, "response": {"body": "hello {{request.query.name}}",
        "headers": {"X-Len": "{{size request.query.name}}"}}},
      {"request": {"urlPath": "/broken"}, "response": {"body": "{{#if x}}never closed"}}
    ]}"#;
    let config = |global| MockConfig {
        mappings: chokepoint_mock::parse_mappings(json, "t").unwrap(),
        global_templating: global,
        ..MockConfig::default()
    };
    let plain = start(config(false));
    let reply = get(plain.addr(), "/hello?name=ada");
    assert_eq!(reply.text(), "hello {{request.query.name}}");
    assert_eq!(get(plain.addr(), "/broken").status, 200);
    let global = start(config(true));
    let reply = get(global.addr(), "/hello?name=ada");
    assert_eq!(reply.text(), "hello ada");
    assert_eq!(reply.header("x-len"), Some("1"));
    let reply = get(global.addr(), "/broken");
    assert_eq!(reply.status, 500);
    assert!(
        reply.text().contains("invalid handlebars syntax"),
        "{}",
        reply.text()
    );
}

#[test]
fn a_templated_file_name_stays_inside_files() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/differential");
    let json = r#"{"request": {"urlPath": "/file"}, "response": {
        "transformers": ["response-template"], "bodyFileName": "{{request.query.name}}"}}"#;
    let mock = start(MockConfig {
        mappings: chokepoint_mock::parse_mappings_with_files(
            json,
            "t",
            Some(&root.join("__files")),
        )
        .unwrap(),
        files_root: Some(root.join("__files")),
        ..MockConfig::default()
    });
    let reply = get(mock.addr(), "/file?name=templates/welcome.txt");
    assert_eq!(reply.status, 200);
    assert_eq!(reply.text(), "greetings templates/welcome.txt via GET\n");
    let reply = request(
        mock.addr(),
        "GET",
        "/file?name=../mappings/proxy.json",
        &[],
        "",
    );
    assert_eq!(reply.status, 500);
    assert!(
        reply.text().contains("outside the __files folder"),
        "{}",
        reply.text()
    );
}
