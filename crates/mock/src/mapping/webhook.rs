//! `postServeActions` and `serveEventListeners` webhooks (WireMock 3's `Webhooks`): after a stub
//! is served, a request is sent to another server — method, URL, headers and body, each a
//! template on the served request (`{{originalRequest.*}}`), after an optional delay. Read here
//! at load; sent by [`crate::proxy::fire_webhooks`]. A listener's `requestPhases` must be
//! WireMock's (`BEFORE_MATCH`, `AFTER_MATCH`, `BEFORE_RESPONSE_SENT`, `AFTER_COMPLETE`); a
//! webhook is sent after the response (`AFTER_COMPLETE`), so one whose phases leave that out
//! is never sent, as in WireMock.
use super::delay::Delay;
use super::parser::Parser;
use super::response::{delay_distribution, headers};
use crate::template::TextTemplate;
use base64::Engine;
use bytes::Bytes;
use serde_json::{Map, Value};

/// One webhook of a stub.
#[derive(Debug)]
pub struct Webhook {
    /// `method` (default POST).
    pub method: http::Method,
    /// `url`: `http://` or `https://`, a template.
    pub url: TextTemplate,
    /// `headers`: each value a template.
    pub headers: Vec<(http::HeaderName, TextTemplate)>,
    /// `body` (a template) or `base64Body`.
    pub body: WebhookBody,
    /// `delay`: `{"type": "fixed", "milliseconds": N}` or a distribution, as a stub's.
    pub delay: Option<Delay>,
}

/// What a webhook sends.
#[derive(Debug)]
pub enum WebhookBody {
    /// No body.
    Empty,
    /// `body`, a template.
    Text(TextTemplate),
    /// `base64Body`.
    Binary(Bytes),
}

impl Parser<'_> {
    /// `postServeActions` (a list of `{"name": "webhook", "parameters": {...}}`, or WireMock 2's
    /// `{"webhook": {...}}`) or `serveEventListeners` (a list, as the first).
    pub(super) fn webhooks(&self, value: &Value, path: &str) -> Vec<Webhook> {
        let actions: Vec<(String, &Value, String)> = match value {
            Value::Array(list) => list
                .iter()
                .enumerate()
                .filter_map(|(i, action)| {
                    let at = format!("{path}[{i}]");
                    let obj = self.object(action, &at)?;
                    let name = self.string(
                        obj.get("name").unwrap_or(&Value::Null),
                        &format!("{at}.name"),
                    )?;
                    if !self.sent_after_the_response(obj.get("requestPhases"), &at) {
                        return None;
                    }
                    Some((
                        name.to_string(),
                        obj.get("parameters").unwrap_or(&Value::Null),
                        format!("{at}.parameters"),
                    ))
                })
                .collect(),
            Value::Object(by_name) => by_name
                .iter()
                .map(|(name, parameters)| (name.clone(), parameters, format!("{path}.{name}")))
                .collect(),
            other => {
                self.type_error(path, "a list of actions", other);
                return Vec::new();
            }
        };
        actions
            .into_iter()
            .filter_map(|(name, parameters, at)| {
                if name != "webhook" {
                    self.problem(
                        &at,
                        format!(
                            "the serve action '{name}' is not supported by chokepoint mock \
                             (only 'webhook' is): remove it"
                        ),
                    );
                    return None;
                }
                self.webhook(parameters, &at)
            })
            .collect()
    }

    /// Whether a listener's `requestPhases` (none: all) include the one webhooks act in.
    fn sent_after_the_response(&self, phases: Option<&Value>, path: &str) -> bool {
        const PHASES: [&str; 4] = [
            "BEFORE_MATCH",
            "AFTER_MATCH",
            "BEFORE_RESPONSE_SENT",
            "AFTER_COMPLETE",
        ];
        let Some(phases) = phases else {
            return true;
        };
        let at = format!("{path}.requestPhases");
        let Some(list) = phases.as_array() else {
            self.type_error(&at, "a list of phases", phases);
            return false;
        };
        let mut after_complete = false;
        for phase in list {
            match phase.as_str() {
                Some("AFTER_COMPLETE") => after_complete = true,
                Some(known) if PHASES.contains(&known) => {}
                _ => self.problem(
                    &at,
                    format!("{phase} is not a phase: use one of {}", PHASES.join(", ")),
                ),
            }
        }
        after_complete
    }

    fn webhook(&self, value: &Value, path: &str) -> Option<Webhook> {
        let obj: &Map<String, Value> = self.object(value, path)?;
        let before = self.problem_count();
        let template = |field: &Value, at: &str| -> Option<TextTemplate> {
            let text = self.string(field, at)?;
            TextTemplate::webhook(text)
                .map_err(|reason| self.problem(at, format!("template: {reason}")))
                .ok()
        };
        let mut method = http::Method::POST;
        let mut url = None;
        let mut header_templates = Vec::new();
        let mut body = WebhookBody::Empty;
        let mut delay = None;
        for (key, field) in obj {
            let at = format!("{path}.{key}");
            match key.as_str() {
                "method" => {
                    if let Some(text) = self.string(field, &at) {
                        match http::Method::from_bytes(text.to_ascii_uppercase().as_bytes()) {
                            Ok(parsed) => method = parsed,
                            Err(_) => self.problem(&at, format!("'{text}' is not an HTTP method")),
                        }
                    }
                }
                "url" => url = template(field, &at),
                "headers" => {
                    for (name, value) in headers(self, field, &at) {
                        let text = value.to_str().unwrap_or_default().to_string();
                        let at = format!("{at}.{name}");
                        if let Some(compiled) = template(&Value::String(text), &at) {
                            header_templates.push((name, compiled));
                        }
                    }
                }
                "body" => body = template(field, &at).map_or(WebhookBody::Empty, WebhookBody::Text),
                "base64Body" => {
                    if let Some(text) = self.string(field, &at) {
                        match base64::engine::general_purpose::STANDARD.decode(text) {
                            Ok(bytes) => body = WebhookBody::Binary(Bytes::from(bytes)),
                            Err(err) => self.problem(&at, format!("is not base64: {err}")),
                        }
                    }
                }
                "delay" => delay = delay_distribution(self, field, &at),
                _ => self.problem(
                    &at,
                    "unknown webhook field: use method, url, headers, body, base64Body or delay",
                ),
            }
        }
        let Some(url) = url else {
            if self.problem_count() == before {
                self.problem(path, "a webhook needs a 'url' (http://host:port/path)");
            }
            return None;
        };
        (self.problem_count() == before).then_some(Webhook {
            method,
            url,
            headers: header_templates,
            body,
            delay,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::mapping::parse_mappings;

    fn webhooks_of(actions: &str) -> Result<usize, String> {
        let json =
            format!(r#"{{"request": {{}}, "response": {{}}, "serveEventListeners": {actions}}}"#);
        parse_mappings(&json, "t.json")
            .map(|m| m[0].webhooks.len())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn webhooks_are_read_and_bad_ones_named() {
        let hook = r#""parameters": {"url": "http://127.0.0.1:9/x", "delay": {"type": "fixed", "milliseconds": 5}}"#;
        let table = [
            // (serveEventListeners, webhooks kept, or what the error names)
            (format!(r#"[{{"name": "webhook", {hook}}}]"#), Ok(1)),
            (
                format!(r#"[{{"name": "webhook", "requestPhases": ["AFTER_COMPLETE"], {hook}}}]"#),
                Ok(1),
            ),
            // WireMock calls webhooks after the response only.
            (
                format!(r#"[{{"name": "webhook", "requestPhases": ["BEFORE_MATCH"], {hook}}}]"#),
                Ok(0),
            ),
            (
                format!(r#"[{{"name": "webhook", "requestPhases": ["END_REQUEST"], {hook}}}]"#),
                Err("END_REQUEST"),
            ),
            (
                format!(r#"[{{"name": "log", {hook}}}]"#),
                Err("'log' is not supported"),
            ),
            (
                r#"[{"name": "webhook", "parameters": {"method": "POST"}}]"#.to_string(),
                Err("needs a 'url'"),
            ),
            (
                r#"[{"name": "webhook", "parameters": {"url": "{{#if x}}"}}]"#.to_string(),
                Err("template"),
            ),
            (
                r#"[{"name": "webhook", "parameters": {"url": "http://h", "retries": 3}}]"#
                    .to_string(),
                Err("unknown webhook field"),
            ),
        ];
        for (actions, expected) in table {
            match (webhooks_of(&actions), expected) {
                (Ok(kept), Ok(wanted)) => assert_eq!(kept, wanted, "{actions}"),
                (Err(message), Err(needle)) => {
                    assert!(message.contains(needle), "{actions}: {message}")
                }
                (got, wanted) => panic!("{actions}: {got:?}, wanted {wanted:?}"),
            }
        }
    }
}
