//! HdrHistograms outside the process: the compressed text encoding that results carry (so a
//! merge adds distributions, never percentiles), and HdrHistogram interval logs (the format of
//! the Java HdrHistogram's `HistogramLogWriter`, read by its `HistogramLogProcessor` and by every
//! port of it).
//!
//! A run's histograms are encoded once, when its report is made ([`histograms_of`]); a merge
//! decodes them ([`decode`]) and adds them. Interval logs open with comment lines naming the
//! command, the run id and the shard ([`LogHeader`]), so a log found on a shared volume says
//! which run it belongs to.
use crate::recorder::{new_histogram, Samples};
use base64::Engine as _;
use chokepoint_result::LatencyHistograms;
use hdrhistogram::serialization::interval_log::{
    IntervalLogHistogram, IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use std::io::Write;
use std::time::{Duration, SystemTime};

/// The V2 compressed encoding of `histogram`, base64 (an interval log line's last field).
pub fn encode(histogram: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(histogram, &mut bytes)
        .expect("writing to a Vec cannot fail, and a u64 histogram always encodes");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Decodes [`encode`]'s text into a histogram with chokepoint's bounds, so that histograms from
/// any source can be added without a bounds error.
pub fn decode(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| format!("not base64 ({e})"))?;
    let decoded: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("not an HdrHistogram ({e:?})"))?;
    let mut histogram = new_histogram();
    histogram
        .add(&decoded)
        .map_err(|e| format!("an HdrHistogram out of chokepoint's range ({e:?})"))?;
    Ok(histogram)
}

/// The encoded histograms of everything `samples` recorded; `uncorrected` only in the open model.
pub fn histograms_of(samples: &Samples, open: bool) -> LatencyHistograms {
    LatencyHistograms {
        latency: encode(&samples.latency),
        ok: encode(&samples.ok_latency),
        error: encode(&samples.error_latency),
        uncorrected: open.then(|| encode(&samples.uncorrected)),
    }
}

/// What an interval log says about itself in its opening lines.
#[derive(Debug, Clone, PartialEq)]
pub struct LogHeader {
    /// The command that wrote it, e.g. `chokepoint load http://...`.
    pub command: String,
    /// The run id and shard, when the run is sharded: `run-id=... shard=1/3`.
    pub shard: Option<String>,
    /// When the log's timestamps begin (`#[StartTime]`, and `#[BaseTime]`: timestamps are seconds
    /// after it).
    pub start: SystemTime,
}

impl LogHeader {
    /// The comment lines, in order.
    pub fn comments(&self) -> Vec<String> {
        std::iter::once(self.command.clone())
            .chain(self.shard.clone())
            .collect()
    }
}

/// One histogram of an interval log.
#[derive(Debug, Clone)]
pub struct LoggedInterval {
    /// Seconds after the log's base time.
    pub start: Duration,
    /// Length of the interval.
    pub duration: Duration,
    /// The interval's tag (sweeps tag each step with its client count: `clients-20`).
    pub tag: Option<String>,
    /// Latency in microseconds.
    pub histogram: Histogram<u64>,
}

/// Writes a whole interval log (latencies in microseconds, shown in milliseconds by log readers).
pub fn write_interval_log(
    out: &mut impl Write,
    header: &LogHeader,
    intervals: &[LoggedInterval],
) -> std::io::Result<()> {
    let mut serializer = V2DeflateSerializer::new();
    let mut builder = IntervalLogWriterBuilder::new();
    for comment in header.comments() {
        builder.add_comment(&comment);
    }
    let mut log = builder
        .with_start_time(header.start)
        .with_base_time(header.start)
        .with_max_value_divisor(1000.0)
        .begin_log_with(out, &mut serializer)?;
    for interval in intervals {
        let tag = interval.tag.as_deref().and_then(Tag::new);
        log.write_histogram(&interval.histogram, interval.start, interval.duration, tag)
            .map_err(|e| std::io::Error::other(format!("{e:?}")))?;
    }
    Ok(())
}

/// Reads the histograms of an interval log (comments and headers are skipped).
pub fn read_interval_log(text: &str) -> Result<Vec<LoggedInterval>, String> {
    let mut intervals = Vec::new();
    for entry in IntervalLogIterator::new(text.as_bytes()) {
        let entry = entry.map_err(|e| format!("not an HdrHistogram interval log ({e:?})"))?;
        if let LogEntry::Interval(interval) = entry {
            intervals.push(logged(&interval)?);
        }
    }
    Ok(intervals)
}

fn logged(interval: &IntervalLogHistogram) -> Result<LoggedInterval, String> {
    Ok(LoggedInterval {
        start: interval.start_timestamp(),
        duration: interval.duration(),
        tag: interval.tag().map(|t| t.as_str().to_string()),
        histogram: decode(interval.encoded_histogram())?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_encoded_histogram_decodes_to_the_same_counts() {
        let mut histogram = new_histogram();
        for us in [1, 999, 1_000, 1_001, 52_345, 52_345, 3_600_000_000] {
            histogram.record(us).unwrap();
        }
        let back = decode(&encode(&histogram)).unwrap();
        assert_eq!(back, histogram);
        assert!(decode("not base64!").unwrap_err().contains("base64"));
        assert!(decode("aGVsbG8=").unwrap_err().contains("HdrHistogram"));
    }

    #[test]
    fn a_written_log_reads_back_with_its_tags_and_header() {
        let mut first = new_histogram();
        first.record(1_500).unwrap();
        let mut second = new_histogram();
        second.record_n(20_000, 3).unwrap();
        let header = LogHeader {
            command: "chokepoint sweep http://x/".into(),
            shard: Some("run-id=1-ab shard=0/2".into()),
            start: SystemTime::UNIX_EPOCH + Duration::from_secs(1_000),
        };
        let intervals = [
            LoggedInterval {
                start: Duration::ZERO,
                duration: Duration::from_secs(2),
                tag: Some("clients-5".into()),
                histogram: first.clone(),
            },
            LoggedInterval {
                start: Duration::from_secs(4),
                duration: Duration::from_secs(2),
                tag: None,
                histogram: second.clone(),
            },
        ];
        let mut out = Vec::new();
        write_interval_log(&mut out, &header, &intervals).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("#run-id=1-ab shard=0/2"), "{text}");
        let back = read_interval_log(&text).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[0].tag.as_deref(), Some("clients-5"));
        assert_eq!(back[0].histogram, first);
        assert_eq!(back[1].start, Duration::from_secs(4));
        assert_eq!(back[1].histogram, second);
    }
}
