//! Response templating: WireMock's `response-template` transformer (a stub's
//! `"transformers": ["response-template"]`, or every stub with `--global-response-templating`),
//! on the `handlebars` crate.
//!
//! A stub's templates are compiled once, when it is loaded ([`compile`]): the text body
//! (`body`, `jsonBody`, or the `bodyFileName` file's content, or the file's name when it holds
//! `{{`), and each header value that holds `{{`. A templated request builds the model
//! ([`model::build`]: `request.*`, `parameters.*`) and renders them ([`ResponseTemplate::render`]);
//! a stub without templates never reaches this module. A template that fails to render gives
//! WireMock's answer: 500 with the message as a text body. The helpers are in [`helpers`].
mod assign;
mod dates;
mod helpers;
mod model;
mod text;

pub use model::RequestFacts;
pub use text::{TextContext, TextTemplate};

use crate::files::{self, BodyFileError};
use crate::mapping::{BodySource, ResponseDef};
use bytes::Bytes;
use handlebars::{Context, Handlebars, RenderContext, Renderable, StringOutput, Template};
use serde_json::Value;
use std::path::Path;
use std::sync::OnceLock;

/// The registry every template renders with: handlebars-rust's own helpers and WireMock's.
fn registry() -> &'static Handlebars<'static> {
    static REGISTRY: OnceLock<Handlebars<'static>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut registry = Handlebars::new();
        // WireMock's standalone server writes values as they are, not HTML-escaped.
        registry.register_escape_fn(handlebars::no_escape);
        helpers::register(&mut registry);
        registry
    })
}

/// A stub's response as compiled templates.
#[derive(Debug)]
pub struct ResponseTemplate {
    body: BodyTemplate,
    /// Templated header values, by index in the stub's headers.
    headers: Vec<(usize, Template)>,
    /// `transformerParameters`, the model's `parameters`.
    parameters: Value,
    /// Why the stub's templates could not be compiled (with `--global-response-templating`,
    /// where WireMock answers such a stub with a 500 rather than refusing it).
    broken: Option<String>,
}

#[derive(Debug)]
enum BodyTemplate {
    /// No text body (none, `base64Body`, a file that is not UTF-8): served as it is.
    Fixed,
    /// The body's text.
    Text(Template),
    /// A `bodyFileName` holding `{{`: the name is rendered, then that file's content.
    FileName(Template),
}

/// What a templated response renders to.
#[derive(Debug)]
pub struct Rendered {
    /// The body.
    pub body: Bytes,
    /// The stub's headers with the templated values rendered, in order.
    pub headers: Vec<(http::HeaderName, http::HeaderValue)>,
}

/// Compiles one template from WireMock's source (see [`model::rewrite`]).
fn template(source: &str) -> Result<Template, String> {
    if let Some(name) = called_helpers(source)
        .into_iter()
        .find(|name| !helpers::is_known(name) && name != "else")
    {
        return Err(format!(
            "the helper '{name}' is not supported by chokepoint mock (docs/guide/mock.md \
             lists those that are): remove it"
        ));
    }
    if let Some(zone) = unsupported_timezone(source) {
        return Err(format!(
            "the time zone '{zone}' is not supported by chokepoint mock (UTC only): remove timezone="
        ));
    }
    Template::compile(&model::rewrite(source)).map_err(|err| {
        // The reason without pest's list of what it expected, and where.
        let reason = err.reason().to_string();
        let reason = reason.split(": expected").next().unwrap_or(&reason).trim();
        match err.pos() {
            Some((line, column)) => format!("{reason} at line {line}, column {column}"),
            None => reason.to_string(),
        }
    })
}

/// The helpers a template calls (the first word of a `{{...}}` with arguments or a block, and of
/// each `(...)`), in order.
fn called_helpers(source: &str) -> Vec<String> {
    static PATTERNS: OnceLock<[regex::Regex; 3]> = OnceLock::new();
    let [mustache, literal, call] = PATTERNS.get_or_init(|| {
        [
            regex::Regex::new(r"\{\{(?s)(.*?)\}\}").unwrap(),
            regex::Regex::new(r#""[^"]*"|'[^']*'"#).unwrap(),
            regex::Regex::new(r"(?:^[{~]?\s*[#^]\s*|^[{~]?\s*|\(\s*)([A-Za-z_][\w-]*)").unwrap(),
        ]
    });
    let mut names = Vec::new();
    for inside in mustache.captures_iter(source) {
        let inside = literal.replace_all(&inside[1], "''");
        let block = inside
            .trim_start_matches(['{', '~'])
            .trim_start()
            .starts_with(['#', '^']);
        for found in call.captures_iter(&inside) {
            let whole = found.get(0).expect("a match");
            let opens_block = whole.start() == 0 && block;
            let rest = &inside[whole.end()..];
            let has_arguments = rest.starts_with(char::is_whitespace)
                && rest
                    .trim_start()
                    .starts_with(|c: char| !matches!(c, ')' | '}' | '~'));
            let in_parentheses = whole.as_str().starts_with('(');
            if opens_block || has_arguments || in_parentheses {
                names.push(found[1].to_string());
            }
        }
    }
    names
}

/// A `timezone='...'` other than UTC, which the `now` helper cannot honour.
fn unsupported_timezone(source: &str) -> Option<String> {
    static PATTERN: OnceLock<regex::Regex> = OnceLock::new();
    let pattern =
        PATTERN.get_or_init(|| regex::Regex::new(r#"timezone\s*=\s*['"]([^'"]*)['"]"#).unwrap());
    pattern
        .captures_iter(source)
        .map(|c| c[1].to_string())
        .find(|zone| !matches!(zone.as_str(), "UTC" | "GMT" | "Z" | "Etc/UTC"))
}

/// Compiles a stub's response templates; the error names the part and says what is wrong.
pub fn compile(definition: &ResponseDef) -> Result<ResponseTemplate, String> {
    let body = match &definition.body_source {
        BodySource::File(name) if name.contains("{{") => BodyTemplate::FileName(
            template(name).map_err(|e| format!("bodyFileName template: {e}"))?,
        ),
        BodySource::Text | BodySource::File(_) => match std::str::from_utf8(&definition.body) {
            Ok(text) if text.contains("{{") => {
                BodyTemplate::Text(template(text).map_err(|e| format!("body template: {e}"))?)
            }
            _ => BodyTemplate::Fixed,
        },
        BodySource::Binary | BodySource::Empty => BodyTemplate::Fixed,
    };
    let mut headers = Vec::new();
    for (index, (name, value)) in definition.headers.iter().enumerate() {
        let Ok(text) = value.to_str() else { continue };
        if text.contains("{{") && !name.as_str().starts_with("matched-stub-") {
            let compiled = template(text).map_err(|e| format!("header {name} template: {e}"))?;
            headers.push((index, compiled));
        }
    }
    Ok(ResponseTemplate {
        body,
        headers,
        parameters: definition.transformer_parameters.clone(),
        broken: None,
    })
}

fn render_one(template: &Template, context: &Context) -> Result<String, String> {
    let registry = registry();
    let mut render_context = RenderContext::new(None);
    let mut out = StringOutput::new();
    template
        .render(registry, context, &mut render_context, &mut out)
        .map_err(|err| match err.reason() {
            handlebars::RenderErrorReason::Other(message) => message.clone(),
            _ => err.to_string(),
        })?;
    out.into_string().map_err(|e| e.to_string())
}

impl ResponseTemplate {
    /// A stub whose templates do not compile: every request gets a 500 saying why.
    pub fn broken(reason: String) -> ResponseTemplate {
        ResponseTemplate {
            body: BodyTemplate::Fixed,
            headers: Vec::new(),
            parameters: Value::Null,
            broken: Some(reason),
        }
    }

    /// The response for this request: body and headers rendered. `Err` holds the message of
    /// the 500 WireMock answers when a template fails.
    pub fn render(
        &self,
        definition: &ResponseDef,
        request: &RequestFacts<'_>,
        files_root: Option<&Path>,
    ) -> Result<Rendered, String> {
        if let Some(reason) = &self.broken {
            return Err(reason.clone());
        }
        let context = Context::from(model::build(request, &self.parameters));
        let body = match &self.body {
            BodyTemplate::Fixed => definition.body.clone(),
            BodyTemplate::Text(body) => Bytes::from(render_one(body, &context)?),
            BodyTemplate::FileName(name) => {
                let name = render_one(name, &context)?;
                let root = files_root.ok_or("no __files folder for bodyFileName")?;
                let bytes = files::read_body_file(root, &name).map_err(|err| match err {
                    BodyFileError::Outside => format!("'{name}' is outside the __files folder"),
                    BodyFileError::Io(err) => format!("cannot read __files/{name}: {err}"),
                })?;
                match std::str::from_utf8(&bytes) {
                    Ok(text) => Bytes::from(render_one(&template(text)?, &context)?),
                    Err(_) => bytes,
                }
            }
        };
        let mut headers = definition.headers.clone();
        for (index, value) in &self.headers {
            let text = render_one(value, &context)?;
            headers[*index].1 = http::HeaderValue::from_str(&text).map_err(|_| {
                format!(
                    "header {}: '{text}' is not a header value",
                    headers[*index].0
                )
            })?;
        }
        Ok(Rendered { body, headers })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn render(source: &str, body: &str, url: &str) -> String {
        let template = template(source).unwrap();
        let (path, query) = url.split_once('?').unwrap_or((url, ""));
        let query: Vec<(String, String)> = query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (k.to_string(), v.to_string())
            })
            .collect();
        let mut headers = http::HeaderMap::new();
        headers.insert("x-tenant", "acme".parse().unwrap());
        let facts = RequestFacts {
            method: "POST",
            url,
            path,
            query: &query,
            headers: &headers,
            body: body.as_bytes(),
        };
        let context = Context::from(model::build(&facts, &json!({"team": "blue"})));
        render_one(&template, &context).unwrap()
    }

    #[test]
    fn templates_render_as_wiremock_renders_them() {
        let body = r#"{"name": "ada", "items": [{"qty": 1}, {"qty": 3}], "n": 7}"#;
        let table = [
            // (template, what WireMock renders for POST /shop/7?id=a&id=b with `body`)
            (
                "{{request.method}} {{request.url}}",
                "POST /shop/7?id=a&id=b",
            ),
            ("{{{request.url}}}", "/shop/7?id=a&id=b"),
            ("{{request.path}} {{request.path.[1]}}", "/shop/7 7"),
            ("{{request.query.id}} {{request.query.id.[1]}}", "a b"),
            ("{{request.headers.X-Tenant}}", "acme"),
            ("{{jsonPath request.body '$.name'}}", "ada"),
            (
                "{{jsonPath request.body '$.missing' default='none'}}",
                "none",
            ),
            ("{{jsonPath request.body '$.items[*].qty'}}", "[1,3]"),
            (
                "{{#each (jsonPath request.body '$.items')}}{{qty}};{{/each}}",
                "1;3;",
            ),
            ("{{math (jsonPath request.body '$.n') '+' 1}}", "8"),
            ("{{size (jsonPath request.body '$.items')}}", "2"),
            (
                "{{#if (eq request.method 'POST')}}yes{{else}}no{{/if}}",
                "yes",
            ),
            (
                "{{#unless (neq request.query.id 'a')}}first{{/unless}}",
                "first",
            ),
            ("{{parameters.team}}", "blue"),
            (
                "{{#assign 'who'}} {{request.headers.X-Tenant}}-{{parameters.team}}\n{{/assign}}<{{who}}>",
                "<acme-blue>",
            ),
            // Jayway applies a filter on an object to the object itself.
            ("{{jsonPath request.body '$[?(@.name =~ /AD./i)].n'}}", "[7]"),
            ("{{request.body}}", body),
            (
                "{{{jsonPath request.body '$.items[0]'}}}",
                "{\n  \"qty\" : 1\n}",
            ),
        ];
        for (source, expected) in table {
            assert_eq!(
                render(source, body, "/shop/7?id=a&id=b"),
                expected,
                "{source}"
            );
        }
    }

    #[test]
    fn random_values_and_dates_have_their_shape() {
        let value = render("{{randomValue length=12 type='NUMERIC'}}", "", "/");
        assert!(
            value.len() == 12 && value.bytes().all(|b| b.is_ascii_digit()),
            "{value}"
        );
        let value = render("{{randomValue type='UUID'}}", "", "/");
        assert_eq!(value.len(), 36);
        let value = render("{{now format='yyyy-MM-dd'}}", "", "/");
        assert_eq!(value, chrono::Utc::now().format("%Y-%m-%d").to_string());
    }

    #[test]
    fn the_helpers_a_template_calls_are_found() {
        let table: [(&str, &[&str]); 7] = [
            // (template, the helpers it calls)
            ("{{request.url}} {{name}}", &[]),
            ("{{upper request.method}}", &["upper"]),
            (
                "{{#each (jsonPath request.body '$.a')}}{{this}}{{/each}}",
                &["each", "jsonPath"],
            ),
            ("{{{ trim (lower x) }}}", &["trim", "lower"]),
            ("{{#if x}}a{{else}}b{{/if}}", &["if"]),
            ("{{math 1 '+' (size 'a (b c)')}}", &["math", "size"]),
            ("{{~randomInt lower=1}}", &["randomInt"]),
        ];
        for (source, expected) in table {
            assert_eq!(called_helpers(source), expected, "{source}");
        }
    }

    #[test]
    fn bad_templates_are_refused_at_compile() {
        assert!(template("{{upper request.method}}")
            .unwrap_err()
            .contains("'upper' is not supported"));
        assert!(template("{{#each x}}").is_err());
        assert!(template("{{now timezone='Europe/Paris'}}").is_err());
    }
}
