//! One client's connection and its request/response exchanges, with failures classified.
//!
//! A minimal HTTP/1.1 client, as wrk does it, on a stream that [`Connect`] opens (plain TCP, or
//! TLS over it: the exchange is generic over the stream): the request is rendered once per run
//! (`request`) and written as is; the response head is parsed with `httparse` in place, and the
//! body (content-length, chunked, or up to the close) is counted and discarded (`response`). Per request that is one write, usually one read, no allocation and no timer
//! registration: each client keeps one deadline (`Sleep`) that it pushes forward, which tokio
//! does without touching its timer wheel. (hyper's client cost three times the user-space CPU
//! per request: a `Request` and `HeaderMap` per request and per response, a channel and a
//! oneshot between the sender and the connection, a timer per `timeout`.)
//!
//! Each client owns at most one connection, so keep-alive is ours to control: it reconnects
//! when the server closed the connection, and a request that fails on a reused connection before
//! any response byte arrived is retried once on a fresh connection (the server closed it while
//! idle: a reconnect, not an error).
use crate::failure::Failure;
pub use crate::request::Request;
use crate::response::{classify, parse_head, read_chunked, Body, Inbox, ReadEnd, MAX_HEAD};
use crate::tls::Connect;
use std::io::ErrorKind;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Sleep;

/// What every request of a run shares.
pub struct Target<C> {
    /// The resolved address.
    pub addr: SocketAddr,
    /// Opens a connection on a connected TCP stream (a TLS handshake, or nothing).
    pub connect: C,
    /// The requests of the run, each rendered once (one, or one per request of a targets file).
    pub requests: Vec<Request>,
    /// Keep connections alive between requests.
    pub keepalive: bool,
    /// Per-request (and per-connect) timeout.
    pub timeout: Duration,
    /// The preflight's connection, until the first client to connect adopts it.
    pub spare: std::sync::Mutex<Option<crate::setup::Spare>>,
}

/// Connections opened by a run's clients, counted as they open.
#[derive(Debug, Default)]
pub struct ConnectionCounts {
    /// TCP connections.
    pub opened: AtomicU64,
    /// TLS handshakes completed.
    pub handshakes: AtomicU64,
}

/// How long opening a connection took, apart from the exchange.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Opened {
    /// The TCP connect.
    pub connect: Duration,
    /// The TLS handshake after it (HTTPS only).
    pub handshake: Option<Duration>,
}

/// A client's connection state.
pub struct Client<C: Connect> {
    stream: Option<C::Stream>,
    inbox: Inbox,
    /// The deadline of the connect or exchange under way; pushed forward, never re-created.
    deadline: Pin<Box<Sleep>>,
    /// Exchanges completed on the current connection.
    reused: u64,
    /// What opening the current connection took, until an exchange reports it.
    opened: Option<Opened>,
    /// The current connection is the preflight's, opened before the run: the server may have
    /// closed it while it waited, so a first request it loses is resent, as on a kept-alive one.
    adopted: bool,
}

/// How one exchange ended.
pub struct Exchange {
    /// `None` for a 2xx response.
    pub failure: Option<Failure>,
    /// Response bytes as received: head, body and chunk framing.
    pub bytes: u64,
    /// Set when this exchange opened a connection: what that took (it is part of the latency).
    pub opened: Option<Opened>,
}

enum Attempt {
    /// The connection closed or reset before any response byte arrived.
    ClosedEarly,
    Failed(Failure),
}

impl<C: Connect> Client<C> {
    /// A client with no connection yet. Must be called inside the runtime that drives it.
    pub fn new() -> Client<C> {
        Client {
            stream: None,
            inbox: Inbox::default(),
            deadline: Box::pin(tokio::time::sleep(Duration::from_secs(3600))),
            reused: 0,
            opened: None,
            adopted: false,
        }
    }

    /// Sends request `which` of the target and reads the whole response, connecting first when
    /// needed. `now` is the caller's reading of the clock as it starts the request (the deadline
    /// counts from it).
    pub async fn exchange(
        &mut self,
        target: &Target<C>,
        which: usize,
        counts: &ConnectionCounts,
        now: Instant,
    ) -> Exchange {
        let request = &target.requests[which];
        let reused = self.stream.is_some() && self.reused > 0;
        let outcome = match self.attempt(target, request, counts, now).await {
            Err(Attempt::ClosedEarly) if reused || std::mem::take(&mut self.adopted) => {
                // The server closed the kept-alive connection as we sent: reconnect, resend once.
                self.attempt(target, request, counts, Instant::now()).await
            }
            outcome => outcome,
        };
        let (failure, bytes) = match outcome {
            Ok(done) => done,
            Err(Attempt::ClosedEarly) => (Some(Failure::Reset), 0),
            Err(Attempt::Failed(failure)) => (Some(failure), 0),
        };
        Exchange {
            failure,
            bytes,
            opened: self.opened.take(),
        }
    }

    /// Connects (TCP, then the TLS handshake) within the deadline.
    async fn open(
        &mut self,
        target: &Target<C>,
        counts: &ConnectionCounts,
    ) -> Result<C::Stream, Attempt> {
        let started = Instant::now();
        let spare = target.spare.lock().ok().and_then(|mut spare| spare.take());
        self.adopted = spare.is_some();
        let (tcp, connect) = match spare {
            Some(spare) => (
                TcpStream::from_std(spare.stream).map_err(|_| Attempt::Failed(Failure::Other))?,
                Some(spare.connect),
            ),
            None => (connect_within(target.addr, &mut self.deadline).await?, None),
        };
        let _ = tcp.set_nodelay(true);
        counts.opened.fetch_add(1, Ordering::Relaxed);
        let connected = Instant::now();
        let connect = connect.unwrap_or(connected - started);
        self.opened = Some(Opened {
            connect,
            handshake: None,
        });
        if !C::TLS {
            return target
                .connect
                .open(tcp)
                .await
                .map_err(|_| Attempt::Failed(Failure::Other));
        }
        let stream = tokio::select! {
            biased;
            opened = target.connect.open(tcp) => opened,
            _ = self.deadline.as_mut() => return Err(Attempt::Failed(Failure::ConnectTimeout)),
        };
        let stream = stream.map_err(|e| {
            Attempt::Failed(match classify(&e) {
                Failure::Reset => Failure::Reset,
                Failure::RequestTimeout => Failure::ConnectTimeout,
                _ => Failure::Tls,
            })
        })?;
        counts.handshakes.fetch_add(1, Ordering::Relaxed);
        self.opened = Some(Opened {
            connect,
            handshake: Some(connected.elapsed()),
        });
        Ok(stream)
    }

    async fn attempt(
        &mut self,
        target: &Target<C>,
        request: &Request,
        counts: &ConnectionCounts,
        mut now: Instant,
    ) -> Result<(Option<Failure>, u64), Attempt> {
        if self.stream.is_none() {
            self.deadline.as_mut().reset((now + target.timeout).into());
            let stream = self.open(target, counts).await?;
            self.stream = Some(stream);
            self.inbox.clear();
            self.reused = 0;
            now = Instant::now();
        }
        self.deadline.as_mut().reset((now + target.timeout).into());
        let Client {
            stream,
            inbox,
            deadline,
            ..
        } = self;
        let Some(connection) = stream.as_mut() else {
            return Err(Attempt::Failed(Failure::Other));
        };
        let outcome = tokio::select! {
            biased;
            outcome = exchange_on(connection, inbox, request) => outcome,
            _ = deadline.as_mut() => Err(Attempt::Failed(Failure::RequestTimeout)),
        };
        match &outcome {
            Ok((_, true)) if target.keepalive => self.reused += 1,
            _ => self.stream = None,
        }
        outcome.map(|(exchange, _)| exchange)
    }
}

/// Writes the request and reads the whole response: the exchange and whether the connection
/// may carry another request.
async fn exchange_on<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    inbox: &mut Inbox,
    request: &Request,
) -> Result<((Option<Failure>, u64), bool), Attempt> {
    if let Err(e) = write_request(stream, &request.bytes).await {
        return Err(match classify(&e) {
            Failure::Reset => Attempt::ClosedEarly,
            other => Attempt::Failed(other),
        });
    }
    let mut received = 0u64;
    let head = loop {
        match parse_head(inbox.pending(), request.head) {
            Ok(Some(head)) if (100..200).contains(&head.status) && head.status != 101 => {
                // An interim response (100 Continue, 103 Early Hints): the final one follows.
                inbox.consume(head.length);
                received += head.length as u64;
            }
            Ok(Some(head)) => break head,
            Ok(None) if inbox.pending().len() >= MAX_HEAD => {
                return Err(Attempt::Failed(Failure::Protocol))
            }
            Ok(None) => {}
            Err(failure) => return Err(Attempt::Failed(failure)),
        }
        if let Err(end) = inbox.fill(stream).await {
            let nothing_yet = received == 0 && inbox.pending().is_empty();
            return Err(match end {
                ReadEnd::Closed if nothing_yet => Attempt::ClosedEarly,
                ReadEnd::Closed => Attempt::Failed(Failure::Reset),
                ReadEnd::Io(e) => match classify(&e) {
                    Failure::Reset if nothing_yet => Attempt::ClosedEarly,
                    other => Attempt::Failed(other),
                },
            });
        }
    };
    inbox.consume(head.length);
    received += head.length as u64;
    let failed = |end: ReadEnd| match end {
        ReadEnd::Closed => Attempt::Failed(Failure::Reset),
        ReadEnd::Io(e) => Attempt::Failed(classify(&e)),
    };
    let mut keep_alive = head.keep_alive;
    match head.body {
        Body::None => {}
        Body::Length(n) => {
            inbox.skip(stream, n).await.map_err(failed)?;
            received += n;
        }
        Body::Chunked => received += read_chunked(stream, inbox).await.map_err(Attempt::Failed)?,
        Body::UntilClose => {
            keep_alive = false;
            received += inbox.pending().len() as u64;
            inbox.clear();
            loop {
                match inbox.fill(stream).await {
                    Ok(n) => received += n as u64,
                    Err(ReadEnd::Closed) => break,
                    // A TLS server may close without close_notify: the body still ended.
                    Err(ReadEnd::Io(e)) if e.kind() == ErrorKind::UnexpectedEof => break,
                    Err(end) => return Err(failed(end)),
                }
                inbox.clear();
            }
        }
    }
    let failure = (!(200..300).contains(&head.status)).then_some(Failure::Status(head.status));
    Ok(((failure, received), keep_alive))
}

/// Writes the whole request and flushes it (a TLS stream holds written records until flushed).
async fn write_request<S: AsyncWrite + Unpin>(stream: &mut S, bytes: &[u8]) -> std::io::Result<()> {
    stream.write_all(bytes).await?;
    stream.flush().await
}

/// A TCP connect within the client's deadline, its failure classified.
async fn connect_within(
    addr: SocketAddr,
    deadline: &mut Pin<Box<Sleep>>,
) -> Result<TcpStream, Attempt> {
    let connected = tokio::select! {
        biased;
        connected = TcpStream::connect(addr) => connected,
        _ = deadline.as_mut() => return Err(Attempt::Failed(Failure::ConnectTimeout)),
    };
    match connected {
        Ok(tcp) => Ok(tcp),
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
            Err(Attempt::Failed(Failure::ConnectRefused))
        }
        Err(e) if e.kind() == ErrorKind::TimedOut => Err(Attempt::Failed(Failure::ConnectTimeout)),
        Err(_) => Err(Attempt::Failed(Failure::Other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use tokio::io::AsyncReadExt;

    /// Serves `response` to each request on one connection, `times` times, then closes.
    async fn serve(response: &'static [u8], times: usize) -> SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut buffer = [0u8; 1024];
            for _ in 0..times {
                let mut seen = Vec::new();
                while !seen.ends_with(b"\r\n\r\n") {
                    let n = stream.read(&mut buffer).await.unwrap();
                    if n == 0 {
                        return;
                    }
                    seen.extend_from_slice(&buffer[..n]);
                }
                // In two pieces, to exercise reads that stop in the middle.
                let (first, second) = response.split_at(response.len() / 2);
                stream.write_all(first).await.unwrap();
                stream.flush().await.unwrap();
                tokio::time::sleep(Duration::from_millis(5)).await;
                stream.write_all(second).await.unwrap();
            }
        });
        addr
    }

    async fn exchanges(response: &'static [u8], times: usize) -> Vec<(Option<Failure>, u64)> {
        let addr = serve(response, times).await;
        let target = Target {
            addr,
            connect: crate::tls::Plain,
            requests: vec![Request {
                bytes: Bytes::from_static(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n"),
                head: false,
            }],
            keepalive: true,
            timeout: Duration::from_secs(5),
            spare: std::sync::Mutex::new(None),
        };
        let counts = ConnectionCounts::default();
        let mut client = Client::new();
        let mut out = Vec::new();
        for i in 0..times {
            let done = client.exchange(&target, 0, &counts, Instant::now()).await;
            assert_eq!(
                done.opened.is_some(),
                i == 0,
                "only the first exchange connects"
            );
            out.push((done.failure, done.bytes));
        }
        assert_eq!(
            counts.opened.load(Ordering::Relaxed),
            1,
            "one kept-alive connection"
        );
        out
    }

    #[tokio::test]
    async fn chunked_and_sized_bodies_are_read_to_their_end() {
        let chunked: &[u8] = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n\
            5;ext=1\r\nhello\r\n1\r\n!\r\n0\r\nx-trailer: 1\r\n\r\n";
        let done = exchanges(chunked, 3).await;
        assert_eq!(done, vec![(None, chunked.len() as u64); 3]);
        let sized: &[u8] = b"HTTP/1.1 404 Not Found\r\ncontent-length: 5\r\n\r\nnope!";
        let done = exchanges(sized, 2).await;
        assert_eq!(
            done,
            vec![(Some(Failure::Status(404)), sized.len() as u64); 2]
        );
        let interim: &[u8] =
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
        let done = exchanges(interim, 2).await;
        assert_eq!(done, vec![(None, interim.len() as u64); 2]);
    }
}
