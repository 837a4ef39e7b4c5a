//! WireMock's JSON stub mappings: the typed stub, and how files become stubs.
//!
//! Text flows `source` (files and folders in WireMock's load order) → `json_text` (comments
//! stripped, each `jsonBody`'s text kept in the file's key order) → `parse` (the mapping and
//! request fields, read through `parser`, which collects every problem) with `matchers`
//! (header, query and body matchers) and `response` (the response fields) → [`Mapping`]. A
//! mapping the mock cannot honour is refused at load, never served differently from WireMock
//! without a word: every problem of every file is collected and reported together, each with
//! the file, the JSON path, the reason and the fix. Fields that do not change what is served
//! (`persistent`, `metadata`, `insertionIndex`) are accepted and kept for the admin API.
mod delay;
mod json_text;
mod matchers;
mod parse;
mod parser;
mod response;
mod source;
mod webhook;

pub use crate::proxy::check_base_url as check_proxy_url;
pub use crate::proxy::check_cacert as check_proxy_cacert;
pub use delay::{Delay, Dribble, Fault};
pub use matchers::{JsonPathMatcher, ValueMatcher};
pub use parse::{parse_mappings, parse_mappings_with_files, parse_request_pattern};
pub use response::compile_template;
pub use source::{grpc_schema, load_mappings, locate, MappingSource};
pub use webhook::{Webhook, WebhookBody};

use crate::template::ResponseTemplate;
use bytes::Bytes;
use regex::Regex;
use serde_json::Value;
use std::sync::Arc;

/// WireMock's default priority: lower numbers win.
pub const DEFAULT_PRIORITY: i64 = 5;

/// A scenario's state before any stub moved it.
pub const SCENARIO_STARTED: &str = "Started";

/// One stub: a request pattern and the response it gets.
#[derive(Debug, Clone)]
pub struct Mapping {
    /// WireMock's `id` (or `uuid`), or one made up at load.
    pub id: String,
    /// The mapping's `name`, if it has one.
    pub name: Option<String>,
    /// Lower numbers win; WireMock's default is 5.
    pub priority: i64,
    /// What a request must look like.
    pub request: RequestPattern,
    /// What it gets.
    pub response: ResponseDef,
    /// `scenarioName` with its required and next state, when the stub is part of a scenario.
    pub scenario: Option<ScenarioStep>,
    /// `postServeActions` / `serveEventListeners` webhooks, sent after the stub is served.
    pub webhooks: Arc<[Webhook]>,
    /// The JSON as given (with `id` filled in), for the admin API.
    pub json: Value,
}

/// A stub's part in a scenario (`scenarioName`, `requiredScenarioState`, `newScenarioState`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioStep {
    /// The scenario.
    pub name: String,
    /// The stub matches only in this state (`None`: in any state).
    pub required: Option<String>,
    /// Serving the stub moves the scenario to this state.
    pub next: Option<String>,
}

/// The request side of a mapping.
#[derive(Debug, Clone, Default)]
pub struct RequestPattern {
    /// `None` for any method (`ANY` or absent).
    pub method: Option<String>,
    /// How the URL is matched.
    pub url: UrlMatcher,
    /// Header name (lower case) and its matcher.
    pub headers: Vec<(String, ValueMatcher)>,
    /// Query parameter name and its matcher.
    pub query: Vec<(String, ValueMatcher)>,
    /// `bodyPatterns`: every one must match the body.
    pub body: Vec<ValueMatcher>,
}

/// The URL part of a request pattern.
#[derive(Debug, Clone, Default)]
pub enum UrlMatcher {
    /// No URL given: any URL.
    #[default]
    Any,
    /// `url`: path and query, exactly.
    Url(String),
    /// `urlPath`: the path, exactly.
    UrlPath(String),
    /// `urlPathPattern`: the path matches the regex (whole).
    UrlPathPattern(Regex),
    /// `urlPattern`: path and query match the regex (whole).
    UrlPattern(Regex),
}

/// The response side of a mapping.
#[derive(Debug, Clone)]
pub struct ResponseDef {
    /// HTTP status.
    pub status: u16,
    /// `statusMessage`: the reason phrase.
    pub status_message: Option<String>,
    /// Headers, in order; a name may repeat.
    pub headers: Vec<(http::HeaderName, http::HeaderValue)>,
    /// The body (`body`, `jsonBody`, `base64Body` or `bodyFileName`, read at load).
    pub body: Bytes,
    /// `fixedDelayMilliseconds` or `delayDistribution`.
    pub delay: Option<Delay>,
    /// `chunkedDribbleDelay`.
    pub dribble: Option<Dribble>,
    /// `fault`.
    pub fault: Option<Fault>,
    /// Where `body` came from (what templating may render).
    pub body_source: BodySource,
    /// `"transformers": ["response-template"]`: the stub asks for templating.
    pub templated: bool,
    /// `transformerParameters`: the template model's `parameters`.
    pub transformer_parameters: Value,
    /// The compiled templates, when the stub is templated (by itself or globally).
    pub template: Option<Arc<ResponseTemplate>>,
    /// `proxyBaseUrl` and its options: the response comes from another server.
    pub proxy: Option<Arc<ProxyDef>>,
}

/// Where a response's body came from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum BodySource {
    /// No body.
    #[default]
    Empty,
    /// `body` or `jsonBody`.
    Text,
    /// `base64Body`.
    Binary,
    /// `bodyFileName`, with its name.
    File(String),
}

/// A stub that forwards to another server (`proxyBaseUrl`).
#[derive(Debug, Clone, Default)]
pub struct ProxyDef {
    /// `proxyBaseUrl`: `http://host:port` and an optional path prefix.
    pub base_url: String,
    /// `proxyUrlPrefixToRemove`: taken off the request path before it is forwarded.
    pub prefix_to_remove: Option<String>,
    /// `additionalProxyRequestHeaders`: set on the forwarded request.
    pub additional_headers: Vec<(http::HeaderName, http::HeaderValue)>,
    /// `removeProxyRequestHeaders`: not forwarded.
    pub remove_headers: Vec<http::HeaderName>,
}

/// WireMock's `--proxy-all URL` stub: any request is forwarded to `url`, at priority 10 so
/// that the other stubs win.
pub fn proxy_all(url: &str) -> Result<Mapping, crate::MockError> {
    let json = serde_json::json!({
        "priority": 10,
        "request": {"method": "ANY"},
        "response": {"proxyBaseUrl": url}
    });
    let mut parsed = parse_mappings(&json.to_string(), "--proxy-all")?;
    Ok(parsed.remove(0))
}

/// A random version-4 UUID, as WireMock gives stubs without an id.
pub fn new_id() -> String {
    let bytes: [u8; 16] = rand::random();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-4{}-{:x}{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        (bytes[8] & 0x3) | 0x8,
        &hex[17..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn generated_ids_look_like_uuids() {
        let id = super::new_id();
        assert_eq!(id.len(), 36);
        assert_eq!(id.as_bytes()[14], b'4');
    }
}
