//! One HTTP/2 connection: h2c on the plain port (the client opened with the preface, prior
//! knowledge) or h2 chosen by ALPN on the HTTPS port. hyper's HTTP/2 server (the `h2` crate)
//! serves it; each stream is a request, dispatched as on HTTP/1.1 to the admin API or to the
//! stubs, and counted in flight on its own (and on its connection's [`StreamCount`]). A gRPC
//! stub's answer is framed as gRPC's ([`crate::grpc`]).
//!
//! `--max-concurrent-streams N` is advertised as SETTINGS_MAX_CONCURRENT_STREAMS and enforced
//! by `h2`: a stream opened beyond it is refused with RST_STREAM(REFUSED_STREAM), so a
//! well-behaved client queues its calls, inside itself, behind the N it has open. Without it no
//! limit is advertised, so that the mock is never the bottleneck.
//!
//! A stub's fault cannot be played at the socket here, which all the connection's other
//! streams share: every fault resets its own stream (RST_STREAM(INTERNAL_ERROR)) once the
//! stub's delay has passed, and the other streams go on.
use crate::activity::Activity;
use crate::body::{Hold, MockBody};
use crate::connection::{is_admin_path, until_idle_for};
use crate::faults::FaultSwitch;
use crate::inflight::StreamCount;
use crate::state::MockState;
use crate::{admin, grpc, respond};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::sync::Arc;

/// Serves HTTP/2 on `io` until the client closes it (or it stays idle longer than the
/// keep-alive timeout, when the mock sends GOAWAY).
pub(crate) async fn serve<I>(io: TokioIo<I>, state: Arc<MockState>)
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let _h2 = state.meter.h2_connection_opened();
    let activity = Activity::new();
    let streams = StreamCount::new();
    let timeout = state.keepalive_timeout();
    let mut builder = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
    builder.max_concurrent_streams(state.max_concurrent_streams());
    let service_activity = Arc::clone(&activity);
    let service = hyper::service::service_fn(move |request| {
        stream(
            Arc::clone(&state),
            Arc::clone(&service_activity),
            Arc::clone(&streams),
            request,
        )
    });
    let connection = builder.serve_connection(io, service);
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

/// HTTP/2 carries the host in `:authority`, which hyper keeps in the URI: a `Host` header made
/// from it lets stubs match and templates read `request.headers.host` as over HTTP/1.1 (as
/// WireMock's Jetty does).
fn with_host_header(request: &mut hyper::Request<Incoming>) {
    if request.headers().contains_key(http::header::HOST) {
        return;
    }
    let host = request
        .uri()
        .authority()
        .and_then(|authority| http::HeaderValue::from_str(authority.as_str()).ok());
    if let Some(host) = host {
        request.headers_mut().insert(http::header::HOST, host);
    }
}

/// A stub's fault, played on an HTTP/2 stream as a reset of that stream.
#[derive(Debug)]
struct FaultPlayed;

impl std::fmt::Display for FaultPlayed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the stub's fault resets the stream")
    }
}

impl std::error::Error for FaultPlayed {}

/// One stream: the admin API, or the stubs; `Err` makes hyper reset the stream.
async fn stream(
    state: Arc<MockState>,
    activity: Arc<Activity>,
    streams: Arc<StreamCount>,
    request: hyper::Request<Incoming>,
) -> Result<hyper::Response<MockBody>, FaultPlayed> {
    let activity = activity.begin();
    let mut request = request;
    with_host_header(&mut request);
    if is_admin_path(request.uri().path()) {
        let mut response = admin::handle(&state, request).await;
        response.body_mut().hold(Hold::new(None, activity));
        return Ok(response);
    }
    let fault = FaultSwitch::default();
    let call_path = request.uri().path().to_string();
    let grpc_call = grpc::is_grpc(request.headers());
    let mut response = respond::respond(&state, &fault, Some(&streams), activity, request).await;
    if fault.take() {
        return Err(FaultPlayed);
    }
    let schema = state.grpc_schema.as_deref().filter(|_| grpc_call);
    grpc::answer_as_grpc(&mut response, schema.map(|s| (s, call_path.as_str())));
    Ok(response)
}
