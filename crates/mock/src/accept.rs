//! The accept loop: takes a listener, hands each accepted connection to one of the per-core
//! workers, and applies the `--max-connections` cap.
//!
//! Each accepted connection is first classified by peeking at its first bytes: the HTTP/2
//! preface (`PRI * HTTP/2.0`, h2c with prior knowledge) makes it an HTTP/2 connection, counted
//! and capped as a whole (its streams may be admin requests or not); an HTTP/1.1 one that
//! opens with an admin path (`/__admin`, `/__chokepoint`, `/metrics`) is served at once and never
//! counted, so stats stay readable when `--max-connections` is reached. Any other connection is
//! counted from its first request on and, at the cap, waits unserved for a slot, as it would in a
//! full accept queue (at most [`MAX_WAITING`] wait; then the mock stops accepting, and the kernel's
//! accept queue takes over). What a connection does once served is [`crate::connection`]'s job.
use crate::connection;
use crate::state::MockState;
use crate::tls::MockTls;
use crate::{MockConfig, MockError};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// Connections that may wait for a slot at the cap before the mock stops accepting.
pub const MAX_WAITING: usize = 4096;

/// Serves the mock on `listener` until `shutdown` is cancelled. The accept loop runs on the
/// caller's runtime; the connections are served on threads of the mock's own (`cp-mock`, one
/// per core, each a single-threaded runtime), which end, with every connection, at shutdown.
pub async fn serve(
    listener: TcpListener,
    config: MockConfig,
    shutdown: CancellationToken,
) -> Result<(), MockError> {
    serve_state(listener, Arc::new(MockState::new(config)), shutdown, None).await;
    Ok(())
}

/// Serves the mock on a plain listener, an HTTPS one, or both at once (one state: the same
/// stubs, the same stats), until `shutdown` is cancelled.
pub async fn serve_plain_and_https(
    plain: Option<TcpListener>,
    https: Option<(TcpListener, MockTls)>,
    config: MockConfig,
    shutdown: CancellationToken,
) -> Result<(), MockError> {
    let state = Arc::new(MockState::new(config));
    let plain = async {
        if let Some(listener) = plain {
            serve_state(listener, Arc::clone(&state), shutdown.clone(), None).await;
        }
    };
    let https = async {
        if let Some((listener, tls)) = https {
            serve_state(listener, Arc::clone(&state), shutdown.clone(), Some(tls)).await;
        }
    };
    tokio::join!(plain, https);
    Ok(())
}

/// The accept loop of one listener; `tls` makes it an HTTPS one.
pub(crate) async fn serve_state(
    listener: TcpListener,
    state: Arc<MockState>,
    shutdown: CancellationToken,
    tls: Option<MockTls>,
) {
    let mut workers = match Workers::start(worker_count()) {
        Ok(workers) => workers,
        Err(err) => {
            eprintln!("chokepoint mock: cannot start its worker threads: {err}");
            return;
        }
    };
    let slots = state.max_connections().map(|n| Arc::new(Semaphore::new(n)));
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
        workers.serve(stream, Arc::clone(&state), slots.clone(), room, tls.clone());
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
        tls: Option<MockTls>,
    ) {
        // Moved as a std socket: a tokio one is tied to the reactor that accepted it.
        let Ok(stream) = stream.into_std() else {
            return;
        };
        let index = self.next;
        self.next = (index + 1) % self.handles.len();
        self.handles[index].spawn(async move {
            if let Ok(stream) = TcpStream::from_std(stream) {
                connection(stream, state, slots, room, tls).await;
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
    tls: Option<MockTls>,
) {
    let _ = stream.set_nodelay(true);
    // Over TLS the request line is unreadable before the handshake: every HTTPS connection is
    // counted (read the stats over the plain port), and ALPN, not the preface, picks HTTP/2.
    let opening = match &tls {
        Some(_) => Opening::Http1,
        None => match opening(&stream).await {
            Ok(Some(opening)) => opening,
            _ => return, // closed before sending anything
        },
    };
    let (slot, counted) = if opening == Opening::Admin {
        (None, None)
    } else {
        let slot = match slots {
            Some(slots) => {
                state.waiting_counter().fetch_add(1, Ordering::Relaxed);
                let _waiting = Waiting(state.waiting_counter());
                slots.acquire_owned().await.ok()
            }
            None => None,
        };
        (slot, Some(state.meter.connection_opened()))
    };
    drop(room);
    connection::serve_http(stream, state, tls, opening == Opening::H2).await;
    drop(counted);
    drop(slot);
}

/// The HTTP/2 connection preface a client sends first over cleartext (h2c, prior knowledge).
pub(crate) const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// What a plain connection's first bytes say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Opening {
    /// HTTP/1.1 whose first request is for an admin path: served at once, never counted.
    Admin,
    /// HTTP/1.1 downstream traffic.
    Http1,
    /// The HTTP/2 preface: each stream is a request (admin or not); the connection is counted.
    H2,
}

/// Peeks at the first bytes; `None` when the client closed before sending anything.
async fn opening(stream: &TcpStream) -> io::Result<Option<Opening>> {
    let mut buf = [0u8; 64];
    for _ in 0..100 {
        let n = stream.peek(&mut buf).await?;
        if n == 0 {
            return Ok(None);
        }
        if let Some(opening) = classify(&buf[..n], n == buf.len()) {
            return Ok(Some(opening));
        }
        // Only part of the request line (or of the preface) has arrived: wait for more.
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    Ok(Some(Opening::Http1))
}

/// What `head` (the first bytes, `full` when they fill the peek buffer) opens; `None` when more
/// bytes are needed to tell.
pub(crate) fn classify(head: &[u8], full: bool) -> Option<Opening> {
    let common = head.len().min(H2_PREFACE.len());
    if head[..common] == H2_PREFACE[..common] {
        return (common == H2_PREFACE.len()).then_some(Opening::H2);
    }
    let kind = |admin: bool| {
        if admin {
            Opening::Admin
        } else {
            Opening::Http1
        }
    };
    if let Some(space) = head.iter().position(|&b| b == b' ') {
        let target = &head[space + 1..];
        let end = target.iter().position(|&b| b == b' ' || b == b'?');
        if let Some(end) = end {
            let path = String::from_utf8_lossy(&target[..end]);
            return Some(kind(connection::is_admin_path(&path)));
        }
        if target.len() > "/__chokepoint".len() {
            let path = String::from_utf8_lossy(target);
            return Some(kind(
                path.starts_with("/__admin") || path.starts_with("/__chokepoint"),
            ));
        }
    }
    full.then_some(Opening::Http1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_bytes_tell_h2c_from_http1_and_admin() {
        let table: &[(&[u8], bool, Option<Opening>)] = &[
            (H2_PREFACE, false, Some(Opening::H2)),
            // The preface and the client's SETTINGS frame in one segment.
            (
                b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\x12\x04",
                false,
                Some(Opening::H2),
            ),
            // Part of the preface: wait for the rest.
            (b"PRI * HTTP/2", false, None),
            (b"P", false, None),
            (b"POST /orders HTTP/1.1\r\n", false, Some(Opening::Http1)),
            (
                b"PUT /__admin/mappings HTTP/1.1\r\n",
                false,
                Some(Opening::Admin),
            ),
            (b"GET /metrics HTTP/1.1\r\n", false, Some(Opening::Admin)),
            (
                b"GET /__chokepoint/stats?x HTTP/1.1",
                false,
                Some(Opening::Admin),
            ),
            (b"GET /a", false, None),
            // A method PRI that is not the preface is HTTP/1.1 (hyper answers it).
            (b"PRI /x HTTP/1.1\r\n", false, Some(Opening::Http1)),
        ];
        for (head, full, expected) in table {
            assert_eq!(
                classify(head, *full),
                *expected,
                "{}",
                String::from_utf8_lossy(head)
            );
        }
    }
}
