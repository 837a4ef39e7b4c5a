//! One run split over N generator processes (shards), lined up by a shared clock.
//!
//! chokepoint has no coordinator: every shard is started by something else (a Kubernetes Indexed
//! Job, a shell loop over ssh) with the same arguments plus `--shard I/N` and `--start-at TIME`.
//! Each shard works out alone, from those, what it must do:
//! - its share of the load ([`Shard::split`]): the clients, the request count (`-n`) and the
//!   connection cap are split as evenly as whole numbers allow — the first `total % N` shards take
//!   one more (10 over 3 is 4, 3, 3) — and the rate is divided by N, so the shards together send
//!   exactly the whole load;
//! - when to start ([`wait_until`] the agreed time) and how late it was ([`lateness`]);
//! - which run it belongs to ([`run_id`]: a hash of the target, the whole plan and the start
//!   time), so that a merge can refuse files of different runs.
use crate::{LoadConfig, LoadError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio_util::sync::CancellationToken;

/// A shard that begins more than this after the agreed start says it was late.
pub const LATE_TOLERANCE: Duration = Duration::from_millis(100);

/// This process's place in a sharded run: shard `index` (0-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 0-based, below `count` (Kubernetes' `JOB_COMPLETION_INDEX`).
    pub index: u32,
    /// How many shards share the run.
    pub count: u32,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// Parses `I/N`, 0 ≤ I < N.
    fn from_str(text: &str) -> Result<Shard, String> {
        let usage = || format!("'{text}' is not a shard: write I/N, e.g. 0/3 (I counts from 0)");
        let (index, count) = text.trim().split_once('/').ok_or_else(usage)?;
        let index: u32 = index.trim().parse().map_err(|_| usage())?;
        let count: u32 = count.trim().parse().map_err(|_| usage())?;
        if count == 0 {
            return Err(format!("'{text}': the number of shards must be at least 1"));
        }
        if index >= count {
            return Err(format!(
                "'{text}': the index counts from 0, so it must be below {count} (0/{count} .. {}/{count})",
                count - 1
            ));
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// This shard's part of `total` whole things: `total / N`, plus one for the first
    /// `total % N` shards.
    pub fn share(self, total: u64) -> u64 {
        let (count, index) = (u64::from(self.count), u64::from(self.index));
        total / count + u64::from(index < total % count)
    }

    /// Turns the whole run's configuration into this shard's: its share of the clients (or of
    /// the connection cap), of `-n`, and of the rate. A share of nothing is refused: a shard
    /// without a client would measure nothing.
    pub fn split(self, config: &mut LoadConfig) -> Result<(), LoadError> {
        let clients = self.share(u64::from(config.clients));
        if clients == 0 {
            return Err(LoadError::Config(format!(
                "-c {} over {} shards leaves shard {self} without a client: give at least {} clients or fewer shards",
                config.clients, self.count, self.count
            )));
        }
        config.clients = clients as u32;
        if let Some(requests) = config.requests {
            let share = self.share(requests);
            if share == 0 {
                return Err(LoadError::Config(format!(
                    "-n {requests} over {} shards leaves shard {self} without a request: give at least {} requests or fewer shards",
                    self.count, self.count
                )));
            }
            config.requests = Some(share);
        }
        if let Some(rate) = config.rate {
            config.rate = Some(rate / f64::from(self.count));
        }
        Ok(())
    }
}

/// The plan of a load run, as every shard states it: the whole run's figures (before the split),
/// so that all shards of one run state the same plan.
pub fn load_plan(config: &LoadConfig, shards: u32) -> String {
    let or_dash = |value: Option<String>| value.unwrap_or_else(|| "-".into());
    format!(
        "load {} c={} n={} d={} rate={} think={:?} keepalive={} timeout={:?} shards={shards}",
        config.method,
        config.clients,
        or_dash(config.requests.map(|n| n.to_string())),
        or_dash(config.duration.map(|d| format!("{d:?}"))),
        or_dash(config.rate.map(|r| r.to_string())),
        config.think_time,
        config.keepalive,
        config.timeout,
    )
}

/// The id every shard of one run derives alike: a hash (64-bit FNV-1a) of the target, the plan
/// and the agreed start, prefixed with the start in Unix seconds so that people can read it.
pub fn run_id(target: &str, plan: &str, start_at: SystemTime) -> String {
    let nanos = start_at
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in format!("{target}\n{plan}\n{nanos}").bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{}-{hash:016x}", nanos / 1_000_000_000)
}

/// Parses `--start-at`: an RFC 3339 time (`2025-06-01T12:00:00Z`, `...+02:00`) or Unix seconds
/// (`1748779200`, fractions allowed).
pub fn parse_start_at(text: &str) -> Result<SystemTime, String> {
    let trimmed = text.trim();
    if let Ok(seconds) = trimmed.parse::<f64>() {
        if seconds.is_finite() && seconds >= 0.0 {
            return Ok(UNIX_EPOCH + Duration::from_secs_f64(seconds));
        }
        return Err(format!(
            "'{text}' is not a time: give Unix seconds (0 or more) or RFC 3339 (2025-06-01T12:00:00Z)"
        ));
    }
    let timestamp: jiff::Timestamp = trimmed.parse().map_err(|e| {
        format!(
            "'{text}' is not a time ({e}): give RFC 3339 (2025-06-01T12:00:00Z) or Unix seconds"
        )
    })?;
    Ok(SystemTime::from(timestamp))
}

/// Seconds since the Unix epoch.
pub fn unix_seconds(time: SystemTime) -> f64 {
    time.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// How long after `start_at` something began (zero when it began on time or early).
pub fn lateness(start_at: SystemTime, began: SystemTime) -> Duration {
    began.duration_since(start_at).unwrap_or_default()
}

/// Sleeps until the wall clock reads `at` (at once when it has passed). Returns false when
/// `cancel` was cancelled first.
pub fn wait_until(at: SystemTime, cancel: &CancellationToken) -> bool {
    loop {
        if cancel.is_cancelled() {
            return false;
        }
        let Ok(left) = at.duration_since(SystemTime::now()) else {
            return true;
        };
        if left.is_zero() {
            return true;
        }
        // Short naps: Ctrl-C is seen at once, and a clock step (NTP) is followed.
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard(text: &str) -> Shard {
        text.parse().unwrap()
    }

    #[test]
    fn shares_add_up_to_the_total_and_differ_by_at_most_one() {
        // (total, shards, the shares of shard 0, 1, ...)
        let table: &[(u64, u32, &[u64])] = &[
            (10, 3, &[4, 3, 3]), // the example
            (9, 3, &[3, 3, 3]),
            (11, 3, &[4, 4, 3]),
            (1, 1, &[1]),
            (2, 3, &[1, 1, 0]), // refused by split: a shard without a client
            (1000, 7, &[143, 143, 143, 143, 143, 143, 142]),
        ];
        for &(total, count, expected) in table {
            let shares: Vec<u64> = (0..count)
                .map(|index| Shard { index, count }.share(total))
                .collect();
            assert_eq!(shares, expected, "{total} over {count}");
            assert_eq!(shares.iter().sum::<u64>(), total);
        }
    }

    #[test]
    fn split_divides_clients_requests_and_rate() {
        let mut config = LoadConfig::new("http://127.0.0.1:1/").unwrap();
        config.clients = 10;
        config.requests = Some(1001);
        config.rate = Some(300.0);
        let whole = config.clone();
        let mut clients = 0;
        let mut requests = 0;
        let mut rate = 0.0;
        for index in 0..3 {
            let mut part = whole.clone();
            Shard { index, count: 3 }.split(&mut part).unwrap();
            clients += part.clients;
            requests += part.requests.unwrap();
            rate += part.rate.unwrap();
        }
        assert_eq!((clients, requests), (10, 1001));
        assert_eq!(rate, 300.0);
        config.clients = 2;
        let error = shard("2/3").split(&mut config).unwrap_err().to_string();
        assert!(error.contains("without a client"), "{error}");
        config.clients = 3;
        config.requests = Some(2);
        let error = shard("2/3").split(&mut config).unwrap_err().to_string();
        assert!(error.contains("-n 2"), "{error}");
    }

    #[test]
    fn shard_text_is_index_slash_count_from_zero() {
        assert_eq!(shard("0/3"), Shard { index: 0, count: 3 });
        assert_eq!(shard(" 2/3 "), Shard { index: 2, count: 3 });
        for (bad, says) in [
            ("3/3", "below 3"),
            ("1/0", "at least 1"),
            ("1", "I/N"),
            ("a/2", "I/N"),
            ("-1/2", "I/N"),
        ] {
            let error = bad.parse::<Shard>().unwrap_err();
            assert!(error.contains(says), "{bad}: {error}");
        }
    }

    #[test]
    fn start_times_in_rfc3339_or_unix_seconds() {
        let at = |s: &str| unix_seconds(parse_start_at(s).unwrap());
        assert_eq!(at("1748779200"), 1_748_779_200.0);
        assert_eq!(at("1748779200.5"), 1_748_779_200.5);
        assert_eq!(at("2025-06-01T12:00:00Z"), 1_748_779_200.0);
        assert_eq!(at("2025-06-01T14:00:00+02:00"), 1_748_779_200.0);
        assert_eq!(at("2025-06-01T12:00:00.250Z"), 1_748_779_200.25);
        for bad in [
            "tomorrow",
            "-5",
            "2025-06-01",
            "2025-13-01T00:00:00Z",
            "inf",
        ] {
            assert!(parse_start_at(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn run_ids_agree_only_on_the_same_target_plan_and_start() {
        let start = UNIX_EPOCH + Duration::from_secs(1_748_779_200);
        let id = run_id("http://a/", "plan", start);
        assert!(id.starts_with("1748779200-"), "{id}");
        assert_eq!(id, run_id("http://a/", "plan", start));
        assert_ne!(id, run_id("http://b/", "plan", start));
        assert_ne!(id, run_id("http://a/", "plan2", start));
        assert_ne!(
            id,
            run_id("http://a/", "plan", start + Duration::from_millis(1))
        );
    }

    #[test]
    fn lateness_is_zero_when_early() {
        let start = UNIX_EPOCH + Duration::from_secs(100);
        assert_eq!(
            lateness(start, start - Duration::from_secs(1)),
            Duration::ZERO
        );
        assert_eq!(
            lateness(start, start + Duration::from_millis(250)),
            Duration::from_millis(250)
        );
        assert!(wait_until(UNIX_EPOCH, &CancellationToken::new()));
    }
}
