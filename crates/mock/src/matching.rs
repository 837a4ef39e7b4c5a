//! Matching a request against a mapping's request pattern, and naming the nearest miss.
//!
//! A header or parameter with several values matches when one does; one that is absent is
//! matched as "no value", which `absent`, `doesNotMatch` and `doesNotContain` accept (as in
//! WireMock). The body is read as JSON at most once per request, and only when a stub asks.
use crate::json_match;
use crate::mapping::{RequestPattern, UrlMatcher, ValueMatcher};
use serde_json::Value;
use std::cell::OnceCell;

/// The parts of a request that patterns look at.
pub struct RequestView<'a> {
    /// Method, upper case.
    pub method: &'a str,
    /// Path, without the query.
    pub path: &'a str,
    /// Path and query, as sent.
    pub path_and_query: &'a str,
    /// The query string without `?` (empty when none).
    pub query: &'a str,
    /// Request headers.
    pub headers: &'a http::HeaderMap,
    /// The body.
    pub body: &'a [u8],
    decoded_query: OnceCell<Vec<(String, String)>>,
    body_json: OnceCell<Option<Value>>,
}

impl<'a> RequestView<'a> {
    /// A view of a request's parts.
    pub fn new(
        method: &'a str,
        uri: &'a http::Uri,
        headers: &'a http::HeaderMap,
        body: &'a [u8],
    ) -> Self {
        RequestView {
            method,
            path: uri.path(),
            path_and_query: uri.path_and_query().map_or("/", |pq| pq.as_str()),
            query: uri.query().unwrap_or(""),
            headers,
            body,
            decoded_query: OnceCell::new(),
            body_json: OnceCell::new(),
        }
    }

    /// The body as JSON, if it is JSON.
    fn body_json(&self) -> Option<&Value> {
        self.body_json
            .get_or_init(|| serde_json::from_slice(self.body).ok())
            .as_ref()
    }

    /// The query parameters, decoded, in order.
    pub(crate) fn decoded_query(&self) -> &[(String, String)] {
        self.decoded_query.get_or_init(|| parse_query(self.query))
    }

    fn query_values(&self, name: &str) -> Vec<&str> {
        self.decoded_query()
            .iter()
            .filter(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
            .collect()
    }

    fn header_values(&self, name: &str) -> Vec<&str> {
        self.headers
            .get_all(name)
            .iter()
            .map(|value| value.to_str().unwrap_or(""))
            .collect()
    }
}

/// Whether the request matches the pattern.
pub fn matches(pattern: &RequestPattern, request: &RequestView<'_>) -> bool {
    method_matches(pattern, request)
        && url_matches(&pattern.url, request)
        && pattern
            .headers
            .iter()
            .all(|(name, m)| values_match(m, &request.header_values(name)))
        && pattern
            .query
            .iter()
            .all(|(name, m)| values_match(m, &request.query_values(name)))
        && pattern.body.iter().all(|m| body_matches(m, request))
}

/// What differs between a pattern and a request, one phrase per part, and a distance from 0
/// (everything matches) to 1 (nothing does) for ranking near misses. The URL weighs 3, the
/// method 2, each header or parameter 1.
pub fn differences(pattern: &RequestPattern, request: &RequestView<'_>) -> (Vec<String>, f64) {
    let mut diffs = Vec::new();
    let (mut total, mut missed) = (2.0, 0.0);
    if !method_matches(pattern, request) {
        missed += 2.0;
        diffs.push(format!(
            "method {} expected, got {}",
            pattern.method.as_deref().unwrap_or("ANY"),
            request.method
        ));
    }
    if !matches!(pattern.url, UrlMatcher::Any) {
        total += 3.0;
        if !url_matches(&pattern.url, request) {
            missed += 3.0;
            diffs.push(match &pattern.url {
                UrlMatcher::Url(url) => {
                    format!("url {url} expected, got {}", request.path_and_query)
                }
                UrlMatcher::UrlPath(path) => {
                    format!("urlPath {path} expected, got {}", request.path)
                }
                UrlMatcher::UrlPathPattern(re) => {
                    format!(
                        "urlPathPattern {} does not match {}",
                        unanchored(re),
                        request.path
                    )
                }
                UrlMatcher::UrlPattern(re) => format!(
                    "urlPattern {} does not match {}",
                    unanchored(re),
                    request.path_and_query
                ),
                UrlMatcher::Any => String::new(),
            });
        }
    }
    for (name, matcher) in &pattern.headers {
        total += 1.0;
        if !values_match(matcher, &request.header_values(name)) {
            missed += 1.0;
            diffs.push(format!("header {name} {}", describe(matcher)));
        }
    }
    for (name, matcher) in &pattern.query {
        total += 1.0;
        if !values_match(matcher, &request.query_values(name)) {
            missed += 1.0;
            diffs.push(format!("query parameter {name} {}", describe(matcher)));
        }
    }
    for matcher in &pattern.body {
        total += 1.0;
        if !body_matches(matcher, request) {
            missed += 1.0;
            diffs.push(format!("body {}", describe(matcher)));
        }
    }
    (diffs, missed / total)
}

fn method_matches(pattern: &RequestPattern, request: &RequestView<'_>) -> bool {
    pattern
        .method
        .as_deref()
        .is_none_or(|method| method == request.method)
}

fn url_matches(url: &UrlMatcher, request: &RequestView<'_>) -> bool {
    match url {
        UrlMatcher::Any => true,
        UrlMatcher::Url(url) => url == request.path_and_query,
        UrlMatcher::UrlPath(path) => path == request.path,
        UrlMatcher::UrlPathPattern(re) => re.is_match(request.path),
        UrlMatcher::UrlPattern(re) => re.is_match(request.path_and_query),
    }
}

/// A header or parameter matches when one of its values does; with no value, when the
/// matcher accepts "no value" (`absent`, `doesNotMatch`, `doesNotContain`).
fn values_match(matcher: &ValueMatcher, values: &[&str]) -> bool {
    if values.is_empty() {
        return accepts_no_value(matcher);
    }
    values.iter().any(|value| value_matches(matcher, value))
}

fn accepts_no_value(matcher: &ValueMatcher) -> bool {
    match matcher {
        ValueMatcher::Absent | ValueMatcher::DoesNotMatch(_) | ValueMatcher::DoesNotContain(_) => {
            true
        }
        ValueMatcher::And(all) => all.iter().all(accepts_no_value),
        ValueMatcher::Or(any) => any.iter().any(accepts_no_value),
        ValueMatcher::Not(inner) => !accepts_no_value(inner),
        _ => false,
    }
}

fn body_matches(matcher: &ValueMatcher, request: &RequestView<'_>) -> bool {
    match matcher {
        ValueMatcher::BinaryEqualTo(bytes) => bytes.as_slice() == request.body,
        ValueMatcher::EqualToJson {
            expected,
            ignore_array_order,
            ignore_extra_elements,
        } => request.body_json().is_some_and(|actual| {
            json_match::json_equal(
                expected,
                actual,
                *ignore_array_order,
                *ignore_extra_elements,
            )
        }),
        ValueMatcher::MatchesJsonPath(path) => json_path_matches(path, request.body_json()),
        ValueMatcher::Absent => request.body.is_empty(),
        ValueMatcher::And(all) => all.iter().all(|m| body_matches(m, request)),
        ValueMatcher::Or(any) => any.iter().any(|m| body_matches(m, request)),
        ValueMatcher::Not(inner) => !body_matches(inner, request),
        other => value_matches(other, &String::from_utf8_lossy(request.body)),
    }
}

fn json_path_matches(matcher: &crate::mapping::JsonPathMatcher, document: Option<&Value>) -> bool {
    let Some(document) = document else {
        return false;
    };
    match &matcher.then {
        None => json_match::json_path_finds(matcher, document),
        Some(then) => {
            let whole_lists = matches!(then, ValueMatcher::EqualToJson { .. });
            let found = json_match::json_path_values(matcher, document, whole_lists);
            if found.is_empty() {
                return matches!(then, ValueMatcher::Absent);
            }
            found.iter().any(|text| string_matches(then, text))
        }
    }
}

/// A matcher on a string that may be JSON (what a JSON path found).
fn string_matches(matcher: &ValueMatcher, text: &str) -> bool {
    match matcher {
        ValueMatcher::EqualToJson {
            expected,
            ignore_array_order,
            ignore_extra_elements,
        } => serde_json::from_str::<Value>(text).is_ok_and(|actual| {
            json_match::json_equal(
                expected,
                &actual,
                *ignore_array_order,
                *ignore_extra_elements,
            )
        }),
        ValueMatcher::MatchesJsonPath(path) => {
            json_path_matches(path, serde_json::from_str::<Value>(text).ok().as_ref())
        }
        ValueMatcher::And(all) => all.iter().all(|m| string_matches(m, text)),
        ValueMatcher::Or(any) => any.iter().any(|m| string_matches(m, text)),
        ValueMatcher::Not(inner) => !string_matches(inner, text),
        other => value_matches(other, text),
    }
}

fn value_matches(matcher: &ValueMatcher, value: &str) -> bool {
    match matcher {
        ValueMatcher::EqualTo {
            value: expected,
            case_insensitive,
        } => {
            if *case_insensitive {
                expected.eq_ignore_ascii_case(value)
            } else {
                expected == value
            }
        }
        ValueMatcher::Contains(part) => value.contains(part.as_str()),
        ValueMatcher::DoesNotContain(part) => !value.contains(part.as_str()),
        ValueMatcher::Matches(re) => re.is_match(value),
        ValueMatcher::DoesNotMatch(re) => !re.is_match(value),
        ValueMatcher::Absent => false,
        ValueMatcher::BinaryEqualTo(bytes) => bytes.as_slice() == value.as_bytes(),
        json @ (ValueMatcher::EqualToJson { .. }
        | ValueMatcher::MatchesJsonPath(_)
        | ValueMatcher::And(_)
        | ValueMatcher::Or(_)
        | ValueMatcher::Not(_)) => string_matches(json, value),
    }
}

fn describe(matcher: &ValueMatcher) -> String {
    match matcher {
        ValueMatcher::EqualTo { value, .. } => format!("should equal '{value}'"),
        ValueMatcher::Contains(part) => format!("should contain '{part}'"),
        ValueMatcher::DoesNotContain(part) => format!("should not contain '{part}'"),
        ValueMatcher::Matches(re) => format!("should match {}", unanchored(re)),
        ValueMatcher::DoesNotMatch(re) => format!("should not match {}", unanchored(re)),
        ValueMatcher::Absent => "should be absent".to_string(),
        ValueMatcher::EqualToJson { expected, .. } => format!("should equal JSON {expected}"),
        ValueMatcher::MatchesJsonPath(path) => match &path.then {
            None => format!("should have JSON path {}", path.expression),
            Some(then) => format!("at JSON path {} {}", path.expression, describe(then)),
        },
        ValueMatcher::BinaryEqualTo(bytes) => format!("should equal {} given bytes", bytes.len()),
        ValueMatcher::And(all) => all.iter().map(describe).collect::<Vec<_>>().join(" and "),
        ValueMatcher::Or(any) => format!(
            "({})",
            any.iter().map(describe).collect::<Vec<_>>().join(" or ")
        ),
        ValueMatcher::Not(inner) => format!("not ({})", describe(inner)),
    }
}

/// The regex as the user wrote it (the parser wraps it in `^(?:...)$`).
fn unanchored(re: &regex::Regex) -> &str {
    let text = re.as_str();
    text.strip_prefix("^(?:")
        .and_then(|t| t.strip_suffix(")$"))
        .unwrap_or(text)
}

/// Splits a query string into decoded name/value pairs (`+` is a space, `%XX` a byte).
pub fn parse_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(name), percent_decode(value))
        })
        .collect()
}

/// A URL path, `%XX` decoded (`+` stays a plus, as in a path).
pub(crate) fn percent_decode_path(text: &str) -> String {
    percent_decode(&text.replace('+', "%2B"))
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(high), Some(low)) => {
                    out.push(high * 16 + low);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(digit: u8) -> Option<u8> {
    (digit as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body_matches_stub(body_patterns: &str, body: &str) -> bool {
        let json =
            format!(r#"{{"request": {{"bodyPatterns": {body_patterns}}}, "response": {{}}}}"#);
        let mapping = crate::mapping::parse_mappings(&json, "t.json")
            .unwrap()
            .remove(0);
        let uri: http::Uri = "/".parse().unwrap();
        let headers = http::HeaderMap::new();
        matches(
            &mapping.request,
            &RequestView::new("POST", &uri, &headers, body.as_bytes()),
        )
    }

    #[test]
    fn logical_and_json_path_matchers_combine_as_wiremock_3s() {
        let order = r#"{"id": "ord-17", "total": 42, "items": [{"sku": "Ab-1"}, {"sku": "x"}]}"#;
        let table = [
            // (bodyPatterns, matches `order`)
            (
                r#"[{"matchesJsonPath": {"expression": "$.id", "and": [{"contains": "ord"}, {"matches": "ord-[0-9]+"}]}}]"#,
                true,
            ),
            (
                r#"[{"matchesJsonPath": {"expression": "$.id", "and": [{"contains": "ord"}, {"matches": "x.*"}]}}]"#,
                false,
            ),
            (
                r#"[{"matchesJsonPath": {"expression": "$.id", "or": [{"equalTo": "nope"}, {"equalTo": "ord-17"}]}}]"#,
                true,
            ),
            (
                r#"[{"matchesJsonPath": {"expression": "$.id", "not": {"equalTo": "ord-17"}}}]"#,
                false,
            ),
            (
                r#"[{"and": [{"matchesJsonPath": "$.total"}, {"contains": "Ab-1"}]}]"#,
                true,
            ),
            (
                r#"[{"or": [{"matchesJsonPath": "$.missing"}, {"equalToJson": {"id": "x"}, "ignoreExtraElements": true}]}]"#,
                false,
            ),
            (
                r#"[{"matchesJsonPath": "$.items[?(@.sku =~ /ab-.*/i)]"}]"#,
                true,
            ),
            (
                r#"[{"matchesJsonPath": "$.items[?(@.sku =~ /ab-.*/)]"}]"#,
                false,
            ),
            (
                r#"[{"matchesJsonPath": "$.id"}, {"matchesJsonPath": {"expression": "$.total", "equalTo": "42"}}]"#,
                true,
            ),
        ];
        for (patterns, expected) in table {
            assert_eq!(body_matches_stub(patterns, order), expected, "{patterns}");
        }
    }

    #[test]
    fn query_decoding() {
        assert_eq!(
            parse_query("a=1&b=x+y&c=%41%2&d"),
            vec![
                ("a".into(), "1".into()),
                ("b".into(), "x y".into()),
                ("c".into(), "A%2".into()),
                ("d".into(), "".into())
            ]
        );
    }
}
