//! Connections and stub responses: the accept loop, the connection cap and keep-alive timeout,
//! delays on timers, bodies (dribbled or whole) and faults played at the socket.
//!
//! Each accepted connection is first classified by peeking at its first request line: one that
//! opens with an admin path (`/__admin`, `/__chokepoint`, `/metrics`) is served at once and never
//! counted, so stats stay readable when `--max-connections` is reached. Any other connection is
//! counted from its first request on and, at the cap, waits unserved for a slot, as it would in a
//! full accept queue (at most [`MAX_WAITING`] wait; then the mock stops accepting, and the kernel's
//! accept queue takes over).
use crate::admin;
use crate::inflight::{InFlightMeter, RequestGuard};
use crate::mapping::{self, Fault, Mapping, RequestPattern, UrlMatcher};
use crate::matching::{self, RequestView};
use crate::{MockConfig, MockError};
use bytes::Bytes;
use chokepoint_result::{MockConfigView, MockStats, StubStats};
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// Connections that may wait for a slot at the cap before the mock stops accepting.
pub const MAX_WAITING: usize = 4096;

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
    journal: Option<Mutex<VecDeque<Value>>>,
    journal_size: usize,
    max_connections: Option<usize>,
    keepalive_timeout: Option<Duration>,
    connections_waiting: AtomicU64,
}

/// The catch-all stub of a mock started without mappings.
fn default_mapping() -> Mapping {
    let json = json!({
        "id": "00000000-0000-4000-8000-000000000000",
        "name": "any request (no mappings given)",
        "priority": i32::MAX,
        "request": {"method": "ANY"},
        "response": {"status": 200, "body": "OK"}
    });
    let mut parsed = mapping::parse_mappings(&json.to_string(), "default").unwrap_or_default();
    parsed
        .pop()
        .unwrap_or_else(|| unreachable!("the default mapping is valid"))
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
            journal: (config.journal > 0).then(|| Mutex::new(VecDeque::new())),
            journal_size: config.journal,
            max_connections: config.max_connections,
            keepalive_timeout: config.keepalive_timeout,
            connections_waiting: AtomicU64::new(0),
        };
        state.set_fixed_delay(config.fixed_delay);
        state.replace_stubs(initial);
        state
    }

    /// The stubs in matching order.
    pub fn stubs(&self) -> Arc<Vec<Arc<Stub>>> {
        Arc::clone(&self.stubs.read().unwrap_or_else(|p| p.into_inner()))
    }

    fn new_stub(&self, mapping: Mapping) -> Arc<Stub> {
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
            config: MockConfigView {
                fixed_delay_ms: global.map(|d| d.as_secs_f64() * 1000.0),
                max_connections: self.max_connections.map(|n| n as u64),
                keepalive_timeout_ms: self.keepalive_timeout.map(|d| d.as_millis() as u64),
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

    /// The journal's entries, oldest first; `None` when it is off.
    pub fn journal_entries(&self) -> Option<Vec<Value>> {
        let journal = self.journal.as_ref()?;
        let entries = journal.lock().unwrap_or_else(|p| p.into_inner());
        Some(entries.iter().cloned().collect())
    }

    /// Empties the journal.
    pub fn clear_journal(&self) {
        if let Some(journal) = &self.journal {
            journal.lock().unwrap_or_else(|p| p.into_inner()).clear();
        }
    }

    fn record(&self, request: &http::request::Parts, body: &Bytes, stub: Option<&Stub>) {
        let Some(journal) = &self.journal else {
            return;
        };
        let headers: serde_json::Map<String, Value> = request
            .headers
            .iter()
            .map(|(name, value)| {
                (
                    name.to_string(),
                    Value::String(String::from_utf8_lossy(value.as_bytes()).into_owned()),
                )
            })
            .collect();
        let logged = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let entry = json!({
            "id": mapping::new_id(),
            "request": {
                "method": request.method.as_str(),
                "url": request.uri.path_and_query().map_or("/", |pq| pq.as_str()),
                "headers": headers,
                "body": String::from_utf8_lossy(body),
                "loggedDate": logged,
            },
            "wasMatched": stub.is_some(),
            "stubMapping": stub.map(|s| s.mapping.id.as_str()),
        });
        let mut entries = journal.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= self.journal_size {
            entries.pop_front();
        }
        entries.push_back(entry);
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

/// Serves the mock on `listener` until `shutdown` is cancelled. The accept loop runs on the
/// caller's runtime; the connections are served on threads of the mock's own (`cp-mock`, one
/// per core, each a single-threaded runtime), which end, with every connection, at shutdown.
pub async fn serve(
    listener: TcpListener,
    config: MockConfig,
    shutdown: CancellationToken,
) -> Result<(), MockError> {
    serve_state(listener, Arc::new(MockState::new(config)), shutdown).await;
    Ok(())
}

pub(crate) async fn serve_state(
    listener: TcpListener,
    state: Arc<MockState>,
    shutdown: CancellationToken,
) {
    let mut workers = match Workers::start(worker_count()) {
        Ok(workers) => workers,
        Err(err) => {
            eprintln!("chokepoint mock: cannot start its worker threads: {err}");
            return;
        }
    };
    let slots = state.max_connections.map(|n| Arc::new(Semaphore::new(n)));
    let waiting_room = slots
        .as_ref()
        .map(|_| Arc::new(Semaphore::new(MAX_WAITING)));
    loop {
        let room = match &waiting_room {
            Some(room) => tokio::select! {
                _ = shutdown.cancelled() => break,
                permit = Arc::clone(room).acquire_owned() => permit.ok(),
            },
            None => None,
        };
        let stream = tokio::select! {
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // Out of file descriptors or a connection reset before accept: back off a
                    // little rather than spin.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        workers.serve(stream, Arc::clone(&state), slots.clone(), room);
    }
    // Joining the worker threads blocks: off the caller's runtime.
    let _ = tokio::task::spawn_blocking(move || workers.stop()).await;
}

/// One worker per core this process may use.
fn worker_count() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The threads that serve connections: one per core (named `cp-mock`), each with its own
/// single-threaded tokio runtime. The accept loop hands each new connection to the next worker
/// in turn, and the connection stays there: no work stealing and no cross-thread wake-ups per
/// request, which a multi-threaded runtime pays on every request of a 0-delay load.
struct Workers {
    handles: Vec<tokio::runtime::Handle>,
    threads: Vec<std::thread::JoinHandle<()>>,
    stop: CancellationToken,
    next: usize,
}

impl Workers {
    fn start(count: usize) -> io::Result<Workers> {
        let stop = CancellationToken::new();
        let mut workers = Workers {
            handles: Vec::with_capacity(count),
            threads: Vec::with_capacity(count),
            stop: stop.clone(),
            next: 0,
        };
        for _ in 0..count.max(1) {
            // I/O and timers only: the signal and process drivers would run on every turn.
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .enable_time()
                .build()?;
            workers.handles.push(runtime.handle().clone());
            let stop = stop.clone();
            let thread = std::thread::Builder::new()
                .name("cp-mock".into())
                // Dropping the runtime at the end drops every connection it still serves.
                .spawn(move || runtime.block_on(stop.cancelled()));
            match thread {
                Ok(thread) => workers.threads.push(thread),
                Err(err) => {
                    workers.stop();
                    return Err(err);
                }
            }
        }
        Ok(workers)
    }

    /// Serves an accepted connection on the next worker.
    fn serve(
        &mut self,
        stream: TcpStream,
        state: Arc<MockState>,
        slots: Option<Arc<Semaphore>>,
        room: Option<tokio::sync::OwnedSemaphorePermit>,
    ) {
        // Moved as a std socket: a tokio one is tied to the reactor that accepted it.
        let Ok(stream) = stream.into_std() else {
            return;
        };
        let index = self.next;
        self.next = (index + 1) % self.handles.len();
        self.handles[index].spawn(async move {
            if let Ok(stream) = TcpStream::from_std(stream) {
                connection(stream, state, slots, room).await;
            }
        });
    }

    /// Ends every worker (and the connections they serve) and waits for their threads.
    fn stop(self) {
        self.stop.cancel();
        for thread in self.threads {
            let _ = thread.join();
        }
    }
}

/// Counts a connection as waiting for a slot while it lives.
struct Waiting<'a>(&'a AtomicU64);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn connection(
    stream: TcpStream,
    state: Arc<MockState>,
    slots: Option<Arc<Semaphore>>,
    room: Option<tokio::sync::OwnedSemaphorePermit>,
) {
    let _ = stream.set_nodelay(true);
    let admin = match first_request_is_admin(&stream).await {
        Ok(Some(admin)) => admin,
        _ => return, // closed before sending anything
    };
    let (slot, counted) = if admin {
        (None, None)
    } else {
        let slot = match slots {
            Some(slots) => {
                state.connections_waiting.fetch_add(1, Ordering::Relaxed);
                let _waiting = Waiting(&state.connections_waiting);
                slots.acquire_owned().await.ok()
            }
            None => None,
        };
        (slot, Some(state.meter.connection_opened()))
    };
    drop(room);
    serve_http(stream, state).await;
    drop(counted);
    drop(slot);
}

/// Whether a path is the mock's own (admin, stats, metrics) rather than downstream traffic.
pub(crate) fn is_admin_path(path: &str) -> bool {
    path == "/metrics" || path.starts_with("/__admin") || path.starts_with("/__chokepoint")
}

/// Peeks at the first request line: `Some(true)` for an admin path, `None` when the client
/// closed before sending anything.
async fn first_request_is_admin(stream: &TcpStream) -> io::Result<Option<bool>> {
    let mut buf = [0u8; 64];
    for _ in 0..100 {
        let n = stream.peek(&mut buf).await?;
        if n == 0 {
            return Ok(None);
        }
        let head = &buf[..n];
        if let Some(space) = head.iter().position(|&b| b == b' ') {
            let target = &head[space + 1..];
            let end = target.iter().position(|&b| b == b' ' || b == b'?');
            if let Some(end) = end {
                let path = String::from_utf8_lossy(&target[..end]);
                return Ok(Some(is_admin_path(&path)));
            }
            if target.len() > "/__chokepoint".len() {
                let path = String::from_utf8_lossy(target);
                return Ok(Some(
                    path.starts_with("/__admin") || path.starts_with("/__chokepoint"),
                ));
            }
        }
        if n == buf.len() {
            return Ok(Some(false));
        }
        // Only part of the request line has arrived: wait for more.
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    Ok(Some(false))
}

/// Per-connection state shared by the service, the socket wrapper and the idle watcher.
#[derive(Debug)]
struct ConnShared {
    opened: Instant,
    active: AtomicU32,
    /// Nanoseconds after `opened` of the last response's end.
    last_activity_ns: AtomicU64,
    /// A fault to play at the next write (0: none; see [`fault_code`]).
    fault: AtomicU8,
}

fn fault_code(fault: Fault) -> u8 {
    match fault {
        Fault::ConnectionResetByPeer => 1,
        Fault::EmptyResponse => 2,
        Fault::MalformedResponseChunk => 3,
        Fault::RandomDataThenClose => 4,
    }
}

impl ConnShared {
    fn begin(self: &Arc<Self>) -> ActivityGuard {
        self.active.fetch_add(1, Ordering::Relaxed);
        ActivityGuard(Arc::clone(self))
    }

    /// When the connection became idle; `None` while a request is in progress.
    fn idle_since(&self) -> Option<Instant> {
        if self.active.load(Ordering::Relaxed) > 0 {
            return None;
        }
        Some(self.opened + Duration::from_nanos(self.last_activity_ns.load(Ordering::Relaxed)))
    }
}

/// Marks a request in progress on its connection; dropping it marks the connection idle.
#[derive(Debug)]
struct ActivityGuard(Arc<ConnShared>);

impl Drop for ActivityGuard {
    fn drop(&mut self) {
        let ns = self.0.opened.elapsed().as_nanos() as u64;
        self.0.last_activity_ns.store(ns, Ordering::Relaxed);
        self.0.active.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn serve_http(stream: TcpStream, state: Arc<MockState>) {
    let shared = Arc::new(ConnShared {
        opened: Instant::now(),
        active: AtomicU32::new(0),
        last_activity_ns: AtomicU64::new(0),
        fault: AtomicU8::new(0),
    });
    let io = TokioIo::new(FaultyStream {
        stream,
        shared: Arc::clone(&shared),
        garbage: None,
        failed: false,
    });
    let timeout = state.keepalive_timeout;
    let service_shared = Arc::clone(&shared);
    let service = hyper::service::service_fn(move |request| {
        handle(Arc::clone(&state), Arc::clone(&service_shared), request)
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        // Head and body copied into one buffer and sent with one write(2), rather than writev(2)
        // of two slices: a little less CPU per request for the small bodies stubs usually have.
        .writev(false)
        .serve_connection(io, service);
    tokio::pin!(connection);
    let Some(timeout) = timeout else {
        let _ = connection.await;
        return;
    };
    let mut check_at = tokio::time::Instant::now() + timeout;
    let mut closing = false;
    loop {
        tokio::select! {
            _ = connection.as_mut() => break,
            _ = tokio::time::sleep_until(check_at), if !closing => {
                match shared.idle_since() {
                    Some(since) if since.elapsed() >= timeout => {
                        connection.as_mut().graceful_shutdown();
                        closing = true;
                    }
                    Some(since) => check_at = tokio::time::Instant::from_std(since + timeout),
                    None => check_at = tokio::time::Instant::now() + timeout,
                }
            }
        }
    }
}

async fn handle(
    state: Arc<MockState>,
    conn: Arc<ConnShared>,
    request: hyper::Request<Incoming>,
) -> Result<hyper::Response<MockBody>, Infallible> {
    let activity = conn.begin();
    if is_admin_path(request.uri().path()) {
        let mut response = admin::handle(&state, request).await;
        response.body_mut().hold = Some(Hold {
            _request: None,
            _activity: activity,
        });
        return Ok(response);
    }
    let in_flight = state.meter.request_started();
    let (parts, body) = request.into_parts();
    // Read the body (for the journal, and so that the connection can be reused), skipping the
    // collector for the common bodiless request.
    let body = if body.is_end_stream() {
        Bytes::new()
    } else {
        body.collect()
            .await
            .map(|collected| collected.to_bytes())
            .unwrap_or_default()
    };
    let stubs = state.stubs();
    let view = RequestView::new(parts.method.as_str(), &parts.uri, &parts.headers);
    let matched = stubs
        .iter()
        .find(|stub| matching::matches(&stub.mapping.request, &view));
    state.record(&parts, &body, matched.map(|s| s.as_ref()));
    let hold = Hold {
        _request: Some(in_flight),
        _activity: activity,
    };
    let Some(stub) = matched else {
        state.unmatched.fetch_add(1, Ordering::Relaxed);
        let text = near_miss(&stubs, &view);
        let mut response = hyper::Response::new(MockBody::full(Bytes::from(text), Some(hold)));
        *response.status_mut() = http::StatusCode::NOT_FOUND;
        response.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        return Ok(response);
    };
    stub.requests.fetch_add(1, Ordering::Relaxed);
    let definition = &stub.mapping.response;
    let delay = state.fixed_delay().unwrap_or_default()
        + definition.delay.map(|d| d.sample()).unwrap_or_default();
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    if let Some(fault) = definition.fault {
        conn.fault.store(fault_code(fault), Ordering::Relaxed);
        return Ok(hyper::Response::new(MockBody::full(
            Bytes::new(),
            Some(hold),
        )));
    }
    let body = match definition.dribble {
        Some(dribble) => MockBody::dribble(definition.body.clone(), dribble, Some(hold)),
        None => MockBody::full(definition.body.clone(), Some(hold)),
    };
    let mut response = hyper::Response::new(body);
    *response.status_mut() =
        http::StatusCode::from_u16(definition.status).unwrap_or(http::StatusCode::OK);
    if let Some(message) = &definition.status_message {
        if let Ok(reason) = hyper::ext::ReasonPhrase::try_from(message.clone().into_bytes()) {
            response.extensions_mut().insert(reason);
        }
    }
    let headers = response.headers_mut();
    for (name, value) in &definition.headers {
        headers.append(name.clone(), value.clone());
    }
    Ok(response)
}

/// The 404 text: what was asked, and the stub that came closest with what differed.
fn near_miss(stubs: &[Arc<Stub>], view: &RequestView<'_>) -> String {
    let mut text = format!("No stub matched {} {}.\n", view.method, view.path_and_query);
    let closest = stubs
        .iter()
        .map(|stub| {
            let (diffs, distance) = matching::differences(&stub.mapping.request, view);
            (distance, stub, diffs)
        })
        .min_by(|a, b| a.0.total_cmp(&b.0));
    match closest {
        Some((_, stub, diffs)) => {
            text.push_str(&format!(
                "Closest stub: '{}' ({}): {}.\n",
                stub_name(&stub.mapping),
                stub.mapping.id,
                diffs.join("; ")
            ));
        }
        None => text.push_str("There are no stubs.\n"),
    }
    text
}

/// What a response body keeps alive until it is fully sent: the in-flight count and the
/// connection's activity mark.
#[derive(Debug)]
pub(crate) struct Hold {
    _request: Option<RequestGuard>,
    _activity: ActivityGuard,
}

/// A response body: whole, or dribbled in chunks on a timer.
#[derive(Debug)]
pub(crate) struct MockBody {
    kind: BodyKind,
    hold: Option<Hold>,
}

#[derive(Debug)]
enum BodyKind {
    Full(Option<Bytes>),
    Dribble {
        chunks: VecDeque<Bytes>,
        interval: Duration,
        sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    },
}

impl MockBody {
    pub fn full(bytes: Bytes, hold: Option<Hold>) -> MockBody {
        MockBody {
            kind: BodyKind::Full((!bytes.is_empty()).then_some(bytes)),
            hold,
        }
    }

    /// The body in `chunks` equal pieces, one every `total / chunks`; the body ends `total`
    /// after the first piece was sent.
    fn dribble(bytes: Bytes, dribble: mapping::Dribble, hold: Option<Hold>) -> MockBody {
        let count = (dribble.chunks as usize).clamp(1, bytes.len().max(1));
        let size = bytes.len().div_ceil(count).max(1);
        let mut chunks = VecDeque::with_capacity(count);
        let mut offset = 0;
        while offset < bytes.len() {
            let end = (offset + size).min(bytes.len());
            chunks.push_back(bytes.slice(offset..end));
            offset = end;
        }
        MockBody {
            kind: BodyKind::Dribble {
                interval: dribble.total / count as u32,
                chunks,
                sleep: None,
            },
            hold,
        }
    }
}

impl Body for MockBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        let frame = match &mut this.kind {
            BodyKind::Full(bytes) => bytes.take().map(|b| Ok(Frame::data(b))),
            BodyKind::Dribble {
                chunks,
                interval,
                sleep,
            } => {
                if let Some(timer) = sleep {
                    if timer.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    *sleep = None;
                }
                match chunks.pop_front() {
                    Some(chunk) => {
                        *sleep = Some(Box::pin(tokio::time::sleep(*interval)));
                        Some(Ok(Frame::data(chunk)))
                    }
                    None => None,
                }
            }
        };
        if frame.is_none() {
            this.hold = None;
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            BodyKind::Full(bytes) => bytes.is_none(),
            BodyKind::Dribble { chunks, sleep, .. } => chunks.is_empty() && sleep.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            BodyKind::Full(bytes) => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len()) as u64)
            }
            BodyKind::Dribble { .. } => SizeHint::default(),
        }
    }
}

/// The connection's socket, which plays a fault instead of the next write once one is armed.
struct FaultyStream {
    stream: TcpStream,
    shared: Arc<ConnShared>,
    /// Bytes of a garbage fault still to send, and how many were sent.
    garbage: Option<(Vec<u8>, usize)>,
    failed: bool,
}

/// WireMock's garbage.
const GARBAGE: &[u8] = b"lskdu018973t09sylgasjkfg1][]'./.sdlv";

impl FaultyStream {
    /// `None`: no fault armed, write normally. Otherwise what the write returns.
    fn poll_fault(&mut self, cx: &mut Context<'_>) -> Option<Poll<io::Result<usize>>> {
        if !self.failed && self.garbage.is_none() {
            if self.shared.fault.load(Ordering::Relaxed) == 0 {
                return None;
            }
            match self.shared.fault.swap(0, Ordering::Relaxed) {
                0 => return None,
                1 => {
                    let _ = self.stream.set_zero_linger();
                    self.failed = true;
                }
                2 => self.failed = true,
                3 => {
                    let mut bytes =
                        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
                    bytes.extend_from_slice(GARBAGE);
                    self.garbage = Some((bytes, 0));
                }
                _ => {
                    let mut bytes: Vec<u8> = (0..64).map(|_| rand::random::<u8>()).collect();
                    bytes[0] = b'\x7f'; // never a valid status line
                    self.garbage = Some((bytes, 0));
                }
            }
        }
        if let Some((bytes, sent)) = &mut self.garbage {
            while *sent < bytes.len() {
                match Pin::new(&mut self.stream).poll_write(cx, &bytes[*sent..]) {
                    Poll::Ready(Ok(n)) if n > 0 => *sent += n,
                    Poll::Pending => return Some(Poll::Pending),
                    _ => break,
                }
            }
            self.garbage = None;
            self.failed = true;
        }
        // An error makes hyper drop the connection, which closes (or, after SO_LINGER 0,
        // resets) the socket.
        Some(Poll::Ready(Err(io::Error::new(
            io::ErrorKind::ConnectionAborted,
            "fault played",
        ))))
    }
}

impl AsyncRead for FaultyStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for FaultyStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if let Some(result) = this.poll_fault(cx) {
            return result;
        }
        Pin::new(&mut this.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if let Some(result) = this.poll_fault(cx) {
            return result;
        }
        Pin::new(&mut this.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(result) = this.poll_fault(cx) {
            return result.map(|r| r.map(|_| ()));
        }
        Pin::new(&mut this.stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}
