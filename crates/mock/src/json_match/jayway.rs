//! JSON paths as WireMock's Jayway reads them, on RFC 9535's `serde_json_path`. Three Jayway
//! habits are translated: `.['name']` (a dot before a bracket, as Spring Cloud Contract writes
//! paths) is `['name']`; `@.name =~ /regex/flags` is `match(@.name, '(?flags)regex')` (the
//! whole string, as Jayway's `Matcher.matches()`; `\/` is a `/`); and a filter `[?(...)]` is
//! applied the Jayway way: to each item of a list, but to an object itself (RFC 9535 would
//! test the object's members), so `$.errors[*][?(@.code == 7)]` and `$[?(@.kind == 'a')]` find
//! what they find in WireMock. The path is cut at each such filter; each piece is an RFC 9535
//! path run on what the piece before it found.
use serde_json::Value;
use serde_json_path::JsonPath;
use std::sync::OnceLock;

/// A compiled Jayway path.
#[derive(Debug, Clone)]
pub struct JaywayPath {
    pieces: Vec<Piece>,
}

#[derive(Debug, Clone)]
enum Piece {
    /// An RFC 9535 path, run from each node found so far.
    Path(JsonPath),
    /// `$[?(...)]`: kept when an object passes it, or the list's items that pass it.
    Filter(JsonPath),
}

/// `.[` → `[` outside quotes, except in `..[` (descendants).
fn without_dot_brackets(expression: &str) -> String {
    let mut out = String::with_capacity(expression.len());
    let mut quote = None;
    let chars: Vec<char> = expression.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        match quote {
            Some(q) if c == q && chars.get(i.wrapping_sub(1)) != Some(&'\\') => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '.' && chars.get(i + 1) == Some(&'[') && i > 0 && chars[i - 1] != '.' => {
                continue
            }
            None => {}
        }
        out.push(c);
    }
    out
}

/// `@.a =~ /re/i` → `match(@.a, '(?i)re')`.
fn regex_filters(expression: &str) -> String {
    static FILTER: OnceLock<regex::Regex> = OnceLock::new();
    let filter = FILTER.get_or_init(|| {
        regex::Regex::new(
            r#"(@(?:\.[\w-]+|\['[^']*'\]|\["[^"]*"\]|\[-?\d+\])*)\s*=~\s*/((?:\\.|[^/\\])*)/([a-zA-Z]*)"#,
        )
        .expect("the =~ pattern compiles")
    });
    filter
        .replace_all(expression, |found: &regex::Captures<'_>| {
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
        .into_owned()
}

/// The expression cut before and after each top-level filter not under `..`: the pieces'
/// texts, each rooted at `$`, and whether it is a filter.
fn cut(expression: &str) -> Vec<(String, bool)> {
    let chars: Vec<char> = expression.chars().collect();
    let mut pieces = Vec::new();
    let (mut start, mut depth, mut quote) = (0, 0usize, None);
    let mut filter_start = None;
    for (i, &c) in chars.iter().enumerate() {
        match quote {
            Some(q) if c == q && chars.get(i.wrapping_sub(1)) != Some(&'\\') => quote = None,
            Some(_) => {}
            None => match c {
                '\'' | '"' => quote = Some(c),
                '[' => {
                    let descendant = i >= 2 && chars[i - 1] == '.' && chars[i - 2] == '.';
                    if depth == 0 && chars.get(i + 1) == Some(&'?') && !descendant {
                        pieces.push((chars[start..i].iter().collect::<String>(), false));
                        filter_start = Some(i);
                    }
                    depth += 1;
                }
                ']' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        if let Some(from) = filter_start.take() {
                            pieces.push((chars[from..=i].iter().collect::<String>(), true));
                            start = i + 1;
                        }
                    }
                }
                _ => {}
            },
        }
    }
    pieces.push((chars[start..].iter().collect(), false));
    pieces
        .into_iter()
        .filter(|(text, filter)| *filter || !matches!(text.as_str(), "" | "$"))
        .map(|(text, filter)| match text.strip_prefix('$') {
            Some(_) => (text, filter),
            None => (format!("${text}"), filter),
        })
        .collect()
}

impl JaywayPath {
    /// Compiles a Jayway path; `Err` is the RFC 9535 parser's reason.
    pub fn parse(expression: &str) -> Result<JaywayPath, String> {
        let rewritten = regex_filters(&without_dot_brackets(expression));
        let mut pieces = Vec::new();
        for (text, filter) in cut(&rewritten) {
            let path = JsonPath::parse(&text).map_err(|e| e.to_string())?;
            pieces.push(if filter {
                Piece::Filter(path)
            } else {
                Piece::Path(path)
            });
        }
        if pieces.is_empty() {
            pieces.push(Piece::Path(
                JsonPath::parse("$").map_err(|e| e.to_string())?,
            ));
        }
        Ok(JaywayPath { pieces })
    }

    /// The nodes the path finds, in order.
    pub fn query(&self, document: &Value) -> Vec<Value> {
        let mut nodes = vec![document.clone()];
        for piece in &self.pieces {
            nodes = nodes
                .iter()
                .flat_map(|node| match (piece, node) {
                    (Piece::Path(path), _) => path.query(node).all().into_iter().cloned().collect(),
                    (Piece::Filter(filter), Value::Array(_)) => {
                        filter.query(node).all().into_iter().cloned().collect()
                    }
                    (Piece::Filter(filter), Value::Object(_)) => {
                        let alone = Value::Array(vec![node.clone()]);
                        filter.query(&alone).all().into_iter().cloned().collect()
                    }
                    (Piece::Filter(_), _) => Vec::new(),
                })
                .collect();
        }
        nodes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn jayway_paths_select_as_jayway_does() {
        let document = json!({"kind": "order", "items": [
            {"name": "Foobar", "n": 1}, {"name": "foo", "n": 2}, {"name": "bar", "n": 3},
            {"name": 7, "n": 4}, {"name": "a/b.c", "n": 5}, {"name": "x'y", "n": 6}
        ], "errors": [{"p": "42", "n": 7}, {"p": "x", "n": 8}], "one": {"n": 9, "k": "v"}});
        // (Jayway path, the n of what it finds)
        let table: [(&str, &[i64]); 14] = [
            ("$.items[?(@.name =~ /foo.*/)].n", &[2]),
            ("$.items[?(@.name =~ /foo.*/i)].n", &[1, 2]),
            // Whole-string match, as Jayway's Matcher.matches().
            ("$.items[?(@.name =~ /oo/)].n", &[]),
            ("$.items[?(@['name'] =~ /b.r/)].n", &[3]),
            ("$.items[?(@.name =~ /a\\/b\\.c/)].n", &[5]),
            ("$.items[?(@.name =~ /x'y/ && @.n > 1)].n", &[6]),
            ("$.items[?(@.n == 2)].n", &[2]),
            // Spring Cloud Contract's forms: `.[`, and filters on each object of a list.
            ("$.['errors'][*][?(@.['p'] =~ /[0-9]{2}/)].n", &[7]),
            ("$.errors[*][?(@.p == 'x')].n", &[8]),
            // A filter on an object tests the object itself.
            ("$[?(@.['kind'] == 'order')].one.n", &[9]),
            ("$[?(@.kind == 'user')].one.n", &[]),
            ("$.one[?(@.k == 'v')].n", &[9]),
            ("$..n", &[1, 2, 3, 4, 5, 6, 7, 8, 9]),
            ("$.items[1:3].n", &[2, 3]),
        ];
        for (jayway, expected) in table {
            let path = JaywayPath::parse(jayway).unwrap_or_else(|err| panic!("{jayway}: {err}"));
            let mut found: Vec<i64> = path
                .query(&document)
                .iter()
                .filter_map(Value::as_i64)
                .collect();
            if jayway.starts_with("$..") {
                found.sort();
            }
            assert_eq!(found, expected, "{jayway}");
        }
    }

    #[test]
    fn paths_are_cut_at_top_level_filters() {
        assert_eq!(
            cut("$.a[*][?(@.b[0] == ']')].c"),
            vec![
                ("$.a[*]".to_string(), false),
                ("$[?(@.b[0] == ']')]".to_string(), true),
                ("$.c".to_string(), false)
            ]
        );
        assert_eq!(cut("$..[?(@.x)]"), vec![("$..[?(@.x)]".to_string(), false)]);
        assert_eq!(without_dot_brackets("$.['a'].b..['c']"), "$['a'].b..['c']");
    }
}
