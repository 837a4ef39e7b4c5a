//! Where each request's outcome is recorded.
//!
//! Every worker thread records into its own [`Samples`] (HdrHistograms, counts, a timeline), held
//! in a thread-local and registered with the run's [`Registry`]; the lock around it is only ever
//! contended when the coordinator drains it, once per interval. This keeps per-request cost to a
//! few histogram increments (wrk2's per-thread histograms, merged with `add`).
use crate::failure::Failure;
use chokepoint_result::LatencyMs;
use hdrhistogram::Histogram;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// The largest latency a histogram holds, in microseconds (one hour); larger values are clamped.
pub const HIGHEST_US: u64 = 3_600_000_000;

/// A fresh latency histogram in microseconds, 3 significant digits.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_US, 3).expect("constant histogram bounds are valid")
}

fn micros(d: Duration) -> u64 {
    (d.as_micros() as u64).clamp(1, HIGHEST_US)
}

/// One timeline bucket's sums.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bucket {
    /// Completions (ok and errors).
    pub completed: u64,
    /// Successful completions.
    pub ok: u64,
    /// Sum of their latencies, in microseconds.
    pub latency_sum_us: u64,
}

/// One finished request, as a worker hands it to the recorder.
#[derive(Debug, Clone, Copy)]
pub struct Outcome {
    /// Latency as reported: from the intended send time in the open model.
    pub latency: Duration,
    /// Latency from the actual send time (open model only).
    pub uncorrected: Option<Duration>,
    /// How late the request started against its schedule (open model only).
    pub lateness: Option<Duration>,
    /// `None` for a 2xx response.
    pub failure: Option<Failure>,
    /// Response bytes.
    pub bytes: u64,
    /// Timeline bucket of the completion.
    pub bucket: u64,
    /// When the request opened a connection: the TCP connect's time.
    pub connect: Option<Duration>,
    /// When it opened a TLS connection: the handshake's time.
    pub handshake: Option<Duration>,
    /// Which request of a targets file it was; `None` without one.
    pub target: Option<usize>,
}

/// What one request of a targets file got.
#[derive(Debug, Clone)]
pub struct TargetSamples {
    /// Latency of its completions, microseconds.
    pub latency: Histogram<u64>,
    /// Its successful completions.
    pub ok: u64,
    /// Its failures by kind.
    pub errors: HashMap<Failure, u64>,
}

impl Default for TargetSamples {
    fn default() -> Self {
        TargetSamples {
            latency: new_histogram(),
            ok: 0,
            errors: HashMap::new(),
        }
    }
}

impl TargetSamples {
    fn add(&mut self, other: &TargetSamples) {
        let _ = self.latency.add(&other.latency);
        self.ok += other.ok;
        for (kind, count) in &other.errors {
            *self.errors.entry(*kind).or_insert(0) += count;
        }
    }

    fn reset(&mut self) {
        self.latency.reset();
        self.ok = 0;
        self.errors.clear();
    }
}

/// Requests that started more than this late count as late.
pub const LATE_THRESHOLD: Duration = Duration::from_millis(1);

/// What one thread (or, merged, the whole run) recorded.
#[derive(Debug, Clone)]
pub struct Samples {
    /// Latency of every completion, microseconds.
    pub latency: Histogram<u64>,
    /// Latency of successful completions.
    pub ok_latency: Histogram<u64>,
    /// Latency of failed completions.
    pub error_latency: Histogram<u64>,
    /// Uncorrected latency (open model).
    pub uncorrected: Histogram<u64>,
    /// TCP connect times, microseconds.
    pub connect: Histogram<u64>,
    /// TLS handshake times, microseconds.
    pub handshake: Histogram<u64>,
    /// Per request of a targets file, by its index.
    pub per_target: Vec<TargetSamples>,
    /// Successful completions.
    pub ok: u64,
    /// Failures by kind.
    pub errors: HashMap<Failure, u64>,
    /// Response bytes.
    pub bytes: u64,
    /// Requests started more than [`LATE_THRESHOLD`] late.
    pub late_count: u64,
    /// Sum of their lateness, microseconds.
    pub late_sum_us: u64,
    /// Largest lateness, microseconds.
    pub late_max_us: u64,
    /// Timeline buckets from `timeline_base` on.
    pub timeline: Vec<Bucket>,
    /// The absolute index of `timeline[0]`.
    pub timeline_base: u64,
}

impl Default for Samples {
    fn default() -> Self {
        Samples {
            latency: new_histogram(),
            ok_latency: new_histogram(),
            error_latency: new_histogram(),
            uncorrected: new_histogram(),
            connect: new_histogram(),
            handshake: new_histogram(),
            per_target: Vec::new(),
            ok: 0,
            errors: HashMap::new(),
            bytes: 0,
            late_count: 0,
            late_sum_us: 0,
            late_max_us: 0,
            timeline: Vec::new(),
            timeline_base: 0,
        }
    }
}

impl Samples {
    /// Completions recorded.
    pub fn requests(&self) -> u64 {
        self.latency.len()
    }

    /// Failed completions.
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }

    /// Records one outcome.
    pub fn record(&mut self, outcome: &Outcome) {
        let us = micros(outcome.latency);
        self.latency.saturating_record(us);
        match outcome.failure {
            None => {
                self.ok += 1;
                self.ok_latency.saturating_record(us);
            }
            Some(failure) => {
                *self.errors.entry(failure).or_insert(0) += 1;
                self.error_latency.saturating_record(us);
            }
        }
        if let Some(raw) = outcome.uncorrected {
            self.uncorrected.saturating_record(micros(raw));
        }
        if let Some(connect) = outcome.connect {
            self.connect.saturating_record(micros(connect));
        }
        if let Some(handshake) = outcome.handshake {
            self.handshake.saturating_record(micros(handshake));
        }
        if let Some(index) = outcome.target {
            if index >= self.per_target.len() {
                self.per_target
                    .resize_with(index + 1, TargetSamples::default);
            }
            let target = &mut self.per_target[index];
            target.latency.saturating_record(us);
            match outcome.failure {
                None => target.ok += 1,
                Some(failure) => *target.errors.entry(failure).or_insert(0) += 1,
            }
        }
        if let Some(late) = outcome.lateness.filter(|l| *l > LATE_THRESHOLD) {
            let late_us = late.as_micros() as u64;
            self.late_count += 1;
            self.late_sum_us += late_us;
            self.late_max_us = self.late_max_us.max(late_us);
        }
        self.bytes += outcome.bytes;
        let index = outcome.bucket.max(self.timeline_base) - self.timeline_base;
        let index = index as usize;
        if index >= self.timeline.len() {
            self.timeline.resize(index + 1, Bucket::default());
        }
        let bucket = &mut self.timeline[index];
        bucket.completed += 1;
        bucket.latency_sum_us += us;
        if outcome.failure.is_none() {
            bucket.ok += 1;
        }
    }

    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &Samples) {
        // Same bounds on both sides, so `add` cannot fail.
        let _ = self.latency.add(&other.latency);
        let _ = self.ok_latency.add(&other.ok_latency);
        let _ = self.error_latency.add(&other.error_latency);
        let _ = self.uncorrected.add(&other.uncorrected);
        let _ = self.connect.add(&other.connect);
        let _ = self.handshake.add(&other.handshake);
        if other.per_target.len() > self.per_target.len() {
            self.per_target
                .resize_with(other.per_target.len(), TargetSamples::default);
        }
        for (mine, theirs) in self.per_target.iter_mut().zip(&other.per_target) {
            mine.add(theirs);
        }
        self.ok += other.ok;
        for (kind, count) in &other.errors {
            *self.errors.entry(*kind).or_insert(0) += count;
        }
        self.bytes += other.bytes;
        self.late_count += other.late_count;
        self.late_sum_us += other.late_sum_us;
        self.late_max_us = self.late_max_us.max(other.late_max_us);
        for (offset, bucket) in other.timeline.iter().enumerate() {
            let absolute = other.timeline_base + offset as u64;
            let index = (absolute.max(self.timeline_base) - self.timeline_base) as usize;
            if index >= self.timeline.len() {
                self.timeline.resize(index + 1, Bucket::default());
            }
            let mine = &mut self.timeline[index];
            mine.completed += bucket.completed;
            mine.ok += bucket.ok;
            mine.latency_sum_us += bucket.latency_sum_us;
        }
    }

    /// Adds `self` into `into` and empties `self`, keeping its allocations.
    pub fn drain_into(&mut self, into: &mut Samples) {
        into.add(self);
        self.latency.reset();
        self.ok_latency.reset();
        self.error_latency.reset();
        self.uncorrected.reset();
        self.connect.reset();
        self.handshake.reset();
        self.per_target.iter_mut().for_each(TargetSamples::reset);
        self.ok = 0;
        self.errors.clear();
        self.bytes = 0;
        self.late_count = 0;
        self.late_sum_us = 0;
        self.late_max_us = 0;
        self.timeline_base += self.timeline.len().saturating_sub(1) as u64;
        self.timeline.clear();
    }
}

/// Percentiles of a microsecond histogram, in milliseconds.
pub fn latency_ms(h: &Histogram<u64>) -> LatencyMs {
    if h.is_empty() {
        return LatencyMs::default();
    }
    let ms = |us: u64| us as f64 / 1000.0;
    let q = |quantile: f64| ms(h.value_at_quantile(quantile));
    LatencyMs {
        min: ms(h.min()),
        mean: h.mean() / 1000.0,
        p50: q(0.50),
        p66: q(0.66),
        p75: q(0.75),
        p80: q(0.80),
        p90: q(0.90),
        p95: q(0.95),
        p98: q(0.98),
        p99: q(0.99),
        p999: q(0.999),
        max: ms(h.max()),
    }
}

/// The per-thread samples of one run, so the coordinator can drain them.
#[derive(Debug, Default)]
pub struct Registry {
    run_id: u64,
    threads: Mutex<Vec<Arc<Mutex<Samples>>>>,
}

static NEXT_RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

thread_local! {
    static LOCAL: RefCell<Option<(u64, Arc<Mutex<Samples>>)>> = const { RefCell::new(None) };
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while recording leaves plain counters behind: still usable.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Registry {
    /// A registry for a new run.
    pub fn new() -> Registry {
        Registry {
            run_id: NEXT_RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            threads: Mutex::new(Vec::new()),
        }
    }

    /// Records an outcome into the calling thread's samples (created on first use).
    pub fn record(&self, outcome: &Outcome) {
        LOCAL.with(|local| {
            let mut local = local.borrow_mut();
            let samples = match local.as_ref() {
                Some((run, samples)) if *run == self.run_id => samples,
                _ => {
                    let samples = Arc::new(Mutex::new(Samples::default()));
                    lock(&self.threads).push(samples.clone());
                    &local.insert((self.run_id, samples)).1
                }
            };
            lock(samples).record(outcome);
        });
    }

    /// Moves everything recorded so far into `into`.
    pub fn drain_into(&self, into: &mut Samples) {
        let threads = lock(&self.threads).clone();
        for samples in threads {
            lock(&samples).drain_into(into);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(ms: u64, failure: Option<Failure>, bucket: u64) -> Outcome {
        Outcome {
            latency: Duration::from_millis(ms),
            uncorrected: None,
            lateness: None,
            failure,
            bytes: 10,
            bucket,
            connect: None,
            handshake: None,
            target: Some(bucket as usize % 2),
        }
    }

    #[test]
    fn drains_merge_buckets_and_counts_exactly() {
        let registry = Registry::new();
        registry.record(&outcome(10, None, 0));
        registry.record(&outcome(20, Some(Failure::Status(503)), 2));
        let mut total = Samples::default();
        registry.drain_into(&mut total);
        registry.record(&outcome(30, None, 2));
        registry.record(&outcome(40, Some(Failure::Reset), 3));
        registry.drain_into(&mut total);
        assert_eq!(total.requests(), 4);
        assert_eq!(total.ok, 2);
        assert_eq!(total.errors[&Failure::Status(503)], 1);
        assert_eq!(total.errors[&Failure::Reset], 1);
        assert_eq!(total.bytes, 40);
        let completed: Vec<u64> = total.timeline.iter().map(|b| b.completed).collect();
        assert_eq!(completed, vec![1, 0, 2, 1]);
        assert_eq!(total.timeline[2].ok, 1);
        // Buckets 0 and 2 were target 0, bucket 3 target 1.
        let per_target: Vec<(u64, u64)> = total
            .per_target
            .iter()
            .map(|t| (t.latency.len(), t.ok))
            .collect();
        assert_eq!(per_target, vec![(3, 2), (1, 0)]);
        let latency = latency_ms(&total.ok_latency);
        assert!((latency.min - 10.0).abs() < 0.1 && (latency.max - 30.0).abs() < 0.1);
    }
}
