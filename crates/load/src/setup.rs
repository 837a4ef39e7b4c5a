//! What a run settles before the first request: the server's address, a check that it answers
//! (and, over TLS, that its certificate is trusted; with `--http2`, that it speaks HTTP/2), and
//! the requests rendered once.
use crate::request::{render, Request};
use crate::tls::{certificate_problem, Connect, Tls, Trust};
use crate::{LoadConfig, LoadError, ParsedUrl};
use std::net::SocketAddr;
use std::time::Duration;

/// The preflight's plain connection, for the first client that connects.
#[derive(Debug)]
pub struct Spare {
    /// The connected socket, non-blocking.
    pub stream: std::net::TcpStream,
    /// What its TCP connect took.
    pub connect: Duration,
}

/// The first address the URL's host resolves to.
pub(crate) async fn resolve(parsed: &ParsedUrl) -> Result<SocketAddr, LoadError> {
    let unresolved = |why: String| {
        LoadError::Unreachable(format!(
            "cannot resolve host '{}' ({why}): fix the URL",
            parsed.host
        ))
    };
    let mut addrs = tokio::net::lookup_host((parsed.host.as_str(), parsed.port))
        .await
        .map_err(|e| unresolved(e.to_string()))?;
    addrs.next().ok_or_else(|| unresolved("no address".into()))
}

/// One connection opened as the run's clients will open theirs: nothing listening, or a
/// certificate that is not trusted, is one error before the run instead of a run of failures.
/// A plain connection is handed on ([`Spare`]) so that `-c N` opens N connections, as wrk
/// does; a TLS one is closed (its session is bound to this runtime), and counted apart.
pub(crate) async fn preflight<C: Connect>(
    addr: SocketAddr,
    connect: &C,
    timeout: Duration,
    url: &str,
    trust: &Trust,
) -> Result<Option<Spare>, LoadError> {
    let started = std::time::Instant::now();
    let timeout = timeout.min(Duration::from_secs(10));
    let tcp = connect_first(addr, timeout).await?;
    if !C::TLS {
        let connect = started.elapsed();
        // A tokio socket is tied to the reactor that made it; the first client adopts it in its
        // own runtime from the std socket (left non-blocking).
        return Ok(tcp.into_std().ok().map(|stream| Spare { stream, connect }));
    }
    match tokio::time::timeout(timeout, connect.open(tcp)).await {
        Ok(Ok(_)) => Ok(None),
        Ok(Err(e)) => Err(match certificate_problem(&e, url, trust) {
            Some(problem) => LoadError::Certificate(problem),
            None => LoadError::Unreachable(format!(
                "the TLS handshake with {addr} failed ({e}): is it an https:// server? Use \
                 http:// for a plain one"
            )),
        }),
        Err(_) => Err(LoadError::Unreachable(format!(
            "{addr} did not complete a TLS handshake within {timeout:?}: is it an https:// \
             server? Use http:// for a plain one"
        ))),
    }
}

/// The first TCP connection of a run, within `timeout`; nothing listening is one line saying so.
pub(crate) async fn connect_first(
    addr: SocketAddr,
    timeout: Duration,
) -> Result<tokio::net::TcpStream, LoadError> {
    let late = || {
        LoadError::Unreachable(format!(
            "{addr} did not accept a connection within {timeout:?}: check the service or the URL"
        ))
    };
    match tokio::time::timeout(timeout, tokio::net::TcpStream::connect(addr)).await {
        Ok(Ok(tcp)) => Ok(tcp),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            Err(LoadError::Unreachable(format!(
                "nothing listens on {addr} (connection refused): start the service or fix the URL"
            )))
        }
        Ok(Err(e)) => Err(LoadError::Unreachable(format!(
            "cannot connect to {addr} ({e}): start the service or fix the URL"
        ))),
        Err(_) => Err(late()),
    }
}

/// The run's requests, each rendered once: the targets file's, or the one of the URL.
pub(crate) fn render_requests(
    config: &LoadConfig,
    parsed: &ParsedUrl,
) -> Result<Vec<Request>, LoadError> {
    if config.targets.is_empty() {
        let request = render(
            &config.method,
            &parsed.path,
            &parsed.authority,
            &config.headers,
            config.keepalive,
            &config.body,
        )
        .map_err(LoadError::Config)?;
        return Ok(vec![request]);
    }
    config
        .targets
        .iter()
        .map(|target| {
            let parsed = crate::parse_url(&target.url)?;
            let headers: Vec<(String, String)> = target
                .headers
                .iter()
                .chain(&config.headers)
                .cloned()
                .collect();
            render(
                &target.method,
                &parsed.path,
                &parsed.authority,
                &headers,
                config.keepalive,
                &target.body,
            )
            .map_err(|e| LoadError::Config(format!("{} {}: {e}", target.method, target.url)))
        })
        .collect()
}

/// `--http2`'s preflight: a connection that must speak HTTP/2, `h2` by ALPN over TLS or `h2c`
/// with prior knowledge, proven by a PING answered (no request is sent). A server that does
/// not is one line before the run (for `grpc`, saying a gRPC server would). Returns the server's `SETTINGS_MAX_CONCURRENT_STREAMS`
/// (`None`: no limit set).
pub(crate) async fn preflight_h2(
    addr: SocketAddr,
    tls: Option<&Tls>,
    timeout: Duration,
    url: &str,
    trust: &Trust,
    grpc: bool,
) -> Result<Option<u64>, LoadError> {
    let timeout = timeout.min(Duration::from_secs(10));
    let tcp = connect_first(addr, timeout).await?;
    let fix = match grpc {
        true => "a gRPC server speaks HTTP/2: is this the server's gRPC port?",
        false => "enable HTTP/2 on the server, or drop --http2",
    };
    let not_h2 =
        |why: String| LoadError::Config(format!("{url} does not speak HTTP/2 ({why}): {fix}"));
    let Some(tls) = tls else {
        return ping_h2(tcp, timeout).await.map_err(|why| {
            not_h2(format!(
                "no HTTP/2 answer to a cleartext h2c connection with prior knowledge: {why}"
            ))
        });
    };
    let stream = match tokio::time::timeout(timeout, tls.open(tcp)).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => {
            return Err(match certificate_problem(&e, url, trust) {
                Some(problem) => LoadError::Certificate(problem),
                None => LoadError::Unreachable(format!(
                    "the TLS handshake with {addr} failed ({e}): is it an https:// server? Use \
                     http:// for h2c"
                )),
            })
        }
        Err(_) => {
            return Err(LoadError::Unreachable(format!(
                "{addr} did not complete a TLS handshake within {timeout:?}: is it an https:// \
                 server? Use http:// for h2c"
            )))
        }
    };
    match stream.get_ref().1.alpn_protocol() {
        Some(b"h2") => {}
        Some(other) => {
            return Err(not_h2(format!(
                "its TLS handshake chose '{}' by ALPN, not h2",
                String::from_utf8_lossy(other)
            )))
        }
        None => return Err(not_h2("its TLS handshake chose no protocol by ALPN".into())),
    }
    ping_h2(stream, timeout)
        .await
        .map_err(|why| not_h2(format!("no HTTP/2 answer after ALPN h2: {why}")))
}

/// The HTTP/2 handshake on `io` and one PING answered within `timeout`: the server's
/// concurrent-stream limit, or why it did not answer as an HTTP/2 server.
async fn ping_h2<S>(io: S, timeout: Duration) -> Result<Option<u64>, String>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (send, mut connection) = h2::client::handshake(io).await.map_err(|e| e.to_string())?;
    let mut ping = connection.ping_pong().ok_or("no PING handle")?;
    let answered = tokio::time::timeout(timeout, async {
        tokio::select! {
            ended = &mut connection => Err(match ended {
                Ok(()) => "it closed the connection".to_string(),
                Err(e) => e.to_string(),
            }),
            pong = ping.ping(h2::Ping::opaque()) => pong.map_err(|e| e.to_string()),
        }
    })
    .await
    .map_err(|_| format!("no answer to a PING within {timeout:?}"))?;
    answered?;
    let limit = send.current_max_send_streams();
    Ok((limit != usize::MAX).then_some(limit as u64))
}
