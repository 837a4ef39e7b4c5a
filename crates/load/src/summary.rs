//! The figures of JMeter's summariser, sent every interval while a run goes on.
use crate::recorder::Samples;
use chokepoint_result::SpanFigures;
use hdrhistogram::Histogram;
use std::time::Duration;

/// The summariser figures of `samples` over `elapsed`.
pub(crate) fn span_figures(samples: &Samples, elapsed: Duration) -> SpanFigures {
    let h = &samples.latency;
    let empty = h.is_empty();
    SpanFigures {
        requests: samples.requests(),
        errors: samples.error_count(),
        elapsed_s: elapsed.as_secs_f64(),
        min_ms: if empty { 0.0 } else { h.min() as f64 / 1000.0 },
        mean_ms: if empty { 0.0 } else { h.mean() / 1000.0 },
        max_ms: if empty { 0.0 } else { h.max() as f64 / 1000.0 },
    }
}

/// One summariser event: the last interval and the running total (`summary +` / `summary =`).
#[derive(Debug, Clone)]
pub struct IntervalSummary {
    /// Start of the interval, from the start of the measured window.
    pub start: Duration,
    /// Length of the interval.
    pub elapsed: Duration,
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
