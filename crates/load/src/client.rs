//! One client's connection and its request/response exchanges, with failures classified.
//!
//! A minimal HTTP/1.1 client on a tokio `TcpStream`, as wrk does it: the request is rendered
//! once per run ([`render`]) and written as is; the response head is parsed with
//! `httparse` in place, and the body (content-length, chunked, or up to the close) is counted and
//! discarded. Per request that is one write, usually one read, no allocation and no timer
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
use crate::tls::Connect;
use bytes::{BufMut, Bytes, BytesMut};
use http::{header, HeaderName, HeaderValue, Method, Uri};
use std::io::ErrorKind;
use std::mem::MaybeUninit;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
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
}

/// One request as it is sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The whole request: request line, headers, body.
    pub bytes: Bytes,
    /// HEAD: responses carry no body whatever their headers say.
    pub head: bool,
}

/// Renders a request as every exchange sends it: the Host header, `Connection: close` without
/// keep-alive, Content-Length when there is a body (or the method expects one), then the user's
/// headers in order.
pub fn render(
    method: &Method,
    path: &Uri,
    host: &str,
    user: &[(String, String)],
    keepalive: bool,
    body: &Bytes,
) -> Result<Request, String> {
    let host_value = HeaderValue::from_str(host)
        .map_err(|_| format!("the host '{host}' cannot be sent as a Host header"))?;
    let mut out = BytesMut::with_capacity(128 + body.len());
    let line = |out: &mut BytesMut, name: &[u8], value: &[u8]| {
        out.put_slice(name);
        out.put_slice(b": ");
        out.put_slice(value);
        out.put_slice(b"\r\n");
    };
    out.put_slice(method.as_str().as_bytes());
    out.put_u8(b' ');
    out.put_slice(path.to_string().as_bytes());
    out.put_slice(b" HTTP/1.1\r\n");
    line(&mut out, b"host", host_value.as_bytes());
    if !keepalive {
        line(&mut out, b"connection", b"close");
    }
    if !body.is_empty() || matches!(*method, Method::POST | Method::PUT | Method::PATCH) {
        line(
            &mut out,
            b"content-length",
            body.len().to_string().as_bytes(),
        );
    }
    for (name, value) in user {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("'{name}' is not a valid header name"))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| format!("the value of header '{name}' is not valid"))?;
        line(&mut out, name.as_str().as_bytes(), value.as_bytes());
    }
    out.put_slice(b"\r\n");
    out.put_slice(body);
    Ok(Request {
        bytes: out.freeze(),
        head: *method == Method::HEAD,
    })
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
            Err(Attempt::ClosedEarly) if reused => {
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
        let tcp = tokio::select! {
            biased;
            connected = TcpStream::connect(target.addr) => connected,
            _ = self.deadline.as_mut() => return Err(Attempt::Failed(Failure::ConnectTimeout)),
        };
        let tcp = match tcp {
            Ok(tcp) => tcp,
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                return Err(Attempt::Failed(Failure::ConnectRefused))
            }
            Err(e) if e.kind() == ErrorKind::TimedOut => {
                return Err(Attempt::Failed(Failure::ConnectTimeout))
            }
            Err(_) => return Err(Attempt::Failed(Failure::Other)),
        };
        let _ = tcp.set_nodelay(true);
        counts.opened.fetch_add(1, Ordering::Relaxed);
        let connected = Instant::now();
        let connect = connected - started;
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

/// The most response-head bytes accepted (hyper's default is about as large).
const MAX_HEAD: usize = 64 * 1024;
/// How many headers a response may have.
const MAX_HEADERS: usize = 100;
/// The read buffer starts this small (10,000 idle clients must stay cheap) and doubles, up to
/// `MAX_BUFFER`, whenever a read fills it.
const FIRST_BUFFER: usize = 4 * 1024;
const MAX_BUFFER: usize = 256 * 1024;

/// Bytes read from the connection and not consumed yet: `data[start..end]`.
#[derive(Default)]
struct Inbox {
    data: Vec<u8>,
    start: usize,
    end: usize,
}

/// Why reading a response stopped.
enum ReadEnd {
    /// End of stream.
    Closed,
    Io(std::io::Error),
}

impl Inbox {
    fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    fn pending(&self) -> &[u8] {
        &self.data[self.start..self.end]
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        if self.start == self.end {
            self.clear();
        }
    }

    /// Reads more bytes after the pending ones. The buffer grows only while a head, a chunk-size
    /// line or trailers (each bounded) fill it, and after full reads, up to `MAX_BUFFER`.
    async fn fill<S: AsyncRead + Unpin>(&mut self, stream: &mut S) -> Result<usize, ReadEnd> {
        if self.end == self.data.len() {
            if self.start > 0 {
                self.data.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else {
                let size = (self.data.len() * 2).max(FIRST_BUFFER);
                self.data.resize(size, 0);
            }
        }
        match stream.read(&mut self.data[self.end..]).await {
            Ok(0) => Err(ReadEnd::Closed),
            Ok(n) => {
                self.end += n;
                if self.end == self.data.len() && self.data.len() < MAX_BUFFER {
                    // A full read: a large response; read it in bigger pieces.
                    self.data.resize(self.data.len() * 2, 0);
                }
                Ok(n)
            }
            Err(e) => Err(ReadEnd::Io(e)),
        }
    }

    /// Consumes `n` bytes, reading (and discarding) what is not here yet.
    async fn skip<S: AsyncRead + Unpin>(
        &mut self,
        stream: &mut S,
        mut n: u64,
    ) -> Result<(), ReadEnd> {
        loop {
            let here = (self.end - self.start) as u64;
            if here >= n {
                self.consume(n as usize);
                return Ok(());
            }
            n -= here;
            self.clear();
            self.fill(stream).await?;
        }
    }
}

/// The framing of a response body.
enum Body {
    None,
    Length(u64),
    Chunked,
    UntilClose,
}

/// What the head of a response says.
struct Head {
    status: u16,
    length: usize,
    body: Body,
    keep_alive: bool,
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
        Body::Chunked => received += read_chunked(stream, inbox).await?,
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

/// Parses a response head at the start of `bytes`: `None` while it is incomplete.
fn parse_head(bytes: &[u8], head_request: bool) -> Result<Option<Head>, Failure> {
    if bytes.is_empty() {
        return Ok(None);
    }
    let mut headers = [const { MaybeUninit::<httparse::Header>::uninit() }; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut []);
    let length = match httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut response,
        bytes,
        &mut headers,
    ) {
        Ok(httparse::Status::Complete(length)) => length,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(Failure::Protocol),
    };
    let status = response.code.unwrap_or(0);
    let mut keep_alive = response.version == Some(1);
    let mut content_length = None;
    let mut chunked = false;
    let mut transfer_encoding = false;
    for h in response.headers.iter() {
        let name = h.name.as_bytes();
        if name.eq_ignore_ascii_case(header::CONTENT_LENGTH.as_str().as_bytes()) {
            let parsed = std::str::from_utf8(h.value)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .ok_or(Failure::Protocol)?;
            if content_length.is_some_and(|known| known != parsed) {
                return Err(Failure::Protocol);
            }
            content_length = Some(parsed);
        } else if name.eq_ignore_ascii_case(header::TRANSFER_ENCODING.as_str().as_bytes()) {
            transfer_encoding = true;
            // Chunked must be the last coding; only then is the body's end known.
            chunked = last_token(h.value).eq_ignore_ascii_case(b"chunked");
        } else if name.eq_ignore_ascii_case(header::CONNECTION.as_str().as_bytes()) {
            for token in h.value.split(|b| *b == b',') {
                let token = token.trim_ascii();
                if token.eq_ignore_ascii_case(b"close") {
                    keep_alive = false;
                } else if token.eq_ignore_ascii_case(b"keep-alive") {
                    keep_alive = true;
                }
            }
        }
    }
    let body = if head_request || (100..200).contains(&status) || status == 204 || status == 304 {
        Body::None
    } else if transfer_encoding {
        if chunked {
            Body::Chunked
        } else {
            Body::UntilClose
        }
    } else {
        match content_length {
            Some(0) => Body::None,
            Some(n) => Body::Length(n),
            None => Body::UntilClose,
        }
    };
    Ok(Some(Head {
        status,
        length,
        body,
        keep_alive: keep_alive && status != 101,
    }))
}

fn last_token(value: &[u8]) -> &[u8] {
    value
        .rsplit(|b| *b == b',')
        .next()
        .unwrap_or_default()
        .trim_ascii()
}

/// Reads a chunked body to its end (trailers included); returns the bytes it took.
async fn read_chunked<S: AsyncRead + Unpin>(
    stream: &mut S,
    inbox: &mut Inbox,
) -> Result<u64, Attempt> {
    let failed = |end: ReadEnd| match end {
        ReadEnd::Closed => Attempt::Failed(Failure::Reset),
        ReadEnd::Io(e) => Attempt::Failed(classify(&e)),
    };
    let mut received = 0u64;
    loop {
        let size = match httparse::parse_chunk_size(inbox.pending()) {
            Ok(httparse::Status::Complete((length, size))) => {
                inbox.consume(length);
                received += length as u64;
                size
            }
            Ok(httparse::Status::Partial) if inbox.pending().len() < 1024 => {
                inbox.fill(stream).await.map_err(failed)?;
                continue;
            }
            _ => return Err(Attempt::Failed(Failure::Protocol)),
        };
        if size == 0 {
            break;
        }
        inbox.skip(stream, size).await.map_err(failed)?;
        while inbox.pending().len() < 2 {
            inbox.fill(stream).await.map_err(failed)?;
        }
        if &inbox.pending()[..2] != b"\r\n" {
            return Err(Attempt::Failed(Failure::Protocol));
        }
        inbox.consume(2);
        received += size + 2;
    }
    // Trailer lines up to the empty line.
    loop {
        match inbox.pending().windows(2).position(|w| w == b"\r\n") {
            Some(at) => {
                inbox.consume(at + 2);
                received += at as u64 + 2;
                if at == 0 {
                    return Ok(received);
                }
            }
            None if inbox.pending().len() >= MAX_HEAD => {
                return Err(Attempt::Failed(Failure::Protocol))
            }
            None => {
                inbox.fill(stream).await.map_err(failed)?;
            }
        }
    }
}

/// The failure kind of an I/O error on an established connection.
fn classify(error: &std::io::Error) -> Failure {
    match error.kind() {
        ErrorKind::ConnectionReset
        | ErrorKind::ConnectionAborted
        | ErrorKind::BrokenPipe
        | ErrorKind::UnexpectedEof
        | ErrorKind::NotConnected => Failure::Reset,
        ErrorKind::TimedOut => Failure::RequestTimeout,
        ErrorKind::InvalidData => Failure::Protocol,
        _ => Failure::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(bytes: &str) -> Head {
        parse_head(bytes.as_bytes(), false).unwrap().unwrap()
    }

    #[test]
    fn requests_are_rendered_once_with_their_headers() {
        let request = render(
            &Method::POST,
            &"/a?b=1".parse().unwrap(),
            "h:1",
            &[("X-One".into(), "1".into())],
            false,
            &Bytes::from_static(b"hi"),
        )
        .unwrap();
        assert_eq!(
            request.bytes,
            "POST /a?b=1 HTTP/1.1\r\nhost: h:1\r\nconnection: close\r\ncontent-length: 2\r\n\
             x-one: 1\r\n\r\nhi"
        );
        let get = render(
            &Method::GET,
            &"/".parse().unwrap(),
            "h",
            &[],
            true,
            &Bytes::new(),
        )
        .unwrap();
        assert_eq!(get.bytes, "GET / HTTP/1.1\r\nhost: h\r\n\r\n");
        assert!(!get.head);
    }

    #[test]
    fn heads_say_how_the_body_ends_and_whether_to_keep_the_connection() {
        let h = head("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n");
        assert!(matches!(h.body, Body::Length(3)) && h.keep_alive && h.status == 200);
        assert_eq!(h.length, 38);
        let h = head("HTTP/1.1 503 X\r\ntransfer-encoding: gzip, chunked\r\n\r\n");
        assert!(matches!(h.body, Body::Chunked) && h.status == 503);
        let h = head("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
        assert!(matches!(h.body, Body::UntilClose) && !h.keep_alive);
        let h = head("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n");
        assert!(matches!(h.body, Body::None) && !h.keep_alive);
        let h = head("HTTP/1.0 204 OK\r\nConnection: Keep-Alive\r\n\r\n");
        assert!(matches!(h.body, Body::None) && h.keep_alive);
        let head_only = parse_head(b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\n", true);
        assert!(matches!(
            head_only,
            Ok(Some(Head {
                body: Body::None,
                ..
            }))
        ));
        assert!(matches!(
            parse_head(b"HTTP/1.1 200 OK\r\nconte", false),
            Ok(None)
        ));
        for bad in [
            "SSH-2.0-nonsense\r\n\r\n",
            "HTTP/1.1 200 OK\r\ncontent-length: x\r\n\r\n",
            "HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n",
        ] {
            assert!(
                matches!(parse_head(bad.as_bytes(), false), Err(Failure::Protocol)),
                "{bad}"
            );
        }
    }

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
