//! A stub's timing and failure: per-stub delays (fixed or drawn from a distribution), the
//! dribbled body (`chunkedDribbleDelay`) and WireMock's faults.
use std::time::Duration;

/// A per-stub delay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Delay {
    /// Always this long.
    Fixed(Duration),
    /// `median · e^(sigma · N(0,1))` milliseconds, capped at `max_ms` if given.
    LogNormal {
        /// Median, ms.
        median_ms: f64,
        /// Spread.
        sigma: f64,
        /// WireMock's optional `maxValue`, ms.
        max_ms: Option<f64>,
    },
    /// Uniform between `lower_ms` and `upper_ms`.
    Uniform {
        /// Lower bound, ms.
        lower_ms: f64,
        /// Upper bound, ms.
        upper_ms: f64,
    },
}

impl Delay {
    /// The typical delay: the fixed value or the distribution's median.
    pub fn typical(&self) -> Duration {
        match *self {
            Delay::Fixed(d) => d,
            Delay::LogNormal {
                median_ms, max_ms, ..
            } => ms(max_ms.map_or(median_ms, |max| median_ms.min(max))),
            Delay::Uniform { lower_ms, upper_ms } => ms((lower_ms + upper_ms) / 2.0),
        }
    }

    /// One draw.
    pub fn sample(&self) -> Duration {
        use rand::Rng;
        use rand_distr::Distribution;
        match *self {
            Delay::Fixed(d) => d,
            Delay::LogNormal {
                median_ms,
                sigma,
                max_ms,
            } => {
                let draw = match rand_distr::LogNormal::new(median_ms.ln(), sigma) {
                    Ok(dist) => dist.sample(&mut rand::thread_rng()),
                    Err(_) => median_ms,
                };
                ms(max_ms.map_or(draw, |max| draw.min(max)))
            }
            Delay::Uniform { lower_ms, upper_ms } => {
                if upper_ms > lower_ms {
                    ms(rand::thread_rng().gen_range(lower_ms..=upper_ms))
                } else {
                    ms(lower_ms)
                }
            }
        }
    }
}

pub(crate) fn ms(value: f64) -> Duration {
    Duration::from_secs_f64(value.max(0.0) / 1000.0)
}

/// `chunkedDribbleDelay`: the body in `chunks` pieces spread over `total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dribble {
    /// `numberOfChunks`.
    pub chunks: u32,
    /// `totalDuration`.
    pub total: Duration,
}

/// WireMock's faults, as a client sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Close with `SO_LINGER` 0: the client gets a TCP reset.
    ConnectionResetByPeer,
    /// Close without a response.
    EmptyResponse,
    /// A 200 status line and chunked headers, then garbage, then close.
    MalformedResponseChunk,
    /// Garbage, then close.
    RandomDataThenClose,
}

impl Fault {
    /// WireMock's name of the fault.
    pub fn name(self) -> &'static str {
        match self {
            Fault::ConnectionResetByPeer => "CONNECTION_RESET_BY_PEER",
            Fault::EmptyResponse => "EMPTY_RESPONSE",
            Fault::MalformedResponseChunk => "MALFORMED_RESPONSE_CHUNK",
            Fault::RandomDataThenClose => "RANDOM_DATA_THEN_CLOSE",
        }
    }

    pub(crate) const ALL: [Fault; 4] = [
        Fault::ConnectionResetByPeer,
        Fault::EmptyResponse,
        Fault::MalformedResponseChunk,
        Fault::RandomDataThenClose,
    ];
}
