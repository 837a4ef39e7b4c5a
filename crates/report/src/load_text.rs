//! The text of one load run for the terminal: JMeter's summariser lines while it runs, and an
//! ab-like report at the end. Pure functions: numbers or a finished
//! [`LoadReport`](chokepoint_result::LoadReport) in, a `String` out.
use chokepoint_result::{LatencyMs, LoadReport, SpanFigures};
use std::fmt::Write;

/// The body of a summariser line: count, rate, latency and errors of the span.
fn summariser_body(span: &SpanFigures) -> String {
    format!(
        "{:>6} in {:>5.1}s = {:>6.1}/s Avg: {:>5} Min: {:>5} Max: {:>5} Err: {:>5} ({:.2}%)",
        span.requests,
        span.elapsed_s,
        span.rate(),
        span.mean_ms.round() as u64,
        span.min_ms.round() as u64,
        span.max_ms.round() as u64,
        span.errors,
        span.error_pct()
    )
}

/// JMeter's interval line: `summary +    590 in  30.0s =   19.7/s Avg:  1018 ... Active: 20`.
pub fn summary_interval_line(interval: &SpanFigures, active: u64) -> String {
    format!("summary + {} Active: {active}", summariser_body(interval))
}

/// JMeter's running-total line: `summary =   1071 in  64.3s =   16.7/s Avg:  1019 ...`.
pub fn summary_total_line(total: &SpanFigures) -> String {
    format!("summary = {}", summariser_body(total))
}

/// Picks one figure out of a [`LatencyMs`].
type Pick = fn(&LatencyMs) -> f64;

const PERCENTILES: [(&str, Pick); 11] = [
    ("50%", |l| l.p50),
    ("66%", |l| l.p66),
    ("75%", |l| l.p75),
    ("80%", |l| l.p80),
    ("90%", |l| l.p90),
    ("95%", |l| l.p95),
    ("98%", |l| l.p98),
    ("99%", |l| l.p99),
    ("99.9%", |l| l.p999),
    ("100%", |l| l.max),
    ("mean", |l| l.mean),
];

/// The final report of a load run, in ab's shape.
pub fn load_report(report: &LoadReport) -> String {
    let mut out = String::new();
    let line = |out: &mut String, label: &str, value: String| {
        let _ = writeln!(out, "{:<24}{value}", format!("{label}:"));
    };
    line(&mut out, "Target", report.target.clone());
    let h2_connections;
    let connections = match &report.http2 {
        Some(h2) => {
            h2_connections = format!(
                "{}: streams over {} connection{}",
                h2.protocol,
                h2.connections,
                if h2.connections == 1 { "" } else { "s" }
            );
            h2_connections.as_str()
        }
        None if report.keepalive => "keep-alive",
        None => "a new connection per request",
    };
    let model = match report.rate_rps {
        Some(rate) => format!(
            "open, {rate} requests/s on a fixed schedule, up to {} {} used ({connections})",
            report.clients,
            if report.http2.is_some() {
                "streams"
            } else {
                "connections"
            }
        ),
        None => format!("closed, {} clients ({connections})", report.clients),
    };
    line(&mut out, "Model", model);
    let interrupted = if report.interrupted {
        " (interrupted)"
    } else {
        ""
    };
    line(
        &mut out,
        "Time taken",
        format!("{:.3} seconds{interrupted}", report.duration_s),
    );
    line(&mut out, "Complete requests", report.requests.to_string());
    line(
        &mut out,
        "Failed requests",
        report.error_count().to_string(),
    );
    for (kind, count) in &report.errors {
        let _ = writeln!(out, "   {:<21}{count}", format!("{kind}: "));
    }
    line(
        &mut out,
        "Requests per second",
        format!(
            "{:.2} [#/sec] (mean); successful: {:.2}",
            report.throughput_rps, report.ok_throughput_rps
        ),
    );
    if report.requests > 0 {
        let per_request = 1000.0 * report.duration_s / report.requests as f64;
        let concurrency = match report.rate_rps {
            Some(_) => report.latency_ms.mean / per_request.max(f64::MIN_POSITIVE),
            None => report.clients as f64,
        };
        line(
            &mut out,
            "Time per request",
            format!("{:.3} [ms] (mean)", report.latency_ms.mean.max(0.0)),
        );
        line(
            &mut out,
            "Time per request",
            format!(
                "{per_request:.3} [ms] (mean, across all concurrent requests; ~{concurrency:.1} at once)"
            ),
        );
    }
    line(
        &mut out,
        "Received",
        format!("{} bytes", report.bytes_received),
    );
    line(
        &mut out,
        "Connections opened",
        report.connections_opened.to_string(),
    );
    if report.tls_handshakes > 0 || report.target.starts_with("https:") {
        line(
            &mut out,
            "TLS handshakes",
            report.tls_handshakes.to_string(),
        );
    }
    if let Some(late) = &report.late_starts {
        line(
            &mut out,
            "Late starts",
            format!(
                "{} requests started more than 1 ms after their scheduled time (mean {:.1} ms, max {:.1} ms)",
                late.count, late.mean_ms, late.max_ms
            ),
        );
    }
    if let Some(h2) = &report.http2 {
        http2_lines(&mut out, h2);
    }
    if let Some(grpc) = &report.grpc {
        grpc_lines(&mut out, grpc);
    }
    let saturated = if report.generator_saturated {
        ": SATURATED, these figures may show chokepoint's own limit, not the service's"
    } else {
        ""
    };
    line(
        &mut out,
        "Generator CPU",
        format!(
            "{:.0}% of the cores it may use{saturated}",
            report.generator_cpu_pct
        ),
    );
    if report.requests == 0 {
        return out;
    }
    let mut columns: Vec<(&str, &LatencyMs)> = Vec::new();
    match &report.uncorrected_latency_ms {
        Some(raw) => {
            columns.push(("corrected", &report.latency_ms));
            columns.push(("uncorrected", raw));
        }
        None => columns.push(("all", &report.latency_ms)),
    }
    if report.error_count() > 0 {
        if let Some(ok) = &report.ok_latency_ms {
            columns.push(("successful", ok));
        }
        if let Some(failed) = &report.error_latency_ms {
            columns.push(("failed", failed));
        }
    }
    let opening = [
        ("connect", &report.connect_ms),
        ("tls handshake", &report.tls_handshake_ms),
    ];
    for (name, latency) in opening {
        if let Some(latency) = latency {
            columns.push((name, latency));
        }
    }
    out.push('\n');
    out.push_str("Percentage of the requests served within a certain time (ms)\n");
    if report.uncorrected_latency_ms.is_some() {
        out.push_str(
            "(corrected: from the scheduled send time, as wrk2; uncorrected: from the actual send)\n",
        );
    }
    if report.connect_ms.is_some() {
        out.push_str(
            "(connect, tls handshake: of each connection opened; part of its first request's time)\n",
        );
    }
    let _ = write!(out, "{:>7}", "");
    for (name, _) in &columns {
        let _ = write!(out, " {name:>12}");
    }
    out.push('\n');
    for (label, pick) in PERCENTILES {
        let _ = write!(out, "{label:>7}");
        for (_, latency) in &columns {
            let _ = write!(
                out,
                " {:>12}",
                chokepoint_result::format::ab_ms(pick(latency))
            );
        }
        out.push('\n');
    }
    targets_table(&mut out, report);
    out
}

/// `--http2`: the server's stream limit, the streams in flight per connection, the GOAWAYs.
fn http2_lines(out: &mut String, h2: &chokepoint_result::Http2Figures) {
    let limit = match h2.server_max_concurrent_streams {
        Some(n) => n.to_string(),
        None => "none set".to_string(),
    };
    let _ = writeln!(
        out,
        "{:<24}{limit} per connection (the server's SETTINGS_MAX_CONCURRENT_STREAMS)",
        "Server stream limit:"
    );
    let _ = writeln!(
        out,
        "{:<24}max {} on one connection, mean {:.1} per connection",
        "Streams in flight:", h2.max_streams_in_flight, h2.mean_streams_in_flight
    );
    if h2.per_connection.len() > 1 {
        for (i, c) in h2.per_connection.iter().enumerate() {
            let _ = writeln!(
                out,
                "   {:<21}{} requests, max {} streams, mean {:.1}",
                format!("connection {}:", i + 1),
                c.requests,
                c.max_streams_in_flight,
                c.mean_streams_in_flight
            );
        }
    }
    let _ = writeln!(
        out,
        "{:<24}{} (streams a graceful one left unprocessed were resent)",
        "GOAWAYs received:", h2.goaways
    );
}

/// `--grpc`: the methods called and the calls by `grpc-status`.
fn grpc_lines(out: &mut String, grpc: &chokepoint_result::GrpcFigures) {
    let _ = writeln!(out, "{:<24}{}", "gRPC methods:", grpc.methods.join(", "));
    let statuses: Vec<String> = grpc
        .statuses
        .iter()
        .map(|(name, count)| format!("{name} {count}"))
        .collect();
    let statuses = match statuses.is_empty() {
        true => "none completed".to_string(),
        false => statuses.join(", "),
    };
    let _ = writeln!(out, "{:<24}{statuses}", "gRPC statuses:");
}

/// With a targets file: each request's count, share, throughput and latency.
fn targets_table(out: &mut String, report: &LoadReport) {
    if report.targets.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nPer request{:>33} {:>7} {:>7} {:>9} {:>9} {:>9}",
        "requests", "share", "failed", "req/s", "p50 ms", "p99 ms"
    );
    for target in &report.targets {
        let share = 100.0 * target.requests as f64 / report.requests.max(1) as f64;
        let failed: u64 = target.errors.values().sum();
        let name = format!("{} {}", target.method, target.url);
        let _ = writeln!(
            out,
            "{name:<36}{:>8} {share:>6.1}% {failed:>7} {:>9.1} {:>9} {:>9}",
            target.requests,
            target.throughput_rps,
            chokepoint_result::format::ab_ms(target.latency_ms.p50),
            chokepoint_result::format::ab_ms(target.latency_ms.p99)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chokepoint_result::LateStarts;

    #[test]
    fn summariser_lines_match_jmeter() {
        let interval = SpanFigures {
            requests: 590,
            elapsed_s: 30.0,
            mean_ms: 1018.2,
            min_ms: 1007.0,
            max_ms: 1092.0,
            errors: 0,
        };
        assert_eq!(
            summary_interval_line(&interval, 20),
            "summary +    590 in  30.0s =   19.7/s Avg:  1018 Min:  1007 Max:  1092 Err:     0 (0.00%) Active: 20"
        );
        let total = SpanFigures {
            requests: 1071,
            elapsed_s: 64.3,
            mean_ms: 1019.0,
            min_ms: 1005.0,
            max_ms: 1167.0,
            errors: 0,
        };
        assert_eq!(
            summary_total_line(&total),
            "summary =   1071 in  64.3s =   16.7/s Avg:  1019 Min:  1005 Max:  1167 Err:     0 (0.00%)"
        );
    }

    fn latency(scale: f64) -> LatencyMs {
        LatencyMs {
            min: scale,
            mean: 2.0 * scale,
            p50: 2.0 * scale,
            p66: 2.0 * scale,
            p75: 3.0 * scale,
            p80: 3.0 * scale,
            p90: 4.0 * scale,
            p95: 5.0 * scale,
            p98: 6.0 * scale,
            p99: 7.0 * scale,
            p999: 8.0 * scale,
            max: 9.0 * scale,
        }
    }

    #[test]
    fn the_final_report_shows_failures_by_kind_and_both_latencies() {
        let mut report = LoadReport {
            target: "http://127.0.0.1:8080/".into(),
            requests: 100,
            ok: 90,
            throughput_rps: 50.0,
            ok_throughput_rps: 45.0,
            latency_ms: latency(10.0),
            ok_latency_ms: Some(latency(12.0)),
            error_latency_ms: Some(latency(0.5)),
            uncorrected_latency_ms: Some(latency(5.0)),
            late_starts: Some(LateStarts {
                count: 7,
                mean_ms: 3.0,
                max_ms: 9.5,
            }),
            clients: 4,
            rate_rps: Some(50.0),
            duration_s: 2.0,
            connections_opened: 4,
            keepalive: true,
            generator_cpu_pct: 95.0,
            generator_saturated: true,
            ..LoadReport::default()
        };
        report.errors.insert("http_503".into(), 10);
        let text = load_report(&report);
        assert!(text.contains("Failed requests:        10"), "{text}");
        assert!(text.contains("   http_503:            10"), "{text}");
        assert!(text.contains("corrected") && text.contains("uncorrected"));
        assert!(text.contains("7 requests started more than 1 ms"));
        assert!(text.contains("SATURATED"));
        let p99 = text
            .lines()
            .find(|l| l.trim_start().starts_with("99%"))
            .unwrap();
        assert_eq!(
            p99.split_whitespace().collect::<Vec<_>>(),
            ["99%", "70.0", "35.0", "84.0", "3.5"]
        );
    }
}
