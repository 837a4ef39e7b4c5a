//! Load-time validation: one file's text to its mappings, every problem collected.
//!
//! The text is read as WireMock's Jackson reads it: `//` and `/* */` comments allowed, numbers
//! and booleans written as strings (`"status": "200"`) accepted where a number or boolean is
//! expected. A field that is wrong is recorded (file, JSON path, reason and fix) and parsing goes
//! on, so one run names every problem; a wrong type is called a type error.
use super::{response, Mapping, RequestPattern, ScenarioStep, UrlMatcher, DEFAULT_PRIORITY};
use crate::MockError;
use regex::Regex;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::path::Path;

/// Parses one file's text: a single mapping or `{"mappings": [...]}`. `source` names the text in
/// errors. `bodyFileName` is refused (there is no `__files` folder): see
/// [`parse_mappings_with_files`].
pub fn parse_mappings(json: &str, source: &str) -> Result<Vec<super::Mapping>, MockError> {
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
    let parser = Parser {
        source,
        files_root,
        json_bodies: json_body_texts(&text),
        problems: RefCell::new(Vec::new()),
    };
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
    match MockError::from_problems(parser.problems.into_inner()) {
        Some(err) => Err(err),
        None => Ok(mappings),
    }
}

/// A request pattern alone (as the admin API's `requests/count` and `requests/find` take it).
pub fn parse_request_pattern(value: &Value, source: &str) -> Result<RequestPattern, MockError> {
    let parser = Parser {
        source,
        files_root: None,
        json_bodies: Vec::new(),
        problems: RefCell::new(Vec::new()),
    };
    let pattern = parser.request(value, "$");
    match MockError::from_problems(parser.problems.into_inner()) {
        Some(err) => Err(err),
        None => Ok(pattern.unwrap_or_default()),
    }
}

/// The text with `//` and `/* */` comments turned into spaces (outside strings), so that line
/// and column numbers stay right.
fn strip_comments(json: &str) -> String {
    use std::io::Read;
    if !json.contains("//") && !json.contains("/*") {
        return json.to_string();
    }
    let mut text = String::with_capacity(json.len());
    let settings = json_comments::CommentSettings::c_style();
    match settings
        .strip_comments(json.as_bytes())
        .read_to_string(&mut text)
    {
        Ok(_) => text,
        // An unclosed comment: let the JSON parser name the place.
        Err(_) => json.to_string(),
    }
}

/// serde_json appends " at line L column C"; the error names those separately.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(index) => message[..index].to_string(),
        None => message.to_string(),
    }
}

/// The text of each mapping's `jsonBody` as written (WireMock serves it in the file's key order
/// and number spelling), whitespace removed; by mapping index.
fn json_body_texts(text: &str) -> Vec<Option<String>> {
    #[derive(Deserialize)]
    struct File<'a> {
        #[serde(borrow, default)]
        mappings: Option<Vec<One<'a>>>,
        #[serde(borrow, default)]
        response: Option<Response<'a>>,
    }
    #[derive(Deserialize)]
    struct One<'a> {
        #[serde(borrow, default)]
        response: Option<Response<'a>>,
    }
    #[derive(Deserialize)]
    struct Response<'a> {
        #[serde(borrow, default, rename = "jsonBody")]
        json_body: Option<&'a RawValue>,
    }
    let Ok(file) = serde_json::from_str::<File<'_>>(text) else {
        return Vec::new();
    };
    let raw = |response: Option<Response<'_>>| {
        response
            .and_then(|r| r.json_body)
            .map(|raw| compact(raw.get()))
    };
    match file.mappings {
        Some(list) => list.into_iter().map(|one| raw(one.response)).collect(),
        None => vec![raw(file.response)],
    }
}

/// JSON text without the whitespace between tokens (strings untouched).
fn compact(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
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
const UNSUPPORTED_MAPPING: &[&str] = &["postServeActions", "serveEventListeners"];

/// One file's parse: where problems are collected.
pub(super) struct Parser<'a> {
    pub source: &'a str,
    pub files_root: Option<&'a Path>,
    /// Each mapping's `jsonBody` as written (see [`json_body_texts`]).
    json_bodies: Vec<Option<String>>,
    problems: RefCell<Vec<MockError>>,
}

/// The JSON type of a value, for type errors.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

impl Parser<'_> {
    pub fn error(&self, path: &str, reason: impl Into<String>) -> MockError {
        MockError::Mapping {
            source_name: self.source.to_string(),
            json_path: path.to_string(),
            reason: reason.into(),
        }
    }

    /// Records a problem and goes on.
    pub fn problem(&self, path: &str, reason: impl Into<String>) {
        let error = self.error(path, reason);
        self.problems.borrow_mut().push(error);
    }

    /// Records a type error: what was expected and what was found.
    pub fn type_error(&self, path: &str, expected: &str, found: &Value) {
        self.problem(
            path,
            format!(
                "type error: expected {expected}, found {}",
                type_name(found)
            ),
        );
    }

    /// How many problems are recorded so far.
    pub fn problem_count(&self) -> usize {
        self.problems.borrow().len()
    }

    pub fn object<'v>(&self, value: &'v Value, path: &str) -> Option<&'v Map<String, Value>> {
        let obj = value.as_object();
        if obj.is_none() {
            self.type_error(path, "an object", value);
        }
        obj
    }

    pub fn string<'v>(&self, value: &'v Value, path: &str) -> Option<&'v str> {
        let text = value.as_str();
        if text.is_none() {
            self.type_error(path, "a string", value);
        }
        text
    }

    /// A number, or a string holding one (as Jackson coerces it).
    fn any_number(value: &Value) -> Option<f64> {
        match value {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        }
    }

    /// A number >= 0 (or a string holding one).
    pub fn number(&self, value: &Value, path: &str) -> Option<f64> {
        match Self::any_number(value) {
            Some(n) if n.is_finite() && n >= 0.0 => Some(n),
            Some(_) => {
                self.problem(path, "must be a number >= 0");
                None
            }
            None => {
                self.type_error(path, "a number", value);
                None
            }
        }
    }

    /// A whole number (or a string holding one).
    pub fn integer(&self, value: &Value, path: &str) -> Option<i64> {
        let whole = match value {
            Value::Number(n) => n.as_i64(),
            Value::String(s) => s.trim().parse::<i64>().ok(),
            _ => None,
        };
        if whole.is_none() {
            self.type_error(path, "a whole number", value);
        }
        whole
    }

    /// `true` or `false` (or the string `"true"` / `"false"`).
    pub fn boolean(&self, value: &Value, path: &str) -> Option<bool> {
        let flag = match value {
            Value::Bool(b) => Some(*b),
            Value::String(s) if s == "true" => Some(true),
            Value::String(s) if s == "false" => Some(false),
            _ => None,
        };
        if flag.is_none() {
            self.type_error(path, "true or false", value);
        }
        flag
    }

    pub fn regex(&self, pattern: &str, path: &str) -> Option<Regex> {
        match Regex::new(&format!("^(?:{pattern})$")) {
            Ok(re) => Some(re),
            Err(err) => {
                let detail = err
                    .to_string()
                    .lines()
                    .map(str::trim)
                    .filter(|line| !line.is_empty())
                    .collect::<Vec<_>>()
                    .join(" ");
                self.problem(path, format!("the regex does not compile: {detail}"));
                None
            }
        }
    }

    /// Records an unknown field, or one of WireMock's that this mock does not support yet.
    pub fn unknown(&self, key: &str, path: &str, unsupported: &[&str], what: &str) {
        let at = format!("{path}.{key}");
        if unsupported.contains(&key) {
            self.problem(
                &at,
                format!(
                    "WireMock's {what} '{key}' is not supported by chokepoint mock yet: remove it"
                ),
            );
        } else {
            self.problem(&at, format!("unknown {what} '{key}'"));
        }
    }

    /// One mapping; `None` when it has a problem (recorded).
    fn mapping(&self, value: &Value, path: &str, index: usize) -> Option<Mapping> {
        let before = self.problem_count();
        let obj = self.object(value, path)?;
        let mut id = None;
        let mut name = None;
        let mut priority = DEFAULT_PRIORITY;
        let mut scenario_name = None;
        let (mut required, mut next) = (None, None);
        for (key, field) in obj {
            let at = format!("{path}.{key}");
            match key.as_str() {
                "id" | "uuid" => id = self.string(field, &at).map(str::to_string),
                "name" => name = self.string(field, &at).map(str::to_string),
                "priority" => priority = self.integer(field, &at).unwrap_or(priority),
                "scenarioName" => scenario_name = self.string(field, &at).map(str::to_string),
                "requiredScenarioState" => required = self.string(field, &at).map(str::to_string),
                "newScenarioState" => next = self.string(field, &at).map(str::to_string),
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
        let json_body = self.json_bodies.get(index).and_then(Option::as_deref);
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
