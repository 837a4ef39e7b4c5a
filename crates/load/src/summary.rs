//! The figures of JMeter's summariser, sent every interval while a run goes on.
use crate::recorder::Samples;
use hdrhistogram::Histogram;
use std::time::Duration;

/// Count, errors and latency of a span of a run (an interval, or everything so far).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SpanFigures {
    /// Completed requests.
    pub requests: u64,
    /// Of those, failed.
    pub errors: u64,
    /// Length of the span.
    pub elapsed: Duration,
    /// Smallest latency, ms (0 when none).
    pub min_ms: f64,
    /// Mean latency, ms.
    pub mean_ms: f64,
    /// Largest latency, ms.
    pub max_ms: f64,
}

impl SpanFigures {
    /// The figures of `samples` over `elapsed`.
    pub fn of(samples: &Samples, elapsed: Duration) -> SpanFigures {
        let h = &samples.latency;
        let empty = h.is_empty();
        SpanFigures {
            requests: samples.requests(),
            errors: samples.error_count(),
            elapsed,
            min_ms: if empty { 0.0 } else { h.min() as f64 / 1000.0 },
            mean_ms: if empty { 0.0 } else { h.mean() / 1000.0 },
            max_ms: if empty { 0.0 } else { h.max() as f64 / 1000.0 },
        }
    }

    /// Requests per second over the span.
    pub fn rate(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            self.requests as f64 / s
        } else {
            0.0
        }
    }
}

/// One summariser event: the last interval and the running total (`summary +` / `summary =`).
#[derive(Debug, Clone)]
pub struct IntervalSummary {
    /// Start of the interval, from the start of the measured window.
    pub start: Duration,
    /// The interval alone.
    pub interval: SpanFigures,
    /// Everything since the measured window began.
    pub total: SpanFigures,
    /// Requests in flight when the interval ended.
    pub active: u64,
    /// The generator's CPU use over the interval, percent of the cores it may use.
    pub generator_cpu_pct: f64,
    /// The interval's latency histogram in microseconds (for an HdrHistogram interval log).
    pub histogram: Histogram<u64>,
    /// True for the last event of a run (a partial interval).
    pub last: bool,
}
