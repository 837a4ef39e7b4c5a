//! The request journal: the last N requests (`--journal N`; off by default, so that a long load
//! holds no memory), searched by WireMock's request patterns for `verify`, `find` and
//! `unmatched`.
use crate::mapping::{self, RequestPattern};
use crate::matching::{self, RequestView};
use bytes::Bytes;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::Mutex;

/// One request as received.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    id: String,
    method: http::Method,
    uri: http::Uri,
    headers: http::HeaderMap,
    body: Bytes,
    logged_ms: u64,
    stub_id: Option<String>,
}

impl Entry {
    fn matches(&self, pattern: &RequestPattern) -> bool {
        let view = RequestView::new(self.method.as_str(), &self.uri, &self.headers, &self.body);
        matching::matches(pattern, &view)
    }

    /// As WireMock's `ServeEvent` lists it (the parts clients read).
    fn request_json(&self) -> Value {
        let headers: serde_json::Map<String, Value> = self
            .headers
            .iter()
            .map(|(name, value)| {
                (
                    name.to_string(),
                    Value::String(String::from_utf8_lossy(value.as_bytes()).into_owned()),
                )
            })
            .collect();
        json!({
            "url": self.uri.path_and_query().map_or("/", |pq| pq.as_str()),
            "absoluteUrl": format!("http://localhost{}", self.uri.path_and_query().map_or("/", |pq| pq.as_str())),
            "method": self.method.as_str(),
            "headers": headers,
            "body": String::from_utf8_lossy(&self.body),
            "loggedDate": self.logged_ms,
        })
    }

    fn serve_event_json(&self) -> Value {
        json!({
            "id": self.id,
            "request": self.request_json(),
            "wasMatched": self.stub_id.is_some(),
            "stubMapping": self.stub_id.as_ref().map(|id| json!({"id": id})),
        })
    }
}

/// The last `capacity` requests.
#[derive(Debug)]
pub(crate) struct Journal {
    capacity: usize,
    entries: Mutex<VecDeque<Entry>>,
}

impl Journal {
    /// `None` when `capacity` is 0 (off).
    pub fn new(capacity: usize) -> Option<Journal> {
        (capacity > 0).then(|| Journal {
            capacity,
            entries: Mutex::new(VecDeque::with_capacity(capacity.min(4096))),
        })
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, VecDeque<Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn record(&self, request: &http::request::Parts, body: &Bytes, stub_id: Option<&str>) {
        let logged_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let entry = Entry {
            id: mapping::new_id(),
            method: request.method.clone(),
            uri: request.uri.clone(),
            headers: request.headers.clone(),
            body: body.clone(),
            logged_ms,
            stub_id: stub_id.map(str::to_string),
        };
        let mut entries = self.entries();
        if entries.len() >= self.capacity {
            entries.pop_front();
        }
        entries.push_back(entry);
    }

    pub fn clear(&self) {
        self.entries().clear();
    }

    /// Every entry, newest first, as serve events.
    pub fn all_json(&self) -> Vec<Value> {
        self.entries()
            .iter()
            .rev()
            .map(Entry::serve_event_json)
            .collect()
    }

    /// How many entries match.
    pub fn count(&self, pattern: &RequestPattern) -> usize {
        self.entries().iter().filter(|e| e.matches(pattern)).count()
    }

    /// The requests that match, oldest first (as WireMock's `find`).
    pub fn find_json(&self, pattern: &RequestPattern) -> Vec<Value> {
        self.entries()
            .iter()
            .filter(|e| e.matches(pattern))
            .map(Entry::request_json)
            .collect()
    }

    /// The requests no stub matched, oldest first.
    pub fn unmatched_json(&self) -> Vec<Value> {
        self.entries()
            .iter()
            .filter(|e| e.stub_id.is_none())
            .map(Entry::request_json)
            .collect()
    }
}
