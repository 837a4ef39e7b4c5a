//! The JSON body matchers, as WireMock decides them: `equalToJson` (JsonUnit's comparison:
//! numbers by value, `ignoreArrayOrder`, `ignoreExtraElements`, `${json-unit.*}` placeholders)
//! and `matchesJsonPath` (found or not, or what is found handed to another matcher), with
//! Jayway's `=~ /regex/flags` filters read as RFC 9535's `match()` ([`jayway_to_rfc9535`]).
use crate::mapping::JsonPathMatcher;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::OnceLock;

/// A Jayway JSON path with its `=~` filters rewritten for RFC 9535 (`serde_json_path`):
/// `@.name =~ /foo.*/i` becomes `match(@.name, '(?i)foo.*')`. Jayway's `=~` matches the whole
/// string (`Matcher.matches()`), as `match()` does; a value that is not a string matches no
/// regex on either side. The flags `i`, `m`, `s` and `x` become inline flags; `\/` in the
/// regex is a `/`. Paths without `=~` come back as they are.
pub fn jayway_to_rfc9535(expression: &str) -> Cow<'_, str> {
    static FILTER: OnceLock<regex::Regex> = OnceLock::new();
    let filter = FILTER.get_or_init(|| {
        regex::Regex::new(
            r#"(@(?:\.[\w-]+|\['[^']*'\]|\["[^"]*"\]|\[-?\d+\])*)\s*=~\s*/((?:\\.|[^/\\])*)/([a-zA-Z]*)"#,
        )
        .expect("the =~ pattern compiles")
    });
    if !expression.contains("=~") {
        return Cow::Borrowed(expression);
    }
    filter.replace_all(expression, |found: &regex::Captures<'_>| {
        let flags: String = found[3]
            .chars()
            .filter(|flag| matches!(flag, 'i' | 'm' | 's' | 'x'))
            .collect();
        let mut pattern = found[2].replace("\\/", "/");
        if !flags.is_empty() {
            pattern = format!("(?{flags}){pattern}");
        }
        // An RFC 9535 string literal: backslashes and quotes escaped.
        let literal = pattern.replace('\\', "\\\\").replace('\'', "\\'");
        format!("match({}, '{literal}')", &found[1])
    })
}

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
    let nodes = matcher.path.query(document).all();
    let found: Value = if matcher.singular {
        match nodes.first() {
            Some(value) => (*value).clone(),
            None => return Vec::new(),
        }
    } else {
        Value::Array(nodes.into_iter().cloned().collect())
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
    let nodes = matcher.path.query(document).all();
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
    fn jayway_regex_filters_select_as_jayway_does() {
        let document = json!({"items": [
            {"name": "Foobar", "n": 1}, {"name": "foo", "n": 2}, {"name": "bar", "n": 3},
            {"name": 7, "n": 4}, {"name": "a/b.c", "n": 5}, {"name": "x'y", "n": 6}
        ]});
        // (Jayway path, the n of the items it selects)
        let table: [(&str, &[i64]); 7] = [
            ("$.items[?(@.name =~ /foo.*/)].n", &[2]),
            ("$.items[?(@.name =~ /foo.*/i)].n", &[1, 2]),
            // Whole-string match, as Jayway's Matcher.matches().
            ("$.items[?(@.name =~ /oo/)].n", &[]),
            ("$.items[?(@['name'] =~ /b.r/)].n", &[3]),
            ("$.items[?(@.name =~ /a\\/b\\.c/)].n", &[5]),
            ("$.items[?(@.name =~ /x'y/ && @.n > 1)].n", &[6]),
            ("$.items[?(@.n == 2)].n", &[2]),
        ];
        for (jayway, expected) in table {
            let rfc = jayway_to_rfc9535(jayway);
            let path = serde_json_path::JsonPath::parse(&rfc)
                .unwrap_or_else(|err| panic!("{jayway} -> {rfc}: {err}"));
            let found: Vec<i64> = path
                .query(&document)
                .all()
                .into_iter()
                .filter_map(|v| v.as_i64())
                .collect();
            assert_eq!(found, expected, "{jayway} -> {rfc}");
        }
    }

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
