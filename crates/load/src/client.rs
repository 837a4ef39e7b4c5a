//! One client's connection and its request/response exchanges, with failures classified.
//!
//! Each client owns at most one HTTP/1.1 connection (hyper's low-level `conn` API, as oha does),
//! so keep-alive is ours to control: it reconnects when the server closed the connection, and a
//! request that fails on a reused connection before any response byte arrived is retried once on
//! a fresh connection (the server closed it while idle: a reconnect, not an error).
use crate::recorder::Failure;
use bytes::Bytes;
use http::{header, HeaderMap, HeaderValue, Method, Request, Uri};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::net::TcpStream;

/// What every request of a run shares.
#[derive(Debug)]
pub struct Target {
    /// The resolved address.
    pub addr: SocketAddr,
    /// Origin-form path and query.
    pub path: Uri,
    /// Method.
    pub method: Method,
    /// Host and user headers (and `Connection: close` without keep-alive).
    pub headers: HeaderMap,
    /// Request body.
    pub body: Bytes,
    /// Keep connections alive between requests.
    pub keepalive: bool,
    /// Per-request (and per-connect) timeout.
    pub timeout: Duration,
}

impl Target {
    fn request(&self) -> Request<Full<Bytes>> {
        let mut request = Request::new(Full::new(self.body.clone()));
        *request.method_mut() = self.method.clone();
        *request.uri_mut() = self.path.clone();
        *request.headers_mut() = self.headers.clone();
        request
    }

    /// Builds the header map every request carries.
    pub fn headers(
        host: &str,
        user: &[(String, String)],
        keepalive: bool,
        body_len: usize,
        method: &Method,
    ) -> Result<HeaderMap, String> {
        let mut headers = HeaderMap::new();
        let host_value = HeaderValue::from_str(host)
            .map_err(|_| format!("the host '{host}' cannot be sent as a Host header"))?;
        headers.insert(header::HOST, host_value);
        if !keepalive {
            headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        if body_len > 0 || matches!(*method, Method::POST | Method::PUT | Method::PATCH) {
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from(body_len));
        }
        for (name, value) in user {
            let name = header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("'{name}' is not a valid header name"))?;
            let value = HeaderValue::from_str(value)
                .map_err(|_| format!("the value of header '{name}' is not valid"))?;
            headers.append(name, value);
        }
        Ok(headers)
    }
}

/// The connection half that does the I/O; driven in the client's own task (no extra task and
/// no cross-task wake-ups per request).
type Connection = hyper::client::conn::http1::Connection<TokioIo<TcpStream>, Full<Bytes>>;

/// A client's connection state.
#[derive(Default)]
pub struct Client {
    sender: Option<SendRequest<Full<Bytes>>>,
    connection: Option<Pin<Box<Connection>>>,
    /// Exchanges completed on the current connection.
    reused: u64,
}

/// How one exchange ended.
pub struct Exchange {
    /// `None` for a 2xx response.
    pub failure: Option<Failure>,
    /// Response bytes (status line and headers estimated, body exact).
    pub bytes: u64,
}

impl Client {
    /// Sends one request and reads the whole response, connecting first when needed.
    pub async fn exchange(&mut self, target: &Target, connections: &AtomicU64) -> Exchange {
        let reused = self.sender.as_ref().is_some_and(|s| !s.is_closed()) && self.reused > 0;
        match self.attempt(target, connections).await {
            Err(Attempt::ClosedEarly) if reused => {
                // The server closed the kept-alive connection as we sent: reconnect, resend once.
                match self.attempt(target, connections).await {
                    Ok(done) => done,
                    Err(failed) => failed.into_exchange(),
                }
            }
            Ok(done) => done,
            Err(failed) => failed.into_exchange(),
        }
    }

    async fn attempt(
        &mut self,
        target: &Target,
        connections: &AtomicU64,
    ) -> Result<Exchange, Attempt> {
        if self.connection.is_none() || self.sender.as_ref().is_some_and(|s| s.is_closed()) {
            self.sender = None;
            self.connection = None;
        }
        let Client {
            sender, connection, ..
        } = self;
        let sender = match sender {
            Some(sender) => sender,
            None => {
                let (fresh, driver) = connect(target).await.map_err(Attempt::Failed)?;
                connections.fetch_add(1, Ordering::Relaxed);
                self.reused = 0;
                *connection = Some(Box::pin(driver));
                sender.insert(fresh)
            }
        };
        let outcome =
            tokio::time::timeout(target.timeout, drive(send(sender, target), connection)).await;
        let keep = match &outcome {
            Ok(Ok((_, keep))) => *keep && target.keepalive,
            _ => false,
        };
        if keep && self.connection.is_some() {
            self.reused += 1;
        } else {
            self.sender = None;
            self.connection = None;
        }
        match outcome {
            Err(_) => Err(Attempt::Failed(Failure::RequestTimeout)),
            Ok(Err(SendError::BeforeResponse(e))) => match classify(&e) {
                Failure::Reset => Err(Attempt::ClosedEarly),
                other => Err(Attempt::Failed(other)),
            },
            Ok(Err(SendError::InBody(e))) => Err(Attempt::Failed(classify(&e))),
            Ok(Ok((exchange, _))) => Ok(exchange),
        }
    }
}

enum Attempt {
    /// The connection closed or reset before any response arrived.
    ClosedEarly,
    Failed(Failure),
}

impl Attempt {
    fn into_exchange(self) -> Exchange {
        let failure = match self {
            Attempt::ClosedEarly => Failure::Reset,
            Attempt::Failed(failure) => failure,
        };
        Exchange {
            failure: Some(failure),
            bytes: 0,
        }
    }
}

enum SendError {
    BeforeResponse(hyper::Error),
    InBody(hyper::Error),
}

async fn send(
    sender: &mut SendRequest<Full<Bytes>>,
    target: &Target,
) -> Result<(Exchange, bool), SendError> {
    sender.ready().await.map_err(SendError::BeforeResponse)?;
    let response = sender
        .send_request(target.request())
        .await
        .map_err(SendError::BeforeResponse)?;
    let status = response.status();
    // Status line plus "name: value\r\n" per header plus the blank line.
    let mut bytes = 17 + 2;
    for (name, value) in response.headers() {
        bytes += name.as_str().len() as u64 + value.len() as u64 + 4;
    }
    let keep = response
        .headers()
        .get(header::CONNECTION)
        .is_none_or(|v| !v.as_bytes().eq_ignore_ascii_case(b"close"));
    let mut body = response.into_body();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(SendError::InBody)?;
        if let Some(data) = frame.data_ref() {
            bytes += data.len() as u64;
        }
    }
    let failure = (!status.is_success()).then(|| Failure::Status(status.as_u16()));
    Ok((Exchange { failure, bytes }, keep))
}

/// Awaits `exchange` while polling the connection that carries it.
async fn drive<F: Future>(exchange: F, connection: &mut Option<Pin<Box<Connection>>>) -> F::Output {
    tokio::pin!(exchange);
    loop {
        match connection {
            Some(driver) => tokio::select! {
                biased;
                out = &mut exchange => return out,
                _ = driver.as_mut() => *connection = None, // closed: the exchange ends with an error
            },
            None => return exchange.await,
        }
    }
}

async fn connect(target: &Target) -> Result<(SendRequest<Full<Bytes>>, Connection), Failure> {
    let stream = match tokio::time::timeout(target.timeout, TcpStream::connect(target.addr)).await {
        Err(_) => return Err(Failure::ConnectTimeout),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            return Err(Failure::ConnectRefused)
        }
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::TimedOut => {
            return Err(Failure::ConnectTimeout)
        }
        Ok(Err(_)) => return Err(Failure::Other),
        Ok(Ok(stream)) => stream,
    };
    let _ = stream.set_nodelay(true);
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|_| Failure::Other)?;
    Ok((sender, connection))
}

/// The failure kind of a hyper error.
fn classify(error: &hyper::Error) -> Failure {
    if error.is_parse() || error.is_parse_status() || error.is_parse_too_large() {
        return Failure::Protocol;
    }
    if error.is_timeout() {
        return Failure::RequestTimeout;
    }
    if error.is_incomplete_message() || error.is_canceled() || error.is_closed() {
        return Failure::Reset;
    }
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::*;
            return match io.kind() {
                ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof => Failure::Reset,
                TimedOut => Failure::RequestTimeout,
                InvalidData => Failure::Protocol,
                _ => Failure::Other,
            };
        }
        source = cause.source();
    }
    Failure::Other
}
