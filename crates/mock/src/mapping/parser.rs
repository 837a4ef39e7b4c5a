//! The [`Parser`]: reads typed fields out of JSON values as WireMock's Jackson does (numbers
//! and booleans written as strings accepted), and records each problem (file, JSON path,
//! reason and fix) instead of stopping, so one run names every problem of a file.

use crate::MockError;
use regex::Regex;
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::path::Path;

/// One file's parse: where problems are collected.
pub(super) struct Parser<'a> {
    /// The file's name in errors.
    pub source: &'a str,
    /// Where `bodyFileName` is read from; `None` refuses it.
    pub files_root: Option<&'a Path>,
    /// Each mapping's `jsonBody` as written, by mapping index.
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

impl<'a> Parser<'a> {
    /// A parse of `source`, with each mapping's `jsonBody` text by index (see
    /// [`json_body_texts`](super::json_text::json_body_texts)).
    pub fn new(
        source: &'a str,
        files_root: Option<&'a Path>,
        json_bodies: Vec<Option<String>>,
    ) -> Self {
        Parser {
            source,
            files_root,
            json_bodies,
            problems: RefCell::new(Vec::new()),
        }
    }

    /// What was parsed, or every problem recorded on the way.
    pub fn finish<T>(self, parsed: T) -> Result<T, MockError> {
        match MockError::from_problems(self.problems.into_inner()) {
            Some(err) => Err(err),
            None => Ok(parsed),
        }
    }

    /// The `jsonBody` of the mapping at `index` as written in the file.
    pub fn json_body(&self, index: usize) -> Option<&str> {
        self.json_bodies.get(index).and_then(Option::as_deref)
    }

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
}
