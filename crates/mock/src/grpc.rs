//! gRPC stubs, over HTTP/2: a stub whose response `Content-Type` is `application/grpc` (or
//! `application/grpc+proto`) answers a unary call as a gRPC server does. Its body — the response
//! message as raw protobuf bytes, given as `base64Body` — is sent as one length-prefixed message,
//! and its `grpc-status` (default 0, OK) and `grpc-message` headers go in the trailers; a
//! non-zero status with no body is a Trailers-Only response (the status in the one HEADERS
//! frame). The stub matches as any other: `POST /package.Service/Method`, its delay on a timer.
//!
//! Not yet: the response message as JSON (it needs the method's descriptor set to encode it),
//! matching on the request message's fields, streaming methods, and a dribbled gRPC body (sent
//! raw, unframed).
use crate::body::MockBody;
use bytes::{BufMut, Bytes, BytesMut};
use http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue};

const GRPC_STATUS: HeaderName = HeaderName::from_static("grpc-status");
const GRPC_MESSAGE: HeaderName = HeaderName::from_static("grpc-message");

/// Turns a gRPC stub's response into gRPC's framing and trailers; any other is left alone.
pub(crate) fn answer_as_grpc(response: &mut hyper::Response<MockBody>) {
    let grpc = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/grpc"));
    if !grpc {
        return;
    }
    let Some(message) = response.body().whole() else {
        return;
    };
    let headers = response.headers_mut();
    headers.remove(CONTENT_LENGTH);
    let status = headers
        .remove(GRPC_STATUS)
        .unwrap_or(HeaderValue::from_static("0"));
    let status_message = headers.remove(GRPC_MESSAGE);
    let mut trailers = HeaderMap::new();
    trailers.insert(GRPC_STATUS, status);
    if let Some(text) = status_message {
        trailers.insert(GRPC_MESSAGE, text);
    }
    if message.is_empty() && trailers[&GRPC_STATUS] != "0" {
        headers.extend(trailers);
        return;
    }
    response.body_mut().replace_whole(frame(&message), trailers);
}

/// One gRPC message: not compressed (0), its length (u32, big-endian), its bytes.
fn frame(message: &[u8]) -> Bytes {
    let mut framed = BytesMut::with_capacity(5 + message.len());
    framed.put_u8(0);
    framed.put_u32(message.len() as u32);
    framed.extend_from_slice(message);
    framed.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_length_prefixed() {
        // HelloReply{message: "hi"}: field 1, length-delimited, 2 bytes.
        let framed = frame(b"\x0a\x02hi");
        assert_eq!(&framed[..], b"\x00\x00\x00\x00\x04\x0a\x02hi");
        assert_eq!(&frame(b"")[..], b"\x00\x00\x00\x00\x00");
    }
}
