//! WireMock's JSON stub mappings: parsing, loading from files and folders, and validation.
//!
//! A mapping the mock cannot honour is refused here, at load, with the file, the JSON path and
//! the reason; a WireMock feature it does not support yet is named the same way, never ignored.
//! Fields that do not change what is served (`persistent`, `metadata`, `insertionIndex`) are
//! accepted and kept for the admin API.
use crate::MockError;
use base64::Engine;
use bytes::Bytes;
use regex::Regex;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// WireMock's default priority: lower numbers win.
pub const DEFAULT_PRIORITY: i64 = 5;

/// One stub: a request pattern and the response it gets.
#[derive(Debug, Clone)]
pub struct Mapping {
    /// WireMock's `id` (or `uuid`), or one made up at load.
    pub id: String,
    /// The mapping's `name`, if it has one.
    pub name: Option<String>,
    /// Lower numbers win; WireMock's default is 5.
    pub priority: i64,
    /// What a request must look like.
    pub request: RequestPattern,
    /// What it gets.
    pub response: ResponseDef,
    /// The JSON as given (with `id` filled in), for the admin API.
    pub json: Value,
}

/// The request side of a mapping.
#[derive(Debug, Clone, Default)]
pub struct RequestPattern {
    /// `None` for any method (`ANY` or absent).
    pub method: Option<String>,
    /// How the URL is matched.
    pub url: UrlMatcher,
    /// Header name (lower case) and its matcher.
    pub headers: Vec<(String, ValueMatcher)>,
    /// Query parameter name and its matcher.
    pub query: Vec<(String, ValueMatcher)>,
}

/// The URL part of a request pattern.
#[derive(Debug, Clone, Default)]
pub enum UrlMatcher {
    /// No URL given: any URL.
    #[default]
    Any,
    /// `url`: path and query, exactly.
    Url(String),
    /// `urlPath`: the path, exactly.
    UrlPath(String),
    /// `urlPathPattern`: the path matches the regex (whole).
    UrlPathPattern(Regex),
    /// `urlPattern`: path and query match the regex (whole).
    UrlPattern(Regex),
}

/// A matcher on a header or query parameter value.
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
    /// `doesNotContain`.
    DoesNotContain(String),
    /// `matches`: the whole value matches the regex.
    Matches(Regex),
    /// `doesNotMatch`.
    DoesNotMatch(Regex),
    /// `absent: true`: the header or parameter must not be there.
    Absent,
}

/// The response side of a mapping.
#[derive(Debug, Clone)]
pub struct ResponseDef {
    /// HTTP status.
    pub status: u16,
    /// `statusMessage`: the reason phrase.
    pub status_message: Option<String>,
    /// Headers, in order; a name may repeat.
    pub headers: Vec<(http::HeaderName, http::HeaderValue)>,
    /// The body (`body`, `jsonBody`, `base64Body` or `bodyFileName`, read at load).
    pub body: Bytes,
    /// `fixedDelayMilliseconds` or `delayDistribution`.
    pub delay: Option<Delay>,
    /// `chunkedDribbleDelay`.
    pub dribble: Option<Dribble>,
    /// `fault`.
    pub fault: Option<Fault>,
}

/// A per-stub delay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Delay {
    /// Always this long.
    Fixed(Duration),
    /// `median · e^(sigma · N(0,1))` milliseconds, capped at `max_ms` if given.
    LogNormal {
        /// Median, ms.
        median_ms: f64,
        /// Spread.
        sigma: f64,
        /// WireMock's optional `maxValue`, ms.
        max_ms: Option<f64>,
    },
    /// Uniform between `lower_ms` and `upper_ms`.
    Uniform {
        /// Lower bound, ms.
        lower_ms: f64,
        /// Upper bound, ms.
        upper_ms: f64,
    },
}

impl Delay {
    /// The typical delay: the fixed value or the distribution's median.
    pub fn typical(&self) -> Duration {
        match *self {
            Delay::Fixed(d) => d,
            Delay::LogNormal {
                median_ms, max_ms, ..
            } => ms(max_ms.map_or(median_ms, |max| median_ms.min(max))),
            Delay::Uniform { lower_ms, upper_ms } => ms((lower_ms + upper_ms) / 2.0),
        }
    }

    /// One draw.
    pub fn sample(&self) -> Duration {
        use rand::Rng;
        use rand_distr::Distribution;
        match *self {
            Delay::Fixed(d) => d,
            Delay::LogNormal {
                median_ms,
                sigma,
                max_ms,
            } => {
                let draw = match rand_distr::LogNormal::new(median_ms.ln(), sigma) {
                    Ok(dist) => dist.sample(&mut rand::thread_rng()),
                    Err(_) => median_ms,
                };
                ms(max_ms.map_or(draw, |max| draw.min(max)))
            }
            Delay::Uniform { lower_ms, upper_ms } => {
                if upper_ms > lower_ms {
                    ms(rand::thread_rng().gen_range(lower_ms..=upper_ms))
                } else {
                    ms(lower_ms)
                }
            }
        }
    }
}

fn ms(value: f64) -> Duration {
    Duration::from_secs_f64(value.max(0.0) / 1000.0)
}

/// `chunkedDribbleDelay`: the body in `chunks` pieces spread over `total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dribble {
    /// `numberOfChunks`.
    pub chunks: u32,
    /// `totalDuration`.
    pub total: Duration,
}

/// WireMock's faults, as a client sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Close with `SO_LINGER` 0: the client gets a TCP reset.
    ConnectionResetByPeer,
    /// Close without a response.
    EmptyResponse,
    /// A 200 status line and chunked headers, then garbage, then close.
    MalformedResponseChunk,
    /// Garbage, then close.
    RandomDataThenClose,
}

impl Fault {
    /// WireMock's name of the fault.
    pub fn name(self) -> &'static str {
        match self {
            Fault::ConnectionResetByPeer => "CONNECTION_RESET_BY_PEER",
            Fault::EmptyResponse => "EMPTY_RESPONSE",
            Fault::MalformedResponseChunk => "MALFORMED_RESPONSE_CHUNK",
            Fault::RandomDataThenClose => "RANDOM_DATA_THEN_CLOSE",
        }
    }

    const ALL: [Fault; 4] = [
        Fault::ConnectionResetByPeer,
        Fault::EmptyResponse,
        Fault::MalformedResponseChunk,
        Fault::RandomDataThenClose,
    ];
}

/// Where mappings were found: the files to parse and the `__files` folder for `bodyFileName`.
#[derive(Debug, Clone)]
pub struct MappingSource {
    /// Mapping files, sorted by path.
    pub files: Vec<PathBuf>,
    /// The `__files` folder, if there is one.
    pub files_root: Option<PathBuf>,
}

/// Finds the mapping files of a file or folder. A folder with a `mappings/` subfolder is a
/// WireMock root (`mappings/**/*.json` and `__files/` beside it); any other folder holds the
/// `*.json` mappings itself (and its subfolders', except `__files`), with `__files` inside it or
/// beside it.
pub fn locate(path: &Path) -> Result<MappingSource, MockError> {
    let read_error = |error: std::io::Error| MockError::Read {
        path: path.display().to_string(),
        error,
    };
    let meta = std::fs::metadata(path).map_err(read_error)?;
    if meta.is_file() {
        let folder = path.parent().unwrap_or(Path::new("."));
        return Ok(MappingSource {
            files: vec![path.to_path_buf()],
            files_root: files_root_near(folder),
        });
    }
    let (mappings_dir, files_root) = if path.join("mappings").is_dir() {
        let root = path.join("__files");
        (path.join("mappings"), root.is_dir().then_some(root))
    } else {
        (path.to_path_buf(), files_root_near(path))
    };
    let mut files = Vec::new();
    collect_json(&mappings_dir, &mut files)?;
    files.sort();
    Ok(MappingSource { files, files_root })
}

fn files_root_near(folder: &Path) -> Option<PathBuf> {
    let inside = folder.join("__files");
    if inside.is_dir() {
        return Some(inside);
    }
    let beside = folder.parent()?.join("__files");
    beside.is_dir().then_some(beside)
}

fn collect_json(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), MockError> {
    let read_error = |error: std::io::Error| MockError::Read {
        path: dir.display().to_string(),
        error,
    };
    for entry in std::fs::read_dir(dir).map_err(read_error)? {
        let entry = entry.map_err(read_error)?;
        let path = entry.path();
        if path.is_dir() {
            if entry.file_name() != "__files" {
                collect_json(&path, out)?;
            }
        } else if path.extension().is_some_and(|ext| ext == "json") {
            out.push(path);
        }
    }
    Ok(())
}

/// Loads the mappings of a file or folder (see [`locate`]).
pub fn load_mappings(path: &Path) -> Result<Vec<Mapping>, MockError> {
    let source = locate(path)?;
    let mut mappings = Vec::new();
    for file in &source.files {
        let text = std::fs::read_to_string(file).map_err(|err| MockError::Read {
            path: file.display().to_string(),
            error: err,
        })?;
        let name = file.display().to_string();
        mappings.extend(parse_mappings_with_files(
            &text,
            &name,
            source.files_root.as_deref(),
        )?);
    }
    Ok(mappings)
}

/// Parses one file's text: a single mapping or `{"mappings": [...]}`. `source` names the text in
/// errors. `bodyFileName` is refused (there is no `__files` folder): see
/// [`parse_mappings_with_files`].
pub fn parse_mappings(json: &str, source: &str) -> Result<Vec<Mapping>, MockError> {
    parse_mappings_with_files(json, source, None)
}

/// Like [`parse_mappings`], with `bodyFileName` read from `files_root`.
pub fn parse_mappings_with_files(
    json: &str,
    source: &str,
    files_root: Option<&Path>,
) -> Result<Vec<Mapping>, MockError> {
    let value: Value = serde_json::from_str(json).map_err(|err| MockError::Json {
        source_name: source.to_string(),
        line: err.line(),
        column: err.column(),
        message: strip_position(&err.to_string()),
    })?;
    let parser = Parser { source, files_root };
    match &value {
        Value::Object(obj) if obj.contains_key("mappings") => {
            let list = obj
                .get("mappings")
                .and_then(Value::as_array)
                .ok_or_else(|| parser.error("$.mappings", "must be a list of mappings"))?;
            list.iter()
                .enumerate()
                .map(|(i, item)| parser.mapping(item, &format!("$.mappings[{i}]")))
                .collect()
        }
        Value::Object(_) => Ok(vec![parser.mapping(&value, "$")?]),
        _ => Err(parser.error("$", "must be a mapping object or {\"mappings\": [...]}")),
    }
}

/// serde_json appends " at line L column C"; the error names those separately.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(index) => message[..index].to_string(),
        None => message.to_string(),
    }
}

struct Parser<'a> {
    source: &'a str,
    files_root: Option<&'a Path>,
}

/// WireMock request fields this mock does not support yet.
const UNSUPPORTED_REQUEST: &[&str] = &[
    "bodyPatterns",
    "cookies",
    "basicAuthCredentials",
    "basicAuth",
    "urlPathTemplate",
    "pathParameters",
    "formParameters",
    "multipartPatterns",
    "host",
    "port",
    "scheme",
    "clientIp",
    "customMatcher",
    "and",
    "or",
];

/// WireMock response fields this mock does not support yet.
const UNSUPPORTED_RESPONSE: &[&str] = &[
    "transformers",
    "transformerParameters",
    "proxyBaseUrl",
    "proxyUrlPrefixToRemove",
    "additionalProxyRequestHeaders",
    "removeProxyRequestHeaders",
    "fromConfiguredTemplate",
];

/// WireMock mapping fields this mock does not support yet.
const UNSUPPORTED_MAPPING: &[&str] = &[
    "scenarioName",
    "requiredScenarioState",
    "newScenarioState",
    "postServeActions",
    "serveEventListeners",
];

/// WireMock value matchers this mock does not support yet.
const UNSUPPORTED_MATCHERS: &[&str] = &[
    "equalToJson",
    "matchesJsonPath",
    "matchesJsonSchema",
    "equalToXml",
    "matchesXPath",
    "binaryEqualTo",
    "before",
    "after",
    "equalToDateTime",
    "hasExactly",
    "includes",
    "and",
    "or",
    "not",
];

impl Parser<'_> {
    fn error(&self, path: &str, reason: impl Into<String>) -> MockError {
        MockError::Mapping {
            source_name: self.source.to_string(),
            json_path: path.to_string(),
            reason: reason.into(),
        }
    }

    fn object<'v>(
        &self,
        value: &'v Value,
        path: &str,
    ) -> Result<&'v Map<String, Value>, MockError> {
        value
            .as_object()
            .ok_or_else(|| self.error(path, "must be an object"))
    }

    fn string<'v>(&self, value: &'v Value, path: &str) -> Result<&'v str, MockError> {
        value
            .as_str()
            .ok_or_else(|| self.error(path, "must be a string"))
    }

    fn number(&self, value: &Value, path: &str) -> Result<f64, MockError> {
        value
            .as_f64()
            .filter(|n| n.is_finite() && *n >= 0.0)
            .ok_or_else(|| self.error(path, "must be a number >= 0"))
    }

    fn regex(&self, pattern: &str, path: &str) -> Result<Regex, MockError> {
        Regex::new(&format!("^(?:{pattern})$")).map_err(|err| {
            let detail = err
                .to_string()
                .lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            self.error(path, format!("the regex does not compile: {detail}"))
        })
    }

    fn unknown(&self, key: &str, path: &str, unsupported: &[&str], what: &str) -> MockError {
        let at = format!("{path}.{key}");
        if unsupported.contains(&key) {
            self.error(
                &at,
                format!(
                    "WireMock's {what} '{key}' is not supported by chokepoint mock yet: remove it"
                ),
            )
        } else {
            self.error(&at, format!("unknown {what} '{key}'"))
        }
    }

    fn mapping(&self, value: &Value, path: &str) -> Result<Mapping, MockError> {
        let obj = self.object(value, path)?;
        let mut id = None;
        let mut name = None;
        let mut priority = DEFAULT_PRIORITY;
        for (key, field) in obj {
            let at = format!("{path}.{key}");
            match key.as_str() {
                "id" | "uuid" => id = Some(self.string(field, &at)?.to_string()),
                "name" => name = Some(self.string(field, &at)?.to_string()),
                "priority" => {
                    priority = field
                        .as_i64()
                        .ok_or_else(|| self.error(&at, "must be a whole number"))?
                }
                "request" | "response" | "persistent" | "metadata" | "insertionIndex" => {}
                _ => return Err(self.unknown(key, path, UNSUPPORTED_MAPPING, "mapping field")),
            }
        }
        let request = match obj.get("request") {
            Some(request) => self.request(request, &format!("{path}.request"))?,
            None => return Err(self.error(path, "has no 'request'")),
        };
        let response = match obj.get("response") {
            Some(response) => self.response(response, &format!("{path}.response"))?,
            None => return Err(self.error(path, "has no 'response'")),
        };
        let id = id.unwrap_or_else(new_id);
        let mut json = value.clone();
        if let Value::Object(map) = &mut json {
            map.remove("uuid");
            map.insert("id".into(), Value::String(id.clone()));
        }
        Ok(Mapping {
            id,
            name,
            priority,
            request,
            response,
            json,
        })
    }

    fn request(&self, value: &Value, path: &str) -> Result<RequestPattern, MockError> {
        let obj = self.object(value, path)?;
        let mut pattern = RequestPattern::default();
        let mut url_key: Option<&str> = None;
        for (key, field) in obj {
            let at = format!("{path}.{key}");
            let url = match key.as_str() {
                "method" => {
                    let method = self.string(field, &at)?;
                    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
                        return Err(self.error(&at, format!("'{method}' is not an HTTP method")));
                    }
                    pattern.method = (method != "ANY").then(|| method.to_ascii_uppercase());
                    None
                }
                "url" => Some(UrlMatcher::Url(self.string(field, &at)?.to_string())),
                "urlPath" => Some(UrlMatcher::UrlPath(self.string(field, &at)?.to_string())),
                "urlPathPattern" => Some(UrlMatcher::UrlPathPattern(
                    self.regex(self.string(field, &at)?, &at)?,
                )),
                "urlPattern" => Some(UrlMatcher::UrlPattern(
                    self.regex(self.string(field, &at)?, &at)?,
                )),
                "headers" => {
                    pattern.headers = self
                        .value_matchers(field, &at)?
                        .into_iter()
                        .map(|(name, m)| (name.to_ascii_lowercase(), m))
                        .collect();
                    None
                }
                "queryParameters" => {
                    pattern.query = self.value_matchers(field, &at)?;
                    None
                }
                _ => return Err(self.unknown(key, path, UNSUPPORTED_REQUEST, "request field")),
            };
            if let Some(url) = url {
                if let Some(previous) = url_key {
                    return Err(self.error(
                        &at,
                        format!("a request has one URL matcher, but '{previous}' is given too"),
                    ));
                }
                url_key = Some(key);
                pattern.url = url;
            }
        }
        Ok(pattern)
    }

    fn value_matchers(
        &self,
        value: &Value,
        path: &str,
    ) -> Result<Vec<(String, ValueMatcher)>, MockError> {
        let obj = self.object(value, path)?;
        let mut out = Vec::with_capacity(obj.len());
        for (name, spec) in obj {
            let at = format!("{path}.{name}");
            out.push((name.clone(), self.value_matcher(spec, &at)?));
        }
        Ok(out)
    }

    fn value_matcher(&self, value: &Value, path: &str) -> Result<ValueMatcher, MockError> {
        let obj = self.object(value, path)?;
        let mut matcher = None;
        let mut case_insensitive = false;
        for (key, field) in obj {
            let at = format!("{path}.{key}");
            let found = match key.as_str() {
                "equalTo" => ValueMatcher::EqualTo {
                    value: self.string(field, &at)?.to_string(),
                    case_insensitive: false,
                },
                "contains" => ValueMatcher::Contains(self.string(field, &at)?.to_string()),
                "doesNotContain" => {
                    ValueMatcher::DoesNotContain(self.string(field, &at)?.to_string())
                }
                "matches" => ValueMatcher::Matches(self.regex(self.string(field, &at)?, &at)?),
                "doesNotMatch" => {
                    ValueMatcher::DoesNotMatch(self.regex(self.string(field, &at)?, &at)?)
                }
                "absent" => match field.as_bool() {
                    Some(true) => ValueMatcher::Absent,
                    _ => return Err(self.error(&at, "only 'absent': true is supported")),
                },
                "caseInsensitive" => {
                    case_insensitive = field
                        .as_bool()
                        .ok_or_else(|| self.error(&at, "must be true or false"))?;
                    continue;
                }
                _ => return Err(self.unknown(key, path, UNSUPPORTED_MATCHERS, "matcher")),
            };
            if matcher.is_some() {
                return Err(self.error(&at, "give one matcher per header or parameter"));
            }
            matcher = Some(found);
        }
        match matcher {
            Some(ValueMatcher::EqualTo { value, .. }) => Ok(ValueMatcher::EqualTo {
                value,
                case_insensitive,
            }),
            Some(found) => Ok(found),
            None => Err(self.error(
                path,
                "has no matcher: use equalTo, contains, matches, doesNotMatch or absent",
            )),
        }
    }

    fn response(&self, value: &Value, path: &str) -> Result<ResponseDef, MockError> {
        let obj = self.object(value, path)?;
        let mut response = ResponseDef {
            status: 200,
            status_message: None,
            headers: Vec::new(),
            body: Bytes::new(),
            delay: None,
            dribble: None,
            fault: None,
        };
        let mut body_key: Option<&str> = None;
        for (key, field) in obj {
            let at = format!("{path}.{key}");
            let body = match key.as_str() {
                "status" => {
                    response.status = field
                        .as_u64()
                        .filter(|s| (100..=999).contains(s))
                        .ok_or_else(|| self.error(&at, "must be an HTTP status (100-999)"))?
                        as u16;
                    None
                }
                "statusMessage" => {
                    response.status_message = Some(self.string(field, &at)?.to_string());
                    None
                }
                "body" => Some(Bytes::from(self.string(field, &at)?.to_string())),
                "jsonBody" => Some(Bytes::from(field.to_string())),
                "base64Body" => Some(Bytes::from(
                    base64::engine::general_purpose::STANDARD
                        .decode(self.string(field, &at)?)
                        .map_err(|err| self.error(&at, format!("is not base64: {err}")))?,
                )),
                "bodyFileName" => Some(self.body_file(self.string(field, &at)?, &at)?),
                "headers" => {
                    response.headers = self.response_headers(field, &at)?;
                    None
                }
                "fixedDelayMilliseconds" => {
                    let delay = Delay::Fixed(ms(self.number(field, &at)?));
                    self.set_delay(&mut response, delay, &at)?;
                    None
                }
                "delayDistribution" => {
                    let delay = self.delay_distribution(field, &at)?;
                    self.set_delay(&mut response, delay, &at)?;
                    None
                }
                "chunkedDribbleDelay" => {
                    response.dribble = Some(self.dribble(field, &at)?);
                    None
                }
                "fault" => {
                    let name = self.string(field, &at)?;
                    let fault = Fault::ALL.into_iter().find(|f| f.name() == name);
                    response.fault = Some(fault.ok_or_else(|| {
                        let known: Vec<&str> = Fault::ALL.iter().map(|f| f.name()).collect();
                        self.error(
                            &at,
                            format!("unknown fault '{name}': use one of {}", known.join(", ")),
                        )
                    })?);
                    None
                }
                _ => return Err(self.unknown(key, path, UNSUPPORTED_RESPONSE, "response field")),
            };
            if let Some(body) = body {
                if let Some(previous) = body_key {
                    return Err(self.error(
                        &at,
                        format!("a response has one body, but '{previous}' is given too"),
                    ));
                }
                body_key = Some(key);
                response.body = body;
            }
        }
        Ok(response)
    }

    fn set_delay(
        &self,
        response: &mut ResponseDef,
        delay: Delay,
        at: &str,
    ) -> Result<(), MockError> {
        if response.delay.is_some() {
            return Err(self.error(
                at,
                "give either fixedDelayMilliseconds or delayDistribution, not both",
            ));
        }
        response.delay = Some(delay);
        Ok(())
    }

    fn body_file(&self, name: &str, path: &str) -> Result<Bytes, MockError> {
        let root = self.files_root.ok_or_else(|| {
            self.error(
                path,
                "bodyFileName needs a __files folder beside the mappings: load them from a folder",
            )
        })?;
        let relative = Path::new(name);
        let escapes = relative.is_absolute()
            || relative.components().any(|c| {
                !matches!(
                    c,
                    std::path::Component::Normal(_) | std::path::Component::CurDir
                )
            });
        let refuse = || {
            self.error(
                path,
                format!("'{name}' is outside the __files folder: give a path inside it"),
            )
        };
        if escapes {
            return Err(refuse());
        }
        let canonical_root = root
            .canonicalize()
            .map_err(|err| self.error(path, format!("cannot read {}: {err}", root.display())))?;
        let file = canonical_root
            .join(relative)
            .canonicalize()
            .map_err(|err| self.error(path, format!("cannot read __files/{name}: {err}")))?;
        // A symbolic link inside __files may still point outside it.
        if !file.starts_with(&canonical_root) {
            return Err(refuse());
        }
        std::fs::read(&file)
            .map(Bytes::from)
            .map_err(|err| self.error(path, format!("cannot read __files/{name}: {err}")))
    }

    fn response_headers(
        &self,
        value: &Value,
        path: &str,
    ) -> Result<Vec<(http::HeaderName, http::HeaderValue)>, MockError> {
        let obj = self.object(value, path)?;
        let mut out = Vec::new();
        for (name, field) in obj {
            let at = format!("{path}.{name}");
            let header = http::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| self.error(&at, format!("'{name}' is not a header name")))?;
            let values: Vec<&Value> = match field {
                Value::Array(items) => items.iter().collect(),
                other => vec![other],
            };
            for item in values {
                let text = match item {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    _ => return Err(self.error(&at, "must be a string or a list of strings")),
                };
                let header_value = http::HeaderValue::from_str(&text).map_err(|_| {
                    self.error(&at, format!("'{text}' is not a valid header value"))
                })?;
                out.push((header.clone(), header_value));
            }
        }
        Ok(out)
    }

    fn delay_distribution(&self, value: &Value, path: &str) -> Result<Delay, MockError> {
        let obj = self.object(value, path)?;
        let kind = match obj.get("type") {
            Some(kind) => self.string(kind, &format!("{path}.type"))?,
            None => return Err(self.error(path, "has no 'type' (lognormal, uniform or fixed)")),
        };
        let field = |name: &str| -> Result<f64, MockError> {
            let at = format!("{path}.{name}");
            match obj.get(name) {
                Some(value) => self.number(value, &at),
                None => Err(self.error(path, format!("a {kind} delay needs '{name}'"))),
            }
        };
        let allowed: &[&str] = match kind {
            "lognormal" => &["type", "median", "sigma", "maxValue"],
            "uniform" => &["type", "lower", "upper"],
            "fixed" => &["type", "milliseconds"],
            other => {
                return Err(self.error(
                    &format!("{path}.type"),
                    format!(
                        "unknown delay distribution '{other}': use lognormal, uniform or fixed"
                    ),
                ))
            }
        };
        if let Some(key) = obj.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(self.error(
                &format!("{path}.{key}"),
                format!("unknown field of a {kind} delay"),
            ));
        }
        Ok(match kind {
            "lognormal" => {
                let median_ms = field("median")?;
                if median_ms <= 0.0 {
                    return Err(self.error(&format!("{path}.median"), "must be greater than 0"));
                }
                let max_ms = match obj.get("maxValue") {
                    Some(value) => Some(self.number(value, &format!("{path}.maxValue"))?),
                    None => None,
                };
                Delay::LogNormal {
                    median_ms,
                    sigma: field("sigma")?,
                    max_ms,
                }
            }
            "uniform" => {
                let (lower_ms, upper_ms) = (field("lower")?, field("upper")?);
                if upper_ms < lower_ms {
                    return Err(self.error(&format!("{path}.upper"), "must be >= lower"));
                }
                Delay::Uniform { lower_ms, upper_ms }
            }
            _ => Delay::Fixed(ms(field("milliseconds")?)),
        })
    }

    fn dribble(&self, value: &Value, path: &str) -> Result<Dribble, MockError> {
        let obj = self.object(value, path)?;
        if let Some(key) = obj
            .keys()
            .find(|k| !matches!(k.as_str(), "numberOfChunks" | "totalDuration"))
        {
            return Err(self.error(
                &format!("{path}.{key}"),
                "unknown field of chunkedDribbleDelay",
            ));
        }
        let chunks = obj
            .get("numberOfChunks")
            .and_then(Value::as_u64)
            .filter(|n| (1..=1_000_000).contains(n))
            .ok_or_else(|| self.error(path, "needs 'numberOfChunks', a whole number >= 1"))?;
        let total = match obj.get("totalDuration") {
            Some(value) => self.number(value, &format!("{path}.totalDuration"))?,
            None => return Err(self.error(path, "needs 'totalDuration' in milliseconds")),
        };
        Ok(Dribble {
            chunks: chunks as u32,
            total: ms(total),
        })
    }
}

/// A random version-4 UUID, as WireMock gives stubs without an id.
pub fn new_id() -> String {
    let bytes: [u8; 16] = rand::random();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-4{}-{:x}{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        (bytes[8] & 0x3) | 0x8,
        &hex[17..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(json: &str) -> String {
        parse_mappings(json, "t.json").unwrap_err().to_string()
    }

    #[test]
    fn invalid_json_names_line_and_column() {
        let message = refused("{\n  \"request\": {\n    \"url\": \"/a\",,\n");
        assert!(
            message.starts_with("t.json: invalid JSON at line 3, column"),
            "{message}"
        );
    }

    #[test]
    fn unknown_and_unsupported_names_are_refused_with_their_path() {
        let message =
            refused(r#"{"request":{"headers":{"Accept":{"equalsTo":"x"}}},"response":{}}"#);
        assert_eq!(
            message,
            "t.json: $.request.headers.Accept.equalsTo: unknown matcher 'equalsTo'"
        );
        let message = refused(r#"{"mappings":[{"request":{},"response":{"fault":"BOOM"}}]}"#);
        assert!(
            message.starts_with("t.json: $.mappings[0].response.fault: unknown fault 'BOOM'"),
            "{message}"
        );
        let message = refused(r#"{"request":{"bodyPatterns":[]},"response":{}}"#);
        assert!(
            message.contains(
                "$.request.bodyPatterns: WireMock's request field 'bodyPatterns' is not supported"
            ),
            "{message}"
        );
        let message = refused(r#"{"request":{"urlPathPattern":"/a/(b"},"response":{}}"#);
        assert!(
            message.starts_with("t.json: $.request.urlPathPattern: the regex does not compile"),
            "{message}"
        );
        assert!(!message.contains('\n'));
    }

    #[test]
    fn a_full_mapping_parses() {
        let mappings = parse_mappings(
            r#"{"id":"abc","name":"n","priority":2,
                "request":{"method":"POST","urlPathPattern":"/a/[0-9]+",
                  "headers":{"Accept":{"equalTo":"X","caseInsensitive":true}},
                  "queryParameters":{"q":{"absent":true}}},
                "response":{"status":201,"jsonBody":{"a":1},"headers":{"H":["1","2"]},
                  "delayDistribution":{"type":"lognormal","median":80,"sigma":0.4},
                  "chunkedDribbleDelay":{"numberOfChunks":3,"totalDuration":300}}}"#,
            "t.json",
        )
        .unwrap();
        let m = &mappings[0];
        assert_eq!((m.id.as_str(), m.priority), ("abc", 2));
        assert_eq!(m.request.method.as_deref(), Some("POST"));
        assert_eq!(m.request.headers[0].0, "accept");
        assert_eq!(m.response.body, Bytes::from_static(br#"{"a":1}"#));
        assert_eq!(m.response.headers.len(), 2);
        assert_eq!(
            m.response.delay.unwrap().typical(),
            Duration::from_millis(80)
        );
        assert_eq!(m.response.dribble.unwrap().chunks, 3);
    }

    #[test]
    fn generated_ids_look_like_uuids() {
        let id = new_id();
        assert_eq!(id.len(), 36);
        assert_eq!(id.as_bytes()[14], b'4');
    }
}
