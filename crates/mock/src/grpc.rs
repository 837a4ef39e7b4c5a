//! gRPC stubs, over HTTP/2: a stub whose response `Content-Type` is `application/grpc` (or
//! `application/grpc+proto`) answers a unary call as a gRPC server does. Its body — the response
//! message as raw protobuf bytes, given as `base64Body` — is sent as one length-prefixed message,
//! and its `grpc-status` (default 0, OK) and `grpc-message` headers go in the trailers; a
//! non-zero status with no body is a Trailers-Only response (the status in the one HEADERS
//! frame). The stub matches as any other: `POST /package.Service/Method`, its delay on a timer.
//!
//! With a schema (a WireMock root's `grpc/*.dsc`, `MockConfig::grpc_schema`), as WireMock's gRPC
//! extension does: a call to one of its methods is matched and journaled on its request message
//! as JSON ([`request_as_json`]), its answer is gRPC whatever the stub's `Content-Type`, a JSON
//! body (`jsonBody`, or `body` holding a JSON object) is encoded as the method's response
//! message, and the status may be named (`grpc-status-name: NOT_FOUND`, with
//! `grpc-status-reason`). JSON that does not fit the message answers INTERNAL (13), its
//! `grpc-message` saying why.
//!
//! Not yet: streaming methods, and a dribbled gRPC body (sent raw, unframed).
use crate::body::MockBody;
use bytes::{BufMut, Bytes, BytesMut};
use chokepoint_grpc::Schema;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue};

const GRPC_STATUS: HeaderName = HeaderName::from_static("grpc-status");
const GRPC_MESSAGE: HeaderName = HeaderName::from_static("grpc-message");
/// WireMock's gRPC extension's names for them (`GrpcResponseDefinitionBuilder`).
const GRPC_STATUS_NAME: HeaderName = HeaderName::from_static("grpc-status-name");
const GRPC_STATUS_REASON: HeaderName = HeaderName::from_static("grpc-status-reason");
/// INTERNAL: what a server answers when it cannot build its response.
const INTERNAL: &str = "13";
/// UNKNOWN: a status name the spec does not have.
const UNKNOWN: &str = "2";

/// Whether a request or response says it is gRPC (`application/grpc`, `application/grpc+proto`).
pub(crate) fn is_grpc(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/grpc"))
}

/// The request message of a gRPC call to a method of `schema`, as JSON text for the matchers
/// and the journal; `None` for any other request (its body is then used as it came).
pub(crate) fn request_as_json(
    schema: Option<&Schema>,
    parts: &http::request::Parts,
    body: &[u8],
) -> Option<Bytes> {
    let schema = schema.filter(|_| is_grpc(&parts.headers))?;
    schema
        .request_as_json(parts.uri.path(), body)
        .map(Bytes::from)
}

/// Turns a gRPC stub's response into gRPC's framing and trailers; any other is left alone.
/// `call`: the schema and the `:path` when the request was a gRPC call and a schema is loaded.
pub(crate) fn answer_as_grpc(
    response: &mut hyper::Response<MockBody>,
    call: Option<(&Schema, &str)>,
) {
    let known = call.filter(|(schema, path)| schema.knows(path));
    if known.is_none() && !is_grpc(response.headers()) {
        return;
    }
    let Some(message) = response.body().whole() else {
        return;
    };
    let headers = response.headers_mut();
    headers.remove(CONTENT_LENGTH);
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
    let named = headers.remove(GRPC_STATUS_NAME).map(|name| {
        let code = name
            .to_str()
            .ok()
            .and_then(chokepoint_result::error_kind::grpc_code_of)
            .map_or(UNKNOWN.to_string(), |code| code.to_string());
        HeaderValue::from_str(&code).unwrap_or(HeaderValue::from_static(UNKNOWN))
    });
    let mut status = headers
        .remove(GRPC_STATUS)
        .or(named)
        .unwrap_or(HeaderValue::from_static("0"));
    let reason = headers.remove(GRPC_STATUS_REASON);
    let mut status_message = headers.remove(GRPC_MESSAGE).or(reason);
    let message = match known {
        Some((schema, path)) if is_json_object(&message) => {
            match schema.response_from_json(path, &message) {
                Some(Ok(encoded)) => Bytes::from(encoded),
                Some(Err(why)) => {
                    status = HeaderValue::from_static(INTERNAL);
                    status_message = HeaderValue::from_str(&why.to_string()).ok();
                    Bytes::new()
                }
                None => message,
            }
        }
        _ => message,
    };
    let mut trailers = HeaderMap::new();
    trailers.insert(GRPC_STATUS, status);
    if let Some(text) = status_message {
        trailers.insert(GRPC_MESSAGE, text);
    }
    if message.is_empty() && trailers[&GRPC_STATUS] != "0" {
        headers.extend(trailers);
        // The stub's body may be JSON that did not fit the reply: none is sent.
        response.body_mut().clear();
        return;
    }
    response.body_mut().replace_whole(frame(&message), trailers);
}

/// Whether a stub's body is a JSON object: protobuf's JSON mapping of a message is one, and
/// raw protobuf bytes (`base64Body`) practically never parse as one.
fn is_json_object(body: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(body).is_ok_and(|value| value.is_object())
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
