//! The arithmetic of a merge: load reports measured side by side become one report.
use chokepoint_load::hdr::decode;
use chokepoint_load::hdrhistogram::Histogram;
use chokepoint_load::recorder::{latency_ms, new_histogram};
use chokepoint_result::{LateStarts, LatencyHistograms, LoadReport, TimelinePoint};

/// The sums of several shards' distributions (microseconds).
#[derive(Debug, Clone)]
pub struct Distributions {
    /// Every completed request.
    pub latency: Histogram<u64>,
    /// Successful requests.
    pub ok: Histogram<u64>,
    /// Failed requests.
    pub error: Histogram<u64>,
    /// Open model: from the actual send time; `None` when no shard had it.
    pub uncorrected: Option<Histogram<u64>>,
}

/// Decodes and adds the shards' histograms, count by count.
pub fn merge_histograms(sets: &[&LatencyHistograms]) -> Result<Distributions, String> {
    let add = |into: &mut Histogram<u64>, text: &str, what: &str| -> Result<(), String> {
        let histogram = decode(text).map_err(|e| format!("the {what} histogram is {e}"))?;
        into.add(&histogram)
            .map_err(|e| format!("cannot add the {what} histograms ({e:?})"))
    };
    let mut sums = Distributions {
        latency: new_histogram(),
        ok: new_histogram(),
        error: new_histogram(),
        uncorrected: None,
    };
    for set in sets {
        add(&mut sums.latency, &set.latency, "latency")?;
        add(&mut sums.ok, &set.ok, "ok latency")?;
        add(&mut sums.error, &set.error, "error latency")?;
        if let Some(text) = &set.uncorrected {
            add(
                sums.uncorrected.get_or_insert_with(new_histogram),
                text,
                "uncorrected latency",
            )?;
        }
    }
    Ok(sums)
}

/// One report for runs that went on side by side: see the crate's documentation for each rule.
/// Refused (with the reason) when a report has no histograms or the reports' timelines have
/// different bucket widths.
pub fn merge_reports(reports: &[&LoadReport]) -> Result<LoadReport, String> {
    let Some(first) = reports.first() else {
        return Err("nothing to merge".into());
    };
    let mut sets = Vec::new();
    for report in reports {
        sets.push(report.histograms.as_ref().ok_or(
            "a result without histograms (written before merges existed): run the shards again",
        )?);
        if report.timeline_bucket_s != first.timeline_bucket_s {
            return Err(format!(
                "timelines of {} s and {} s buckets cannot be added",
                first.timeline_bucket_s, report.timeline_bucket_s
            ));
        }
    }
    let sums = merge_histograms(&sets)?;
    let sum = |field: fn(&LoadReport) -> u64| reports.iter().map(|r| field(r)).sum::<u64>();
    let total = |field: fn(&LoadReport) -> f64| reports.iter().map(|r| field(r)).sum::<f64>();
    let largest =
        |field: fn(&LoadReport) -> f64| reports.iter().map(|r| field(r)).fold(0.0, f64::max);
    let mut errors = chokepoint_result::ErrorCounts::new();
    for report in reports {
        for (kind, count) in &report.errors {
            *errors.entry(kind.clone()).or_insert(0) += count;
        }
    }
    let optional = |h: &Histogram<u64>| (!h.is_empty()).then(|| latency_ms(h));
    let late: Vec<&LateStarts> = reports
        .iter()
        .filter_map(|r| r.late_starts.as_ref())
        .collect();
    let rates: Vec<f64> = reports.iter().filter_map(|r| r.rate_rps).collect();
    // The calls by status follow from the merged ok and error counts (one definition).
    let grpc = first
        .grpc
        .as_ref()
        .map(|g| chokepoint_result::GrpcFigures::of(g.methods.clone(), sum(|r| r.ok), &errors));
    Ok(LoadReport {
        target: first.target.clone(),
        requests: sum(|r| r.requests),
        ok: sum(|r| r.ok),
        errors,
        throughput_rps: total(|r| r.throughput_rps),
        ok_throughput_rps: total(|r| r.ok_throughput_rps),
        latency_ms: latency_ms(&sums.latency),
        ok_latency_ms: optional(&sums.ok),
        error_latency_ms: optional(&sums.error),
        uncorrected_latency_ms: sums.uncorrected.as_ref().map(latency_ms),
        late_starts: (!late.is_empty()).then(|| merge_late_starts(&late)),
        clients: reports.iter().map(|r| r.clients).sum(),
        rate_rps: (!rates.is_empty()).then(|| rates.iter().sum()),
        duration_s: largest(|r| r.duration_s),
        connections_opened: sum(|r| r.connections_opened),
        tls_handshakes: sum(|r| r.tls_handshakes),
        // Connect and handshake percentiles have no histograms to merge exactly: left out.
        connect_ms: None,
        tls_handshake_ms: None,
        // Per-target figures are not merged either (a shard's own JSON keeps them).
        targets: Vec::new(),
        keepalive: first.keepalive,
        generator_cpu_pct: largest(|r| r.generator_cpu_pct),
        generator_saturated: reports.iter().any(|r| r.generator_saturated),
        bytes_received: sum(|r| r.bytes_received),
        timeline_bucket_s: first.timeline_bucket_s,
        timeline: merge_timelines(reports, first.timeline_bucket_s),
        interrupted: reports.iter().any(|r| r.interrupted),
        // Each shard's own clients: the sum, when every shard counted them.
        unanswered_clients: reports.iter().map(|r| r.unanswered_clients).sum(),
        histograms: Some(LatencyHistograms {
            latency: chokepoint_load::hdr::encode(&sums.latency),
            ok: chokepoint_load::hdr::encode(&sums.ok),
            error: chokepoint_load::hdr::encode(&sums.error),
            uncorrected: sums.uncorrected.as_ref().map(chokepoint_load::hdr::encode),
        }),
        // Streams per connection are a shard's own (each has its connections): not merged.
        http2: None,
        grpc,
    })
}

fn merge_late_starts(late: &[&LateStarts]) -> LateStarts {
    let count: u64 = late.iter().map(|l| l.count).sum();
    let weighted: f64 = late.iter().map(|l| l.mean_ms * l.count as f64).sum();
    LateStarts {
        count,
        mean_ms: if count > 0 {
            weighted / count as f64
        } else {
            0.0
        },
        max_ms: late.iter().map(|l| l.max_ms).fold(0.0, f64::max),
    }
}

/// Bucket `i` of the merge is the sum of every shard's bucket `i` (the shards' windows began
/// together, give or take the skew the merge reports).
fn merge_timelines(reports: &[&LoadReport], bucket_s: f64) -> Vec<TimelinePoint> {
    let buckets = reports.iter().map(|r| r.timeline.len()).max().unwrap_or(0);
    (0..buckets)
        .map(|i| {
            let points: Vec<&TimelinePoint> =
                reports.iter().filter_map(|r| r.timeline.get(i)).collect();
            let completed: u64 = points.iter().map(|p| p.completed).sum();
            let latency_sum: f64 = points
                .iter()
                .map(|p| p.mean_latency_ms * p.completed as f64)
                .sum();
            TimelinePoint {
                t_s: i as f64 * bucket_s,
                completed,
                ok: points.iter().map(|p| p.ok).sum(),
                mean_latency_ms: if completed > 0 {
                    latency_sum / completed as f64
                } else {
                    0.0
                },
                in_flight: points.iter().map(|p| p.in_flight).sum(),
            }
        })
        .collect()
}
