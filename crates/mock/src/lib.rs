//! The controlled downstream: a WireMock-compatible mock server that can never be the
//! bottleneck and reports how many calls it had in flight.
//!
//! - [`mapping`] reads WireMock's JSON stub mappings (files, folders, `__files`) and refuses what
//!   it cannot honour, naming the file, the JSON path and the reason.
//! - [`matching`] matches a request against a stub and names the nearest miss for a 404.
//! - [`inflight`] counts requests and connections in flight, with no HTTP in it (a later
//!   `chokepoint proxy` reuses it).
//! - `accept` takes a listener and hands connections to per-core workers (the
//!   `--max-connections` cap); `connection` serves HTTP/1.1 on one (the keep-alive timeout) and
//!   sends each request to `admin` or `respond`; `h2` serves HTTP/2 instead when the connection
//!   opened with the HTTP/2 preface (h2c, on the plain port) or chose `h2` by ALPN (HTTPS): each
//!   stream a request, counted in flight by itself and on its connection, at most
//!   `--max-concurrent-streams` at once (REFUSED_STREAM past it), a stub's fault resetting only
//!   its stream; `respond` answers from the stubs after their
//!   delay on timers (never a thread per request), with `body` (whole or dribbled) and `faults`
//!   (played at the socket); `admin` answers `/__admin/*` (WireMock's admin API),
//!   `/__chokepoint/stats`, `/__chokepoint/reset` and `/metrics`; `state` holds the stubs, the
//!   settings, the stats window and the journal that they share.
//! - `proxy` forwards proxy stubs' requests (`http://` pooled, `https://` over rustls, trusted by
//!   the system's roots and [`MockConfig::proxy_cacert`]) and sends webhooks
//!   (`postServeActions`) after the response, on tasks of their own; `recording` turns proxied
//!   exchanges into mappings (`/__admin/recordings/start`, `stop`, `snapshot`) written to
//!   [`MockConfig::recordings_dir`].
//!
//! Where it differs from WireMock, on purpose:
//! - the global delay (`--delay`, admin `fixedDelay`) is *added* to a stub's own delay;
//! - a mock started without mappings answers every request 200 "OK" (a catch-all stub);
//! - `/__chokepoint/*` and `/metrics` are the mock's own paths; requests to them, and to
//!   `/__admin/*`, are never counted, never delayed, and are served even at
//!   `--max-connections` (a connection whose first request is for one of them is exempt from
//!   the cap; connections are counted from their first request on);
//! - the request journal is off unless `--journal N` is given, and then holds the last N;
//! - an `https://` proxy or webhook target's certificate is checked (WireMock trusts any).
//!
//! Run it in a runtime you own with [`serve`], or on its own threads with [`start`]:
//!
//! ```no_run
//! use std::time::Duration;
//! let config = chokepoint_mock::MockConfig {
//!     fixed_delay: Some(Duration::from_secs(1)),
//!     ..Default::default()
//! };
//! let mock = chokepoint_mock::start("127.0.0.1:0".parse().unwrap(), config).unwrap();
//! println!("downstream at {}", mock.url());
//! let stats = mock.stats(); // what the downstream saw, as `/__chokepoint/stats` reports it
//! # let _ = stats;
//! ```
#![deny(missing_docs)]

mod accept;
mod activity;
mod admin;
mod body;
mod connection;
mod faults;
mod files;
mod grpc;
mod h2;
pub mod inflight;
mod journal;
mod json_match;
pub mod mapping;
pub mod matching;
mod metrics;
mod proxy;
mod recording;
mod respond;
mod scenarios;
mod state;
pub mod template;
mod tls;

pub use accept::{serve, serve_plain_and_https};
pub use mapping::{load_mappings, parse_mappings, parse_mappings_with_files, proxy_all, Mapping};
pub use tls::MockTls;

use chokepoint_result::MockStats;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How the mock behaves.
#[derive(Debug, Clone, Default)]
pub struct MockConfig {
    /// `--delay`: a global delay added to every stub response (the admin `fixedDelay` changes it).
    pub fixed_delay: Option<Duration>,
    /// The stubs. Empty: every request gets 200 "OK" after the global delay (a catch-all stub
    /// that the admin API lists and can remove).
    pub mappings: Vec<Mapping>,
    /// `--max-connections`: at most this many (non-admin) connections are served at once; the
    /// others wait, unserved, as in a full accept queue.
    pub max_connections: Option<usize>,
    /// `--keepalive-timeout`: idle keep-alive connections are closed after this long. `None`:
    /// they stay open until the client closes them.
    pub keepalive_timeout: Option<Duration>,
    /// `--journal N`: keep the last N requests for `GET /__admin/requests` (0 = off).
    pub journal: usize,
    /// The `__files` folder for `bodyFileName` in mappings added through the admin API.
    pub files_root: Option<PathBuf>,
    /// `--global-response-templating`: every stub's response is a template, as if it listed
    /// the `response-template` transformer.
    pub global_templating: bool,
    /// Where `/__admin/recordings/stop` and `snapshot` write the mappings they make (the
    /// `--mappings` folder); `None`: they are served and returned, not written.
    pub recordings_dir: Option<PathBuf>,
    /// `--proxy-cacert`: PEM certificates trusted for `https://` proxy and webhook targets,
    /// besides the system's roots.
    pub proxy_cacert: Option<PathBuf>,
    /// `--max-concurrent-streams`: each HTTP/2 connection advertises this
    /// SETTINGS_MAX_CONCURRENT_STREAMS and refuses streams beyond it (REFUSED_STREAM). `None`:
    /// no limit is advertised.
    pub max_concurrent_streams: Option<u32>,
    /// The services of a WireMock root's `grpc/` folder (its `.dsc` and `.desc` descriptor
    /// sets, [`mapping::grpc_schema`]): a gRPC call to one of their methods is matched on its
    /// request message as JSON, and a stub's JSON body answers as the method's response
    /// message, as WireMock's gRPC extension does. `None`: gRPC stubs answer raw bytes.
    pub grpc_schema: Option<std::sync::Arc<chokepoint_grpc::Schema>>,
}

/// Why the mock cannot load its mappings or run. Each message is one line.
#[derive(Debug, thiserror::Error)]
pub enum MockError {
    /// A mapping file or folder cannot be read.
    #[error("cannot read mappings at {path}: {error}")]
    Read {
        /// The file or folder.
        path: String,
        /// The I/O error.
        error: std::io::Error,
    },
    /// A mapping file is not JSON.
    #[error("{source_name}: invalid JSON at line {line}, column {column}: {message}")]
    Json {
        /// The file (or "admin API").
        source_name: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the JSON parser said.
        message: String,
    },
    /// A mapping the mock cannot honour.
    #[error("{source_name}: {json_path}: {reason}")]
    Mapping {
        /// The file (or "admin API").
        source_name: String,
        /// Where in the JSON, e.g. `$.mappings[2].request.headers.Accept`.
        json_path: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// Every problem found in a set of mappings (two or more; each a `Read`, `Json` or `Mapping`
    /// error), in load order. One line: the CLI prints them one per line from
    /// [`MockError::problems`].
    #[error("{} problems in the mappings: {}", .0.len(), .0.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("; "))]
    Problems(Vec<MockError>),
    /// The address cannot be bound.
    #[error("cannot listen on {addr}: {reason}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why, with a hint.
        reason: String,
    },
    /// The HTTPS certificate or key cannot be used (the message names the flag and why).
    #[error("{0}")]
    Tls(String),
    /// A descriptor set of the root's `grpc/` folder cannot be used (the message names the
    /// file and how to make one).
    #[error("{0}")]
    Grpc(String),
    /// Any other I/O failure while starting.
    #[error("cannot start the mock: {0}")]
    Io(std::io::Error),
}

impl MockError {
    /// The single problems this error holds: itself, or each of [`MockError::Problems`].
    pub fn problems(&self) -> Vec<&MockError> {
        match self {
            MockError::Problems(problems) => problems.iter().collect(),
            other => vec![other],
        }
    }

    /// Like [`MockError::problems`], owned.
    pub fn into_problems(self) -> Vec<MockError> {
        match self {
            MockError::Problems(problems) => problems,
            other => vec![other],
        }
    }

    /// `None` for no problem, the problem itself for one, [`MockError::Problems`] for more.
    pub fn from_problems(mut problems: Vec<MockError>) -> Option<MockError> {
        match problems.len() {
            0 => None,
            1 => problems.pop(),
            _ => Some(MockError::Problems(problems)),
        }
    }
}

impl From<std::io::Error> for MockError {
    fn from(error: std::io::Error) -> Self {
        MockError::Io(error)
    }
}

/// Binds a listening socket for the mock, with a deep accept queue (4096) so that thousands of
/// clients can connect at once.
pub fn bind(addr: SocketAddr) -> Result<std::net::TcpListener, MockError> {
    use socket2::{Domain, Socket, Type};
    let bind_error = |err: std::io::Error| {
        let reason = match err.kind() {
            std::io::ErrorKind::AddrInUse => {
                "the port is already in use: pick another with --port, or stop what listens there"
                    .to_string()
            }
            std::io::ErrorKind::AddrNotAvailable => {
                "no local interface has this address: use --bind 127.0.0.1".to_string()
            }
            std::io::ErrorKind::PermissionDenied => {
                "permission denied: use a port above 1023".to_string()
            }
            _ => err.to_string(),
        };
        MockError::Bind { addr, reason }
    };
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None).map_err(bind_error)?;
    socket.set_reuse_address(true).map_err(bind_error)?;
    socket.bind(&addr.into()).map_err(bind_error)?;
    socket.listen(4096).map_err(bind_error)?;
    socket.set_nonblocking(true).map_err(bind_error)?;
    Ok(socket.into())
}

/// A mock running on its own threads (see [`start`]). Dropping it stops the mock.
#[derive(Debug)]
pub struct RunningMock {
    addr: SocketAddr,
    https_addr: Option<SocketAddr>,
    state: Arc<state::MockState>,
    shutdown: CancellationToken,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RunningMock {
    /// The address it listens on (the real port when port 0 was asked).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `https://ADDR` of the HTTPS listener, when it has one.
    pub fn https_url(&self) -> Option<String> {
        self.https_addr.map(|addr| format!("https://{addr}"))
    }

    /// What the downstream saw in the current window (as `GET /__chokepoint/stats`).
    pub fn stats(&self) -> MockStats {
        self.state.stats()
    }

    /// Ends the current window and starts a new one (as `POST /__chokepoint/reset`); returns the
    /// stats of the window that ended.
    pub fn reset_stats(&self) -> MockStats {
        self.state.reset_stats()
    }

    /// Changes the global delay (as the admin `fixedDelay` setting).
    pub fn set_fixed_delay(&self, delay: Option<Duration>) {
        self.state.set_fixed_delay(delay);
    }

    /// Stops the mock and waits for its threads to end.
    pub fn stop(mut self) {
        self.shutdown_and_join();
    }

    fn shutdown_and_join(&mut self) {
        self.shutdown.cancel();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for RunningMock {
    fn drop(&mut self) {
        self.shutdown_and_join();
    }
}

/// Starts the mock on its own threads (all named `cp-mock`: one that accepts, and one per core
/// that serves connections, as [`serve`] does), bound to `addr` (port 0 picks a free port). It
/// stops when the handle is dropped or stopped.
pub fn start(addr: SocketAddr, config: MockConfig) -> Result<RunningMock, MockError> {
    start_with_https(addr, None, config)
}

/// As [`start`], and also serving HTTPS on `https` (its address, and the certificate) with the
/// same stubs and stats.
pub fn start_with_https(
    addr: SocketAddr,
    https: Option<(SocketAddr, MockTls)>,
    config: MockConfig,
) -> Result<RunningMock, MockError> {
    let listener = bind(addr)?;
    let local = listener.local_addr()?;
    let https = match https {
        Some((https_addr, tls)) => {
            let https_listener = bind(https_addr)?;
            Some((https_listener.local_addr()?, https_listener, tls))
        }
        None => None,
    };
    let https_local = https.as_ref().map(|(addr, _, _)| *addr);
    let state = Arc::new(state::MockState::new(config));
    // The accept loops only: the connections are served on the per-core workers.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()?;
    let shutdown = CancellationToken::new();
    let (thread_state, thread_shutdown) = (Arc::clone(&state), shutdown.clone());
    let thread = std::thread::Builder::new()
        .name("cp-mock".into())
        .spawn(move || {
            runtime.block_on(async move {
                let plain = async {
                    match tokio::net::TcpListener::from_std(listener) {
                        Ok(listener) => {
                            let (state, shutdown) =
                                (Arc::clone(&thread_state), thread_shutdown.clone());
                            accept::serve_state(listener, state, shutdown, None).await
                        }
                        Err(err) => eprintln!("chokepoint mock: cannot listen: {err}"),
                    }
                };
                let tls = async {
                    let Some((_, listener, tls)) = https else {
                        return;
                    };
                    match tokio::net::TcpListener::from_std(listener) {
                        Ok(listener) => {
                            let (state, shutdown) =
                                (Arc::clone(&thread_state), thread_shutdown.clone());
                            accept::serve_state(listener, state, shutdown, Some(tls)).await
                        }
                        Err(err) => eprintln!("chokepoint mock: cannot listen for HTTPS: {err}"),
                    }
                };
                tokio::join!(plain, tls);
            });
        })?;
    Ok(RunningMock {
        addr: local,
        https_addr: https_local,
        state,
        shutdown,
        thread: Some(thread),
    })
}
