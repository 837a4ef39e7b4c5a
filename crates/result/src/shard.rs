//! The records of a run split over several generator processes (shards), and of their merge.
//!
//! Each shard of a run writes its own result with a [`ShardInfo`]: which run it belongs to (the
//! run id, derived from the target, the plan and the agreed start time), its index among the
//! shards, and how late it started. `chokepoint merge` checks that the files form one whole run
//! and writes one result with a [`MergeInfo`]: what each shard contributed, how far apart they
//! started, and which shards' generators were saturated.
use serde::{Deserialize, Serialize};

/// The exact latency distributions of a run or a step, as HdrHistograms (microseconds) in the
/// compressed V2 encoding, base64 — the encoding of an HdrHistogram interval log's lines, so any
/// HdrHistogram library decodes them. Merges add these, never percentiles.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencyHistograms {
    /// Every completed request.
    pub latency: String,
    /// Successful requests only.
    pub ok: String,
    /// Failed requests only.
    pub error: String,
    /// Open model only: latency from the actual send time.
    #[serde(default)]
    pub uncorrected: Option<String>,
}

/// Which shard of which run a result is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// The run's id: the same in every shard of one run, different for another target, plan
    /// or start time.
    pub run_id: String,
    /// This shard's index, 0-based (Kubernetes' `JOB_COMPLETION_INDEX`).
    pub index: u32,
    /// How many shards the run has.
    pub count: u32,
    /// The whole run's plan, as the run id was derived from it (clients, rate, requests,
    /// duration or steps: the totals, before the split).
    pub plan: String,
    /// The agreed start (`--start-at`), Unix seconds.
    pub start_at_unix_s: f64,
    /// When this shard's measurement began, Unix seconds.
    pub started_at_unix_s: f64,
    /// How long after the agreed start this shard began, seconds (0 when on time).
    pub late_s: f64,
    /// True when `late_s` exceeded the tolerance: the shard did not run in step with the others.
    pub late: bool,
    /// Sweeps: how late each step began against its slot in the schedule, seconds.
    #[serde(default)]
    pub step_late_s: Vec<f64>,
    /// The HdrHistogram interval log this shard wrote, as a path relative to this result.
    #[serde(default)]
    pub hdr_log: Option<String>,
}

/// One shard's part in a merge.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MergedShard {
    /// The shard's index.
    pub index: u32,
    /// The file it was read from.
    pub file: String,
    /// Requests it completed (all steps, for a sweep).
    pub requests: u64,
    /// Its generator's CPU, percent of its cores (the busiest step, for a sweep).
    pub generator_cpu_pct: f64,
    /// Sweeps: its generator's CPU at each step, in step order.
    #[serde(default)]
    pub step_generator_cpu_pct: Vec<f64>,
    /// Its generator was saturated (in any step): the merged figures may show that generator's
    /// limit, not the target's.
    pub generator_saturated: bool,
    /// How late it started, seconds.
    pub late_s: f64,
}

/// What a merged result was made of.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MergeInfo {
    /// The run id every shard carried.
    pub run_id: String,
    /// The shards, by index.
    pub shards: Vec<MergedShard>,
    /// The latest shard's start minus the earliest's, seconds (the largest per step, for a sweep).
    pub skew_s: f64,
    /// Indexes of the shards whose generator was saturated. Not empty: the merged figures are
    /// not a claim about the target.
    pub saturated_shards: Vec<u32>,
}

/// `load --json` of a shard or of a merge: the load report, plus which shard it is or what it
/// was merged from (a plain run writes the report alone).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadResultFile {
    /// The report, its fields at the top level as in a plain run's file.
    #[serde(flatten)]
    pub report: crate::LoadReport,
    /// Set in a shard's file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// Set in a merged file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge: Option<MergeInfo>,
}
