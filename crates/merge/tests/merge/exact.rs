//! Merged percentiles are exact: recorded latencies split over 2 and 3 shards, each recorded and
//! encoded as a shard does it, merge to exactly the percentiles of one histogram of all of them.
use chokepoint_load::failure::Failure;
use chokepoint_load::hdr::histograms_of;
use chokepoint_load::recorder::{latency_ms, Outcome, Samples};
use chokepoint_merge::merge_reports;
use chokepoint_result::LoadReport;
use std::time::Duration;

/// The recorded latencies, with every 7th request failed (a 503), so the ok and error
/// distributions are merged too.
fn recorded() -> Vec<Outcome> {
    include_str!("../fixtures/actors-latencies-us.txt")
        .lines()
        .filter(|line| !line.starts_with('#'))
        .enumerate()
        .map(|(i, line)| Outcome {
            latency: Duration::from_micros(line.trim().parse().unwrap()),
            uncorrected: None,
            lateness: None,
            failure: (i % 7 == 3).then_some(Failure::Status(503)),
            bytes: 2,
            bucket: i as u64 / 100,
            connect: None,
            handshake: None,
            target: None,
        })
        .collect()
}

/// A shard's report of `outcomes`, made the way the engine makes it.
fn shard_report(outcomes: &[Outcome]) -> LoadReport {
    let mut samples = Samples::default();
    for outcome in outcomes {
        samples.record(outcome);
    }
    LoadReport {
        requests: samples.requests(),
        ok: samples.ok,
        errors: samples
            .errors
            .iter()
            .map(|(kind, count)| (kind.name(), *count))
            .collect(),
        latency_ms: latency_ms(&samples.latency),
        timeline_bucket_s: 0.1,
        histograms: Some(histograms_of(&samples, false)),
        ..LoadReport::default()
    }
}

fn check_split(sizes: &[usize]) {
    let all = recorded();
    assert_eq!(all.len(), 3000);
    assert_eq!(sizes.iter().sum::<usize>(), all.len());
    let mut whole = Samples::default();
    for outcome in &all {
        whole.record(outcome);
    }
    // Contiguous slices in completion order: the shards see different parts of the run, so
    // their percentiles differ and an average of them would be wrong.
    let mut shards = Vec::new();
    let mut rest = all.as_slice();
    for &size in sizes {
        let (part, tail) = rest.split_at(size);
        shards.push(shard_report(part));
        rest = tail;
    }
    let merged = merge_reports(&shards.iter().collect::<Vec<_>>()).unwrap();

    assert_eq!(merged.requests, 3000);
    assert_eq!(merged.ok, whole.ok);
    assert_eq!(merged.errors["http_503"], whole.error_count());
    assert_eq!(merged.latency_ms, latency_ms(&whole.latency), "{sizes:?}");
    assert_eq!(merged.ok_latency_ms, Some(latency_ms(&whole.ok_latency)));
    assert_eq!(
        merged.error_latency_ms,
        Some(latency_ms(&whole.error_latency))
    );

    // The test can tell: averaging the shards' p99s is not the p99 of the whole.
    let averaged = shards.iter().map(|s| s.latency_ms.p99).sum::<f64>() / shards.len() as f64;
    assert_ne!(averaged, merged.latency_ms.p99, "{sizes:?}");
}

#[test]
fn two_uneven_shards_merge_to_the_exact_percentiles_of_all_samples() {
    check_split(&[1234, 1766]);
}

#[test]
fn three_uneven_shards_merge_to_the_exact_percentiles_of_all_samples() {
    check_split(&[1000, 1500, 500]);
}
