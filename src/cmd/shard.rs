//! `--shard I/N` and `--start-at TIME`, shared by `load` and `sweep`: this process runs one
//! shard of a run split over several generators, all started by the clock.
use chokepoint_load::shard::{self, Shard, LATE_TOLERANCE};
use chokepoint_result::ShardInfo;
use std::time::SystemTime;

/// The flags of a sharded run.
#[derive(Debug, Clone, clap::Args)]
pub struct ShardArgs {
    /// Run shard I of N (I from 0, as Kubernetes' JOB_COMPLETION_INDEX): this process's share
    /// of the clients, -n and the rate; needs --start-at. Merge the shards' files with
    /// `chokepoint merge`
    #[arg(long, value_name = "I/N", value_parser = parse_shard, requires = "start_at")]
    pub shard: Option<Shard>,
    /// Start at this wall-clock time, RFC 3339 (2025-06-01T12:00:00Z) or Unix seconds, so that
    /// every shard starts together (a shard that starts late says so)
    #[arg(long, value_name = "TIME", value_parser = parse_start_at)]
    pub start_at: Option<SystemTime>,
}

fn parse_shard(text: &str) -> Result<Shard, String> {
    text.parse()
}

fn parse_start_at(text: &str) -> Result<SystemTime, String> {
    shard::parse_start_at(text)
}

/// A shard's place in its run, worked out from the flags and the whole run's plan.
#[derive(Debug, Clone)]
pub struct Sharding {
    /// Which shard.
    pub shard: Shard,
    /// The agreed start.
    pub start_at: SystemTime,
    /// The whole run's plan.
    pub plan: String,
    /// The run's id (target, plan, start).
    pub run_id: String,
}

impl ShardArgs {
    /// The sharding of a run of `target` with `plan` (the whole run's); `None` without --shard.
    pub fn sharding(&self, target: &str, plan: impl FnOnce(u32) -> String) -> Option<Sharding> {
        let shard = self.shard?;
        let start_at = self.start_at?;
        let plan = plan(shard.count);
        Some(Sharding {
            shard,
            run_id: shard::run_id(target, &plan, start_at),
            start_at,
            plan,
        })
    }
}

impl Sharding {
    /// The comment line interval logs carry: `run-id=... shard=I/N`.
    pub fn log_comment(&self) -> String {
        format!("run-id={} shard={}", self.run_id, self.shard)
    }

    /// The record of this shard, begun at `started` (`step_late_s` left for sweeps to fill).
    pub fn info(&self, started: SystemTime, hdr_log: Option<String>) -> ShardInfo {
        let late = shard::lateness(self.start_at, started);
        ShardInfo {
            run_id: self.run_id.clone(),
            index: self.shard.index,
            count: self.shard.count,
            plan: self.plan.clone(),
            start_at_unix_s: shard::unix_seconds(self.start_at),
            started_at_unix_s: shard::unix_seconds(started),
            late_s: late.as_secs_f64(),
            late: late > LATE_TOLERANCE,
            step_late_s: Vec::new(),
            hdr_log,
        }
    }

    /// Says on stderr when this shard started late.
    pub fn warn_if_late(&self, info: &ShardInfo) {
        if info.late {
            eprintln!(
                "chokepoint: shard {} started {:.2} s after --start-at: it ran out of step with the others (the merge reports the skew); start the shards further ahead",
                self.shard, info.late_s
            );
        }
    }
}

/// Sleeps until `start_at` (when given); false when Ctrl-C came first.
pub fn wait_for_start(
    start_at: Option<SystemTime>,
    cancel: &tokio_util::sync::CancellationToken,
) -> bool {
    match start_at {
        Some(at) => shard::wait_until(at, cancel),
        None => true,
    }
}
