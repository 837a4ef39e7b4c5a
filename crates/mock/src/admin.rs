//! The mock's own endpoints, never counted as downstream traffic and never delayed:
//! WireMock's admin API under `/__admin/`, chokepoint's stats under `/__chokepoint/`, and
//! Prometheus text at `/metrics`.
use crate::body::MockBody;
use crate::mapping;
use crate::state::{stub_name, MockState};
use bytes::Bytes;
use http::{Method, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde_json::{json, Value};
use std::fmt::Write;
use std::sync::atomic::Ordering;
use std::time::Duration;

type Response = hyper::Response<MockBody>;

/// Answers one admin, stats or metrics request.
pub(crate) async fn handle(state: &MockState, request: hyper::Request<Incoming>) -> Response {
    let (parts, body) = request.into_parts();
    let body = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(err) => return error(StatusCode::BAD_REQUEST, &format!("cannot read body: {err}")),
    };
    let path = parts.uri.path().trim_end_matches('/');
    let method = &parts.method;
    match (method, path) {
        (&Method::GET, "/__chokepoint/stats") => json_response(StatusCode::OK, &state.stats()),
        (&Method::GET | &Method::POST, "/__chokepoint/reset") => {
            json_response(StatusCode::OK, &state.reset_stats())
        }
        (&Method::GET, "/metrics" | "/__chokepoint/metrics") => text(
            StatusCode::OK,
            "text/plain; version=0.0.4; charset=utf-8",
            prometheus(state),
        ),
        (&Method::GET, "/__admin/health") => {
            json_response(StatusCode::OK, &json!({"status": "healthy"}))
        }
        (&Method::GET, "/__admin/mappings") => {
            let mut stubs = state.stubs().iter().cloned().collect::<Vec<_>>();
            stubs.sort_by_key(|s| std::cmp::Reverse(s.seq));
            let list: Vec<&Value> = stubs.iter().map(|s| &s.mapping.json).collect();
            json_response(
                StatusCode::OK,
                &json!({"mappings": list, "meta": {"total": list.len()}}),
            )
        }
        (&Method::POST, "/__admin/mappings") => match parse_one(state, &body, None) {
            Ok(mapping) => {
                let json = mapping.json.clone();
                state.upsert_stub(mapping);
                json_response(StatusCode::CREATED, &json)
            }
            Err(message) => error(StatusCode::UNPROCESSABLE_ENTITY, &message),
        },
        (&Method::DELETE, "/__admin/mappings") => {
            state.replace_stubs(Vec::new());
            json_response(StatusCode::OK, &json!({}))
        }
        (&Method::POST, "/__admin/mappings/reset") => {
            state.reset_stubs();
            json_response(StatusCode::OK, &json!({}))
        }
        (&Method::POST, "/__admin/reset") => {
            state.reset_stubs();
            state.clear_journal();
            json_response(StatusCode::OK, &json!({}))
        }
        (&Method::GET, "/__admin/settings") => json_response(
            StatusCode::OK,
            &json!({"settings": {"fixedDelay": state.fixed_delay().map(|d| d.as_millis() as u64)}}),
        ),
        (&Method::POST | &Method::PUT, "/__admin/settings") => settings(state, &body),
        (&Method::GET, "/__admin/requests") => match state.journal_entries() {
            Some(entries) => json_response(
                StatusCode::OK,
                &json!({"requests": entries.iter().rev().collect::<Vec<_>>(),
                        "meta": {"total": entries.len()}, "requestJournalDisabled": false}),
            ),
            None => json_response(
                StatusCode::OK,
                &json!({"requests": [], "meta": {"total": 0}, "requestJournalDisabled": true}),
            ),
        },
        (&Method::DELETE, "/__admin/requests") => {
            state.clear_journal();
            json_response(StatusCode::OK, &json!({}))
        }
        _ => match path.strip_prefix("/__admin/mappings/") {
            Some(id) => one_mapping(state, method, id, &body),
            None => error(
                StatusCode::NOT_FOUND,
                &format!("no admin endpoint {method} {path}"),
            ),
        },
    }
}

fn one_mapping(state: &MockState, method: &Method, id: &str, body: &Bytes) -> Response {
    let stubs = state.stubs();
    let existing = stubs.iter().find(|s| s.mapping.id == id);
    match *method {
        Method::GET => match existing {
            Some(stub) => json_response(StatusCode::OK, &stub.mapping.json),
            None => error(StatusCode::NOT_FOUND, &format!("no mapping with id {id}")),
        },
        Method::PUT => match parse_one(state, body, Some(id)) {
            Ok(mapping) if existing.is_some() => {
                let json = mapping.json.clone();
                state.upsert_stub(mapping);
                json_response(StatusCode::OK, &json)
            }
            Ok(_) => error(StatusCode::NOT_FOUND, &format!("no mapping with id {id}")),
            Err(message) => error(StatusCode::UNPROCESSABLE_ENTITY, &message),
        },
        Method::DELETE => {
            if state.remove_stub(id) {
                json_response(StatusCode::OK, &json!({}))
            } else {
                error(StatusCode::NOT_FOUND, &format!("no mapping with id {id}"))
            }
        }
        _ => error(
            StatusCode::METHOD_NOT_ALLOWED,
            &format!("{method} is not allowed on a mapping"),
        ),
    }
}

/// Parses one mapping sent to the admin API; `id` overrides the body's (for PUT).
fn parse_one(
    state: &MockState,
    body: &Bytes,
    id: Option<&str>,
) -> Result<mapping::Mapping, String> {
    let text = std::str::from_utf8(body).map_err(|_| "the body is not UTF-8".to_string())?;
    let text = match id {
        Some(id) => {
            let mut value: Value = serde_json::from_str(text).map_err(|err| {
                format!(
                    "admin API: invalid JSON at line {}, column {}",
                    err.line(),
                    err.column()
                )
            })?;
            if let Value::Object(map) = &mut value {
                map.remove("uuid");
                map.insert("id".into(), Value::String(id.to_string()));
            }
            value.to_string()
        }
        None => text.to_string(),
    };
    let mut mappings =
        mapping::parse_mappings_with_files(&text, "admin API", state.files_root.as_deref())
            .map_err(|err| err.to_string())?;
    match (mappings.pop(), mappings.is_empty()) {
        (Some(mapping), true) => Ok(mapping),
        _ => Err("admin API: send one mapping per request".to_string()),
    }
}

fn settings(state: &MockState, body: &Bytes) -> Response {
    let value: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(err) => return error(StatusCode::BAD_REQUEST, &format!("invalid JSON: {err}")),
    };
    // WireMock accepts the settings at the top level or under "settings".
    let settings = value.get("settings").unwrap_or(&value);
    match settings.get("fixedDelay") {
        None => {}
        Some(Value::Null) => state.set_fixed_delay(None),
        Some(delay) => match delay.as_f64().filter(|d| d.is_finite() && *d >= 0.0) {
            Some(ms) => state.set_fixed_delay(Some(Duration::from_secs_f64(ms / 1000.0))),
            None => {
                return error(
                    StatusCode::BAD_REQUEST,
                    "fixedDelay must be milliseconds >= 0",
                )
            }
        },
    }
    json_response(
        StatusCode::OK,
        &json!({"settings": {"fixedDelay": state.fixed_delay().map(|d| d.as_millis() as u64)}}),
    )
}

fn prometheus(state: &MockState) -> String {
    let stats = state.stats();
    let mut out = String::new();
    let mut metric = |name: &str, kind: &str, help: &str, value: String| {
        let _ = writeln!(out, "# HELP chokepoint_mock_{name} {help}");
        let _ = writeln!(out, "# TYPE chokepoint_mock_{name} {kind}");
        let _ = writeln!(out, "chokepoint_mock_{name} {value}");
    };
    metric(
        "window_seconds",
        "gauge",
        "Seconds since the stats window began.",
        stats.window_s.to_string(),
    );
    metric(
        "requests_total",
        "counter",
        "Requests received in the window (admin excluded).",
        stats.requests.to_string(),
    );
    metric(
        "unmatched_total",
        "counter",
        "Requests that matched no stub in the window.",
        stats.unmatched.to_string(),
    );
    metric(
        "in_flight",
        "gauge",
        "Requests in flight now.",
        stats.in_flight.to_string(),
    );
    metric(
        "max_in_flight",
        "gauge",
        "The most requests in flight at once in the window.",
        stats.max_in_flight.to_string(),
    );
    metric(
        "mean_in_flight",
        "gauge",
        "Time-weighted mean of requests in flight over the window.",
        stats.mean_in_flight.to_string(),
    );
    metric(
        "connections_open",
        "gauge",
        "Connections open now (admin excluded).",
        stats.connections_open.to_string(),
    );
    metric(
        "max_connections_open",
        "gauge",
        "The most connections open at once in the window.",
        stats.max_connections_open.to_string(),
    );
    metric(
        "connections_accepted_total",
        "counter",
        "Connections accepted in the window.",
        stats.connections_accepted.to_string(),
    );
    metric(
        "connections_waiting",
        "gauge",
        "Connections waiting for a slot at --max-connections.",
        state.connections_waiting().to_string(),
    );
    let _ = writeln!(
        out,
        "# HELP chokepoint_mock_stub_requests_total Requests answered by each stub in the window."
    );
    let _ = writeln!(out, "# TYPE chokepoint_mock_stub_requests_total counter");
    for stub in state.stubs().iter() {
        let _ = writeln!(
            out,
            "chokepoint_mock_stub_requests_total{{id=\"{}\",name=\"{}\"}} {}",
            escape_label(&stub.mapping.id),
            escape_label(&stub_name(&stub.mapping)),
            stub.requests.load(Ordering::Relaxed)
        );
    }
    out
}

fn escape_label(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn json_response(status: StatusCode, value: &impl serde::Serialize) -> Response {
    let body = serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec());
    text(status, "application/json", body)
}

fn error(status: StatusCode, message: &str) -> Response {
    json_response(status, &json!({"errors": [{"title": message}]}))
}

fn text(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Response {
    let mut response = hyper::Response::new(MockBody::full(body.into(), None));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(content_type),
    );
    response
}
