//! What a run settles before the first request: the server's address, a check that it answers
//! (and, over TLS, that its certificate is trusted), and the requests rendered once.
use crate::request::{render, Request};
use crate::tls::{certificate_problem, Connect, Trust};
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
    let late = || {
        LoadError::Unreachable(format!(
            "{addr} did not accept a connection within {timeout:?}: check the service or the URL"
        ))
    };
    let tcp = match tokio::time::timeout(timeout, tokio::net::TcpStream::connect(addr)).await {
        Ok(Ok(tcp)) => tcp,
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            return Err(LoadError::Unreachable(format!(
                "nothing listens on {addr} (connection refused): start the service or fix the URL"
            )))
        }
        Ok(Err(e)) => {
            return Err(LoadError::Unreachable(format!(
                "cannot connect to {addr} ({e}): start the service or fix the URL"
            )))
        }
        Err(_) => return Err(late()),
    };
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
