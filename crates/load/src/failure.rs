//! Why a request failed: the kinds the client tells apart, named as the JSON names them.
//!
//! The client classifies each failed exchange into a [`Failure`]; the recorder counts them by kind
//! and the report carries their names ([`chokepoint_result::error_kind`]).
use chokepoint_result::error_kind;

/// Why a request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Failure {
    /// TCP connect refused.
    ConnectRefused,
    /// TCP connect did not complete in time.
    ConnectTimeout,
    /// The response did not complete in time.
    RequestTimeout,
    /// Reset, or closed before a complete response.
    Reset,
    /// The TLS handshake failed (a certificate not trusted, no common protocol, ...).
    Tls,
    /// Not HTTP/1.1.
    Protocol,
    /// Anything else.
    Other,
    /// HTTP/2: the server reset the stream with `REFUSED_STREAM` (it did not process it, most
    /// often because the connection's concurrent streams were at the server's limit).
    RefusedStream,
    /// HTTP/2: a `GOAWAY` ended the stream (an error `GOAWAY`, or a graceful one twice in a row).
    GoAway,
    /// A complete response with a non-2xx status.
    Status(u16),
    /// gRPC: the call ended with this non-zero `grpc-status`.
    Grpc(u32),
    /// gRPC: a response with HTTP status 200 but no `grpc-status` (or one that is not a number).
    GrpcNoStatus,
}

impl Failure {
    /// The kind's name in [`chokepoint_result::ErrorCounts`].
    pub fn name(self) -> String {
        match self {
            Failure::ConnectRefused => error_kind::CONNECT_REFUSED.into(),
            Failure::ConnectTimeout => error_kind::CONNECT_TIMEOUT.into(),
            Failure::RequestTimeout => error_kind::REQUEST_TIMEOUT.into(),
            Failure::Reset => error_kind::RESET.into(),
            Failure::Tls => error_kind::TLS.into(),
            Failure::Protocol => error_kind::PROTOCOL.into(),
            Failure::Other => error_kind::OTHER.into(),
            Failure::RefusedStream => error_kind::REFUSED_STREAM.into(),
            Failure::GoAway => error_kind::GOAWAY.into(),
            Failure::Status(code) => error_kind::http_status(code),
            Failure::Grpc(code) => error_kind::grpc_status(code),
            Failure::GrpcNoStatus => error_kind::GRPC_NO_STATUS.into(),
        }
    }
}
