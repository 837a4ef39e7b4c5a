//! One text templated on its own, as a webhook's URL, headers and body are (WireMock's
//! `Webhooks` renders them with the served request as `originalRequest`). The model is the
//! response model's: `{{originalRequest.x}}` is read as `{{request.x}}`, so every helper and
//! rewrite of [`super::model`] applies. A text without `{{` is kept as it is.
use super::{model, render_one, template, RequestFacts};
use handlebars::{Context, Template};
use serde_json::Value;
use std::sync::OnceLock;

/// A compiled text template.
#[derive(Debug)]
pub struct TextTemplate {
    source: String,
    compiled: Option<Template>,
}

/// The model a webhook renders with: the request that was served.
#[derive(Debug)]
pub struct TextContext(Context);

impl TextContext {
    /// The served request as `originalRequest`.
    pub fn original_request(request: &RequestFacts<'_>) -> TextContext {
        TextContext(Context::from(model::build(request, &Value::Null)))
    }
}

impl TextTemplate {
    /// Compiles a webhook's text; the error says what is wrong.
    pub fn webhook(source: &str) -> Result<TextTemplate, String> {
        if !source.contains("{{") {
            return Ok(TextTemplate {
                source: source.to_string(),
                compiled: None,
            });
        }
        static ORIGINAL: OnceLock<regex::Regex> = OnceLock::new();
        let mustache = ORIGINAL.get_or_init(|| regex::Regex::new(r"\{\{(?s).*?\}\}").unwrap());
        let source_for_model = mustache.replace_all(source, |found: &regex::Captures<'_>| {
            found[0].replace("originalRequest.", "request.")
        });
        Ok(TextTemplate {
            source: source.to_string(),
            compiled: Some(template(&source_for_model)?),
        })
    }

    /// The text for this request; `Err` says why the template failed.
    pub fn render(&self, context: &TextContext) -> Result<String, String> {
        match &self.compiled {
            Some(compiled) => render_one(compiled, &context.0),
            None => Ok(self.source.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webhook_texts_read_the_original_request() {
        let mut headers = http::HeaderMap::new();
        headers.insert("x-trace", "t-1".parse().unwrap());
        let facts = RequestFacts {
            method: "POST",
            url: "/orders?id=9",
            path: "/orders",
            query: &[("id".to_string(), "9".to_string())],
            headers: &headers,
            body: br#"{"order": {"id": 17}}"#,
        };
        let context = TextContext::original_request(&facts);
        let table = [
            ("plain text", "plain text"),
            (
                "{{originalRequest.method}} {{originalRequest.query.id}} {{originalRequest.headers.X-Trace}}",
                "POST 9 t-1",
            ),
            (
                "{\"id\": {{jsonPath originalRequest.body '$.order.id'}} }",
                "{\"id\": 17 }",
            ),
        ];
        for (source, expected) in table {
            let text = TextTemplate::webhook(source).unwrap();
            assert_eq!(text.render(&context).unwrap(), expected, "{source}");
        }
        assert!(TextTemplate::webhook("{{#if x}}").is_err());
    }
}
