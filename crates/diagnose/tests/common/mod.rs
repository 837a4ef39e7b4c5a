//! Builders of steps for the diagnosis tests: hand-typed tables (the seeds') and model services
//! (a pool, a CPU, a shedding server, ...) measured with deterministic noise.
#![allow(dead_code)]

use chokepoint_result::{
    DownstreamInFlight, DownstreamStep, ErrorCounts, LatencyMs, LoadReport, Step, StubStats,
    SweepContext, TimelinePoint,
};

/// A latency summary around a mean (percentiles spread a little above it).
pub fn latency(mean: f64) -> LatencyMs {
    LatencyMs {
        min: mean * 0.95,
        mean,
        p50: mean,
        p66: mean * 1.01,
        p75: mean * 1.02,
        p80: mean * 1.03,
        p90: mean * 1.05,
        p95: mean * 1.07,
        p98: mean * 1.09,
        p99: mean * 1.1,
        p999: mean * 1.2,
        max: mean * 1.3,
    }
}

/// A step of a closed loop: `clients`, successful throughput and mean latency, no errors,
/// measured for `duration_s`.
pub fn step(clients: u32, ok_rps: f64, mean_ms: f64) -> Step {
    let duration_s = 10.0;
    let ok = (ok_rps * duration_s).round() as u64;
    Step {
        load: LoadReport {
            clients,
            throughput_rps: ok_rps,
            ok_throughput_rps: ok_rps,
            requests: ok,
            ok,
            latency_ms: latency(mean_ms),
            ok_latency_ms: Some(latency(mean_ms)),
            error_latency_ms: None,
            errors: ErrorCounts::new(),
            generator_cpu_pct: 5.0,
            duration_s,
            timeline_bucket_s: 0.1,
            timeline: Vec::new(),
            ..LoadReport::default()
        },
        error_rate: 0.0,
        downstream_inflight: None,
        downstream: None,
        target_cpu_pct: None,
        machine_cpu_pct: None,
        ramp_s: 0.5,
        ..Step::default()
    }
}

/// Adds failed requests of one kind at `error_rps`, answered in `error_ms`.
pub fn with_errors(mut s: Step, kind: &str, error_rps: f64, error_ms: f64) -> Step {
    let errors = (error_rps * s.duration_s).round() as u64;
    s.errors.insert(kind.to_string(), errors);
    s.requests = s.ok + errors;
    s.throughput_rps = s.ok_throughput_rps + error_rps;
    s.error_rate = if s.requests > 0 {
        errors as f64 / s.requests as f64
    } else {
        0.0
    };
    let ok_mean = s.ok_latency_ms.map_or(0.0, |l| l.mean);
    let total = s.requests.max(1) as f64;
    s.latency_ms = latency((ok_mean * s.ok as f64 + error_ms * errors as f64) / total);
    s.error_latency_ms = Some(latency(error_ms));
    s
}

/// Adds what a mock with one stub of `delay_ms` saw: `calls_per_request` calls per request,
/// at most `max_in_flight` at once.
pub fn with_mock(mut s: Step, delay_ms: f64, calls_per_request: f64, max_in_flight: u64) -> Step {
    let calls = (s.requests as f64 * calls_per_request).round() as u64;
    s.downstream_inflight = Some(DownstreamInFlight {
        mean: s.ok_throughput_rps * calls_per_request * delay_ms / 1000.0,
        max: max_in_flight,
    });
    s.downstream = Some(DownstreamStep {
        requests: calls,
        stubs: vec![StubStats {
            id: "1".into(),
            name: "GET /slow".into(),
            requests: calls,
            delay_ms: Some(delay_ms),
        }],
        max_connections_open: max_in_flight,
        connections_accepted: max_in_flight,
        in_flight_series: Vec::new(),
        ..DownstreamStep::default()
    });
    s
}

/// Deterministic noise in [-1, 1] (a small LCG, so every run of the tests sees the same numbers).
pub struct Noise(u64);

impl Noise {
    pub fn new(seed: u64) -> Noise {
        Noise(
            seed.wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407),
        )
    }
    pub fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
    /// `v` times (1 ± `share`).
    pub fn jitter(&mut self, v: f64, share: f64) -> f64 {
        v * (1.0 + share * self.next())
    }
}

/// A target with a pool of `pool` slots, each held for `delay_ms` of downstream call plus
/// `overhead_ms`, behind a mock: the closed loop gives X = min(c, pool) / S, latency c / X.
pub fn pool_step(
    pool: u32,
    delay_ms: f64,
    overhead_ms: f64,
    clients: u32,
    noise: &mut Noise,
) -> Step {
    let service_s = (delay_ms + overhead_ms) / 1000.0;
    let x = noise.jitter(clients.min(pool) as f64 / service_s, 0.03);
    let mean_ms = clients as f64 / x * 1000.0;
    let s = step(clients, x, mean_ms);
    with_mock(s, delay_ms, 1.0, clients.min(pool) as u64)
}

/// The context of a sweep with a mock of fixed delay `delay_ms`.
pub fn mock_context(delay_ms: f64) -> SweepContext {
    SweepContext {
        downstream_delay_ms: Some(delay_ms),
        mock_present: true,
        max_clients: 1000,
        ..SweepContext::default()
    }
}

/// The context of a sweep that only saw the client side (no mock, no observer).
pub fn bare_context() -> SweepContext {
    SweepContext {
        max_clients: 1000,
        ..SweepContext::default()
    }
}

/// A timeline of `seconds` in buckets of 0.1 s: bursts of `per_bucket` completions, with
/// `stall_s` of nothing at the start of every `period_s`.
pub fn stalling_timeline(
    seconds: f64,
    period_s: f64,
    stall_s: f64,
    per_bucket: u64,
) -> Vec<TimelinePoint> {
    let buckets = (seconds / 0.1).round() as usize;
    let period = (period_s / 0.1).round() as usize;
    let stall = (stall_s / 0.1).round() as usize;
    (0..buckets)
        .map(|i| {
            let completed = if i % period < stall { 0 } else { per_bucket };
            TimelinePoint {
                t_s: i as f64 * 0.1,
                completed,
                ok: completed,
                mean_latency_ms: if completed > 0 { 50.0 } else { 0.0 },
                in_flight: 0,
            }
        })
        .collect()
}

/// A steady timeline: `per_bucket` completions in every 0.1 s bucket.
pub fn steady_timeline(seconds: f64, per_bucket: u64) -> Vec<TimelinePoint> {
    stalling_timeline(seconds, 1.0, 0.0, per_bucket)
}

/// Asserts `value` is within `share` of `expected`.
#[track_caller]
pub fn assert_near(value: f64, expected: f64, share: f64) {
    assert!(
        (value - expected).abs() <= share * expected,
        "{value} is not within {:.0}% of {expected}",
        share * 100.0
    );
}

/// The same finding as [`chokepoint_diagnose::diagnose`], whose prose is also checked against
/// `tests/data/prose.jsonl`: the words recorded for these very steps (keyed by a hash of the
/// steps and context) before the diagnosis was split into deciding and describing. With
/// `CHOKEPOINT_RECORD_SUMMARIES=1` the prose is appended to that file instead (sort and dedup it
/// after: `sort -u`).
pub fn diagnosed(steps: &[Step], context: &SweepContext) -> chokepoint_diagnose::Finding {
    let finding = chokepoint_diagnose::diagnose(steps, context);
    let text = chokepoint_diagnose::describe(&finding);
    check_prose(steps, context, &text.summary, &text.evidence);
    finding
}

/// The facts of the finding that `pick` matches, as `pick` returns them.
pub fn facts<'f, T>(
    finding: &'f chokepoint_diagnose::Finding,
    pick: impl Fn(&'f chokepoint_result::Fact) -> Option<T>,
) -> Vec<T> {
    finding.facts.iter().filter_map(pick).collect()
}

/// Whether the finding has a fact `pick` accepts.
pub fn has(
    finding: &chokepoint_diagnose::Finding,
    pick: impl Fn(&chokepoint_result::Fact) -> bool,
) -> bool {
    finding.facts.iter().any(pick)
}

/// FNV-1a over the JSON of the steps and context: a key that stays the same across Rust
/// versions and runs.
/// A step as it was serialized when the prose was recorded (before a step held its whole load
/// report), so the keys of `prose.jsonl` stay the same.
#[derive(serde::Serialize)]
struct RecordedStep<'a> {
    clients: u32,
    throughput_rps: f64,
    ok_throughput_rps: f64,
    requests: u64,
    ok: u64,
    latency_ms: &'a LatencyMs,
    ok_latency_ms: &'a Option<LatencyMs>,
    error_latency_ms: &'a Option<LatencyMs>,
    errors: &'a ErrorCounts,
    error_rate: f64,
    downstream_inflight: &'a Option<DownstreamInFlight>,
    downstream: &'a Option<DownstreamStep>,
    target_cpu_pct: Option<f64>,
    generator_cpu_pct: f64,
    machine_cpu_pct: Option<f64>,
    duration_s: f64,
    ramp_s: f64,
    timeline_bucket_s: f64,
    timeline: &'a [TimelinePoint],
}

impl<'a> From<&'a Step> for RecordedStep<'a> {
    fn from(s: &'a Step) -> Self {
        RecordedStep {
            clients: s.clients,
            throughput_rps: s.throughput_rps,
            ok_throughput_rps: s.ok_throughput_rps,
            requests: s.requests,
            ok: s.ok,
            latency_ms: &s.latency_ms,
            ok_latency_ms: &s.ok_latency_ms,
            error_latency_ms: &s.error_latency_ms,
            errors: &s.errors,
            error_rate: s.error_rate,
            downstream_inflight: &s.downstream_inflight,
            downstream: &s.downstream,
            target_cpu_pct: s.target_cpu_pct,
            generator_cpu_pct: s.generator_cpu_pct,
            machine_cpu_pct: s.machine_cpu_pct,
            duration_s: s.duration_s,
            ramp_s: s.ramp_s,
            timeline_bucket_s: s.timeline_bucket_s,
            timeline: &s.timeline,
        }
    }
}

fn prose_key(steps: &[Step], context: &SweepContext) -> String {
    let recorded: Vec<RecordedStep> = steps.iter().map(RecordedStep::from).collect();
    let json = serde_json::to_string(&(recorded, context)).expect("json");
    let mut hash: u64 = 0xcbf29ce484222325;
    for byte in json.bytes() {
        hash ^= byte as u64;
        hash = hash.wrapping_mul(0x100000001b3);
    }
    format!("{hash:016x}")
}

#[track_caller]
pub fn check_prose(steps: &[Step], context: &SweepContext, summary: &str, evidence: &[String]) {
    use std::io::Write;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/prose.jsonl");
    let key = prose_key(steps, context);
    let line = serde_json::json!({ "key": key, "summary": summary, "evidence": evidence });
    if std::env::var_os("CHOKEPOINT_RECORD_SUMMARIES").is_some() {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("prose.jsonl");
        file.write_all(format!("{line}\n").as_bytes())
            .expect("append prose");
        return;
    }
    let text = std::fs::read_to_string(path).expect("tests/data/prose.jsonl");
    let recorded = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("prose line"))
        .find(|v| v["key"] == key.as_str())
        .unwrap_or_else(|| panic!("no prose recorded for these steps ({key})"));
    assert_eq!(recorded["summary"], summary, "summary of {key}");
    assert_eq!(
        recorded["evidence"],
        serde_json::json!(evidence),
        "evidence of {key}"
    );
}
