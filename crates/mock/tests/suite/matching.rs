//! Each request matcher and response field, priorities, and the near-miss 404.
use super::client::{get, request, start_with};

const STUBS: &str = r#"{"mappings": [
  {"name": "exact url", "request": {"method": "GET", "url": "/exact?b=1"},
   "response": {"status": 200, "body": "exact"}},
  {"name": "url path", "request": {"urlPath": "/path"},
   "response": {"body": "path"}},
  {"name": "path pattern", "request": {"method": "GET", "urlPathPattern": "/items/[0-9]+"},
   "response": {"body": "item"}},
  {"name": "url pattern", "request": {"urlPattern": "/search\\?q=[a-z]+"},
   "response": {"body": "search"}},
  {"name": "post only", "request": {"method": "POST", "urlPath": "/orders"},
   "response": {"status": 201, "statusMessage": "Made It", "body": "created"}},
  {"name": "header equal", "request": {"urlPath": "/h/eq", "headers": {"X-Key": {"equalTo": "abc"}}},
   "response": {"body": "eq"}},
  {"name": "header equal ci", "request": {"urlPath": "/h/ci",
     "headers": {"X-Key": {"equalTo": "abc", "caseInsensitive": true}}},
   "response": {"body": "ci"}},
  {"name": "header contains", "request": {"urlPath": "/h/contains",
     "headers": {"Accept": {"contains": "json"}}},
   "response": {"body": "contains"}},
  {"name": "header matches", "request": {"urlPath": "/h/matches",
     "headers": {"X-Id": {"matches": "[0-9]{3}"}}},
   "response": {"body": "matches"}},
  {"name": "header absent", "request": {"urlPath": "/h/absent",
     "headers": {"X-Debug": {"absent": true}}},
   "response": {"body": "absent"}},
  {"name": "header does not match", "request": {"urlPath": "/h/dnm",
     "headers": {"X-Id": {"doesNotMatch": "[0-9]+"}}},
   "response": {"body": "dnm"}},
  {"name": "query equal", "request": {"urlPath": "/q/eq", "queryParameters": {"a": {"equalTo": "x y"}}},
   "response": {"body": "qeq"}},
  {"name": "query contains", "request": {"urlPath": "/q/contains",
     "queryParameters": {"a": {"contains": "mid"}}},
   "response": {"body": "qcontains"}},
  {"name": "query matches", "request": {"urlPath": "/q/matches",
     "queryParameters": {"n": {"matches": "[0-9]+"}}},
   "response": {"body": "qmatches"}},
  {"name": "query absent", "request": {"urlPath": "/q/absent",
     "queryParameters": {"debug": {"absent": true}}},
   "response": {"body": "qabsent"}},
  {"name": "json", "request": {"urlPath": "/json"},
   "response": {"jsonBody": {"ok": true, "n": [1, 2]},
                "headers": {"Content-Type": "application/json", "X-Multi": ["1", "2"]}}},
  {"name": "base64", "request": {"urlPath": "/b64"},
   "response": {"base64Body": "aGVsbG8gd29ybGQ="}},
  {"name": "status only", "request": {"urlPath": "/teapot"},
   "response": {"status": 418}},
  {"name": "low priority", "priority": 9, "request": {"urlPath": "/prio"},
   "response": {"body": "low"}},
  {"name": "high priority", "priority": 1, "request": {"urlPath": "/prio"},
   "response": {"body": "high"}},
  {"name": "older same priority", "request": {"urlPath": "/same"},
   "response": {"body": "older"}},
  {"name": "newer same priority", "request": {"urlPath": "/same"},
   "response": {"body": "newer"}}
]}"#;

#[test]
fn method_and_url_matchers() {
    let mock = start_with(STUBS);
    let addr = mock.addr();
    assert_eq!(get(addr, "/exact?b=1").text(), "exact");
    assert_eq!(get(addr, "/exact?b=2").status, 404);
    assert_eq!(get(addr, "/exact").status, 404);
    assert_eq!(request(addr, "POST", "/exact?b=1", &[], "").status, 404);

    assert_eq!(get(addr, "/path").text(), "path");
    assert_eq!(get(addr, "/path?any=thing").text(), "path");
    assert_eq!(request(addr, "DELETE", "/path", &[], "").text(), "path");
    assert_eq!(get(addr, "/path/more").status, 404);

    assert_eq!(get(addr, "/items/42").text(), "item");
    assert_eq!(get(addr, "/items/42?x=1").text(), "item");
    assert_eq!(get(addr, "/items/4x").status, 404);
    assert_eq!(
        get(addr, "/items/42/parts").status,
        404,
        "the pattern must match the whole path"
    );

    assert_eq!(get(addr, "/search?q=abc").text(), "search");
    assert_eq!(get(addr, "/search?q=ABC").status, 404);
    assert_eq!(get(addr, "/search").status, 404);

    let created = request(addr, "POST", "/orders", &[], "{}");
    assert_eq!((created.status, created.reason.as_str()), (201, "Made It"));
    assert_eq!(created.text(), "created");
    assert_eq!(get(addr, "/orders").status, 404);
}

#[test]
fn header_matchers() {
    let mock = start_with(STUBS);
    let addr = mock.addr();
    let with = |path: &str, headers: &[(&str, &str)]| request(addr, "GET", path, headers, "");
    assert_eq!(with("/h/eq", &[("X-Key", "abc")]).text(), "eq");
    assert_eq!(
        with("/h/eq", &[("x-key", "abc")]).text(),
        "eq",
        "header names ignore case"
    );
    assert_eq!(with("/h/eq", &[("X-Key", "ABC")]).status, 404);
    assert_eq!(with("/h/eq", &[]).status, 404);
    assert_eq!(with("/h/ci", &[("X-Key", "ABC")]).text(), "ci");
    assert_eq!(
        with("/h/contains", &[("Accept", "application/json; q=1")]).text(),
        "contains"
    );
    assert_eq!(with("/h/contains", &[("Accept", "text/html")]).status, 404);
    assert_eq!(with("/h/matches", &[("X-Id", "123")]).text(), "matches");
    assert_eq!(with("/h/matches", &[("X-Id", "1234")]).status, 404);
    assert_eq!(with("/h/absent", &[]).text(), "absent");
    assert_eq!(with("/h/absent", &[("X-Debug", "1")]).status, 404);
    assert_eq!(with("/h/dnm", &[("X-Id", "abc")]).text(), "dnm");
    assert_eq!(with("/h/dnm", &[("X-Id", "123")]).status, 404);
}

#[test]
fn query_parameter_matchers() {
    let mock = start_with(STUBS);
    let addr = mock.addr();
    assert_eq!(get(addr, "/q/eq?a=x+y").text(), "qeq");
    assert_eq!(get(addr, "/q/eq?z=1&a=x%20y").text(), "qeq");
    assert_eq!(get(addr, "/q/eq?a=x").status, 404);
    assert_eq!(get(addr, "/q/contains?a=amidst").text(), "qcontains");
    assert_eq!(get(addr, "/q/contains?a=none").status, 404);
    assert_eq!(get(addr, "/q/matches?n=77").text(), "qmatches");
    assert_eq!(get(addr, "/q/matches?n=7a").status, 404);
    assert_eq!(get(addr, "/q/absent").text(), "qabsent");
    assert_eq!(get(addr, "/q/absent?debug=1").status, 404);
}

#[test]
fn response_fields() {
    let mock = start_with(STUBS);
    let addr = mock.addr();
    let json = get(addr, "/json");
    assert_eq!(json.status, 200);
    assert_eq!(json.json(), serde_json::json!({"ok": true, "n": [1, 2]}));
    assert_eq!(json.header("content-type"), Some("application/json"));
    assert_eq!(json.header_values("x-multi"), vec!["1", "2"]);
    assert_eq!(get(addr, "/b64").text(), "hello world");
    let teapot = get(addr, "/teapot");
    assert_eq!(teapot.status, 418);
    assert!(teapot.body.is_empty());
}

#[test]
fn priorities_and_recency() {
    let mock = start_with(STUBS);
    let addr = mock.addr();
    assert_eq!(
        get(addr, "/prio").text(),
        "high",
        "priority 1 beats 9 although added later"
    );
    assert_eq!(
        get(addr, "/same").text(),
        "newer",
        "same priority: the newest stub wins"
    );
}

#[test]
fn unmatched_requests_get_404_naming_the_closest_stub() {
    let mock = start_with(STUBS);
    let addr = mock.addr();
    let reply = request(addr, "GET", "/orders", &[], "");
    assert_eq!(reply.status, 404);
    let text = reply.text();
    assert!(text.contains("No stub matched GET /orders"), "{text}");
    assert!(text.contains("Closest stub: 'post only'"), "{text}");
    assert!(text.contains("method POST expected, got GET"), "{text}");
    let stats = super::client::stats(addr);
    assert_eq!(stats.unmatched, 1);
    assert_eq!(stats.requests, 1, "the stats request itself is not counted");
}
