//! The response side of a mapping: status, headers, the body (read at load, `bodyFileName`
//! from `__files`), the delay, the dribble and the fault.
use super::delay::{ms, Delay, Dribble, Fault};
use super::parser::Parser;
use super::{BodySource, ProxyDef, ResponseDef};
use crate::files::BodyFileError;
use base64::Engine;
use bytes::Bytes;
use serde_json::Value;

/// WireMock response fields this mock does not support yet.
const UNSUPPORTED_RESPONSE: &[&str] = &["fromConfiguredTemplate"];

/// WireMock's transformer for response templating.
pub const RESPONSE_TEMPLATE: &str = "response-template";

/// Compiles a response's templates into it (for `--global-response-templating`, and for a stub
/// that asks); the error says which part and what is wrong.
pub fn compile_template(response: &mut ResponseDef) -> Result<(), String> {
    let template = crate::template::compile(response)?;
    response.template = Some(std::sync::Arc::new(template));
    Ok(())
}

/// The response of a mapping; `None` when it has a problem (recorded). `json_body` is the
/// `jsonBody` as written in the file, when known.
pub(super) fn parse(
    parser: &Parser<'_>,
    value: &Value,
    path: &str,
    json_body: Option<&str>,
) -> Option<ResponseDef> {
    let before = parser.problem_count();
    let obj = parser.object(value, path)?;
    let mut response = ResponseDef {
        status: 200,
        status_message: None,
        headers: Vec::new(),
        body: Bytes::new(),
        delay: None,
        dribble: None,
        fault: None,
        body_source: BodySource::Empty,
        templated: false,
        transformer_parameters: Value::Null,
        template: None,
        proxy: None,
    };
    let mut proxy: Option<ProxyDef> = None;
    let mut body_key: Option<&str> = None;
    let mut delay_key: Option<&str> = None;
    for (key, field) in obj {
        let at = format!("{path}.{key}");
        let body = match key.as_str() {
            "status" => {
                if let Some(status) = parser.integer(field, &at) {
                    if (100..=999).contains(&status) {
                        response.status = status as u16;
                    } else {
                        parser.problem(&at, "must be an HTTP status (100-999)");
                    }
                }
                None
            }
            "statusMessage" => {
                response.status_message = parser.string(field, &at).map(str::to_string);
                None
            }
            "body" => {
                response.body_source = BodySource::Text;
                match field {
                    Value::String(text) => Some(Bytes::from(text.clone())),
                    // WireMock writes a non-string `body` as JSON.
                    other => Some(Bytes::from(other.to_string())),
                }
            }
            "jsonBody" => {
                response.body_source = BodySource::Text;
                Some(Bytes::from(
                    json_body.map_or_else(|| field.to_string(), str::to_string),
                ))
            }
            "base64Body" => parser.string(field, &at).and_then(|text| {
                response.body_source = BodySource::Binary;
                match base64::engine::general_purpose::STANDARD.decode(text) {
                    Ok(bytes) => Some(Bytes::from(bytes)),
                    Err(err) => {
                        parser.problem(&at, format!("is not base64: {err}"));
                        None
                    }
                }
            }),
            "bodyFileName" => parser.string(field, &at).and_then(|name| {
                response.body_source = BodySource::File(name.to_string());
                // A name that is a template is read when the request comes.
                if name.contains("{{") && templated(obj) {
                    Some(Bytes::new())
                } else {
                    body_file(parser, name, &at)
                }
            }),
            "transformers" => {
                response.templated = transformers(parser, field, &at);
                None
            }
            "transformerParameters" => {
                if parser.object(field, &at).is_some() {
                    response.transformer_parameters = field.clone();
                }
                None
            }
            "proxyBaseUrl" => {
                if let Some(url) = parser.string(field, &at) {
                    if let Err(reason) = crate::proxy::check_base_url(url) {
                        parser.problem(&at, reason);
                    }
                    proxy.get_or_insert_with(ProxyDef::default).base_url = url.to_string();
                }
                None
            }
            "proxyUrlPrefixToRemove" => {
                if let Some(prefix) = parser.string(field, &at) {
                    proxy.get_or_insert_with(ProxyDef::default).prefix_to_remove =
                        Some(prefix.to_string());
                }
                None
            }
            "additionalProxyRequestHeaders" => {
                proxy
                    .get_or_insert_with(ProxyDef::default)
                    .additional_headers = headers(parser, field, &at);
                None
            }
            "removeProxyRequestHeaders" => {
                proxy.get_or_insert_with(ProxyDef::default).remove_headers =
                    header_names(parser, field, &at);
                None
            }
            "headers" => {
                response.headers = headers(parser, field, &at);
                None
            }
            "fixedDelayMilliseconds" | "delayDistribution" => {
                if let Some(previous) = delay_key {
                    parser.problem(
                        &at,
                        format!("give one delay, but '{previous}' is given too: remove one"),
                    );
                }
                delay_key = Some(key);
                response.delay = if key == "fixedDelayMilliseconds" {
                    parser
                        .number(field, &at)
                        .map(|value| Delay::Fixed(ms(value)))
                } else {
                    delay_distribution(parser, field, &at)
                };
                None
            }
            "chunkedDribbleDelay" => {
                response.dribble = dribble(parser, field, &at);
                None
            }
            "fault" => {
                if let Some(name) = parser.string(field, &at) {
                    response.fault = Fault::ALL.into_iter().find(|f| f.name() == name);
                    if response.fault.is_none() {
                        let known: Vec<&str> = Fault::ALL.iter().map(|f| f.name()).collect();
                        parser.problem(
                            &at,
                            format!("unknown fault '{name}': use one of {}", known.join(", ")),
                        );
                    }
                }
                None
            }
            _ => {
                parser.unknown(key, path, UNSUPPORTED_RESPONSE, "response field");
                None
            }
        };
        if let Some(body) = body {
            if let Some(previous) = body_key {
                parser.problem(
                    &at,
                    format!("a response has one body, but '{previous}' is given too"),
                );
            }
            body_key = Some(key);
            response.body = body;
        }
    }
    if let Some(proxy) = proxy {
        if proxy.base_url.is_empty() {
            parser.problem(
                path,
                "proxy options need a 'proxyBaseUrl' (http://host:port): add one",
            );
        }
        response.proxy = Some(std::sync::Arc::new(proxy));
    }
    if response.templated {
        if let Err(reason) = compile_template(&mut response) {
            parser.problem(path, format!("response-template: {reason}"));
        }
    }
    (parser.problem_count() == before).then_some(response)
}

/// Whether the response object lists WireMock's `response-template` transformer.
fn templated(response: &serde_json::Map<String, Value>) -> bool {
    response
        .get("transformers")
        .and_then(Value::as_array)
        .is_some_and(|list| list.iter().any(|t| t == RESPONSE_TEMPLATE))
}

/// `transformers`: `response-template` is the one this mock has; others are refused.
fn transformers(parser: &Parser<'_>, value: &Value, path: &str) -> bool {
    let Some(list) = value.as_array() else {
        parser.type_error(path, "a list of transformer names", value);
        return false;
    };
    let mut templated = false;
    for (i, item) in list.iter().enumerate() {
        let at = format!("{path}[{i}]");
        match parser.string(item, &at) {
            Some(RESPONSE_TEMPLATE) => templated = true,
            Some(other) => parser.problem(
                &at,
                format!(
                    "the transformer '{other}' is an extension chokepoint mock does not have \
                     (it has '{RESPONSE_TEMPLATE}'): remove it"
                ),
            ),
            None => {}
        }
    }
    templated
}

fn header_names(parser: &Parser<'_>, value: &Value, path: &str) -> Vec<http::HeaderName> {
    let Some(list) = value.as_array() else {
        parser.type_error(path, "a list of header names", value);
        return Vec::new();
    };
    list.iter()
        .enumerate()
        .filter_map(|(i, item)| {
            let at = format!("{path}[{i}]");
            let name = parser.string(item, &at)?;
            let header = http::HeaderName::from_bytes(name.as_bytes()).ok();
            if header.is_none() {
                parser.problem(&at, format!("'{name}' is not a header name"));
            }
            header
        })
        .collect()
}

/// Reads `__files/NAME` (see [`crate::files::read_body_file`]).
fn body_file(parser: &Parser<'_>, name: &str, path: &str) -> Option<Bytes> {
    let Some(root) = parser.files_root else {
        parser.problem(
            path,
            "bodyFileName needs a __files folder beside the mappings: load them from a folder",
        );
        return None;
    };
    match crate::files::read_body_file(root, name) {
        Ok(bytes) => Some(bytes),
        Err(BodyFileError::Outside) => {
            parser.problem(
                path,
                format!("'{name}' is outside the __files folder: give a path inside it"),
            );
            None
        }
        Err(BodyFileError::Io(err)) => {
            parser.problem(path, format!("cannot read __files/{name}: {err}"));
            None
        }
    }
}

pub(super) fn headers(
    parser: &Parser<'_>,
    value: &Value,
    path: &str,
) -> Vec<(http::HeaderName, http::HeaderValue)> {
    let Some(obj) = parser.object(value, path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, field) in obj {
        let at = format!("{path}.{name}");
        let Ok(header) = http::HeaderName::from_bytes(name.as_bytes()) else {
            parser.problem(&at, format!("'{name}' is not a header name"));
            continue;
        };
        let values: Vec<&Value> = match field {
            Value::Array(items) => items.iter().collect(),
            other => vec![other],
        };
        for item in values {
            let text = match item {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                other => {
                    parser.type_error(&at, "a string or a list of strings", other);
                    continue;
                }
            };
            match http::HeaderValue::from_str(&text) {
                Ok(header_value) => out.push((header.clone(), header_value)),
                Err(_) => parser.problem(&at, format!("'{text}' is not a valid header value")),
            }
        }
    }
    out
}

pub(super) fn delay_distribution(parser: &Parser<'_>, value: &Value, path: &str) -> Option<Delay> {
    let obj = parser.object(value, path)?;
    let kind = match obj.get("type") {
        Some(kind) => parser.string(kind, &format!("{path}.type"))?,
        None => {
            parser.problem(path, "has no 'type' (lognormal, uniform or fixed)");
            return None;
        }
    };
    let field = |name: &str| -> Option<f64> {
        match obj.get(name) {
            Some(value) => parser.number(value, &format!("{path}.{name}")),
            None => {
                parser.problem(path, format!("a {kind} delay needs '{name}'"));
                None
            }
        }
    };
    let allowed: &[&str] = match kind {
        "lognormal" => &["type", "median", "sigma", "maxValue"],
        "uniform" => &["type", "lower", "upper"],
        "fixed" => &["type", "milliseconds"],
        other => {
            parser.problem(
                &format!("{path}.type"),
                format!("unknown delay distribution '{other}': use lognormal, uniform or fixed"),
            );
            return None;
        }
    };
    for key in obj.keys().filter(|k| !allowed.contains(&k.as_str())) {
        parser.problem(
            &format!("{path}.{key}"),
            format!("unknown field of a {kind} delay"),
        );
    }
    match kind {
        "lognormal" => {
            let median_ms = field("median")?;
            if median_ms <= 0.0 {
                parser.problem(&format!("{path}.median"), "must be greater than 0");
                return None;
            }
            let max_ms = match obj.get("maxValue") {
                Some(value) => Some(parser.number(value, &format!("{path}.maxValue"))?),
                None => None,
            };
            Some(Delay::LogNormal {
                median_ms,
                sigma: field("sigma")?,
                max_ms,
            })
        }
        "uniform" => {
            let (lower_ms, upper_ms) = (field("lower")?, field("upper")?);
            if upper_ms < lower_ms {
                parser.problem(&format!("{path}.upper"), "must be >= lower");
                return None;
            }
            Some(Delay::Uniform { lower_ms, upper_ms })
        }
        _ => Some(Delay::Fixed(ms(field("milliseconds")?))),
    }
}

fn dribble(parser: &Parser<'_>, value: &Value, path: &str) -> Option<Dribble> {
    let obj = parser.object(value, path)?;
    for key in obj
        .keys()
        .filter(|k| !matches!(k.as_str(), "numberOfChunks" | "totalDuration"))
    {
        parser.problem(
            &format!("{path}.{key}"),
            "unknown field of chunkedDribbleDelay",
        );
    }
    let chunks = match obj.get("numberOfChunks") {
        Some(value) => parser.integer(value, &format!("{path}.numberOfChunks"))?,
        None => {
            parser.problem(path, "needs 'numberOfChunks', a whole number >= 1");
            return None;
        }
    };
    if !(1..=1_000_000).contains(&chunks) {
        parser.problem(
            &format!("{path}.numberOfChunks"),
            "must be a whole number from 1 to 1000000",
        );
        return None;
    }
    let total = match obj.get("totalDuration") {
        Some(value) => parser.number(value, &format!("{path}.totalDuration"))?,
        None => {
            parser.problem(path, "needs 'totalDuration' in milliseconds");
            return None;
        }
    };
    Some(Dribble {
        chunks: chunks as u32,
        total: ms(total),
    })
}
