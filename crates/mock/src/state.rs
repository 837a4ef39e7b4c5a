//! What every connection shares: the stubs in matching order, the global delay, the stats
//! window and the request journal. The admin API changes it; the stub responder reads it.
//!
//! The stubs are an `Arc<Vec<..>>` swapped whole on change, so a request reads them with one
//! uncontended lock and no copy.
use crate::inflight::InFlightMeter;
use crate::journal::Journal;
use crate::mapping::{self, Mapping, RequestPattern, UrlMatcher};
use crate::proxy::{self, ProxyClient};
use crate::recording::Recorder;
use crate::scenarios::Scenarios;
use crate::template::ResponseTemplate;
use crate::MockConfig;
use bytes::Bytes;
use chokepoint_result::{MockConfigView, MockStats, StubStats};
use serde_json::json;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

/// No global delay, in [`MockState::fixed_delay_ns`].
const NO_DELAY: u64 = u64::MAX;

/// A stub as served: its mapping, its insertion order and its request count.
#[derive(Debug)]
pub(crate) struct Stub {
    pub mapping: Mapping,
    pub seq: u64,
    pub requests: AtomicU64,
}

/// Everything the connections share.
#[derive(Debug)]
pub(crate) struct MockState {
    /// Stubs in matching order: priority, then newest first. Replaced whole on change.
    stubs: RwLock<Arc<Vec<Arc<Stub>>>>,
    /// Serialises changes to `stubs` (read, modify, swap).
    edit: Mutex<()>,
    initial: Vec<Mapping>,
    next_seq: AtomicU64,
    pub files_root: Option<PathBuf>,
    fixed_delay_ns: AtomicU64,
    pub meter: Arc<InFlightMeter>,
    unmatched: AtomicU64,
    /// `--journal N`; `None` when off.
    pub journal: Option<Journal>,
    /// The scenarios' states.
    pub scenarios: Scenarios,
    max_connections: Option<usize>,
    keepalive_timeout: Option<Duration>,
    max_concurrent_streams: Option<u32>,
    connections_waiting: AtomicU64,
    /// `--global-response-templating`.
    global_templating: bool,
    /// The client of proxy stubs and webhooks.
    proxy_client: ProxyClient,
    /// `/__admin/recordings/*` and the journal's proxied exchanges.
    pub recorder: Recorder,
    /// The services whose calls are read and answered as JSON (`MockConfig::grpc_schema`).
    pub grpc_schema: Option<Arc<chokepoint_grpc::Schema>>,
}

/// The catch-all stub of a mock started without mappings. It is chokepoint's, not a WireMock
/// stub: its responses carry no `Matched-Stub-*` headers (the bare 0-delay path stays as small
/// as nginx's).
fn default_mapping() -> Mapping {
    let json = json!({
        "id": "00000000-0000-4000-8000-000000000000",
        "name": "any request (no mappings given)",
        "priority": i32::MAX,
        "request": {"method": "ANY"},
        "response": {"status": 200, "body": "OK"}
    });
    let mut parsed = mapping::parse_mappings(&json.to_string(), "default").unwrap_or_default();
    let mut mapping = parsed
        .pop()
        .unwrap_or_else(|| unreachable!("the default mapping is valid"));
    mapping
        .response
        .headers
        .retain(|(name, _)| !name.as_str().starts_with("matched-stub-"));
    mapping
}

impl MockState {
    pub fn new(config: MockConfig) -> MockState {
        let initial = if config.mappings.is_empty() {
            vec![default_mapping()]
        } else {
            config.mappings
        };
        let state = MockState {
            stubs: RwLock::new(Arc::new(Vec::new())),
            edit: Mutex::new(()),
            initial: initial.clone(),
            next_seq: AtomicU64::new(0),
            files_root: config.files_root,
            fixed_delay_ns: AtomicU64::new(NO_DELAY),
            meter: InFlightMeter::new(),
            unmatched: AtomicU64::new(0),
            journal: Journal::new(config.journal),
            scenarios: Scenarios::default(),
            max_connections: config.max_connections,
            keepalive_timeout: config.keepalive_timeout,
            max_concurrent_streams: config.max_concurrent_streams,
            connections_waiting: AtomicU64::new(0),
            global_templating: config.global_templating,
            proxy_client: proxy::client(config.proxy_cacert.as_deref()),
            recorder: Recorder::new(config.recordings_dir, config.journal),
            grpc_schema: config.grpc_schema,
        };
        state.set_fixed_delay(config.fixed_delay);
        state.replace_stubs(initial);
        state
    }

    /// The stubs in matching order.
    pub fn stubs(&self) -> Arc<Vec<Arc<Stub>>> {
        Arc::clone(&self.stubs.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// The client that proxy stubs forward with.
    pub fn proxy_client(&self) -> &ProxyClient {
        &self.proxy_client
    }

    fn new_stub(&self, mut mapping: Mapping) -> Arc<Stub> {
        if self.global_templating && mapping.response.template.is_none() {
            // WireMock answers 500 with the reason when a template cannot be compiled.
            if let Err(reason) = mapping::compile_template(&mut mapping.response) {
                eprintln!(
                    "chokepoint mock: stub '{}' ({}): response-template: {reason}; it answers 500",
                    stub_name(&mapping),
                    mapping.id
                );
                mapping.response.template = Some(Arc::new(ResponseTemplate::broken(reason)));
            }
        }
        Arc::new(Stub {
            mapping,
            seq: self.next_seq.fetch_add(1, Ordering::Relaxed),
            requests: AtomicU64::new(0),
        })
    }

    fn store(&self, mut stubs: Vec<Arc<Stub>>) {
        stubs.sort_by(|a, b| {
            a.mapping
                .priority
                .cmp(&b.mapping.priority)
                .then(b.seq.cmp(&a.seq))
        });
        *self.stubs.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(stubs);
    }

    /// Replaces every stub.
    pub fn replace_stubs(&self, mappings: Vec<Mapping>) {
        let _edit = self.edit.lock().unwrap_or_else(|p| p.into_inner());
        let stubs = mappings.into_iter().map(|m| self.new_stub(m)).collect();
        self.store(stubs);
    }

    /// Back to the mappings the mock started with.
    pub fn reset_stubs(&self) {
        self.replace_stubs(self.initial.clone());
    }

    /// Adds a stub, or replaces the one with the same id (keeping its count).
    pub fn upsert_stub(&self, mapping: Mapping) {
        let _edit = self.edit.lock().unwrap_or_else(|p| p.into_inner());
        let mut stubs: Vec<Arc<Stub>> = self.stubs().iter().cloned().collect();
        let stub = self.new_stub(mapping);
        if let Some(existing) = stubs.iter_mut().find(|s| s.mapping.id == stub.mapping.id) {
            stub.requests
                .store(existing.requests.load(Ordering::Relaxed), Ordering::Relaxed);
            *existing = stub;
        } else {
            stubs.push(stub);
        }
        self.store(stubs);
    }

    /// Removes a stub by id; false when there is none.
    pub fn remove_stub(&self, id: &str) -> bool {
        let _edit = self.edit.lock().unwrap_or_else(|p| p.into_inner());
        let mut stubs: Vec<Arc<Stub>> = self.stubs().iter().cloned().collect();
        let before = stubs.len();
        stubs.retain(|s| s.mapping.id != id);
        let removed = stubs.len() != before;
        self.store(stubs);
        removed
    }

    /// The global delay, if any.
    pub fn fixed_delay(&self) -> Option<Duration> {
        match self.fixed_delay_ns.load(Ordering::Relaxed) {
            NO_DELAY => None,
            ns => Some(Duration::from_nanos(ns)),
        }
    }

    /// Sets the global delay (`None` or zero: none).
    pub fn set_fixed_delay(&self, delay: Option<Duration>) {
        let ns = delay.filter(|d| !d.is_zero()).map_or(NO_DELAY, |d| {
            d.as_nanos().min(u128::from(NO_DELAY - 1)) as u64
        });
        self.fixed_delay_ns.store(ns, Ordering::Relaxed);
    }

    /// What the downstream saw in the current window.
    pub fn stats(&self) -> MockStats {
        let snap = self.meter.snapshot();
        let mut stubs: Vec<Arc<Stub>> = self.stubs().iter().cloned().collect();
        stubs.sort_by_key(|s| s.seq);
        let global = self.fixed_delay();
        MockStats {
            window_s: snap.window_s,
            requests: snap.requests,
            unmatched: self.unmatched.load(Ordering::Relaxed),
            stubs: stubs
                .iter()
                .map(|stub| {
                    let own = stub.mapping.response.delay.map(|d| d.typical());
                    let delay = match (own, global) {
                        (None, None) => None,
                        (a, b) => Some(a.unwrap_or_default() + b.unwrap_or_default()),
                    };
                    StubStats {
                        id: stub.mapping.id.clone(),
                        name: stub_name(&stub.mapping),
                        requests: stub.requests.load(Ordering::Relaxed),
                        delay_ms: delay.map(|d| d.as_secs_f64() * 1000.0),
                    }
                })
                .collect(),
            in_flight: snap.in_flight,
            max_in_flight: snap.max_in_flight,
            mean_in_flight: snap.mean_in_flight,
            in_flight_series: snap.series,
            connections_open: snap.connections_open,
            max_connections_open: snap.max_connections_open,
            connections_accepted: snap.connections_accepted,
            h2_connections_open: snap.h2_connections_open,
            h2_connections_accepted: snap.h2_connections_accepted,
            max_h2_connections_open: snap.max_h2_connections_open,
            max_streams_per_connection: snap.max_streams_per_connection,
            config: MockConfigView {
                fixed_delay_ms: global.map(|d| d.as_secs_f64() * 1000.0),
                max_connections: self.max_connections.map(|n| n as u64),
                keepalive_timeout_ms: self.keepalive_timeout.map(|d| d.as_millis() as u64),
                max_concurrent_streams: self.max_concurrent_streams.map(u64::from),
            },
        }
    }

    /// Ends the window: returns its stats and starts a new one.
    pub fn reset_stats(&self) -> MockStats {
        let stats = self.stats();
        self.meter.reset();
        self.unmatched.store(0, Ordering::Relaxed);
        for stub in self.stubs().iter() {
            stub.requests.store(0, Ordering::Relaxed);
        }
        stats
    }

    /// Connections waiting for a slot at the cap, now.
    pub fn connections_waiting(&self) -> u64 {
        self.connections_waiting.load(Ordering::Relaxed)
    }

    /// Empties the journal.
    pub fn clear_journal(&self) {
        if let Some(journal) = &self.journal {
            journal.clear();
        }
        self.recorder.clear_journal();
    }

    /// Counts a request that matched no stub.
    pub fn count_unmatched(&self) {
        self.unmatched.fetch_add(1, Ordering::Relaxed);
    }

    /// `--max-connections`.
    pub fn max_connections(&self) -> Option<usize> {
        self.max_connections
    }

    /// `--keepalive-timeout`.
    pub fn keepalive_timeout(&self) -> Option<Duration> {
        self.keepalive_timeout
    }

    /// `--max-concurrent-streams`.
    pub fn max_concurrent_streams(&self) -> Option<u32> {
        self.max_concurrent_streams
    }

    /// The counter of connections waiting for a slot at the cap.
    pub fn waiting_counter(&self) -> &AtomicU64 {
        &self.connections_waiting
    }

    /// Keeps the request in the journal (when it is on).
    pub fn record(&self, request: &http::request::Parts, body: &Bytes, stub: Option<&Stub>) {
        if let Some(journal) = &self.journal {
            journal.record(request, body, stub.map(|s| s.mapping.id.as_str()));
        }
    }
}

/// A stub's name, or a short description of its request pattern.
pub(crate) fn stub_name(mapping: &Mapping) -> String {
    if let Some(name) = &mapping.name {
        return name.clone();
    }
    describe_pattern(&mapping.request)
}

fn describe_pattern(pattern: &RequestPattern) -> String {
    let method = pattern.method.as_deref().unwrap_or("ANY");
    match &pattern.url {
        UrlMatcher::Any => format!("{method} any URL"),
        UrlMatcher::Url(url) => format!("{method} {url}"),
        UrlMatcher::UrlPath(path) => format!("{method} {path}"),
        UrlMatcher::UrlPathPattern(re) | UrlMatcher::UrlPattern(re) => {
            format!("{method} ~{}", re.as_str())
        }
    }
}
