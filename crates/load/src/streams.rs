//! The streams in flight on each HTTP/2 connection over the measured window: the report's
//! [`Http2Figures`], from the lanes' counters at the window's start and at its end. The mean
//! streams in flight is the streams' time in flight over the window's length (Little's law),
//! so it is exact however short the window.
use crate::h2client::{H2Target, Lane};
use chokepoint_result::{ConnectionStreams, Http2Figures};
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

/// One lane's counters at an instant.
#[derive(Clone, Copy)]
struct Counters {
    completed: u64,
    opened: u64,
    goaways: u64,
    stream_us: u64,
}

impl Counters {
    fn of(lane: &Lane) -> Counters {
        Counters {
            completed: lane.completed.load(Relaxed),
            opened: lane.opened.load(Relaxed),
            goaways: lane.goaways.load(Relaxed),
            stream_us: lane.stream_us.load(Relaxed),
        }
    }
}

/// Each lane's counters at the window's start.
pub(crate) struct StreamSamples {
    at_start: Vec<Counters>,
}

impl StreamSamples {
    /// Starts the window: the counters so far are left out, the most streams starts again.
    pub(crate) fn begin(target: &H2Target) -> StreamSamples {
        for lane in &target.lanes {
            lane.max_in_flight
                .store(lane.in_flight.load(Relaxed), Relaxed);
        }
        StreamSamples {
            at_start: target.lanes.iter().map(|l| Counters::of(l)).collect(),
        }
    }

    /// The report's figures over a window of `length`.
    pub(crate) fn figures(&self, target: &H2Target, length: Duration) -> Http2Figures {
        let window_us = (length.as_micros() as f64).max(1.0);
        let per_connection: Vec<ConnectionStreams> = target
            .lanes
            .iter()
            .zip(&self.at_start)
            .map(|(lane, start)| {
                let now = Counters::of(lane);
                ConnectionStreams {
                    requests: now.completed - start.completed,
                    max_streams_in_flight: lane.max_in_flight.load(Relaxed),
                    mean_streams_in_flight: (now.stream_us - start.stream_us) as f64 / window_us,
                    opened: now.opened - start.opened,
                    goaways: now.goaways - start.goaways,
                }
            })
            .collect();
        let lanes = per_connection.len().max(1) as f64;
        Http2Figures {
            protocol: if target.tls.is_some() { "h2" } else { "h2c" }.into(),
            connections: target.lanes.len() as u32,
            server_max_concurrent_streams: target.server_max_streams,
            max_streams_in_flight: per_connection
                .iter()
                .map(|c| c.max_streams_in_flight)
                .max()
                .unwrap_or(0),
            mean_streams_in_flight: per_connection
                .iter()
                .map(|c| c.mean_streams_in_flight)
                .sum::<f64>()
                / lanes,
            goaways: per_connection.iter().map(|c| c.goaways).sum(),
            per_connection,
        }
    }
}
