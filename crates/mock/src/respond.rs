//! A stub's answer: match the request, wait the delay on a timer, then send the response (whole
//! or dribbled) or arm the stub's fault; a 404 that names the nearest miss when nothing matches.
//! A templated stub renders its response first ([`crate::template`]); a proxy stub forwards and
//! answers with the downstream's response ([`crate::proxy`]), its delay added on top.
use crate::activity::ActivityGuard;
use crate::body::{Hold, MockBody};
use crate::faults::FaultSwitch;
use crate::files;
use crate::inflight::StreamCount;
use crate::matching::{self, RequestView};
use crate::proxy;
use crate::state::{stub_name, MockState, Stub};
use crate::template::RequestFacts;
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Incoming};
use std::borrow::Cow;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Answers a request to the stubs (admin requests go elsewhere). `activity` and the in-flight
/// count are held until the response's last byte is sent. `streams`: the stream count of the
/// HTTP/2 connection the request is a stream of.
pub(crate) async fn respond(
    state: &MockState,
    fault: &FaultSwitch,
    streams: Option<&Arc<StreamCount>>,
    activity: ActivityGuard,
    request: hyper::Request<Incoming>,
) -> hyper::Response<MockBody> {
    let in_flight = match streams {
        None => state.meter.request_started(),
        Some(streams) => state.meter.stream_started(streams),
    };
    let (parts, body) = request.into_parts();
    // Read the body (for the journal, and so that the connection can be reused), skipping the
    // collector for the common bodiless request.
    let raw = if body.is_end_stream() {
        Bytes::new()
    } else {
        body.collect()
            .await
            .map(|collected| collected.to_bytes())
            .unwrap_or_default()
    };
    // A gRPC call to a method of the root's grpc/ schema is matched, templated and journaled
    // on its request message as JSON, as WireMock's gRPC extension does; a proxy stub forwards
    // (and a recording keeps) the bytes as they came.
    let body = crate::grpc::request_as_json(state.grpc_schema.as_deref(), &parts, &raw)
        .unwrap_or_else(|| raw.clone());
    let stubs = state.stubs();
    let view = RequestView::new(parts.method.as_str(), &parts.uri, &parts.headers, &body);
    let matched = stubs.iter().find(|stub| {
        matching::matches(&stub.mapping.request, &view)
            && stub
                .mapping
                .scenario
                .as_ref()
                .is_none_or(|step| state.scenarios.allows(step))
    });
    state.record(&parts, &body, matched.map(|s| s.as_ref()));
    let hold = Hold::new(Some(in_flight), activity);
    let Some(stub) = matched else {
        state.count_unmatched();
        // WireMock serves __files itself for a GET no stub matched.
        if let Some(root) = state.files_root.as_ref() {
            if parts.method == http::Method::GET {
                match files::lookup(root, view.path).await {
                    files::Answer::File {
                        bytes,
                        content_type,
                    } => {
                        let mut response = hyper::Response::new(MockBody::full(bytes, Some(hold)));
                        response
                            .headers_mut()
                            .insert(http::header::CONTENT_TYPE, content_type);
                        return response;
                    }
                    files::Answer::Forbidden => {
                        let mut response = hyper::Response::new(MockBody::full(
                            Bytes::from_static(b"Forbidden: a folder of __files\n"),
                            Some(hold),
                        ));
                        *response.status_mut() = http::StatusCode::FORBIDDEN;
                        return response;
                    }
                    files::Answer::Missing => {}
                }
            }
        }
        return not_found(near_miss(&stubs, &view), Some(hold));
    };
    stub.requests.fetch_add(1, Ordering::Relaxed);
    if let Some(step) = &stub.mapping.scenario {
        state.scenarios.advance(step);
    }
    let definition = &stub.mapping.response;
    // Templating and forwarding cost only the stubs that use them.
    let rendered = definition.template.as_ref().map(|template| {
        let facts = RequestFacts {
            method: view.method,
            url: view.path_and_query,
            path: view.path,
            query: view.decoded_query(),
            headers: &parts.headers,
            body: &body,
        };
        template.render(definition, &facts, state.files_root.as_deref())
    });
    let forwarded = match &definition.proxy {
        Some(target) => {
            Some(proxy::forward(state.proxy_client(), target, &parts, raw.clone()).await)
        }
        None => None,
    };
    if let Some(Ok(answer)) = &forwarded {
        if state.recorder.wants_exchanges() {
            state
                .recorder
                .capture(proxy::exchange(&parts, &raw, answer));
        }
    }
    let delay = state.fixed_delay().unwrap_or_default()
        + definition.delay.map(|d| d.sample()).unwrap_or_default();
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    if !stub.mapping.webhooks.is_empty() {
        let served = RequestFacts {
            method: view.method,
            url: view.path_and_query,
            path: view.path,
            query: view.decoded_query(),
            headers: &parts.headers,
            body: &body,
        };
        proxy::fire_webhooks(state.proxy_client(), &stub.mapping.webhooks, &served);
    }
    if let Some(armed) = definition.fault {
        fault.arm(armed);
        return hyper::Response::new(MockBody::full(Bytes::new(), Some(hold)));
    }
    let status = http::StatusCode::from_u16(definition.status).unwrap_or(http::StatusCode::OK);
    let (status, body, downstream_headers, stub_headers) = match (forwarded, rendered) {
        (_, Some(Err(message))) | (Some(Err(message)), _) => {
            return server_error(message, hold);
        }
        (Some(Ok(answer)), rendered) => {
            let stub_headers = match rendered {
                Some(Ok(rendered)) => rendered.headers,
                _ => definition.headers.clone(),
            };
            (
                answer.status,
                answer.body,
                answer.headers,
                Cow::Owned(stub_headers),
            )
        }
        (None, Some(Ok(rendered))) => (
            status,
            rendered.body,
            Vec::new(),
            Cow::Owned(rendered.headers),
        ),
        (None, None) => (
            status,
            definition.body.clone(),
            Vec::new(),
            Cow::Borrowed(&definition.headers),
        ),
    };
    let body = match definition.dribble {
        Some(dribble) => MockBody::dribble(body, dribble, Some(hold)),
        None => MockBody::full(body, Some(hold)),
    };
    let mut response = hyper::Response::new(body);
    *response.status_mut() = status;
    if let Some(message) = &definition.status_message {
        if let Ok(reason) = hyper::ext::ReasonPhrase::try_from(message.clone().into_bytes()) {
            response.extensions_mut().insert(reason);
        }
    }
    let headers = response.headers_mut();
    for (name, value) in downstream_headers
        .into_iter()
        .chain(stub_headers.iter().cloned())
    {
        headers.append(name, value);
    }
    response
}

/// WireMock's answer when a template fails or the downstream cannot be reached.
fn server_error(message: String, hold: Hold) -> hyper::Response<MockBody> {
    let mut response = hyper::Response::new(MockBody::full(Bytes::from(message), Some(hold)));
    *response.status_mut() = http::StatusCode::INTERNAL_SERVER_ERROR;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain"),
    );
    response
}

fn not_found(text: String, hold: Option<Hold>) -> hyper::Response<MockBody> {
    let mut response = hyper::Response::new(MockBody::full(Bytes::from(text), hold));
    *response.status_mut() = http::StatusCode::NOT_FOUND;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// The 404 text: what was asked, and the stub that came closest with what differed.
fn near_miss(stubs: &[Arc<Stub>], view: &RequestView<'_>) -> String {
    let mut text = format!("No stub matched {} {}.\n", view.method, view.path_and_query);
    let closest = stubs
        .iter()
        .map(|stub| {
            let (diffs, distance) = matching::differences(&stub.mapping.request, view);
            (distance, stub, diffs)
        })
        .min_by(|a, b| a.0.total_cmp(&b.0));
    match closest {
        Some((_, stub, diffs)) => {
            text.push_str(&format!(
                "Closest stub: '{}' ({}): {}.\n",
                stub_name(&stub.mapping),
                stub.mapping.id,
                diffs.join("; ")
            ));
        }
        None => text.push_str("There are no stubs.\n"),
    }
    text
}
