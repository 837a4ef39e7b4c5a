//! The template model: what `{{request.*}}` and `{{parameters.*}}` read, built once per
//! templated request (never for a plain stub), and the rewrites that let handlebars-rust read
//! WireMock's model as WireMock's Handlebars.java does.
//!
//! WireMock's `request.path`, `request.query.x` and `request.headers.x` are lists that render
//! as their first value (`ListOrSingle`, `UrlPath`); a handlebars-rust context is plain JSON, so
//! the model holds the first value under the usual name and the whole list beside it
//! (`pathSegments`, `queryAll`, `headersAll`), and [`rewrite`] points `request.path.[1]`,
//! `request.query.x.[1]`, `request.headers.x.[1]` at the lists. Header names are matched in any
//! case, as in WireMock: the model's keys and the template's references are lower-cased.
use regex::{Captures, Regex};
use serde_json::{json, Map, Value};
use std::sync::OnceLock;

/// What the model is built from.
pub struct RequestFacts<'a> {
    /// Method, upper case.
    pub method: &'a str,
    /// Path and query, as sent.
    pub url: &'a str,
    /// Path, without the query.
    pub path: &'a str,
    /// Query parameters, decoded, in order.
    pub query: &'a [(String, String)],
    /// Request headers.
    pub headers: &'a http::HeaderMap,
    /// The body.
    pub body: &'a [u8],
}

/// `{"request": {...}, "parameters": ...}`.
pub fn build(request: &RequestFacts<'_>, parameters: &Value) -> Value {
    let segments: Vec<Value> = request
        .path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| Value::String(crate::matching::percent_decode_path(s)))
        .collect();
    let (query, query_all) = first_and_all(
        request
            .query
            .iter()
            .map(|(name, value)| (name.clone(), value.clone())),
    );
    let (headers, headers_all) = first_and_all(request.headers.iter().map(|(name, value)| {
        (
            name.as_str().to_string(),
            String::from_utf8_lossy(value.as_bytes()).into_owned(),
        )
    }));
    let host = request
        .headers
        .get(http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    let (host_name, port) = match host.rsplit_once(':') {
        Some((name, port)) if port.parse::<u16>().is_ok() => (name, port.parse().unwrap_or(80)),
        _ => (host, 80),
    };
    json!({
        "request": {
            "url": request.url,
            "path": crate::matching::percent_decode_path(request.path),
            "pathSegments": segments,
            "method": request.method,
            "query": query,
            "queryAll": query_all,
            "headers": headers,
            "headersAll": headers_all,
            "body": String::from_utf8_lossy(request.body),
            "scheme": "http",
            "host": host_name,
            "port": port,
            "baseUrl": format!("http://{host}"),
        },
        "parameters": parameters,
    })
}

/// The first value of each name (lower-cased names for headers are given lower-cased), and
/// every value of each name.
fn first_and_all(pairs: impl Iterator<Item = (String, String)>) -> (Value, Value) {
    let mut first = Map::new();
    let mut all: Map<String, Value> = Map::new();
    for (name, value) in pairs {
        first
            .entry(name.clone())
            .or_insert_with(|| Value::String(value.clone()));
        if let Value::Array(list) = all.entry(name).or_insert_with(|| json!([])) {
            list.push(Value::String(value));
        }
    }
    (Value::Object(first), Value::Object(all))
}

/// A template's source with WireMock's model paths pointed at this model (see the module doc).
pub fn rewrite(source: &str) -> String {
    static PATTERNS: OnceLock<[Regex; 4]> = OnceLock::new();
    let [line, path, listed, named] = PATTERNS.get_or_init(|| {
        [
            // The deprecated `request.requestLine.*` is `request.*`.
            Regex::new(r"request\.requestLine\.").unwrap(),
            // `request.path.[1]`: a segment.
            Regex::new(r"request\.path\.(\[?\d)").unwrap(),
            // `size` and `#each` of the path, a parameter or a header: the list.
            Regex::new(r"(size|#each)(\s+)request\.(path\b|query\.|headers\.)").unwrap(),
            // `request.headers.NAME` (lower-cased) and `request.query|headers.NAME.[n]`.
            Regex::new(r"request\.(query|headers)(?:All)?\.(\[[^\]]*\]|[^\s.\[\]{}()]+)(\.\[?\d)?")
                .unwrap(),
        ]
    });
    let source = line.replace_all(source, "request.");
    let source = path.replace_all(&source, "request.pathSegments.$1");
    let source = listed.replace_all(&source, |c: &Captures<'_>| {
        let list = match &c[3] {
            "query." => "queryAll.",
            "headers." => "headersAll.",
            _ => "pathSegments",
        };
        format!("{}{}request.{list}", &c[1], &c[2])
    });
    let source = named.replace_all(&source, |c: &Captures<'_>| {
        let part = &c[1];
        let name = if part == "headers" {
            c[2].to_ascii_lowercase()
        } else {
            c[2].to_string()
        };
        let all = if c[0].contains("All.") || c.get(3).is_some() {
            "All"
        } else {
            ""
        };
        let index = c.get(3).map_or("", |m| m.as_str());
        format!("request.{part}{all}.{name}{index}")
    });
    source.into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wiremock_paths_are_pointed_at_the_model() {
        let table = [
            // (WireMock's template, what this model reads)
            ("{{request.path}}", "{{request.path}}"),
            ("{{request.path.[1]}}", "{{request.pathSegments.[1]}}"),
            (
                "{{request.pathSegments.[0]}}",
                "{{request.pathSegments.[0]}}",
            ),
            (
                "{{request.requestLine.path.[0]}}",
                "{{request.pathSegments.[0]}}",
            ),
            (
                "{{request.headers.X-Tenant}}",
                "{{request.headers.x-tenant}}",
            ),
            (
                "{{request.headers.[X-Tenant]}}",
                "{{request.headers.[x-tenant]}}",
            ),
            ("{{request.query.id.[1]}}", "{{request.queryAll.id.[1]}}"),
            ("{{request.query.Id}}", "{{request.query.Id}}"),
            (
                "{{#each request.headers.Accept.[0]}}",
                "{{#each request.headersAll.accept.[0]}}",
            ),
        ];
        for (wiremock, ours) in table {
            assert_eq!(rewrite(wiremock), ours, "{wiremock}");
        }
    }

    #[test]
    fn the_model_holds_first_values_and_lists() {
        let mut headers = http::HeaderMap::new();
        headers.append("x-a", "1".parse().unwrap());
        headers.append("x-a", "2".parse().unwrap());
        headers.insert("host", "127.0.0.1:8080".parse().unwrap());
        let query = vec![
            ("id".to_string(), "7".to_string()),
            ("id".to_string(), "8".to_string()),
        ];
        let model = build(
            &RequestFacts {
                method: "GET",
                url: "/a/b%20c?id=7&id=8",
                path: "/a/b%20c",
                query: &query,
                headers: &headers,
                body: b"",
            },
            &Value::Null,
        );
        let request = &model["request"];
        assert_eq!(request["pathSegments"], json!(["a", "b c"]));
        assert_eq!(request["query"]["id"], "7");
        assert_eq!(request["queryAll"]["id"], json!(["7", "8"]));
        assert_eq!(request["headers"]["x-a"], "1");
        assert_eq!(request["baseUrl"], "http://127.0.0.1:8080");
        assert_eq!(request["port"], 8080);
    }
}
