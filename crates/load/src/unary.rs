//! One gRPC call outside a run (no engine, no recording): what `--grpc` without
//! `--descriptor-set` sends to the server's reflection service, before any load
//! (`chokepoint_grpc::reflection`). Over h2c with prior knowledge for `http://`, TLS with ALPN
//! `h2` for `https://` under the run's trust settings. One request message, sent and
//! half-closed; the response messages read until the trailers.
use crate::tls::{client_config, Trust};
use bytes::{Bytes, BytesMut};
use rustls_pki_types::ServerName;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// What one call answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UnaryAnswer {
    /// The response messages, unframed, in order.
    pub messages: Vec<Bytes>,
    /// The `grpc-status` of the trailers (or of a Trailers-Only response); `None` without one.
    pub status: Option<u32>,
    /// The `grpc-message`.
    pub status_message: String,
}

/// Sends `message` (one gRPC-framed message) to `path` (`/package.Service/Method`) of the
/// server of `url`, and reads the answer, all within `timeout`; an error in a few words.
pub fn grpc_call_once(
    url: &str,
    trust: &Trust,
    path: &str,
    message: Bytes,
    timeout: Duration,
) -> Result<UnaryAnswer, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        tokio::time::timeout(timeout, call(url, trust, path, message))
            .await
            .unwrap_or_else(|_| Err(format!("no answer within {timeout:?}")))
    })
}

async fn call(url: &str, trust: &Trust, path: &str, message: Bytes) -> Result<UnaryAnswer, String> {
    let uri: http::Uri = url
        .parse()
        .map_err(|_| format!("'{url}' is not a usable URL"))?;
    let tls = uri.scheme_str() == Some("https");
    let host = uri
        .host()
        .ok_or_else(|| format!("'{url}' has no host"))?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
    let target = http::Uri::builder()
        .scheme(if tls { "https" } else { "http" })
        .authority(uri.authority().map_or(host.clone(), |a| a.to_string()))
        .path_and_query(path)
        .build()
        .map_err(|e| e.to_string())?;
    let tcp = TcpStream::connect((host.as_str(), port))
        .await
        .map_err(|e| format!("cannot connect: {e}"))?;
    if !tls {
        return exchange(tcp, target, message).await;
    }
    let config = client_config(trust, &[b"h2"]).map_err(|e| e.to_string())?;
    let name = ServerName::try_from(host).map_err(|e| e.to_string())?;
    let stream = TlsConnector::from(config)
        .connect(name, tcp)
        .await
        .map_err(|e| format!("TLS: {e}"))?;
    exchange(stream, target, message).await
}

async fn exchange<S>(io: S, uri: http::Uri, message: Bytes) -> Result<UnaryAnswer, String>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let not_h2 = |e: h2::Error| format!("it does not answer as an HTTP/2 server ({e})");
    let (client, connection) = h2::client::handshake(io).await.map_err(not_h2)?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut client = client.ready().await.map_err(not_h2)?;
    let request = http::Request::builder()
        .method("POST")
        .uri(uri)
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .map_err(|e| e.to_string())?;
    let (response, mut send) = client.send_request(request, false).map_err(not_h2)?;
    send.send_data(message, true).map_err(not_h2)?;
    let response = response.await.map_err(not_h2)?;
    if response.status() != http::StatusCode::OK {
        return Err(format!("HTTP status {}", response.status().as_u16()));
    }
    let status_in = |headers: &http::HeaderMap| {
        headers
            .get("grpc-status")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u32>().ok())
    };
    let message_in = |headers: &http::HeaderMap| {
        headers
            .get("grpc-message")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    let (status, status_message) = (
        status_in(response.headers()),
        message_in(response.headers()),
    );
    let mut body = response.into_body();
    let mut received = BytesMut::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.map_err(|e| e.to_string())?;
        let _ = body.flow_control().release_capacity(chunk.len());
        received.extend_from_slice(&chunk);
    }
    let trailers = body.trailers().await.map_err(|e| e.to_string())?;
    let (status, status_message) = match &trailers {
        Some(trailers) => (status_in(trailers).or(status), message_in(trailers)),
        None => (status, status_message),
    };
    Ok(UnaryAnswer {
        messages: messages(received.freeze()),
        status,
        status_message,
    })
}

/// The messages of a gRPC body: each its compression flag, its length (u32, big-endian), its
/// bytes; a partial one at the end is left out.
fn messages(mut body: Bytes) -> Vec<Bytes> {
    let mut found = Vec::new();
    while body.len() >= 5 {
        let length = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
        if body.len() < 5 + length {
            break;
        }
        let framed = body.split_to(5 + length);
        found.push(framed.slice(5..));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_splits_into_its_messages_and_leaves_a_partial_one_out() {
        let body =
            Bytes::from_static(b"\x00\x00\x00\x00\x02hi\x00\x00\x00\x00\x00\x00\x00\x00\x00\x09ab");
        assert_eq!(
            messages(body),
            vec![Bytes::from_static(b"hi"), Bytes::new()]
        );
    }
}
