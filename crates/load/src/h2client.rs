//! Load over HTTP/2 (`--http2`), with the `h2` crate: `h2` by ALPN over TLS, `h2c` with prior
//! knowledge over plain TCP.
//!
//! The run's clients become streams spread over a few connections ([`Lane`]s, `--connections`):
//! client `i` sends on lane `i % connections`, and every lane lives on one worker thread with
//! the clients bound to it, so a connection and its streams never cross threads. Each client
//! ([`H2Stream`]) keeps its own handle on its lane's connection and sends one request at a time,
//! as an HTTP/1.1 client does, so the engine's closed and open models, its exact counts and its
//! recording are the same (`engine`'s `Session`). The first client to find its lane without a
//! connection opens one (TCP, TLS with ALPN `h2`, the HTTP/2 handshake) while the others wait
//! for it, until the server answered a PING (its SETTINGS, with its stream limit, come first);
//! the exchange that opened it reports the connect and TLS handshake times.
//!
//! A stream ends in a failure kind of its own when the server resets it with `REFUSED_STREAM`
//! or a `GOAWAY` with an error code ends it. A graceful `GOAWAY` (`NO_ERROR`, as nginx sends
//! after `keepalive_requests`) leaves the streams above its last stream id unprocessed: those
//! are resent once on a new connection, as the HTTP/1.1 client resends a request a kept-alive
//! connection lost. Each lane counts its streams in flight (now, and the most at once), the
//! time they were in flight (their mean, by Little's law) and the `GOAWAY`s it received.
use crate::client::{ConnectionCounts, Exchange, Opened};
use crate::failure::Failure;
use crate::response::classify;
use crate::tls::{Connect, Tls};
use crate::{LoadConfig, LoadError};
use bytes::Bytes;
use h2::client::SendRequest;
use h2::Reason;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::time::Sleep;

/// Receive windows as h2load's defaults (`-w 30 -W 30`): flow control never paces a response.
const WINDOW: u32 = (1 << 30) - 1;

/// One request as each stream sends it.
pub(crate) struct H2Request {
    method: http::Method,
    /// Absolute: h2 takes `:scheme` and `:authority` from it.
    uri: http::Uri,
    headers: http::HeaderMap,
    body: Bytes,
}

impl H2Request {
    fn build(&self) -> http::Request<()> {
        let mut request = http::Request::new(());
        *request.method_mut() = self.method.clone();
        *request.uri_mut() = self.uri.clone();
        *request.headers_mut() = self.headers.clone();
        request
    }
}

/// Headers HTTP/2 forbids (RFC 9113 §8.2.2) or carries as pseudo-headers: not sent.
const NOT_SENT: [&str; 6] = [
    "host",
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
];

/// The run's requests for HTTP/2: the targets file's, or the one of the URL.
pub(crate) fn requests(config: &LoadConfig) -> Result<Vec<H2Request>, LoadError> {
    let one = |method: &http::Method, url: &str, own: &[(String, String)], body: &Bytes| {
        let uri: http::Uri = url
            .parse()
            .map_err(|_| LoadError::Config(format!("'{url}' is not a usable URL")))?;
        let mut headers = http::HeaderMap::new();
        for (name, value) in own.iter().chain(&config.headers) {
            let name = http::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| LoadError::Config(format!("'{name}' is not a valid header name")))?;
            if NOT_SENT.contains(&name.as_str()) || (name == "te" && value != "trailers") {
                continue;
            }
            let value = http::HeaderValue::from_str(value).map_err(|_| {
                LoadError::Config(format!("the value of header '{name}' is not valid"))
            })?;
            headers.append(name, value);
        }
        if config.grpc.is_some() {
            // gRPC over HTTP/2's spec: the content type (unless the user gave one, such as
            // application/grpc+proto) and `te: trailers`, which some servers require.
            if !headers.contains_key(http::header::CONTENT_TYPE) {
                headers.insert(
                    http::header::CONTENT_TYPE,
                    http::HeaderValue::from_static(GRPC_CONTENT_TYPE),
                );
            }
            headers.insert(http::header::TE, http::HeaderValue::from_static("trailers"));
        }
        if !body.is_empty() || matches!(*method, http::Method::POST | http::Method::PUT) {
            headers.insert(http::header::CONTENT_LENGTH, body.len().into());
        }
        Ok(H2Request {
            method: method.clone(),
            uri,
            headers,
            body: body.clone(),
        })
    };
    if config.targets.is_empty() {
        return Ok(vec![one(&config.method, &config.url, &[], &config.body)?]);
    }
    config
        .targets
        .iter()
        .map(|t| one(&t.method, &t.url, &t.headers, &t.body))
        .collect()
}

/// One connection of the run, reopened when the server closes it, and its streams' figures.
#[derive(Default)]
pub(crate) struct Lane {
    current: tokio::sync::Mutex<Option<Live>>,
    /// Streams in flight on it now.
    pub(crate) in_flight: AtomicU64,
    /// The most at once since the window began.
    pub(crate) max_in_flight: AtomicU64,
    /// Requests completed on it.
    pub(crate) completed: AtomicU64,
    /// Times it was opened.
    pub(crate) opened: AtomicU64,
    /// `GOAWAY`s received on it.
    pub(crate) goaways: AtomicU64,
    /// The time its streams were in flight, summed, in microseconds: over a span, divided by
    /// the span, the mean streams in flight (Little's law).
    pub(crate) stream_us: AtomicU64,
}

/// A connection as a stream holds it.
#[derive(Clone)]
struct Live {
    send: SendRequest<Bytes>,
    /// Set when the connection ended or a stream found it going away: the next stream opens a
    /// new one.
    closed: Arc<AtomicBool>,
    /// Becomes `Some(true)` when a `GOAWAY` from the server ended the connection, `Some(false)`
    /// when anything else did: what a stream cut off with it is told.
    ended: tokio::sync::watch::Receiver<Option<bool>>,
}

/// What every stream of an HTTP/2 run shares.
pub(crate) struct H2Target {
    pub(crate) addr: SocketAddr,
    /// `https://`: the TLS connector (ALPN `h2`).
    pub(crate) tls: Option<Tls>,
    pub(crate) requests: Vec<H2Request>,
    pub(crate) timeout: Duration,
    pub(crate) lanes: Vec<Arc<Lane>>,
    /// The server's `SETTINGS_MAX_CONCURRENT_STREAMS` as the preflight read it.
    pub(crate) server_max_streams: Option<u64>,
    /// gRPC calls: a response's outcome is its `grpc-status`.
    pub(crate) grpc: bool,
}

/// One client of an HTTP/2 run: a stream at a time on its lane's connection.
pub(crate) struct H2Stream {
    target: Arc<H2Target>,
    lane: Arc<Lane>,
    live: Option<Live>,
    deadline: Pin<Box<Sleep>>,
}

/// How one attempt ended when it did not end with a response.
enum Miss {
    /// Not processed by the server (a graceful `GOAWAY`, or the connection gone before the
    /// request was sent): resend once on a new connection.
    Unprocessed,
    Failed(Failure),
    /// The connection broke under the stream (EOF, reset): a `GOAWAY` before it, or not.
    Broken(Failure),
}

impl H2Stream {
    /// Client `index` of the run. Must be called inside the runtime that drives it.
    pub(crate) fn new(target: Arc<H2Target>, index: usize) -> H2Stream {
        let lane = target.lanes[index % target.lanes.len()].clone();
        H2Stream {
            target,
            lane,
            live: None,
            deadline: Box::pin(tokio::time::sleep(Duration::from_secs(3600))),
        }
    }

    /// Sends request `which` and reads its whole response (the engine's `Session`).
    pub(crate) async fn exchange(
        &mut self,
        which: usize,
        counts: &ConnectionCounts,
        now: Instant,
    ) -> Exchange {
        self.deadline
            .as_mut()
            .reset((now + self.target.timeout).into());
        let mut opened = None;
        let mut outcome = self.attempt(which, counts, &mut opened).await;
        if let Err(Miss::Unprocessed) = outcome {
            outcome = self.attempt(which, counts, &mut opened).await;
        }
        self.lane.completed.fetch_add(1, Relaxed);
        let (failure, bytes) = match outcome {
            Ok(done) => done,
            Err(Miss::Unprocessed) => (Some(Failure::GoAway), 0),
            Err(Miss::Failed(failure) | Miss::Broken(failure)) => (Some(failure), 0),
        };
        Exchange {
            failure,
            bytes,
            opened,
        }
    }

    async fn attempt(
        &mut self,
        which: usize,
        counts: &ConnectionCounts,
        opened: &mut Option<Opened>,
    ) -> Result<(Option<Failure>, u64), Miss> {
        if self.live.as_ref().is_none_or(|l| l.closed.load(Relaxed)) {
            self.live = None;
            let (live, fresh) = tokio::select! {
                biased;
                got = self.lane.clone().connection(&self.target, counts) => got,
                _ = self.deadline.as_mut() => return Err(Miss::Failed(Failure::ConnectTimeout)),
            }
            .map_err(Miss::Failed)?;
            *opened = fresh.or(*opened);
            self.live = Some(live);
        }
        let Some(live) = self.live.as_mut() else {
            return Err(Miss::Failed(Failure::Other));
        };
        let request = &self.target.requests[which];
        let grpc = self.target.grpc;
        let (lane, deadline) = (&self.lane, &mut self.deadline);
        let outcome = tokio::select! {
            biased;
            outcome = send(live, request, lane, grpc) => outcome,
            _ = deadline.as_mut() => Err(Miss::Failed(Failure::RequestTimeout)),
        };
        match outcome {
            Err(Miss::Unprocessed) => {
                live.closed.store(true, Relaxed);
                self.live = None;
                outcome
            }
            Err(Miss::Broken(failure)) => {
                // The connection's own end says whether the server sent a GOAWAY first (with
                // an error code, then closed): that is why this stream ended.
                let mut ended = live.ended.clone();
                let goaway = tokio::select! {
                    biased;
                    end = ended.wait_for(Option::is_some) => end.is_ok_and(|end| *end == Some(true)),
                    _ = self.deadline.as_mut() => false,
                };
                Err(Miss::Failed(if goaway { Failure::GoAway } else { failure }))
            }
            outcome => outcome,
        }
    }
}

/// Sends one request on `live` and reads the whole response: the failure (none for a 2xx) and
/// the body's bytes.
async fn send(
    live: &mut Live,
    request: &H2Request,
    lane: &Lane,
    grpc: bool,
) -> Result<(Option<Failure>, u64), Miss> {
    std::future::poll_fn(|cx| live.send.poll_ready(cx))
        .await
        .map_err(|e| miss(&e, true))?;
    let end_of_stream = request.body.is_empty();
    let (response, mut body_out) = live
        .send
        .send_request(request.build(), end_of_stream)
        .map_err(|e| miss(&e, true))?;
    let in_flight = lane.in_flight.fetch_add(1, Relaxed) + 1;
    lane.max_in_flight.fetch_max(in_flight, Relaxed);
    let _in_flight = InFlight {
        lane,
        sent: Instant::now(),
    };
    if !end_of_stream {
        body_out
            .send_data(request.body.clone(), true)
            .map_err(|e| miss(&e, false))?;
    }
    let response = response.await.map_err(|e| miss(&e, false))?;
    let status = response.status().as_u16();
    // A Trailers-Only gRPC response carries its status in the one HEADERS frame.
    let in_headers = grpc
        .then(|| response.headers().get(GRPC_STATUS).cloned())
        .flatten();
    let mut body = response.into_body();
    let (mut received, mut unreleased) = (0u64, 0usize);
    while !body.is_end_stream() {
        let Some(chunk) = body.data().await else {
            break;
        };
        let chunk = chunk.map_err(|e| miss(&e, false))?;
        received += chunk.len() as u64;
        // h2 gives a finished stream's window back to the connection when the stream is
        // dropped: a body is released as it comes only when it would fill half the window
        // (a lock taken per chunk saved on small responses).
        unreleased += chunk.len();
        if unreleased > (WINDOW / 2) as usize {
            let _ = body.flow_control().release_capacity(unreleased);
            unreleased = 0;
        }
    }
    if grpc {
        let trailers = match in_headers {
            Some(_) => None,
            None => body.trailers().await.map_err(|e| miss(&e, false))?,
        };
        let grpc_status = in_headers.or_else(|| trailers.as_ref()?.get(GRPC_STATUS).cloned());
        return Ok((grpc_outcome(status, grpc_status.as_ref()), received));
    }
    let failure = (!(200..300).contains(&status)).then_some(Failure::Status(status));
    Ok((failure, received))
}

/// The `content-type` of a gRPC request whose messages are protobuf.
const GRPC_CONTENT_TYPE: &str = "application/grpc";

const GRPC_STATUS: http::HeaderName = http::HeaderName::from_static("grpc-status");

/// How a gRPC call ended, from its HTTP status and its `grpc-status` (none: it succeeded). A
/// non-200 HTTP status (a proxy's 502, a server that is not gRPC's 404) stays the HTTP kind:
/// gRPC's clients would turn it into a code (grpc/grpc `doc/http-grpc-status-mapping.md`: 502,
/// 503 and 504 all UNAVAILABLE), the HTTP status says more. Then a missing or unreadable
/// `grpc-status` is a kind of its own.
fn grpc_outcome(http_status: u16, grpc_status: Option<&http::HeaderValue>) -> Option<Failure> {
    if http_status != 200 {
        return Some(Failure::Status(http_status));
    }
    let code = grpc_status
        .and_then(|value| value.to_str().ok())
        .and_then(|text| text.trim().parse::<u32>().ok());
    match code {
        None => Some(Failure::GrpcNoStatus),
        Some(0) => None,
        Some(code) => Some(Failure::Grpc(code)),
    }
}

/// Counts a stream out of its lane's in-flight figures however its exchange ends.
struct InFlight<'a> {
    lane: &'a Lane,
    sent: Instant,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.lane.in_flight.fetch_sub(1, Relaxed);
        let us = self.sent.elapsed().as_micros() as u64;
        self.lane.stream_us.fetch_add(us, Relaxed);
    }
}

/// The failure kind of a stream's error; `before_sending` when the request had not left yet
/// (the connection was already going away or gone: not processed).
fn miss(error: &h2::Error, before_sending: bool) -> Miss {
    let graceful = error.is_go_away() && error.reason() == Some(Reason::NO_ERROR);
    if graceful || (before_sending && (error.is_go_away() || error.is_io())) {
        return Miss::Unprocessed;
    }
    if let Some(io) = error.get_io() {
        return Miss::Broken(classify(io));
    }
    Miss::Failed(
        if error.reason() == Some(Reason::REFUSED_STREAM) && error.is_reset() {
            Failure::RefusedStream
        } else if error.is_go_away() {
            Failure::GoAway
        } else if error.is_reset() {
            Failure::Reset
        } else {
            Failure::Protocol
        },
    )
}

impl Lane {
    /// The lane's connection, opening one if it has none (or its last one ended): the handle,
    /// and what opening took when this call opened it.
    async fn connection(
        self: Arc<Lane>,
        target: &H2Target,
        counts: &ConnectionCounts,
    ) -> Result<(Live, Option<Opened>), Failure> {
        let mut current = self.current.lock().await;
        if let Some(live) = current.as_ref().filter(|l| !l.closed.load(Relaxed)) {
            return Ok((live.clone(), None));
        }
        *current = None;
        let started = Instant::now();
        let tcp = TcpStream::connect(target.addr)
            .await
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::ConnectionRefused => Failure::ConnectRefused,
                std::io::ErrorKind::TimedOut => Failure::ConnectTimeout,
                _ => Failure::Other,
            })?;
        let _ = tcp.set_nodelay(true);
        counts.opened.fetch_add(1, Relaxed);
        let connect = started.elapsed();
        let (live, handshake) = match &target.tls {
            None => (self.handshake(tcp).await?, None),
            Some(tls) => {
                let stream = tls.open(tcp).await.map_err(|_| Failure::Tls)?;
                if stream.get_ref().1.alpn_protocol() != Some(b"h2") {
                    return Err(Failure::Protocol);
                }
                counts.handshakes.fetch_add(1, Relaxed);
                let handshake = started.elapsed() - connect;
                (self.handshake(stream).await?, Some(handshake))
            }
        };
        *current = Some(live.clone());
        Ok((live, Some(Opened { connect, handshake })))
    }

    /// The HTTP/2 handshake on `io`; the connection is driven by a task of the current runtime
    /// until it ends, which marks it closed and counts a `GOAWAY` that ended it.
    async fn handshake<S>(self: &Arc<Lane>, io: S) -> Result<Live, Failure>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let (send, mut connection) = builder()
            .handshake::<S, Bytes>(io)
            .await
            .map_err(|_| Failure::Protocol)?;
        let mut ping = connection.ping_pong().ok_or(Failure::Other)?;
        self.opened.fetch_add(1, Relaxed);
        let closed = Arc::new(AtomicBool::new(false));
        let (tell_end, ended) = tokio::sync::watch::channel(None);
        let (lane, closing) = (self.clone(), closed.clone());
        tokio::spawn(async move {
            let goaway = match connection.await {
                // Ends cleanly only after the server's graceful GOAWAY (we never close first).
                Ok(()) => true,
                Err(e) => e.is_go_away() && e.is_remote(),
            };
            if goaway {
                lane.goaways.fetch_add(1, Relaxed);
            }
            closing.store(true, Relaxed);
            let _ = tell_end.send(Some(goaway));
        });
        // The server's SETTINGS come before its answer to a PING: once it answers, its stream
        // limit is known, and the streams about to start are not refused for having raced it
        // (as a gRPC channel waits for the server's preface).
        ping.ping(h2::Ping::opaque())
            .await
            .map_err(|_| Failure::Protocol)?;
        Ok(Live {
            send,
            closed,
            ended,
        })
    }
}

fn builder() -> h2::client::Builder {
    let mut builder = h2::client::Builder::new();
    builder
        .initial_window_size(WINDOW)
        .initial_connection_window_size(WINDOW)
        .enable_push(false);
    builder
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grpc_call_ends_as_its_http_status_then_its_grpc_status_say() {
        let value = |text: &'static str| Some(http::HeaderValue::from_static(text));
        // (HTTP status, grpc-status, the failure)
        let table = [
            (200, value("0"), None),
            (200, value("14"), Some(Failure::Grpc(14))),
            (200, value(" 4"), Some(Failure::Grpc(4))),
            // No status at all (trailers missing), or one that is not a number.
            (200, None, Some(Failure::GrpcNoStatus)),
            (200, value("OK"), Some(Failure::GrpcNoStatus)),
            // A non-200 HTTP status wins over whatever grpc-status came with it.
            (503, value("0"), Some(Failure::Status(503))),
            (404, None, Some(Failure::Status(404))),
        ];
        for (http_status, grpc_status, failure) in table {
            assert_eq!(
                grpc_outcome(http_status, grpc_status.as_ref()),
                failure,
                "{http_status} {grpc_status:?}"
            );
        }
        assert_eq!(Failure::Grpc(14).name(), "grpc_unavailable");
        assert_eq!(Failure::GrpcNoStatus.name(), "grpc_no_status");
    }
}
