//! One HTTP/1.1 connection: hyper serving it, the keep-alive timeout, and the dispatch of each
//! request to the admin API ([`crate::admin`]) or to the stubs ([`crate::respond`]). A
//! connection that opened with the HTTP/2 preface, or chose `h2` by ALPN over TLS, goes to
//! [`crate::h2`] instead.
use crate::activity::Activity;
use crate::body::{Hold, MockBody};
use crate::faults::{FaultSwitch, FaultyStream};
use crate::state::MockState;
use crate::tls::MockTls;
use crate::{admin, h2, respond};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;

/// Whether a path is the mock's own (admin, stats, metrics) rather than downstream traffic.
pub(crate) fn is_admin_path(path: &str) -> bool {
    path == "/metrics" || path.starts_with("/__admin") || path.starts_with("/__chokepoint")
}

/// Serves HTTP/1.1 on an accepted connection until the client closes it (or it stays idle
/// longer than the keep-alive timeout); over TLS after the handshake when `tls` is given.
/// HTTP/2 instead when the connection opened with its preface (`h2_preface`) or, over TLS,
/// when the client chose `h2` by ALPN.
pub(crate) async fn serve_http(
    stream: TcpStream,
    state: Arc<MockState>,
    tls: Option<MockTls>,
    h2_preface: bool,
) {
    let fault = Arc::new(FaultSwitch::default());
    let faulty = FaultyStream::new(stream, Arc::clone(&fault));
    match tls {
        None if h2_preface => h2::serve(TokioIo::new(faulty), state).await,
        None => serve_io(TokioIo::new(faulty), state, fault).await,
        Some(tls) => {
            // A client that fails the handshake (an untrusted certificate) just goes away.
            if let Ok(stream) = tls.acceptor.accept(faulty).await {
                if stream.get_ref().1.alpn_protocol() == Some(b"h2") {
                    h2::serve(TokioIo::new(stream), state).await;
                } else {
                    serve_io(TokioIo::new(stream), state, fault).await;
                }
            }
        }
    }
}

async fn serve_io<I>(io: TokioIo<I>, state: Arc<MockState>, fault: Arc<FaultSwitch>)
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let activity = Activity::new();
    let timeout = state.keepalive_timeout();
    let service_activity = Arc::clone(&activity);
    let service = hyper::service::service_fn(move |request| {
        handle(
            Arc::clone(&state),
            Arc::clone(&service_activity),
            Arc::clone(&fault),
            request,
        )
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        // Head and body copied into one buffer and sent with one write(2), rather than writev(2)
        // of two slices: a little less CPU per request for the small bodies stubs usually have.
        .writev(false)
        .serve_connection(io, service);
    tokio::pin!(connection);
    match timeout {
        None => {
            let _ = connection.await;
        }
        Some(timeout) => {
            until_idle_for(connection, &activity, timeout, |connection| {
                connection.graceful_shutdown()
            })
            .await
        }
    }
}

/// Runs `connection` until it ends, asking it to close (`graceful_shutdown`) once no request
/// has been in progress on it for `timeout`: the keep-alive timeout, for either protocol.
pub(crate) async fn until_idle_for<C: Future>(
    mut connection: Pin<&mut C>,
    activity: &Activity,
    timeout: Duration,
    mut graceful_shutdown: impl FnMut(Pin<&mut C>),
) {
    let mut check_at = tokio::time::Instant::now() + timeout;
    let mut closing = false;
    loop {
        tokio::select! {
            _ = connection.as_mut() => break,
            _ = tokio::time::sleep_until(check_at), if !closing => {
                match activity.idle_since() {
                    Some(since) if since.elapsed() >= timeout => {
                        graceful_shutdown(connection.as_mut());
                        closing = true;
                    }
                    Some(since) => check_at = tokio::time::Instant::from_std(since + timeout),
                    None => check_at = tokio::time::Instant::now() + timeout,
                }
            }
        }
    }
}

async fn handle(
    state: Arc<MockState>,
    activity: Arc<Activity>,
    fault: Arc<FaultSwitch>,
    request: hyper::Request<Incoming>,
) -> Result<hyper::Response<MockBody>, Infallible> {
    let activity = activity.begin();
    if is_admin_path(request.uri().path()) {
        let mut response = admin::handle(&state, request).await;
        response.body_mut().hold(Hold::new(None, activity));
        return Ok(response);
    }
    Ok(respond::respond(&state, &fault, None, activity, request).await)
}
