//! WireMock's admin API round trips, the journal, and the stats and metrics endpoints.
use super::client::{get, request, start, start_with, stats};
use chokepoint_mock::MockConfig;
use std::time::{Duration, Instant};

#[test]
fn add_list_get_edit_remove_and_reset_mappings() {
    let mock = start_with(
        r#"{"id": "base-1", "request": {"urlPath": "/base"}, "response": {"body": "base"}}"#,
    );
    let addr = mock.addr();
    assert_eq!(get(addr, "/added").status, 404);

    let created = request(
        addr,
        "POST",
        "/__admin/mappings",
        &[("Content-Type", "application/json")],
        r#"{"name": "added", "request": {"method": "GET", "url": "/added"}, "response": {"status": 202, "body": "new"}}"#,
    );
    assert_eq!(created.status, 201, "{}", created.text());
    let id = created.json()["id"]
        .as_str()
        .expect("an id is made up")
        .to_string();
    let reply = get(addr, "/added");
    assert_eq!((reply.status, reply.text().as_str()), (202, "new"));

    let list = get(addr, "/__admin/mappings").json();
    assert_eq!(list["meta"]["total"], 2);
    let ids: Vec<&str> = list["mappings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&id.as_str()) && ids.contains(&"base-1"),
        "{ids:?}"
    );

    assert_eq!(
        get(addr, &format!("/__admin/mappings/{id}")).json()["name"],
        "added"
    );
    let edited = request(
        addr,
        "PUT",
        &format!("/__admin/mappings/{id}"),
        &[],
        r#"{"request": {"url": "/added"}, "response": {"body": "edited"}}"#,
    );
    assert_eq!(edited.status, 200, "{}", edited.text());
    assert_eq!(get(addr, "/added").text(), "edited");

    assert_eq!(
        request(addr, "DELETE", &format!("/__admin/mappings/{id}"), &[], "").status,
        200
    );
    assert_eq!(get(addr, "/added").status, 404);
    assert_eq!(
        request(addr, "DELETE", &format!("/__admin/mappings/{id}"), &[], "").status,
        404
    );

    assert_eq!(
        request(addr, "DELETE", "/__admin/mappings", &[], "").status,
        200
    );
    assert_eq!(get(addr, "/base").status, 404);
    assert_eq!(
        request(addr, "POST", "/__admin/mappings/reset", &[], "").status,
        200
    );
    assert_eq!(
        get(addr, "/base").text(),
        "base",
        "reset restores the loaded mappings"
    );

    // Admin traffic is never counted as downstream traffic.
    let stats = stats(addr);
    assert_eq!(stats.requests, 6);
}

#[test]
fn an_invalid_mapping_is_refused_with_its_path() {
    let mock = start(MockConfig::default());
    let reply = request(
        mock.addr(),
        "POST",
        "/__admin/mappings",
        &[],
        r#"{"request": {"urlPathPattern": "(unclosed"}, "response": {}}"#,
    );
    assert_eq!(reply.status, 422);
    let message = reply.json()["errors"][0]["title"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains("$.request.urlPathPattern: the regex does not compile"),
        "{message}"
    );
}

#[test]
fn the_global_fixed_delay_setting() {
    let mock = start(MockConfig::default());
    let addr = mock.addr();
    let set = request(
        addr,
        "POST",
        "/__admin/settings",
        &[],
        r#"{"fixedDelay": 200}"#,
    );
    assert_eq!(set.status, 200);
    assert_eq!(
        get(addr, "/__admin/settings").json()["settings"]["fixedDelay"],
        200
    );
    let started = Instant::now();
    assert_eq!(get(addr, "/x").text(), "OK");
    assert!(started.elapsed() >= Duration::from_millis(200));
    // Admin and stats requests never wait behind the delay: the stats show the setting.
    assert_eq!(stats(addr).config.fixed_delay_ms, Some(200.0));
    request(
        addr,
        "POST",
        "/__admin/settings",
        &[],
        r#"{"fixedDelay": null}"#,
    );
    assert!(get(addr, "/__admin/settings").json()["settings"]["fixedDelay"].is_null());
    mock.set_fixed_delay(Some(Duration::from_millis(5)));
    assert_eq!(mock.stats().config.fixed_delay_ms, Some(5.0));
}

#[test]
fn the_journal_is_bounded_and_off_by_default() {
    let off = start(MockConfig::default());
    get(off.addr(), "/a");
    let journal = get(off.addr(), "/__admin/requests").json();
    assert_eq!(journal["requestJournalDisabled"], true);
    assert_eq!(journal["requests"].as_array().unwrap().len(), 0);

    let on = start(MockConfig {
        journal: 3,
        ..MockConfig::default()
    });
    for i in 0..8 {
        get(on.addr(), &format!("/r{i}"));
    }
    let journal = get(on.addr(), "/__admin/requests").json();
    let urls: Vec<&str> = journal["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["request"]["url"].as_str().unwrap())
        .collect();
    assert_eq!(urls, vec!["/r7", "/r6", "/r5"], "newest first, at most 3");
    assert_eq!(
        request(on.addr(), "DELETE", "/__admin/requests", &[], "").status,
        200
    );
    assert_eq!(
        get(on.addr(), "/__admin/requests").json()["meta"]["total"],
        0
    );
}

#[test]
fn metrics_are_prometheus_text_with_the_same_counters() {
    let mock = start(MockConfig::default());
    let addr = mock.addr();
    for _ in 0..3 {
        get(addr, "/x");
    }
    let reply = get(addr, "/metrics");
    assert_eq!(reply.status, 200);
    assert!(reply
        .header("content-type")
        .unwrap()
        .starts_with("text/plain"));
    let text = reply.text();
    assert!(
        text.contains("\nchokepoint_mock_requests_total 3\n"),
        "{text}"
    );
    assert!(
        text.contains("\nchokepoint_mock_max_in_flight 1\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "chokepoint_mock_stub_requests_total{id=\"00000000-0000-4000-8000-000000000000\""
        ),
        "{text}"
    );
    let reset = request(addr, "POST", "/__chokepoint/reset", &[], "");
    assert_eq!(reset.status, 200);
    assert!(get(addr, "/metrics")
        .text()
        .contains("\nchokepoint_mock_requests_total 0\n"));
}
