//! WireMock's value matchers, as used on headers, query parameters and bodies (`bodyPatterns`):
//! the typed matcher and how it is read from a mapping.
use super::parser::Parser;
use regex::Regex;
use serde_json::Value;

/// A matcher on a header, a query parameter or the body.
#[derive(Debug, Clone)]
pub enum ValueMatcher {
    /// `equalTo` (with `caseInsensitive`).
    EqualTo {
        /// The expected value.
        value: String,
        /// Compare ignoring ASCII case.
        case_insensitive: bool,
    },
    /// `contains`.
    Contains(String),
    /// `doesNotContain`: also matches when there is no value at all.
    DoesNotContain(String),
    /// `matches`: the whole value matches the regex.
    Matches(Regex),
    /// `doesNotMatch`: also matches when there is no value at all.
    DoesNotMatch(Regex),
    /// `absent: true`: the header or parameter must not be there.
    Absent,
    /// `equalToJson`: the value, read as JSON, equals this (numbers compared by value;
    /// JsonUnit's `${json-unit.*}` placeholders honoured).
    EqualToJson {
        /// The expected document.
        expected: Value,
        /// `ignoreArrayOrder`.
        ignore_array_order: bool,
        /// `ignoreExtraElements`: extra object fields and trailing array items are allowed.
        ignore_extra_elements: bool,
    },
    /// `matchesJsonPath`.
    MatchesJsonPath(Box<JsonPathMatcher>),
    /// `binaryEqualTo`: the raw bytes, given in base64.
    BinaryEqualTo(Vec<u8>),
    /// `and`: every matcher of the list matches the same value.
    And(Vec<ValueMatcher>),
    /// `or`: one matcher of the list does.
    Or(Vec<ValueMatcher>),
    /// `not`: the matcher does not.
    Not(Box<ValueMatcher>),
}

/// `matchesJsonPath`: the expression finds something, or what it finds matches `then`.
#[derive(Debug, Clone)]
pub struct JsonPathMatcher {
    /// The expression as written.
    pub expression: String,
    /// The compiled expression (as Jayway reads it).
    pub path: crate::json_match::JaywayPath,
    /// Whether the expression names one place (no wildcard, slice, filter or `..`).
    pub singular: bool,
    /// A matcher on what the expression finds (`{"expression": ..., "equalTo": ...}`).
    pub then: Option<ValueMatcher>,
}

/// WireMock value matchers this mock does not support yet.
const UNSUPPORTED_MATCHERS: &[&str] = &[
    "matchesJsonSchema",
    "before",
    "after",
    "equalToDateTime",
    "hasExactly",
    "includes",
];

/// Matchers WireMock has whose semantics (XML canonicalisation, XPath) this mock does not
/// implement: refused with the reason.
const XML_MATCHERS: &[&str] = &["equalToXml", "matchesXPath"];

impl Parser<'_> {
    /// `{"Name": {matcher}, ...}` for headers and query parameters.
    pub fn value_matchers(&self, value: &Value, path: &str) -> Vec<(String, ValueMatcher)> {
        let Some(obj) = self.object(value, path) else {
            return Vec::new();
        };
        obj.iter()
            .filter_map(|(name, spec)| {
                let at = format!("{path}.{name}");
                Some((name.clone(), self.value_matcher(spec, &at)?))
            })
            .collect()
    }

    /// `[{matcher}, ...]`: `bodyPatterns`.
    pub fn body_patterns(&self, value: &Value, path: &str) -> Vec<ValueMatcher> {
        let Some(list) = value.as_array() else {
            self.type_error(path, "a list of matchers", value);
            return Vec::new();
        };
        list.iter()
            .enumerate()
            .filter_map(|(i, spec)| self.value_matcher(spec, &format!("{path}[{i}]")))
            .collect()
    }

    /// One matcher object, e.g. `{"equalTo": "x", "caseInsensitive": true}`.
    pub fn value_matcher(&self, value: &Value, path: &str) -> Option<ValueMatcher> {
        let obj = self.object(value, path)?;
        let flag = |name: &str| {
            obj.get(name)
                .and_then(|v| self.boolean(v, &format!("{path}.{name}")))
                .unwrap_or(false)
        };
        let mut matcher = None;
        let mut failed = false;
        for (key, field) in obj {
            let at = format!("{path}.{key}");
            let found = match key.as_str() {
                "equalTo" => self.string(field, &at).map(|s| ValueMatcher::EqualTo {
                    value: s.to_string(),
                    case_insensitive: flag("caseInsensitive"),
                }),
                "contains" => self
                    .string(field, &at)
                    .map(|s| ValueMatcher::Contains(s.to_string())),
                "doesNotContain" => self
                    .string(field, &at)
                    .map(|s| ValueMatcher::DoesNotContain(s.to_string())),
                "matches" => self
                    .string(field, &at)
                    .and_then(|s| self.regex(s, &at))
                    .map(ValueMatcher::Matches),
                "doesNotMatch" => self
                    .string(field, &at)
                    .and_then(|s| self.regex(s, &at))
                    .map(ValueMatcher::DoesNotMatch),
                "absent" => match self.boolean(field, &at) {
                    Some(true) => Some(ValueMatcher::Absent),
                    Some(false) => {
                        self.problem(&at, "only 'absent': true is supported: remove it");
                        None
                    }
                    None => None,
                },
                "equalToJson" => self.equal_to_json(field, &at, &flag),
                "matchesJsonPath" => self.json_path(field, &at),
                "and" | "or" => self.logical(key, field, &at),
                "not" => self
                    .value_matcher(field, &at)
                    .map(|inner| ValueMatcher::Not(Box::new(inner))),
                "binaryEqualTo" => self.string(field, &at).and_then(|text| {
                    use base64::Engine;
                    match base64::engine::general_purpose::STANDARD.decode(text) {
                        Ok(bytes) => Some(ValueMatcher::BinaryEqualTo(bytes)),
                        Err(err) => {
                            self.problem(&at, format!("is not base64: {err}"));
                            None
                        }
                    }
                }),
                // Options of the matchers above, read by them.
                "caseInsensitive" | "ignoreArrayOrder" | "ignoreExtraElements" => continue,
                // An option of equalToJson WireMock has on by default.
                "enablePlaceholders" => continue,
                name if XML_MATCHERS.contains(&name) => {
                    self.problem(
                        &at,
                        format!(
                            "WireMock's '{name}' (XML comparison) is not supported by chokepoint \
                             mock: match the body with 'contains' or 'matches' instead"
                        ),
                    );
                    None
                }
                _ => {
                    self.unknown(key, path, UNSUPPORTED_MATCHERS, "matcher");
                    None
                }
            };
            let Some(found) = found else {
                failed = true;
                continue;
            };
            if matcher.is_some() {
                self.problem(
                    &at,
                    "give one matcher per header, parameter or body pattern",
                );
                failed = true;
            }
            matcher = Some(found);
        }
        if failed {
            return None;
        }
        if matcher.is_none() {
            self.problem(
                path,
                "has no matcher: use equalTo, contains, matches, doesNotMatch, absent, \
                 equalToJson or matchesJsonPath",
            );
        }
        matcher
    }

    /// `"and": [matcher, ...]` or `"or": [...]`, as WireMock 3's logical matchers.
    fn logical(&self, key: &str, field: &Value, at: &str) -> Option<ValueMatcher> {
        let Some(list) = field.as_array() else {
            self.type_error(at, "a list of matchers", field);
            return None;
        };
        if list.is_empty() {
            self.problem(at, format!("'{key}' needs at least one matcher"));
            return None;
        }
        let matchers: Vec<ValueMatcher> = list
            .iter()
            .enumerate()
            .filter_map(|(i, spec)| self.value_matcher(spec, &format!("{at}[{i}]")))
            .collect();
        if matchers.len() != list.len() {
            return None;
        }
        Some(match key {
            "and" => ValueMatcher::And(matchers),
            _ => ValueMatcher::Or(matchers),
        })
    }

    fn equal_to_json(
        &self,
        field: &Value,
        at: &str,
        flag: &dyn Fn(&str) -> bool,
    ) -> Option<ValueMatcher> {
        // A JSON document, or a string holding one.
        let expected = match field {
            Value::String(text) => match serde_json::from_str(text) {
                Ok(value) => value,
                Err(err) => {
                    self.problem(at, format!("the string is not JSON: {err}"));
                    return None;
                }
            },
            other => other.clone(),
        };
        Some(ValueMatcher::EqualToJson {
            expected,
            ignore_array_order: flag("ignoreArrayOrder"),
            ignore_extra_elements: flag("ignoreExtraElements"),
        })
    }

    fn json_path(&self, field: &Value, at: &str) -> Option<ValueMatcher> {
        let (expression, then) = match field {
            Value::String(text) => (text.as_str(), None),
            Value::Object(obj) => {
                let Some(expression) = obj.get("expression") else {
                    self.problem(at, "needs 'expression' beside its matcher");
                    return None;
                };
                let expression = self.string(expression, &format!("{at}.expression"))?;
                let mut rest = obj.clone();
                rest.remove("expression");
                let then = self.value_matcher(&Value::Object(rest), at)?;
                (expression, Some(then))
            }
            other => {
                self.type_error(at, "a JSON path or {\"expression\": ..., matcher}", other);
                return None;
            }
        };
        let path = match crate::json_match::JaywayPath::parse(expression) {
            Ok(path) => path,
            Err(err) => {
                self.problem(
                    at,
                    format!(
                        "the JSON path '{expression}' is not one chokepoint mock reads \
                         (RFC 9535 and Jayway's =~; Jayway's functions such as length() are \
                         not): {err}"
                    ),
                );
                return None;
            }
        };
        Some(ValueMatcher::MatchesJsonPath(Box::new(JsonPathMatcher {
            expression: expression.to_string(),
            singular: is_singular(expression),
            path,
            then,
        })))
    }
}

/// Whether a JSON path names one place: no wildcard, filter, slice, union or descent.
fn is_singular(expression: &str) -> bool {
    !(expression.contains('*')
        || expression.contains("[?")
        || expression.contains("..")
        || expression.contains(':')
        || expression.contains(','))
}
