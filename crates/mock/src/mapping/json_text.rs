//! WireMock's JSON as Jackson reads it, before any field is looked at: `//` and `/* */`
//! comments blanked (line and column numbers kept), serde_json's error message without its
//! position (the error names it apart), and each mapping's `jsonBody` text as written in the
//! file (WireMock serves it in the file's key order and number spelling).

use serde::Deserialize;
use serde_json::value::RawValue;

/// The text with `//` and `/* */` comments turned into spaces (outside strings), so that line
/// and column numbers stay right.
pub(super) fn strip_comments(json: &str) -> String {
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
pub(super) fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(index) => message[..index].to_string(),
        None => message.to_string(),
    }
}

/// The text of each mapping's `jsonBody` as written (WireMock serves it in the file's key order
/// and number spelling), whitespace removed; by mapping index.
pub(super) fn json_body_texts(text: &str) -> Vec<Option<String>> {
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
