//! Load-time validation: one file's text to its mappings, every problem collected.
//!
//! The text is read as WireMock's Jackson reads it ([`json_text`](super::json_text)), then the
//! mapping and request fields here, the matchers in [`matchers`](super::matchers) and the
//! response in [`response`](super::response), all through one [`Parser`] that records each
//! problem (file, JSON path, reason and fix) and goes on; a wrong type is called a type error.
use super::json_text::{json_body_texts, strip_comments, strip_position};
use super::parser::Parser;
use super::{response, Mapping, RequestPattern, ScenarioStep, UrlMatcher, DEFAULT_PRIORITY};
use crate::MockError;
use serde_json::Value;
use std::path::Path;

/// Parses one file's text: a single mapping or `{"mappings": [...]}`. `source` names the text in
/// errors. `bodyFileName` is refused (there is no `__files` folder): see
/// [`parse_mappings_with_files`].
pub fn parse_mappings(json: &str, source: &str) -> Result<Vec<Mapping>, MockError> {
    parse_mappings_with_files(json, source, None)
}

/// Like [`parse_mappings`], with `bodyFileName` read from `files_root`.
pub fn parse_mappings_with_files(
    json: &str,
    source: &str,
    files_root: Option<&Path>,
) -> Result<Vec<Mapping>, MockError> {
    let text = strip_comments(json);
    let value: Value = serde_json::from_str(&text).map_err(|err| MockError::Json {
        source_name: source.to_string(),
        line: err.line(),
        column: err.column(),
        message: strip_position(&err.to_string()),
    })?;
    let parser = Parser::new(source, files_root, json_body_texts(&text));
    let mappings = match &value {
        Value::Object(obj) if obj.contains_key("mappings") => match obj.get("mappings") {
            Some(Value::Array(list)) => list
                .iter()
                .enumerate()
                .filter_map(|(i, item)| parser.mapping(item, &format!("$.mappings[{i}]"), i))
                .collect(),
            Some(other) => {
                parser.type_error("$.mappings", "a list of mappings", other);
                Vec::new()
            }
            None => Vec::new(),
        },
        Value::Object(_) => parser.mapping(&value, "$", 0).into_iter().collect(),
        other => {
            parser.type_error("$", "a mapping object or {\"mappings\": [...]}", other);
            Vec::new()
        }
    };
    parser.finish(mappings)
}

/// A request pattern alone (as the admin API's `requests/count` and `requests/find` take it).
pub fn parse_request_pattern(value: &Value, source: &str) -> Result<RequestPattern, MockError> {
    let parser = Parser::new(source, None, Vec::new());
    let pattern = parser.request(value, "$");
    parser.finish(pattern.unwrap_or_default())
}
/// WireMock request fields this mock does not support yet.
const UNSUPPORTED_REQUEST: &[&str] = &[
    "cookies",
    "basicAuthCredentials",
    "basicAuth",
    "urlPathTemplate",
    "pathParameters",
    "formParameters",
    "multipartPatterns",
    "host",
    "port",
    "scheme",
    "clientIp",
    "customMatcher",
    "and",
    "or",
];

/// WireMock mapping fields this mock does not support yet.
const UNSUPPORTED_MAPPING: &[&str] = &[];

impl Parser<'_> {
    /// One mapping; `None` when it has a problem (recorded).
    fn mapping(&self, value: &Value, path: &str, index: usize) -> Option<Mapping> {
        let before = self.problem_count();
        let obj = self.object(value, path)?;
        let mut id = None;
        let mut name = None;
        let mut priority = DEFAULT_PRIORITY;
        let mut scenario_name = None;
        let (mut required, mut next) = (None, None);
        let mut webhooks = Vec::new();
        for (key, field) in obj {
            let at = format!("{path}.{key}");
            match key.as_str() {
                "id" | "uuid" => id = self.string(field, &at).map(str::to_string),
                "name" => name = self.string(field, &at).map(str::to_string),
                "priority" => priority = self.integer(field, &at).unwrap_or(priority),
                "scenarioName" => scenario_name = self.string(field, &at).map(str::to_string),
                "requiredScenarioState" => required = self.string(field, &at).map(str::to_string),
                "newScenarioState" => next = self.string(field, &at).map(str::to_string),
                "postServeActions" | "serveEventListeners" => {
                    webhooks.extend(self.webhooks(field, &at));
                }
                "request" | "response" | "persistent" | "metadata" | "insertionIndex" => {}
                _ => self.unknown(key, path, UNSUPPORTED_MAPPING, "mapping field"),
            }
        }
        let scenario = match scenario_name {
            Some(name) => Some(ScenarioStep {
                name,
                required,
                next,
            }),
            None if required.is_some() || next.is_some() => {
                self.problem(
                    path,
                    "requiredScenarioState or newScenarioState needs a scenarioName: add one",
                );
                None
            }
            None => None,
        };
        let request = match obj.get("request") {
            Some(request) => self.request(request, &format!("{path}.request")),
            None => {
                self.problem(
                    path,
                    "has no 'request': add one (e.g. {\"method\": \"ANY\"})",
                );
                None
            }
        };
        let json_body = self.json_body(index);
        let response = match obj.get("response") {
            Some(response) => {
                response::parse(self, response, &format!("{path}.response"), json_body)
            }
            None => {
                self.problem(path, "has no 'response': add one (e.g. {\"status\": 200})");
                None
            }
        };
        if self.problem_count() > before {
            return None;
        }
        let id = id.unwrap_or_else(super::new_id);
        let mut response = response?;
        // WireMock names the stub that answered in every response.
        let named = [
            ("matched-stub-id", Some(&id)),
            ("matched-stub-name", name.as_ref()),
        ];
        for (header, value) in named {
            if let Some(value) = value.and_then(|v| http::HeaderValue::from_str(v).ok()) {
                response
                    .headers
                    .push((http::HeaderName::from_static(header), value));
            }
        }
        let mut json = value.clone();
        if let Value::Object(map) = &mut json {
            map.remove("uuid");
            map.insert("id".into(), Value::String(id.clone()));
        }
        Some(Mapping {
            id,
            name,
            priority,
            request: request?,
            response,
            scenario,
            webhooks: webhooks.into(),
            json,
        })
    }

    fn request(&self, value: &Value, path: &str) -> Option<RequestPattern> {
        let obj = self.object(value, path)?;
        let mut pattern = RequestPattern::default();
        let mut url_key: Option<&str> = None;
        for (key, field) in obj {
            let at = format!("{path}.{key}");
            let url = match key.as_str() {
                "method" => {
                    if let Some(method) = self.string(field, &at) {
                        if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
                            self.problem(&at, format!("'{method}' is not an HTTP method"));
                        }
                        pattern.method = (method != "ANY").then(|| method.to_ascii_uppercase());
                    }
                    None
                }
                "url" => self
                    .string(field, &at)
                    .map(|s| UrlMatcher::Url(s.to_string())),
                "urlPath" => self
                    .string(field, &at)
                    .map(|s| UrlMatcher::UrlPath(s.to_string())),
                "urlPathPattern" => self
                    .string(field, &at)
                    .and_then(|s| self.regex(s, &at))
                    .map(UrlMatcher::UrlPathPattern),
                "urlPattern" => self
                    .string(field, &at)
                    .and_then(|s| self.regex(s, &at))
                    .map(UrlMatcher::UrlPattern),
                "headers" => {
                    pattern.headers = self
                        .value_matchers(field, &at)
                        .into_iter()
                        .map(|(name, m)| (name.to_ascii_lowercase(), m))
                        .collect();
                    None
                }
                "queryParameters" => {
                    pattern.query = self.value_matchers(field, &at);
                    None
                }
                "bodyPatterns" => {
                    pattern.body = self.body_patterns(field, &at);
                    None
                }
                _ => {
                    self.unknown(key, path, UNSUPPORTED_REQUEST, "request field");
                    None
                }
            };
            if let Some(url) = url {
                if let Some(previous) = url_key {
                    self.problem(
                        &at,
                        format!("a request has one URL matcher, but '{previous}' is given too"),
                    );
                }
                url_key = Some(key);
                pattern.url = url;
            }
        }
        Some(pattern)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use std::time::Duration;

    fn refused(json: &str) -> String {
        parse_mappings(json, "t.json").unwrap_err().to_string()
    }

    #[test]
    fn invalid_json_names_line_and_column() {
        let message = refused("{\n  \"request\": {\n    \"url\": \"/a\",,\n");
        assert!(
            message.starts_with("t.json: invalid JSON at line 3, column"),
            "{message}"
        );
    }

    #[test]
    fn unknown_and_unsupported_names_are_refused_with_their_path() {
        let message =
            refused(r#"{"request":{"headers":{"Accept":{"equalsTo":"x"}}},"response":{}}"#);
        assert_eq!(
            message,
            "t.json: $.request.headers.Accept.equalsTo: unknown matcher 'equalsTo'"
        );
        let message = refused(r#"{"mappings":[{"request":{},"response":{"fault":"BOOM"}}]}"#);
        assert!(
            message.starts_with("t.json: $.mappings[0].response.fault: unknown fault 'BOOM'"),
            "{message}"
        );
        let message = refused(r#"{"request":{"cookies":{}},"response":{}}"#);
        assert!(
            message
                .contains("$.request.cookies: WireMock's request field 'cookies' is not supported"),
            "{message}"
        );
        let message = refused(r#"{"request":{"urlPathPattern":"/a/(b"},"response":{}}"#);
        assert!(
            message.starts_with("t.json: $.request.urlPathPattern: the regex does not compile"),
            "{message}"
        );
        assert!(!message.contains('\n'));
    }

    #[test]
    fn every_problem_of_a_file_is_named_and_type_errors_say_so() {
        let err = parse_mappings(
            r#"{"mappings":[
                {"request":{"url":7},"response":{"status":"two hundred"}},
                {"request":{"method":"GET"},"response":{"fault":"BOOM","headers":[]}}]}"#,
            "t.json",
        )
        .unwrap_err();
        let problems: Vec<String> = err.problems().iter().map(|p| p.to_string()).collect();
        assert_eq!(problems.len(), 4, "{problems:#?}");
        assert_eq!(
            problems[0],
            "t.json: $.mappings[0].request.url: type error: expected a string, found a number"
        );
        assert!(problems[1].starts_with("t.json: $.mappings[0].response.status: type error"));
        assert!(problems[2].contains("$.mappings[1].response.fault"));
        assert!(problems[3].contains("$.mappings[1].response.headers: type error"));
    }

    #[test]
    fn numbers_as_strings_and_comments_are_read_as_wiremock_reads_them() {
        let mappings = parse_mappings(
            "// a stub\n{ /* the request */ \"priority\": \"3\", \"request\": {\"url\": \"/a\"},\n\
             \"response\": {\"status\": \"201\", \"fixedDelayMilliseconds\": \"150\"}}",
            "t.json",
        )
        .unwrap();
        assert_eq!(mappings[0].priority, 3);
        assert_eq!(mappings[0].response.status, 201);
        assert_eq!(
            mappings[0].response.delay.unwrap().typical(),
            Duration::from_millis(150)
        );
    }

    #[test]
    fn json_body_keeps_the_files_key_order_and_number_spelling() {
        let mappings = parse_mappings(
            r#"{"mappings": [{"request": {}, "response": {"body": "x"}},
                {"request": {}, "response": {"jsonBody": {"z": 1, "a": [2.50, "a b"], "m": {}}}}]}"#,
            "t.json",
        )
        .unwrap();
        assert_eq!(
            mappings[1].response.body,
            Bytes::from_static(br#"{"z":1,"a":[2.50,"a b"],"m":{}}"#)
        );
    }

    #[test]
    fn a_full_mapping_parses() {
        let mappings = parse_mappings(
            r#"{"id":"abc","name":"n","priority":2,
                "request":{"method":"POST","urlPathPattern":"/a/[0-9]+",
                  "headers":{"Accept":{"equalTo":"X","caseInsensitive":true}},
                  "queryParameters":{"q":{"absent":true}}},
                "response":{"status":201,"jsonBody":{"a":1},"headers":{"H":["1","2"]},
                  "delayDistribution":{"type":"lognormal","median":80,"sigma":0.4},
                  "chunkedDribbleDelay":{"numberOfChunks":3,"totalDuration":300}}}"#,
            "t.json",
        )
        .unwrap();
        let m = &mappings[0];
        assert_eq!((m.id.as_str(), m.priority), ("abc", 2));
        assert_eq!(m.request.method.as_deref(), Some("POST"));
        assert_eq!(m.request.headers[0].0, "accept");
        assert_eq!(m.response.body, Bytes::from_static(br#"{"a":1}"#));
        let names: Vec<&str> = m.response.headers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["h", "h", "matched-stub-id", "matched-stub-name"]);
        assert_eq!(
            m.response.delay.unwrap().typical(),
            Duration::from_millis(80)
        );
        assert_eq!(m.response.dribble.unwrap().chunks, 3);
    }
}
