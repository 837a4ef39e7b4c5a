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
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
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
    pub fn sharding(
        &self,
        target: &str,
        plan: impl FnOnce(u32) -> String,
    ) -> anyhow::Result<Option<Sharding>> {
        let Some(shard) = self.shard else {
            return Ok(None);
        };
        let start_at = self.start_at()?;
        let plan = plan(shard.count);
        Ok(Some(Sharding {
            shard,
            run_id: shard::run_id(target, &plan, start_at),
            start_at,
            plan,
        }))
    }

    /// --start-at, which --shard cannot go without.
    fn start_at(&self) -> anyhow::Result<SystemTime> {
        self.start_at.ok_or_else(|| {
            anyhow::anyhow!(
                "--shard needs --start-at TIME (RFC 3339 or Unix seconds): every shard starts then, and the run id comes from it"
            )
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
            let worst = info.step_late_s.iter().copied().fold(info.late_s, f64::max);
            eprintln!(
                "chokepoint: shard {} started {worst:.2} s later than scheduled by --start-at: it ran out of step with the others (the merge reports the skew); start the shards further ahead",
                self.shard
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

/// The interval log a sharded sweep leaves in its --out folder, one histogram per step.
pub const SWEEP_LOG: &str = "latency.hlog";

/// Makes `config` this shard's part of a sweep on the clock: each step's share of the clients,
/// the steps on a fixed schedule from --start-at (`slot` apart, the ramp and the drain cut to fit
/// in it). Without --shard, --start-at alone just puts the sweep on the clock.
pub fn shard_sweep(
    args: &ShardArgs,
    config: &mut chokepoint_experiment::SweepConfig,
    slot: Option<std::time::Duration>,
) -> anyhow::Result<Option<Sharding>> {
    if args.shard.is_some() {
        args.start_at()?;
    }
    let Some(start_at) = args.start_at else {
        if slot.is_some() {
            anyhow::bail!("--slot needs --start-at TIME: it spaces the steps on the clock");
        }
        return Ok(None);
    };
    let slot = slot.unwrap_or(config.step * 2 + std::time::Duration::from_secs(2));
    config.put_on_clock(start_at, slot)?;
    let Some(shard) = args.shard else {
        return Ok(None);
    };
    let Some(clients) = &config.clients else {
        anyhow::bail!(
            "--shard needs --clients: a sharded sweep runs the steps given (an adaptive search would need the shards to talk)"
        );
    };
    if config.out.is_none() {
        anyhow::bail!("--shard needs --out DIR: the merge reads each shard's folder");
    }
    let base = &config.base;
    let list: Vec<String> = clients.iter().map(u32::to_string).collect();
    let plan = format!(
        "sweep {} clients={} step={:?} slot={slot:?} keepalive={} timeout={:?} shards={}",
        base.method,
        list.join(","),
        config.step,
        base.keepalive,
        base.timeout,
        shard.count
    );
    let mut shares = Vec::with_capacity(clients.len());
    for &whole in clients {
        match shard.share(u64::from(whole)) {
            0 => anyhow::bail!(
                "--clients {} over {} shards leaves shard {shard} without a client at the step of {whole}: give every step at least {} clients",
                list.join(","),
                shard.count,
                shard.count
            ),
            share => shares.push(share as u32),
        }
    }
    config.clients = Some(shares);
    config.max_clients = shard.share(u64::from(config.max_clients)).max(1) as u32;
    let sharding = Sharding {
        shard,
        run_id: shard::run_id(&base.url, &plan, start_at),
        start_at,
        plan,
    };
    config.shard = Some(sharding.info(start_at, Some(SWEEP_LOG.into())));
    Ok(Some(sharding))
}

/// Writes `DIR/latency.hlog`: each step's latency histogram, tagged `clients-N` (the whole run's
/// N is the merge's), at its slot's offset from --start-at.
pub fn write_sweep_log(
    dir: &std::path::Path,
    sharding: &Sharding,
    result: &chokepoint_result::SweepResult,
    slot: std::time::Duration,
) -> anyhow::Result<()> {
    use chokepoint_load::hdr;
    let mut intervals = Vec::new();
    for (k, step) in result.steps.iter().enumerate() {
        let Some(histograms) = &step.histograms else {
            continue;
        };
        intervals.push(hdr::LoggedInterval {
            start: slot * k as u32,
            duration: std::time::Duration::from_secs_f64(step.duration_s),
            tag: Some(format!("clients-{}", step.clients)),
            histogram: hdr::decode(&histograms.latency).map_err(anyhow::Error::msg)?,
        });
    }
    let header = hdr::LogHeader {
        command: format!("chokepoint sweep {}", result.target),
        shard: Some(sharding.log_comment()),
        start: sharding.start_at,
    };
    let path = dir.join(SWEEP_LOG);
    let mut out = Vec::new();
    hdr::write_interval_log(&mut out, &header, &intervals)?;
    std::fs::write(&path, out)
        .map_err(|e| anyhow::anyhow!("{}: cannot write it ({e})", path.display()))
}
