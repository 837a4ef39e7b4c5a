//! Prometheus text at `/metrics`: the stats window's figures and each stub's request count.
use crate::state::{stub_name, MockState};
use std::fmt::Write;
use std::sync::atomic::Ordering;

/// The Prometheus exposition of the mock's stats.
pub(crate) fn prometheus(state: &MockState) -> String {
    let stats = state.stats();
    let mut out = String::new();
    let mut metric = |name: &str, kind: &str, help: &str, value: String| {
        let _ = writeln!(out, "# HELP chokepoint_mock_{name} {help}");
        let _ = writeln!(out, "# TYPE chokepoint_mock_{name} {kind}");
        let _ = writeln!(out, "chokepoint_mock_{name} {value}");
    };
    metric(
        "window_seconds",
        "gauge",
        "Seconds since the stats window began.",
        stats.window_s.to_string(),
    );
    metric(
        "requests_total",
        "counter",
        "Requests received in the window (admin excluded).",
        stats.requests.to_string(),
    );
    metric(
        "unmatched_total",
        "counter",
        "Requests that matched no stub in the window.",
        stats.unmatched.to_string(),
    );
    metric(
        "in_flight",
        "gauge",
        "Requests in flight now.",
        stats.in_flight.to_string(),
    );
    metric(
        "max_in_flight",
        "gauge",
        "The most requests in flight at once in the window.",
        stats.max_in_flight.to_string(),
    );
    metric(
        "mean_in_flight",
        "gauge",
        "Time-weighted mean of requests in flight over the window.",
        stats.mean_in_flight.to_string(),
    );
    metric(
        "connections_open",
        "gauge",
        "Connections open now (admin excluded).",
        stats.connections_open.to_string(),
    );
    metric(
        "max_connections_open",
        "gauge",
        "The most connections open at once in the window.",
        stats.max_connections_open.to_string(),
    );
    metric(
        "connections_accepted_total",
        "counter",
        "Connections accepted in the window.",
        stats.connections_accepted.to_string(),
    );
    metric(
        "h2_connections_open",
        "gauge",
        "Of the connections open now, those speaking HTTP/2.",
        stats.h2_connections_open.to_string(),
    );
    metric(
        "h2_connections_accepted_total",
        "counter",
        "HTTP/2 connections accepted in the window.",
        stats.h2_connections_accepted.to_string(),
    );
    metric(
        "max_h2_connections_open",
        "gauge",
        "The most HTTP/2 connections open at once in the window.",
        stats.max_h2_connections_open.to_string(),
    );
    metric(
        "max_streams_per_connection",
        "gauge",
        "The most requests (streams) in flight at once on one HTTP/2 connection in the window.",
        stats.max_streams_per_connection.to_string(),
    );
    if let Some(cap) = stats.config.max_concurrent_streams {
        metric(
            "max_concurrent_streams",
            "gauge",
            "--max-concurrent-streams: the SETTINGS_MAX_CONCURRENT_STREAMS each HTTP/2 connection advertises.",
            cap.to_string(),
        );
    }
    metric(
        "connections_waiting",
        "gauge",
        "Connections waiting for a slot at --max-connections.",
        state.connections_waiting().to_string(),
    );
    let _ = writeln!(
        out,
        "# HELP chokepoint_mock_stub_requests_total Requests answered by each stub in the window."
    );
    let _ = writeln!(out, "# TYPE chokepoint_mock_stub_requests_total counter");
    for stub in state.stubs().iter() {
        let _ = writeln!(
            out,
            "chokepoint_mock_stub_requests_total{{id=\"{}\",name=\"{}\"}} {}",
            escape_label(&stub.mapping.id),
            escape_label(&stub_name(&stub.mapping)),
            stub.requests.load(Ordering::Relaxed)
        );
    }
    out
}

fn escape_label(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
