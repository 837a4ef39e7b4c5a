//! In-flight accounting: how many requests and connections a downstream holds at once.
//!
//! This piece knows nothing of HTTP, so that `chokepoint mock` and a later `chokepoint proxy`
//! count the same way. A caller marks a request with [`InFlightMeter::request_started`] and keeps
//! the returned [`RequestGuard`] until the response is fully sent; a connection the same way with
//! [`InFlightMeter::connection_opened`]. The meter keeps, for the current window (since the start
//! or the last [`InFlightMeter::reset`]): the most requests in flight at once, the time-weighted
//! mean, and one sample per [`SAMPLE_PERIOD`] holding the most in flight during that period.
//!
//! On a multiplexed connection (HTTP/2) each stream is a request: the caller marks it with
//! [`InFlightMeter::stream_started`] and the connection's [`StreamCount`], and the meter also
//! keeps the most streams in flight at once on any one connection. An HTTP/2 connection is
//! marked with [`InFlightMeter::h2_connection_opened`] beside its [`ConnectionGuard`].
//!
//! Samples are closed lazily, on the next event or read, so the meter needs no timer task; a
//! period with no event in it is sampled with the count that held throughout it.
use chokepoint_result::InFlightSample;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The width of one sample of the in-flight series.
pub const SAMPLE_PERIOD: Duration = Duration::from_millis(100);

/// The most samples kept: 10 minutes at 100 ms. Older ones are dropped first.
pub const MAX_SAMPLES: usize = 6000;

/// Counts requests and connections in flight; cheap enough to call on every request.
#[derive(Debug)]
pub struct InFlightMeter {
    window: Mutex<Window>,
}

/// What the meter saw in the current window, read at one instant.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InFlightSnapshot {
    /// Seconds since the window began.
    pub window_s: f64,
    /// Requests started in the window.
    pub requests: u64,
    /// Requests in flight now.
    pub in_flight: u64,
    /// The most requests in flight at once in the window.
    pub max_in_flight: u64,
    /// Time-weighted mean of requests in flight over the window.
    pub mean_in_flight: f64,
    /// One sample per [`SAMPLE_PERIOD`], oldest first, at most [`MAX_SAMPLES`].
    pub series: Vec<InFlightSample>,
    /// Connections open now.
    pub connections_open: u64,
    /// The most connections open at once in the window.
    pub max_connections_open: u64,
    /// Connections opened in the window.
    pub connections_accepted: u64,
    /// HTTP/2 connections open now.
    pub h2_connections_open: u64,
    /// HTTP/2 connections opened in the window.
    pub h2_connections_accepted: u64,
    /// The most HTTP/2 connections open at once in the window.
    pub max_h2_connections_open: u64,
    /// The most requests (streams) in flight at once on one HTTP/2 connection in the window.
    pub max_streams_per_connection: u64,
}

/// The requests (streams) in flight on one multiplexed connection.
#[derive(Debug, Default)]
pub struct StreamCount(AtomicU64);

impl StreamCount {
    /// A count for a new connection.
    pub fn new() -> Arc<StreamCount> {
        Arc::new(StreamCount::default())
    }

    /// Streams in flight on the connection now.
    pub fn now(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

#[derive(Debug)]
struct Window {
    started: Instant,
    requests: u64,
    in_flight: u64,
    max_in_flight: u64,
    /// Integral of in-flight over time since `started`, in request-nanoseconds, up to `last_change`.
    area_ns: u128,
    last_change: Instant,
    /// Index of the sample period that is still open (0 = the first after `started`).
    period: u64,
    period_max: u64,
    series: VecDeque<InFlightSample>,
    connections_open: u64,
    max_connections_open: u64,
    connections_accepted: u64,
    h2_connections_open: u64,
    h2_connections_accepted: u64,
    max_h2_connections_open: u64,
    max_streams_per_connection: u64,
}

impl Window {
    fn new(now: Instant, in_flight: u64, connections_open: u64, h2_open: u64) -> Window {
        Window {
            started: now,
            requests: 0,
            in_flight,
            max_in_flight: in_flight,
            area_ns: 0,
            last_change: now,
            period: 0,
            period_max: in_flight,
            series: VecDeque::new(),
            connections_open,
            max_connections_open: connections_open,
            connections_accepted: 0,
            h2_connections_open: h2_open,
            h2_connections_accepted: 0,
            max_h2_connections_open: h2_open,
            max_streams_per_connection: 0,
        }
    }

    /// Brings the integral and the sample series up to `now`, before a change at `now`.
    fn advance(&mut self, now: Instant) {
        let now = now.max(self.last_change);
        self.area_ns +=
            u128::from(self.in_flight) * now.duration_since(self.last_change).as_nanos();
        self.last_change = now;
        let period_ns = SAMPLE_PERIOD.as_nanos();
        let current = (now.duration_since(self.started).as_nanos() / period_ns) as u64;
        if current == self.period {
            return;
        }
        // Close the open period, then every whole period in which nothing changed.
        self.push_sample(self.period, self.period_max);
        let skipped_from = (self.period + 1).max(current.saturating_sub(MAX_SAMPLES as u64));
        for period in skipped_from..current {
            self.push_sample(period, self.in_flight);
        }
        self.period = current;
        self.period_max = self.in_flight;
    }

    fn push_sample(&mut self, period: u64, in_flight: u64) {
        if self.series.len() == MAX_SAMPLES {
            self.series.pop_front();
        }
        self.series.push_back(InFlightSample {
            t_ms: period * SAMPLE_PERIOD.as_millis() as u64,
            in_flight,
            connections_open: self.connections_open,
        });
    }

    fn set_in_flight(&mut self, in_flight: u64) {
        self.in_flight = in_flight;
        self.max_in_flight = self.max_in_flight.max(in_flight);
        self.period_max = self.period_max.max(in_flight);
    }
}

impl Default for InFlightMeter {
    fn default() -> Self {
        InFlightMeter {
            window: Mutex::new(Window::new(Instant::now(), 0, 0, 0)),
        }
    }
}

impl InFlightMeter {
    /// A meter whose window starts now.
    pub fn new() -> Arc<InFlightMeter> {
        Arc::new(InFlightMeter::default())
    }

    fn lock(&self) -> MutexGuard<'_, Window> {
        // A panic while holding the lock cannot leave the counters inconsistent enough to matter.
        self.window
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Counts a request as in flight until the guard is dropped.
    pub fn request_started(self: &Arc<Self>) -> RequestGuard {
        self.request_started_at(Instant::now());
        RequestGuard {
            meter: Arc::clone(self),
            streams: None,
        }
    }

    /// Counts a stream of a multiplexed connection as a request in flight until the guard is
    /// dropped, and as one of `streams` on its connection.
    pub fn stream_started(self: &Arc<Self>, streams: &Arc<StreamCount>) -> RequestGuard {
        let mut window = self.lock();
        window.advance(Instant::now());
        window.requests += 1;
        let in_flight = window.in_flight + 1;
        window.set_in_flight(in_flight);
        let on_connection = streams.0.fetch_add(1, Ordering::Relaxed) + 1;
        window.max_streams_per_connection = window.max_streams_per_connection.max(on_connection);
        RequestGuard {
            meter: Arc::clone(self),
            streams: Some(Arc::clone(streams)),
        }
    }

    /// Counts an open connection as speaking HTTP/2 until the guard is dropped.
    pub fn h2_connection_opened(self: &Arc<Self>) -> H2ConnectionGuard {
        let mut window = self.lock();
        window.h2_connections_accepted += 1;
        window.h2_connections_open += 1;
        window.max_h2_connections_open = window
            .max_h2_connections_open
            .max(window.h2_connections_open);
        H2ConnectionGuard {
            meter: Arc::clone(self),
        }
    }

    /// Counts a connection as open until the guard is dropped.
    pub fn connection_opened(self: &Arc<Self>) -> ConnectionGuard {
        let mut window = self.lock();
        window.advance(Instant::now());
        window.connections_accepted += 1;
        window.connections_open += 1;
        window.max_connections_open = window.max_connections_open.max(window.connections_open);
        ConnectionGuard {
            meter: Arc::clone(self),
        }
    }

    fn request_started_at(&self, now: Instant) {
        let mut window = self.lock();
        window.advance(now);
        window.requests += 1;
        let in_flight = window.in_flight + 1;
        window.set_in_flight(in_flight);
    }

    fn request_finished_at(&self, now: Instant) {
        let mut window = self.lock();
        window.advance(now);
        let in_flight = window.in_flight.saturating_sub(1);
        window.set_in_flight(in_flight);
    }

    fn connection_closed(&self) {
        let mut window = self.lock();
        window.advance(Instant::now());
        window.connections_open = window.connections_open.saturating_sub(1);
    }

    /// Starts a new window now. What is in flight stays in flight and counts as the new window's
    /// starting level; counters, maxima, the mean and the series start afresh.
    pub fn reset(&self) {
        self.reset_at(Instant::now());
    }

    fn reset_at(&self, now: Instant) {
        let mut window = self.lock();
        let (in_flight, connections_open) = (window.in_flight, window.connections_open);
        *window = Window::new(now, in_flight, connections_open, window.h2_connections_open);
    }

    /// What the meter saw in the current window, up to now.
    pub fn snapshot(&self) -> InFlightSnapshot {
        self.snapshot_at(Instant::now())
    }

    fn snapshot_at(&self, now: Instant) -> InFlightSnapshot {
        let mut window = self.lock();
        window.advance(now);
        let elapsed = window.last_change.duration_since(window.started);
        let mean = if elapsed.is_zero() {
            window.in_flight as f64
        } else {
            window.area_ns as f64 / elapsed.as_nanos() as f64
        };
        InFlightSnapshot {
            window_s: elapsed.as_secs_f64(),
            requests: window.requests,
            in_flight: window.in_flight,
            max_in_flight: window.max_in_flight,
            mean_in_flight: mean,
            series: window.series.iter().copied().collect(),
            connections_open: window.connections_open,
            max_connections_open: window.max_connections_open,
            connections_accepted: window.connections_accepted,
            h2_connections_open: window.h2_connections_open,
            h2_connections_accepted: window.h2_connections_accepted,
            max_h2_connections_open: window.max_h2_connections_open,
            max_streams_per_connection: window.max_streams_per_connection,
        }
    }
}

/// Keeps one request in flight; dropping it ends the request.
#[derive(Debug)]
pub struct RequestGuard {
    meter: Arc<InFlightMeter>,
    /// The stream count of its connection, for a stream of a multiplexed one.
    streams: Option<Arc<StreamCount>>,
}

impl Drop for RequestGuard {
    fn drop(&mut self) {
        if let Some(streams) = &self.streams {
            streams.0.fetch_sub(1, Ordering::Relaxed);
        }
        self.meter.request_finished_at(Instant::now());
    }
}

/// Keeps one connection counted as HTTP/2; dropping it ends that.
#[derive(Debug)]
pub struct H2ConnectionGuard {
    meter: Arc<InFlightMeter>,
}

impl Drop for H2ConnectionGuard {
    fn drop(&mut self) {
        let mut window = self.meter.lock();
        window.h2_connections_open = window.h2_connections_open.saturating_sub(1);
    }
}

/// Keeps one connection open in the count; dropping it closes it.
#[derive(Debug)]
pub struct ConnectionGuard {
    meter: Arc<InFlightMeter>,
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.meter.connection_closed();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn max_and_time_weighted_mean() {
        let meter = InFlightMeter::default();
        let t0 = meter.lock().started;
        // 2 in flight for the first 500 ms, 0 for the next 500 ms: mean 1.0.
        meter.request_started_at(t0);
        meter.request_started_at(t0);
        meter.request_finished_at(t0 + ms(500));
        meter.request_finished_at(t0 + ms(500));
        let snap = meter.snapshot_at(t0 + ms(1000));
        assert_eq!(snap.requests, 2);
        assert_eq!(snap.in_flight, 0);
        assert_eq!(snap.max_in_flight, 2);
        assert!(
            (snap.mean_in_flight - 1.0).abs() < 1e-9,
            "{}",
            snap.mean_in_flight
        );
    }

    #[test]
    fn series_holds_the_max_of_each_period_and_fills_quiet_periods() {
        let meter = InFlightMeter::default();
        let t0 = meter.lock().started;
        // Period 0: a burst to 3 that ends within the period.
        for _ in 0..3 {
            meter.request_started_at(t0 + ms(10));
        }
        for _ in 0..2 {
            meter.request_finished_at(t0 + ms(20));
        }
        // Periods 1..=3: nothing happens, 1 stays in flight. Period 4: it ends.
        meter.request_finished_at(t0 + ms(450));
        let snap = meter.snapshot_at(t0 + ms(520));
        let counts: Vec<u64> = snap.series.iter().map(|s| s.in_flight).collect();
        assert_eq!(counts, vec![3, 1, 1, 1, 1]);
        let times: Vec<u64> = snap.series.iter().map(|s| s.t_ms).collect();
        assert_eq!(times, vec![0, 100, 200, 300, 400]);
    }

    #[test]
    fn series_is_bounded() {
        let meter = InFlightMeter::default();
        let t0 = meter.lock().started;
        meter.request_started_at(t0);
        let snap = meter.snapshot_at(t0 + SAMPLE_PERIOD * (MAX_SAMPLES as u32 * 3));
        assert_eq!(snap.series.len(), MAX_SAMPLES);
        assert!(snap.series.iter().all(|s| s.in_flight == 1));
        assert_eq!(
            snap.series.last().map(|s| s.t_ms),
            Some((MAX_SAMPLES as u64 * 3 - 1) * 100)
        );
    }

    #[test]
    fn reset_keeps_what_is_in_flight_and_clears_the_rest() {
        let meter = InFlightMeter::new();
        let first = meter.request_started();
        let second = meter.request_started();
        let connection = meter.connection_opened();
        drop(second);
        meter.reset();
        let snap = meter.snapshot();
        assert_eq!(snap.requests, 0);
        assert_eq!(snap.in_flight, 1);
        assert_eq!(snap.max_in_flight, 1);
        assert_eq!(snap.connections_open, 1);
        assert_eq!(snap.connections_accepted, 0);
        drop(first);
        drop(connection);
        let snap = meter.snapshot();
        assert_eq!((snap.in_flight, snap.connections_open), (0, 0));
        assert_eq!(snap.max_connections_open, 1);
    }

    #[test]
    fn streams_count_as_requests_and_the_most_on_one_connection_is_kept() {
        let meter = InFlightMeter::new();
        let (first, second) = (StreamCount::new(), StreamCount::new());
        let _h2 = (meter.h2_connection_opened(), meter.h2_connection_opened());
        // 3 streams on the first connection, 2 on the second: 5 in flight, 3 on one.
        let mut held: Vec<RequestGuard> = (0..3).map(|_| meter.stream_started(&first)).collect();
        held.extend((0..2).map(|_| meter.stream_started(&second)));
        let snap = meter.snapshot();
        assert_eq!((snap.in_flight, snap.max_streams_per_connection), (5, 3));
        assert_eq!(
            (snap.h2_connections_open, snap.h2_connections_accepted),
            (2, 2)
        );
        assert_eq!(snap.max_h2_connections_open, 2);
        held.clear();
        assert_eq!((first.now(), second.now()), (0, 0));
        let plain = meter.request_started();
        let snap = meter.snapshot();
        assert_eq!(
            (snap.in_flight, snap.requests, snap.max_in_flight),
            (1, 6, 5)
        );
        drop(plain);
        meter.reset();
        let snap = meter.snapshot();
        assert_eq!(snap.max_streams_per_connection, 0);
        assert_eq!(
            (snap.h2_connections_open, snap.h2_connections_accepted),
            (2, 0)
        );
        // The connections still open are the new window's starting level.
        assert_eq!(snap.max_h2_connections_open, 2);
        drop(_h2);
        assert_eq!(meter.snapshot().max_h2_connections_open, 2);
        meter.reset();
        assert_eq!(meter.snapshot().max_h2_connections_open, 0);
    }
}
