//! Stubs that forward to a real downstream (`proxyBaseUrl`, and `--proxy-all URL`, a stub of
//! priority 10 that forwards anything), as WireMock's `ProxyResponseRenderer` does: the request
//! goes to `proxyBaseUrl` + its URL (less `proxyUrlPrefixToRemove`) with its headers (less
//! `removeProxyRequestHeaders`, plus `additionalProxyRequestHeaders`; `Host` is the
//! downstream's), the downstream's status, headers and body come back with the stub's headers
//! added. The responder counts the call in flight and adds the stub's delay on top, so the
//! mock measures the in-flight ground truth in front of a downstream it cannot replace. A
//! downstream that cannot be reached gives WireMock's 500 with the reason.
//!
//! One client per mock ([`client`]: pooled keep-alive connections to `http://` downstreams,
//! rustls to `https://` ones, trusted as that module says); the same client sends the stubs'
//! webhooks ([`webhooks`]).
mod client;
mod webhooks;

pub use client::check_cacert;
pub(crate) use client::{client, ProxyClient};
pub(crate) use webhooks::fire_webhooks;

use crate::mapping::ProxyDef;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};

/// Headers that belong to one hop, never forwarded either way (hyper frames the body itself).
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "content-length",
];

/// Whether `url` can be a `proxyBaseUrl`: `http[s]://host[:port][/prefix]`.
pub fn check_base_url(url: &str) -> Result<(), String> {
    let uri: http::Uri = url
        .parse()
        .map_err(|_| format!("'{url}' is not a URL: write http://host:port (or https://)"))?;
    match (uri.scheme_str(), uri.authority()) {
        (Some("http" | "https"), Some(_)) if uri.query().is_none() => Ok(()),
        _ => Err(format!(
            "'{url}' is not a base URL: write http://host:port (and a path prefix if any)"
        )),
    }
}

/// The URL a request is forwarded to: the base URL, then the request's path and query with
/// the prefix taken off.
pub fn target_url(base: &str, path_and_query: &str, prefix_to_remove: Option<&str>) -> String {
    let rest = match prefix_to_remove {
        Some(prefix) => path_and_query
            .strip_prefix(prefix)
            .unwrap_or(path_and_query),
        None => path_and_query,
    };
    format!("{}{rest}", base.trim_end_matches('/'))
}

/// The downstream's answer.
pub(crate) struct Forwarded {
    pub status: http::StatusCode,
    pub headers: Vec<(http::HeaderName, http::HeaderValue)>,
    pub body: Bytes,
}

/// The exchange as the recorder keeps it.
pub(crate) fn exchange(
    parts: &http::request::Parts,
    body: &Bytes,
    answer: &Forwarded,
) -> crate::recording::generate::Exchange {
    let text = |value: &http::HeaderValue| String::from_utf8_lossy(value.as_bytes()).into_owned();
    crate::recording::generate::Exchange {
        method: parts.method.to_string(),
        url: parts
            .uri
            .path_and_query()
            .map_or("/", |pq| pq.as_str())
            .to_string(),
        content_type: parts.headers.get(http::header::CONTENT_TYPE).map(text),
        request_body: body.clone(),
        status: answer.status.as_u16(),
        headers: answer
            .headers
            .iter()
            .map(|(name, value)| (name.to_string(), text(value)))
            .collect(),
        body: answer.body.clone(),
    }
}

/// Forwards the request; `Err` is the text of WireMock's 500.
pub(crate) async fn forward(
    client: &ProxyClient,
    proxy: &ProxyDef,
    parts: &http::request::Parts,
    body: Bytes,
) -> Result<Forwarded, String> {
    let path_and_query = parts.uri.path_and_query().map_or("/", |pq| pq.as_str());
    let url = target_url(
        &proxy.base_url,
        path_and_query,
        proxy.prefix_to_remove.as_deref(),
    );
    let failure = |err: &dyn std::fmt::Display| {
        format!("Network failure trying to make a proxied request from WireMock to {url}\r\n{err}")
    };
    let uri: http::Uri = url.parse().map_err(|e| failure(&e))?;
    let mut request = hyper::Request::builder()
        .method(parts.method.clone())
        .uri(uri.clone());
    let headers = request.headers_mut().expect("a fresh builder has headers");
    for (name, value) in &parts.headers {
        let hop = HOP_BY_HOP.contains(&name.as_str()) || name == http::header::HOST;
        if !hop && !proxy.remove_headers.contains(name) {
            headers.append(name.clone(), value.clone());
        }
    }
    if let Some(authority) = uri.authority() {
        if let Ok(host) = http::HeaderValue::from_str(authority.as_str()) {
            headers.insert(http::header::HOST, host);
        }
    }
    for (name, value) in &proxy.additional_headers {
        headers.insert(name.clone(), value.clone());
    }
    let request = request.body(Full::new(body)).map_err(|e| failure(&e))?;
    let response = client.send(request).await.map_err(|e| failure(&e))?;
    let (head, body) = response.into_parts();
    let body = body.collect().await.map_err(|e| failure(&e))?.to_bytes();
    let headers = head
        .headers
        .iter()
        .filter(|(name, _)| !HOP_BY_HOP.contains(&name.as_str()))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    Ok(Forwarded {
        status: head.status,
        headers,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_urls_join_base_and_request() {
        let table = [
            // (proxyBaseUrl, request, proxyUrlPrefixToRemove, forwarded to)
            (
                "http://127.0.0.1:9",
                "/a?b=1",
                None,
                "http://127.0.0.1:9/a?b=1",
            ),
            ("http://127.0.0.1:9/", "/a", None, "http://127.0.0.1:9/a"),
            (
                "http://127.0.0.1:9/api",
                "/a",
                None,
                "http://127.0.0.1:9/api/a",
            ),
            (
                "http://127.0.0.1:9",
                "/other/a",
                Some("/other"),
                "http://127.0.0.1:9/a",
            ),
            (
                "http://127.0.0.1:9",
                "/a",
                Some("/other"),
                "http://127.0.0.1:9/a",
            ),
        ];
        for (base, request, prefix, expected) in table {
            assert_eq!(
                target_url(base, request, prefix),
                expected,
                "{base} {request}"
            );
        }
    }

    #[test]
    fn base_urls_are_checked() {
        assert!(check_base_url("http://127.0.0.1:8080").is_ok());
        assert!(check_base_url("http://localhost/api").is_ok());
        assert!(check_base_url("https://127.0.0.1:8443/api").is_ok());
        assert!(check_base_url("ftp://example.test").is_err());
        assert!(check_base_url("127.0.0.1:8080").is_err());
        assert!(check_base_url("not a url").is_err());
    }
}
