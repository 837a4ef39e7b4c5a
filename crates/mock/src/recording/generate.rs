//! Proxied exchanges to stub mappings, as WireMock's recorder writes them: the request's
//! `url` and `method`, its body as `equalToJson` (a JSON content type: array order and extra
//! elements ignored), `equalTo` (text) or `binaryEqualTo`; the response's status, headers and
//! body (`body` when its `Content-Type` is text, JSON, XML, HTML, JavaScript or a form and it is
//! UTF-8, else `base64Body`, as WireMock decides; no `Content-Type` is binary); a name made from the URL path
//! (`/api/v1/Orders x` → `api_v1_orders-x`), `persistent: true`. The same request seen again
//! becomes a scenario (`scenario-N-name`: `Started` → `scenario-N-name-2` → ...), unless
//! `repeatsAsScenarios` is false, when the first answer alone is kept.
use base64::Engine;
use bytes::Bytes;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// One request forwarded by a proxy stub and the downstream's answer.
#[derive(Debug)]
pub struct Exchange {
    /// Method.
    pub method: String,
    /// Path and query, as sent.
    pub url: String,
    /// The request's `Content-Type`, if any.
    pub content_type: Option<String>,
    /// The request body.
    pub request_body: Bytes,
    /// The downstream's status.
    pub status: u16,
    /// The downstream's headers (hop-by-hop ones left out), in order.
    pub headers: Vec<(String, String)>,
    /// The downstream's body.
    pub body: Bytes,
}

/// What a `start` or `snapshot` asks for.
#[derive(Debug, Clone)]
pub struct RecordSpec {
    /// `targetBaseUrl` (start only).
    pub target_base_url: Option<String>,
    /// `persist` (default true): write the mappings to the mappings folder.
    pub persist: bool,
    /// `repeatsAsScenarios` (default true).
    pub repeats_as_scenarios: bool,
    /// `outputFormat: "IDS"`: answer with the ids only.
    pub output_ids: bool,
}

impl RecordSpec {
    /// Reads the JSON body of `start` or `snapshot` (empty: the defaults). `Err` names the
    /// field and what to do.
    pub fn parse(body: &[u8]) -> Result<RecordSpec, String> {
        let mut spec = RecordSpec {
            target_base_url: None,
            persist: true,
            repeats_as_scenarios: true,
            output_ids: false,
        };
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(spec);
        }
        let value: Value =
            serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))?;
        let Value::Object(fields) = value else {
            return Err("the body must be a JSON object".into());
        };
        let flag = |name: &str, value: &Value| {
            value
                .as_bool()
                .ok_or_else(|| format!("'{name}' must be true or false"))
        };
        for (name, value) in &fields {
            match name.as_str() {
                "targetBaseUrl" => {
                    let url = value.as_str().ok_or("'targetBaseUrl' must be a URL string")?;
                    crate::proxy::check_base_url(url)
                        .map_err(|reason| format!("targetBaseUrl {reason}"))?;
                    spec.target_base_url = Some(url.to_string());
                }
                "persist" => spec.persist = flag(name, value)?,
                "repeatsAsScenarios" => spec.repeats_as_scenarios = flag(name, value)?,
                "outputFormat" => match value.as_str() {
                    Some("FULL") => spec.output_ids = false,
                    Some("IDS") => spec.output_ids = true,
                    _ => return Err("'outputFormat' is FULL or IDS".into()),
                },
                other => {
                    return Err(format!(
                        "the recording option '{other}' is not supported by chokepoint mock: \
                         remove it (targetBaseUrl, persist, repeatsAsScenarios and outputFormat are)"
                    ))
                }
            }
        }
        Ok(spec)
    }
}

/// One recorded mapping and the file it is written to.
#[derive(Debug)]
pub struct Recorded {
    /// The mapping, as WireMock writes it.
    pub json: Value,
    /// `name-id.json`.
    pub file_name: String,
}

/// WireMock's `SafeNames.makeSafeNameFromUrl`: the decoded path, `/` → `_`, blanks → `-`,
/// other characters than letters, digits, `_`, `-` and `.` dropped, lower case, no `_` at
/// either end, at most 200 characters.
pub fn safe_name(url: &str) -> String {
    let path = url.split('?').next().unwrap_or("");
    let decoded = crate::matching::percent_decode_path(path);
    let slug: String = decoded
        .replace('/', "_")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("-")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        .collect::<String>()
        .to_lowercase();
    let slug = slug
        .strip_prefix('_')
        .unwrap_or(&slug)
        .trim_end_matches('_');
    slug.chars().take(200).collect()
}

fn body_pattern(exchange: &Exchange) -> Option<Value> {
    if exchange.request_body.is_empty() {
        return None;
    }
    let json_type = exchange
        .content_type
        .as_deref()
        .is_some_and(|t| t.to_ascii_lowercase().contains("json"));
    Some(match std::str::from_utf8(&exchange.request_body) {
        Ok(text) if json_type && serde_json::from_str::<Value>(text).is_ok() => json!({
            "equalToJson": text, "ignoreArrayOrder": true, "ignoreExtraElements": true
        }),
        Ok(text) => json!({"equalTo": text, "caseInsensitive": false}),
        Err(_) => json!({
            "binaryEqualTo": base64::engine::general_purpose::STANDARD.encode(&exchange.request_body)
        }),
    })
}

fn request_json(exchange: &Exchange) -> Value {
    let mut request = Map::new();
    request.insert("url".into(), json!(exchange.url));
    request.insert("method".into(), json!(exchange.method));
    if let Some(pattern) = body_pattern(exchange) {
        request.insert("bodyPatterns".into(), json!([pattern]));
    }
    Value::Object(request)
}

/// Whether WireMock records a body of this content type as text (`ContentTypes`).
fn is_text_type(content_type: &str) -> bool {
    let lower = content_type.to_ascii_lowercase();
    [
        "text",
        "json",
        "xml",
        "html",
        "javascript",
        "x-www-form-urlencoded",
    ]
    .iter()
    .any(|kind| lower.contains(kind))
}

fn response_json(exchange: &Exchange) -> Value {
    let mut response = Map::new();
    response.insert("status".into(), json!(exchange.status));
    let text_type = exchange
        .headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-type"))
        .is_some_and(|(_, value)| is_text_type(value));
    match std::str::from_utf8(&exchange.body) {
        _ if exchange.body.is_empty() => {}
        Ok(text) if text_type => {
            response.insert("body".into(), json!(text));
        }
        _ => {
            let encoded = base64::engine::general_purpose::STANDARD.encode(&exchange.body);
            response.insert("base64Body".into(), json!(encoded));
        }
    }
    let mut headers = Map::new();
    for (name, value) in &exchange.headers {
        match headers.get_mut(name) {
            Some(Value::Array(values)) => values.push(json!(value)),
            Some(single) => *single = json!([single.clone(), value]),
            None => {
                headers.insert(name.clone(), json!(value));
            }
        }
    }
    if !headers.is_empty() {
        response.insert("headers".into(), Value::Object(headers));
    }
    Value::Object(response)
}

/// The mappings for these exchanges, oldest first.
pub fn mappings(exchanges: &[Arc<Exchange>], repeats_as_scenarios: bool) -> Vec<Recorded> {
    // The same request (method, URL, body pattern) seen more than once, by first sighting.
    let requests: Vec<Value> = exchanges.iter().map(|e| request_json(e)).collect();
    let mut groups: Vec<(Value, Vec<usize>)> = Vec::new();
    for (index, request) in requests.iter().enumerate() {
        match groups.iter_mut().find(|(seen, _)| seen == request) {
            Some((_, members)) => members.push(index),
            None => groups.push((request.clone(), vec![index])),
        }
    }
    let mut scenario_of: Vec<Option<(String, usize, usize)>> = vec![None; exchanges.len()];
    let mut keep = vec![true; exchanges.len()];
    let mut scenarios = 0;
    for (_, members) in &groups {
        if members.len() < 2 {
            continue;
        }
        if !repeats_as_scenarios {
            members[1..].iter().for_each(|&i| keep[i] = false);
            continue;
        }
        scenarios += 1;
        let name = format!(
            "scenario-{scenarios}-{}",
            safe_name(&exchanges[members[0]].url)
        );
        for (step, &index) in members.iter().enumerate() {
            scenario_of[index] = Some((name.clone(), step + 1, members.len()));
        }
    }
    let mut out = Vec::new();
    for (index, exchange) in exchanges.iter().enumerate() {
        if !keep[index] {
            continue;
        }
        let id = crate::mapping::new_id();
        let name = safe_name(&exchange.url);
        let mut mapping = Map::new();
        mapping.insert("id".into(), json!(id));
        mapping.insert("name".into(), json!(name));
        mapping.insert("request".into(), requests[index].clone());
        mapping.insert("response".into(), response_json(exchange));
        mapping.insert("uuid".into(), json!(id));
        mapping.insert("persistent".into(), json!(true));
        if let Some((scenario, step, steps)) = &scenario_of[index] {
            let state = |n: usize| match n {
                1 => "Started".to_string(),
                n => format!("{scenario}-{n}"),
            };
            mapping.insert("scenarioName".into(), json!(scenario));
            mapping.insert("requiredScenarioState".into(), json!(state(*step)));
            if step < steps {
                mapping.insert("newScenarioState".into(), json!(state(step + 1)));
            }
        }
        let stem = match name.as_str() {
            "" => format!("{}-", exchange.method.to_ascii_lowercase()),
            named => named.to_string(),
        };
        out.push(Recorded {
            json: Value::Object(mapping),
            file_name: format!("{stem}-{id}.json"),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(method: &str, url: &str, body: &str, answer: &str) -> Arc<Exchange> {
        Arc::new(Exchange {
            method: method.into(),
            url: url.into(),
            content_type: Some("application/json".into()),
            request_body: Bytes::from(body.to_string()),
            status: 200,
            headers: vec![("content-type".into(), "text/plain".into())],
            body: Bytes::from(answer.to_string()),
        })
    }

    #[test]
    fn names_as_wiremock_makes_them() {
        let table = [
            // (URL, WireMock's name, seen from WireMock 3.9.1's recorder)
            ("/api/v1/Orders%20x/7?q=a%20b", "api_v1_orders-x_7"),
            ("/data.json?x=1", "data.json"),
            ("/nothere", "nothere"),
            ("/", ""),
        ];
        for (url, name) in table {
            assert_eq!(safe_name(url), name, "{url}");
        }
    }

    #[test]
    fn repeats_become_a_scenario_and_bodies_become_patterns() {
        let exchanges = [
            exchange("GET", "/data.json?x=1", "", "first"),
            exchange("POST", "/orders", r#"{"b": [1, 2]}"#, "made"),
            exchange("GET", "/data.json?x=1", "", "second"),
        ];
        let recorded = mappings(&exchanges, true);
        assert_eq!(recorded.len(), 3);
        let first = &recorded[0].json;
        assert_eq!(first["scenarioName"], "scenario-1-data.json");
        assert_eq!(first["requiredScenarioState"], "Started");
        assert_eq!(first["newScenarioState"], "scenario-1-data.json-2");
        assert_eq!(first["response"]["body"], "first");
        let last = &recorded[2].json;
        assert_eq!(last["requiredScenarioState"], "scenario-1-data.json-2");
        assert!(last.get("newScenarioState").is_none());
        let post = &recorded[1].json;
        assert_eq!(
            post["request"]["bodyPatterns"][0]["equalToJson"],
            r#"{"b": [1, 2]}"#
        );
        assert!(post.get("scenarioName").is_none());
        assert!(recorded[1].file_name.starts_with("orders-"));
        assert_eq!(mappings(&exchanges, false).len(), 2);
        // Each one a mapping the mock serves.
        for r in &recorded {
            crate::mapping::parse_mappings(&r.json.to_string(), "recorded").unwrap();
        }
    }

    #[test]
    fn specs_are_read_and_bad_ones_named() {
        let spec =
            RecordSpec::parse(br#"{"targetBaseUrl": "http://127.0.0.1:9", "persist": false}"#)
                .unwrap();
        assert_eq!(spec.target_base_url.as_deref(), Some("http://127.0.0.1:9"));
        assert!(!spec.persist && spec.repeats_as_scenarios);
        assert!(RecordSpec::parse(b"").unwrap().persist);
        assert!(RecordSpec::parse(br#"{"filters": {}}"#)
            .unwrap_err()
            .contains("'filters'"));
        assert!(RecordSpec::parse(br#"{"targetBaseUrl": "ftp://x"}"#).is_err());
        assert!(RecordSpec::parse(b"{").unwrap_err().contains("not JSON"));
    }
}
