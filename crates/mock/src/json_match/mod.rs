//! The JSON body matchers, as WireMock decides them: `equalToJson` (JsonUnit's comparison:
//! numbers by value, `ignoreArrayOrder`, `ignoreExtraElements`, `${json-unit.*}` placeholders)
//! and `matchesJsonPath` (found or not, or what is found handed to another matcher), with JSON
//! paths read as WireMock's Jayway reads them ([`jayway`]).
pub mod jayway;

pub use jayway::JaywayPath;

use crate::mapping::JsonPathMatcher;
use serde_json::Value;

/// Whether `actual` equals `expected` under equalToJson's options.
pub fn json_equal(
    expected: &Value,
    actual: &Value,
    ignore_order: bool,
    ignore_extra: bool,
) -> bool {
    if let Value::String(text) = expected {
        if let Some(verdict) = placeholder(text, actual) {
            return verdict;
        }
    }
    match (expected, actual) {
        (Value::Number(a), Value::Number(b)) => match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) => x == y,
            _ => a == b,
        },
        (Value::Object(want), Value::Object(got)) => {
            (ignore_extra || want.len() == got.len())
                && want.iter().all(|(key, value)| {
                    got.get(key)
                        .is_some_and(|other| json_equal(value, other, ignore_order, ignore_extra))
                })
        }
        (Value::Array(want), Value::Array(got)) => {
            if want.len() > got.len() || (!ignore_extra && want.len() != got.len()) {
                return false;
            }
            if !ignore_order {
                return want
                    .iter()
                    .zip(got)
                    .all(|(w, g)| json_equal(w, g, ignore_order, ignore_extra));
            }
            // Each expected item takes a distinct actual item.
            let mut taken = vec![false; got.len()];
            want.iter().all(|w| {
                let slot = got
                    .iter()
                    .enumerate()
                    .position(|(i, g)| !taken[i] && json_equal(w, g, ignore_order, ignore_extra));
                slot.map(|i| taken[i] = true).is_some()
            })
        }
        _ => expected == actual,
    }
}

/// JsonUnit's placeholders in an expected string; `None` when the string is not one.
fn placeholder(text: &str, actual: &Value) -> Option<bool> {
    let rest = text.strip_prefix("${json-unit.")?;
    Some(match rest {
        "ignore}" | "any}" => true,
        "any-string}" => actual.is_string(),
        "any-number}" => actual.is_number(),
        "any-boolean}" => actual.is_boolean(),
        "ignore-element}" => true,
        _ => match rest.strip_prefix("regex}") {
            Some(pattern) => match (regex::Regex::new(&format!("^(?:{pattern})$")), actual) {
                (Ok(re), Value::String(s)) => re.is_match(s),
                _ => false,
            },
            None => return None,
        },
    })
}

/// What a JSON path finds in a document, as the strings WireMock hands to a sub-matcher: an
/// object (or, for equalToJson, a list) as JSON, each item of a list as its text, a scalar as
/// its text, nothing for null or nothing found.
pub fn json_path_values(
    matcher: &JsonPathMatcher,
    document: &Value,
    whole_lists: bool,
) -> Vec<String> {
    let mut nodes = matcher.path.query(document);
    let found: Value = if matcher.singular {
        if nodes.is_empty() {
            return Vec::new();
        }
        nodes.swap_remove(0)
    } else {
        Value::Array(nodes)
    };
    match found {
        Value::Object(_) => vec![found.to_string()],
        Value::Array(_) if whole_lists => vec![found.to_string()],
        Value::Array(items) => items.iter().map(scalar_text).collect(),
        Value::Null => Vec::new(),
        other => vec![scalar_text(&other)],
    }
}

/// A value as Java's `String.valueOf` writes it: strings bare, the rest as JSON.
fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whether the path finds something: a singular path a value that is not null (an empty list
/// or object is a value), any other path at least one node.
pub fn json_path_finds(matcher: &JsonPathMatcher, document: &Value) -> bool {
    let nodes = matcher.path.query(document);
    if matcher.singular {
        nodes.first().is_some_and(|v| !v.is_null())
    } else {
        !nodes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_to_json_table() {
        // (expected, actual, ignore order, ignore extra, equal)
        let table = [
            (
                json!({"a": 1, "b": [1, 2]}),
                json!({"b": [1, 2], "a": 1.0}),
                false,
                false,
                true,
            ),
            (
                json!({"a": 1}),
                json!({"a": 1, "b": 2}),
                false,
                false,
                false,
            ),
            (json!({"a": 1}), json!({"a": 1, "b": 2}), false, true, true),
            (json!([1, 2]), json!([2, 1]), false, false, false),
            (json!([1, 2]), json!([2, 1]), true, false, true),
            (json!([1, 2]), json!([1, 2, 3]), false, true, true),
            (json!([1, 1]), json!([1, 2]), true, false, false),
            (
                json!({"id": "${json-unit.any-string}"}),
                json!({"id": "x"}),
                false,
                false,
                true,
            ),
            (
                json!({"id": "${json-unit.any-string}"}),
                json!({"id": 7}),
                false,
                false,
                false,
            ),
            (
                json!({"n": "${json-unit.regex}[0-9]+"}),
                json!({"n": "123"}),
                false,
                false,
                true,
            ),
            (
                json!({"n": "${json-unit.ignore}"}),
                json!({"n": null}),
                false,
                false,
                true,
            ),
        ];
        for (expected, actual, order, extra, equal) in table {
            assert_eq!(
                json_equal(&expected, &actual, order, extra),
                equal,
                "{expected} vs {actual} (order {order}, extra {extra})"
            );
        }
    }
}
