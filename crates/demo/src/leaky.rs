//! `/leaky` (seed 001's in-house tool): every call opens a NEW keep-alive connection to the
//! downstream and, once answered, leaves it open, never reusing it.
//!
//! Against a downstream that caps its connections and keeps idle ones for a keep-alive period,
//! calls stall in batches: once the cap is reached, a new connection waits until the downstream
//! times an idle one out. The open connections are held in a bounded list; one the downstream
//! closes is dropped from it, and when the list is full the oldest is closed.
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::AbortHandle;

/// The connections `/leaky` left open.
pub struct LeakedConnections {
    held: Mutex<VecDeque<HeldConnection>>,
    capacity: usize,
    next_id: AtomicU64,
}

/// One open connection: the task holding its sender and the task driving its socket.
struct HeldConnection {
    id: u64,
    keeper: AbortHandle,
    driver: AbortHandle,
}

impl HeldConnection {
    fn close(self) {
        self.keeper.abort();
        self.driver.abort();
    }
}

impl LeakedConnections {
    /// A list holding at most `capacity` open connections.
    pub fn new(capacity: usize) -> Arc<Self> {
        Arc::new(Self {
            held: Mutex::new(VecDeque::new()),
            capacity: capacity.max(1),
            next_id: AtomicU64::new(1),
        })
    }

    /// How many leaked connections are open now.
    pub fn open(&self) -> usize {
        self.lock().len()
    }

    /// GETs `path` from `addr` on a new connection and leaves the connection open.
    pub async fn call(
        self: &Arc<Self>,
        addr: SocketAddr,
        host: &str,
        path: &str,
        timeout: Duration,
    ) -> Result<(u16, Bytes), String> {
        let exchange = async {
            let stream = tokio::net::TcpStream::connect(addr)
                .await
                .map_err(|e| format!("connect: {e}"))?;
            let _ = stream.set_nodelay(true);
            let (mut sender, connection) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream))
                    .await
                    .map_err(|e| format!("handshake: {e}"))?;
            // The driver ends when the downstream closes the connection (or on abort).
            let driver = tokio::spawn(connection);
            let request = http::Request::get(path)
                .header(http::header::HOST, host)
                .body(Empty::<Bytes>::new())
                .map_err(|e| format!("request: {e}"))?;
            let response = sender
                .send_request(request)
                .await
                .map_err(|e| format!("request: {e}"))?;
            let status = response.status().as_u16();
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|e| format!("body: {e}"))?
                .to_bytes();
            Ok::<_, String>((status, body, sender, driver))
        };
        let (status, body, sender, driver) = tokio::time::timeout(timeout, exchange)
            .await
            .map_err(|_| format!("no answer within {timeout:?}"))??;
        self.hold(sender, driver);
        Ok((status, body))
    }

    /// Keeps the connection open (holding its sender) until the downstream closes it.
    fn hold(
        self: &Arc<Self>,
        sender: hyper::client::conn::http1::SendRequest<Empty<Bytes>>,
        driver: tokio::task::JoinHandle<hyper::Result<()>>,
    ) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let list = Arc::downgrade(self);
        let driver_abort = driver.abort_handle();
        let keeper = tokio::spawn(async move {
            let _sender = sender;
            let _ = driver.await;
            if let Some(list) = list.upgrade() {
                list.lock().retain(|held| held.id != id);
            }
        });
        let mut held = self.lock();
        while held.len() >= self.capacity {
            if let Some(oldest) = held.pop_front() {
                oldest.close();
            }
        }
        held.push_back(HeldConnection {
            id,
            keeper: keeper.abort_handle(),
            driver: driver_abort,
        });
    }

    /// Closes every leaked connection (on shutdown).
    pub fn close_all(&self) {
        for held in self.lock().drain(..) {
            held.close();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<HeldConnection>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for LeakedConnections {
    fn drop(&mut self) {
        self.close_all();
    }
}
