//! The demo service: HTTP routes with the seeds' hidden limits, built for real.
//!
//! Each route calls a downstream (normally `chokepoint mock` with a fixed delay) the way one of
//! the seed articles' services does (DESIGN.md "Demo scenarios"):
//!
//! | route | how it calls the downstream | limit |
//! | --- | --- | --- |
//! | `/actors` | blocking call on a fixed pool `actor-pool` | [`DemoConfig::actors`] |
//! | `/global` | blocking call on a pool `cpu-pool` sized to the cores | [`DemoConfig::cpu_pool`] |
//! | `/blocking` | a thread per request (`elastic-pool-N`), but the blocking client allows N calls at once | [`DemoConfig::client_pool`] |
//! | `/dispatcher` | blocking call on a fixed pool `blocking-dispatcher` | [`DemoConfig::dispatcher`] |
//! | `/async` | non-blocking call on the async runtime | none |
//! | `/recommendations` | `/product/{id}` for every id, in parallel, non-blocking | none (latency ≈ slowest call) |
//! | `/recommendations-serial` | the same calls one after another | none (latency ≈ the sum) |
//! | `/cpu` | no call: [`DemoConfig::cpu_ms`] of thread CPU time on tokio's blocking pool | the cores |
//! | `/leaky` | a new keep-alive connection per request, left open | the downstream's connection cap |
//!
//! The blocking routes really block: a pool thread parks in a socket read
//! ([`blocking_http::BlockingClient`]) for the whole downstream delay. Each calls the downstream
//! at its own path (`/actors` calls `<downstream>/actors`), so the mock's per-stub counts tell
//! scenarios apart. Pool queues are unbounded, so excess load shows as latency, not errors.
//! A failed downstream call answers 502 with a one-line body. `GET /` lists the routes and their
//! configured limits as JSON.
//!
//! [`serve`] runs the service on a listener in the caller's runtime until a token is cancelled
//! (tests, `chokepoint demo`); [`start`] runs it on a runtime of its own, on a thread of its own,
//! with worker threads named `cp-demo` (the `demo-service` command, or a test wanting the
//! service out of its own runtime).
#![deny(missing_docs)]

pub mod blocking_http;
pub mod cpu;
pub mod leaky;
pub mod pool;
mod service;

use std::net::SocketAddr;
use std::thread::JoinHandle;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub use service::routes_json;

/// How long a downstream call may take (connect, each read, each write) before it fails with a
/// 502. Long enough for any demo delay; it exists so that no thread stays parked forever.
pub const DOWNSTREAM_TIMEOUT: Duration = Duration::from_secs(60);

/// The demo service's settings: the downstream and every pool size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoConfig {
    /// Base URL of the downstream, `http://HOST:PORT` (the mock).
    pub downstream: String,
    /// Threads of the `/actors` pool (seed 000's router of 20 actors).
    pub actors: usize,
    /// Threads of the `/global` pool (default: the available cores).
    pub cpu_pool: usize,
    /// Downstream calls `/blocking` allows at once (seed 000's Camel pool of 25).
    pub client_pool: usize,
    /// Threads of the `/dispatcher` pool (seed 002's blocking dispatcher of 16).
    pub dispatcher: usize,
    /// Milliseconds of CPU time `/cpu` spends per request.
    pub cpu_ms: u64,
    /// The product ids `/recommendations` fetches as `/product/{id}`.
    pub product_ids: Vec<String>,
}

impl Default for DemoConfig {
    fn default() -> Self {
        Self {
            downstream: "http://127.0.0.1:9090".to_string(),
            actors: 20,
            cpu_pool: available_cores(),
            client_pool: 25,
            dispatcher: 16,
            cpu_ms: 10,
            product_ids: (1..=4).map(|n| format!("PROD-{n:03}")).collect(),
        }
    }
}

/// The number of cores this process may use (1 if unknown).
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Why the demo service could not start.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// A setting is unusable; the message names it and says how to fix it.
    #[error("{0}")]
    Config(String),
    /// An operating-system call failed (binding the port, starting threads).
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl DemoError {
    fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let context = context.into();
        move |source| Self::Io { context, source }
    }
}

/// Serves the demo routes on `listener` until `shutdown` is cancelled.
///
/// Pools and clients are created here and dropped when this returns; pool threads still parked
/// in a downstream read finish that read (bounded by [`DOWNSTREAM_TIMEOUT`]) and exit on their own.
pub async fn serve(
    listener: tokio::net::TcpListener,
    config: DemoConfig,
    shutdown: CancellationToken,
) -> Result<(), DemoError> {
    let app = service::App::new(config)?;
    service::accept_loop(listener, app, shutdown).await;
    Ok(())
}

/// The demo service running on a runtime and thread of its own (see [`start`]).
pub struct RunningDemo {
    addr: SocketAddr,
    shutdown: CancellationToken,
    thread: Option<JoinHandle<()>>,
}

impl RunningDemo {
    /// The address the service listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR`, the base URL of the routes.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops the service and waits (briefly) for its runtime to end.
    pub fn stop(self) {}
}

impl Drop for RunningDemo {
    fn drop(&mut self) {
        self.shutdown.cancel();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Starts the service on its own multi-threaded runtime (worker threads named `cp-demo`) on a
/// thread of its own, bound to `addr` (port 0 picks a free port). It stops when the returned
/// handle is dropped or [`RunningDemo::stop`] is called.
pub fn start(addr: SocketAddr, config: DemoConfig) -> Result<RunningDemo, DemoError> {
    let app = service::App::new(config)?;
    let listener = std::net::TcpListener::bind(addr).map_err(DemoError::io(format!(
        "cannot listen on {addr} (is the port in use? pick another with --port)"
    )))?;
    listener
        .set_nonblocking(true)
        .map_err(DemoError::io("cannot make the listener non-blocking"))?;
    let bound = listener
        .local_addr()
        .map_err(DemoError::io("cannot read the bound address"))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("cp-demo")
        .build()
        .map_err(DemoError::io("cannot start the demo service's runtime"))?;
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    let thread = std::thread::Builder::new()
        .name("cp-demo-main".to_string())
        .spawn(move || {
            runtime.block_on(async move {
                match tokio::net::TcpListener::from_std(listener) {
                    Ok(listener) => service::accept_loop(listener, app, stop).await,
                    Err(err) => eprintln!("chokepoint demo-service: cannot listen: {err}"),
                }
            });
            // /cpu work in flight is short; downstream reads on pool threads are not awaited.
            runtime.shutdown_timeout(Duration::from_secs(1));
        })
        .map_err(DemoError::io("cannot start the demo service's thread"))?;
    Ok(RunningDemo {
        addr: bound,
        shutdown,
        thread: Some(thread),
    })
}
