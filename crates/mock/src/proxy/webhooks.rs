//! Sending a stub's webhooks: rendered on the served request when the stub is served, then sent
//! on a task of their own (after their delay), so the response never waits for them. At most
//! [`MAX_PENDING`] webhooks wait or are in flight at once (more are dropped, with a line on
//! stderr), and each gives up after [`SEND_TIMEOUT`]. A failure is a line on stderr, as
//! WireMock logs it; nothing is retried.
use super::ProxyClient;
use crate::mapping::{Webhook, WebhookBody};
use crate::template::{RequestFacts, TextContext};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Webhooks waiting for their delay or in flight, at most.
pub const MAX_PENDING: usize = 1024;

/// How long one webhook may take, connect to last byte.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(30);

static PENDING: AtomicUsize = AtomicUsize::new(0);

/// A webhook ready to send.
struct Outgoing {
    request: http::Request<Full<Bytes>>,
    delay: Duration,
}

fn render(webhook: &Webhook, context: &TextContext) -> Result<Outgoing, String> {
    let url = webhook.url.render(context)?;
    let uri: http::Uri = url.parse().map_err(|_| format!("'{url}' is not a URL"))?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.authority().is_none() {
        return Err(format!("'{url}' is not an http:// or https:// URL"));
    }
    let mut request = http::Request::builder()
        .method(webhook.method.clone())
        .uri(uri.clone());
    let headers = request.headers_mut().expect("a fresh builder has headers");
    for (name, value) in &webhook.headers {
        let text = value.render(context)?;
        let value = http::HeaderValue::from_str(&text)
            .map_err(|_| format!("header {name}: '{text}' is not a header value"))?;
        headers.append(name.clone(), value);
    }
    if let Some(host) = uri
        .authority()
        .and_then(|a| http::HeaderValue::from_str(a.as_str()).ok())
    {
        headers.insert(http::header::HOST, host);
    }
    let body = match &webhook.body {
        WebhookBody::Empty => Bytes::new(),
        WebhookBody::Text(text) => Bytes::from(text.render(context)?),
        WebhookBody::Binary(bytes) => bytes.clone(),
    };
    let request = request.body(Full::new(body)).map_err(|e| e.to_string())?;
    Ok(Outgoing {
        request,
        delay: webhook.delay.map(|d| d.sample()).unwrap_or_default(),
    })
}

/// Renders each webhook on the served request and sends it on its own task.
pub(crate) fn fire_webhooks(client: &ProxyClient, webhooks: &[Webhook], served: &RequestFacts<'_>) {
    let context = TextContext::original_request(served);
    for webhook in webhooks {
        let outgoing = match render(webhook, &context) {
            Ok(outgoing) => outgoing,
            Err(reason) => {
                eprintln!("chokepoint mock: webhook not sent: {reason}");
                continue;
            }
        };
        if PENDING.fetch_add(1, Ordering::AcqRel) >= MAX_PENDING {
            PENDING.fetch_sub(1, Ordering::AcqRel);
            eprintln!(
                "chokepoint mock: webhook to {} dropped: {MAX_PENDING} are already pending",
                outgoing.request.uri()
            );
            continue;
        }
        let client = client.clone();
        tokio::spawn(async move {
            let target = outgoing.request.uri().clone();
            tokio::time::sleep(outgoing.delay).await;
            let sent = tokio::time::timeout(SEND_TIMEOUT, async {
                let response = client.send(outgoing.request).await?;
                // Read the answer so the connection can be reused.
                response
                    .into_body()
                    .collect()
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            })
            .await;
            match sent {
                Ok(Ok(())) => {}
                Ok(Err(reason)) => {
                    eprintln!("chokepoint mock: webhook to {target} failed: {reason}")
                }
                Err(_) => eprintln!(
                    "chokepoint mock: webhook to {target} gave no answer in {SEND_TIMEOUT:?}"
                ),
            }
            PENDING.fetch_sub(1, Ordering::AcqRel);
        });
    }
}
