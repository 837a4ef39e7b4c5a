//! The mock's own endpoints, never counted as downstream traffic and never delayed:
//! WireMock's admin API under `/__admin/` (what its Java client and the `wiremock` PyPI package
//! call), chokepoint's stats under `/__chokepoint/`, and Prometheus text at `/metrics`.
use crate::body::MockBody;
use crate::mapping::{self, Mapping};
use crate::metrics::prometheus;
use crate::state::MockState;
use bytes::Bytes;
use http::{Method, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde_json::{json, Value};
use std::time::Duration;

type Response = hyper::Response<MockBody>;

/// WireMock's words when verification is asked of a mock without a journal.
const JOURNAL_OFF: &str = "The request journal is disabled, so no verification or request \
                           searching operations are available: start the mock with --journal N";

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
        (&Method::POST, "/__admin/reset") => {
            state.reset_stubs();
            state.clear_journal();
            state.scenarios.reset();
            ok()
        }
        (&Method::GET, "/__admin/settings") => settings_response(state),
        (&Method::POST | &Method::PUT | &Method::PATCH, "/__admin/settings") => {
            settings(state, &body)
        }
        (_, p) if p == "/__admin/mappings" || p.starts_with("/__admin/mappings/") => {
            mappings(state, method, p, &body)
        }
        (_, p) if p == "/__admin/requests" || p.starts_with("/__admin/requests/") => {
            requests(state, method, p, &body)
        }
        (_, p) if p == "/__admin/scenarios" || p.starts_with("/__admin/scenarios/") => {
            scenarios(state, method, p, &body)
        }
        (_, p) if p.starts_with("/__admin/recordings/") => {
            let (status, answer) = crate::recording::admin(state, method, p, &body);
            json_response(status, &answer)
        }
        _ => error(
            StatusCode::NOT_FOUND,
            &format!("no admin endpoint {method} {path}"),
        ),
    }
}

/// `/__admin/mappings[/...]`.
fn mappings(state: &MockState, method: &Method, path: &str, body: &Bytes) -> Response {
    match (method, path) {
        (&Method::GET, "/__admin/mappings") => {
            let mut stubs = state.stubs().iter().cloned().collect::<Vec<_>>();
            stubs.sort_by_key(|s| std::cmp::Reverse(s.seq));
            let list: Vec<&Value> = stubs.iter().map(|s| &s.mapping.json).collect();
            json_response(
                StatusCode::OK,
                &json!({"mappings": list, "meta": {"total": list.len()}}),
            )
        }
        (&Method::POST, "/__admin/mappings") => match parse_one(state, body, None) {
            Ok(mapping) => {
                let json = mapping.json.clone();
                state.upsert_stub(mapping);
                json_response(StatusCode::CREATED, &json)
            }
            Err(message) => error(StatusCode::UNPROCESSABLE_ENTITY, &message),
        },
        (&Method::DELETE, "/__admin/mappings") => {
            state.replace_stubs(Vec::new());
            ok()
        }
        (&Method::POST, "/__admin/mappings/reset") => {
            state.reset_stubs();
            ok()
        }
        // The mock keeps no files: saving is a no-op, as for stubs that are not persistent.
        (&Method::POST, "/__admin/mappings/save") => ok(),
        (&Method::POST, "/__admin/mappings/import") => import(state, body),
        // The Java client's removeStubMapping: the stub in the body, removed by its id.
        (&Method::POST, "/__admin/mappings/remove") => {
            let id = serde_json::from_slice::<Value>(body).ok().and_then(|v| {
                v.get("id")
                    .or_else(|| v.get("uuid"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            });
            match id {
                Some(id) if state.remove_stub(&id) => ok(),
                Some(id) => error(StatusCode::NOT_FOUND, &format!("no mapping with id {id}")),
                None => error(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "send the stub to remove, with its id",
                ),
            }
        }
        _ => match path.strip_prefix("/__admin/mappings/") {
            Some(id) => one_mapping(state, method, id, body),
            None => not_allowed(method, path),
        },
    }
}

/// `POST /__admin/mappings/import`: `{"mappings": [...], "importOptions": {...}}`.
fn import(state: &MockState, body: &Bytes) -> Response {
    let Ok(text) = std::str::from_utf8(body) else {
        return error(StatusCode::BAD_REQUEST, "the body is not UTF-8");
    };
    let options = serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| v.get("importOptions").cloned())
        .unwrap_or(Value::Null);
    let mut stripped: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut stripped {
        map.remove("importOptions");
    }
    let parsed = mapping::parse_mappings_with_files(
        &stripped.to_string(),
        "admin API",
        state.files_root.as_deref(),
    );
    let mappings = match parsed {
        Ok(mappings) => mappings,
        Err(err) => return error(StatusCode::UNPROCESSABLE_ENTITY, &err.to_string()),
    };
    let ignore_duplicates =
        options.get("duplicatePolicy").and_then(Value::as_str) == Some("IGNORE");
    let delete_others = options
        .get("deleteAllNotInImport")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if delete_others {
        state.replace_stubs(Vec::new());
    }
    let existing = state.stubs();
    for mapping in mappings {
        let duplicate = existing.iter().any(|s| s.mapping.id == mapping.id);
        if !(duplicate && ignore_duplicates) {
            state.upsert_stub(mapping);
        }
    }
    ok()
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
                ok()
            } else {
                error(StatusCode::NOT_FOUND, &format!("no mapping with id {id}"))
            }
        }
        _ => not_allowed(method, "a mapping"),
    }
}

/// `/__admin/requests[/...]`: the journal.
fn requests(state: &MockState, method: &Method, path: &str, body: &Bytes) -> Response {
    let reset = matches!(
        (method, path),
        (&Method::DELETE, "/__admin/requests") | (&Method::POST, "/__admin/requests/reset")
    );
    if reset {
        state.clear_journal();
        return ok();
    }
    let Some(journal) = &state.journal else {
        return match (method, path) {
            (&Method::GET, "/__admin/requests") => json_response(
                StatusCode::OK,
                &json!({"requests": [], "meta": {"total": 0}, "requestJournalDisabled": true}),
            ),
            _ => error(StatusCode::INTERNAL_SERVER_ERROR, JOURNAL_OFF),
        };
    };
    match (method, path) {
        (&Method::GET, "/__admin/requests") => {
            let requests = journal.all_json();
            json_response(
                StatusCode::OK,
                &json!({"requests": requests, "meta": {"total": requests.len()},
                        "requestJournalDisabled": false}),
            )
        }
        (&Method::GET, "/__admin/requests/unmatched") => json_response(
            StatusCode::OK,
            &json!({"requests": journal.unmatched_json(), "requestJournalDisabled": false}),
        ),
        (&Method::POST, "/__admin/requests/count" | "/__admin/requests/find") => {
            let pattern = serde_json::from_slice::<Value>(body)
                .map_err(|err| format!("admin API: invalid JSON: {err}"))
                .and_then(|value| {
                    mapping::parse_request_pattern(&value, "admin API")
                        .map_err(|err| err.to_string())
                });
            match pattern {
                Ok(pattern) if path.ends_with("count") => json_response(
                    StatusCode::OK,
                    &json!({"count": journal.count(&pattern), "requestJournalDisabled": false}),
                ),
                Ok(pattern) => json_response(
                    StatusCode::OK,
                    &json!({"requests": journal.find_json(&pattern),
                            "requestJournalDisabled": false}),
                ),
                Err(message) => error(StatusCode::UNPROCESSABLE_ENTITY, &message),
            }
        }
        _ => not_allowed(method, path),
    }
}

/// `/__admin/scenarios[/...]`.
fn scenarios(state: &MockState, method: &Method, path: &str, body: &Bytes) -> Response {
    let stubs = state.stubs();
    let mappings: Vec<&Mapping> = stubs.iter().map(|s| &s.mapping).collect();
    match (method, path) {
        (&Method::GET, "/__admin/scenarios") => {
            json_response(StatusCode::OK, &state.scenarios.json(&mappings))
        }
        (&Method::POST, "/__admin/scenarios/reset") => {
            state.scenarios.reset();
            ok()
        }
        (&Method::PUT, _) => {
            let name = path
                .strip_prefix("/__admin/scenarios/")
                .and_then(|rest| rest.strip_suffix("/state"));
            let wanted = serde_json::from_slice::<Value>(body)
                .ok()
                .and_then(|v| v.get("state").and_then(Value::as_str).map(str::to_string));
            match (name, wanted) {
                (Some(name), Some(wanted)) => {
                    let name = crate::matching::percent_decode_path(name);
                    if state.scenarios.set(&mappings, &name, &wanted) {
                        ok()
                    } else {
                        error(StatusCode::NOT_FOUND, &format!("no scenario named {name}"))
                    }
                }
                _ => error(
                    StatusCode::BAD_REQUEST,
                    "PUT /__admin/scenarios/NAME/state with {\"state\": \"...\"}",
                ),
            }
        }
        _ => not_allowed(method, path),
    }
}

/// Parses one mapping sent to the admin API; `id` overrides the body's (for PUT).
fn parse_one(state: &MockState, body: &Bytes, id: Option<&str>) -> Result<Mapping, String> {
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

fn settings_response(state: &MockState) -> Response {
    json_response(
        StatusCode::OK,
        &json!({"settings": {"fixedDelay": state.fixed_delay().map(|d| d.as_millis() as u64)}}),
    )
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
    settings_response(state)
}

fn ok() -> Response {
    json_response(StatusCode::OK, &json!({}))
}

fn not_allowed(method: &Method, what: &str) -> Response {
    error(
        StatusCode::METHOD_NOT_ALLOWED,
        &format!("{method} is not allowed on {what}"),
    )
}

fn json_response(status: StatusCode, value: &impl serde::Serialize) -> Response {
    let body = serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec());
    text(status, "application/json", body)
}

fn error(status: StatusCode, message: &str) -> Response {
    // WireMock's error shape; its Java client reads `code`.
    json_response(
        status,
        &json!({"errors": [{"code": status.as_u16(), "title": message}]}),
    )
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
