//! Merges the results of one run's shards into the result one process would have written.
//!
//! Data flows: the shards' files, parsed by the caller into [`ShardFile`]s → [`check_set`]
//! (one run, every shard once, or a [`MergeError`] naming the files) → the arithmetic:
//! - distributions are added: each shard carries its exact HdrHistograms
//!   ([`chokepoint_result::LatencyHistograms`]), the merge decodes and adds them, and every
//!   percentile is read from the sum (never an average of percentiles);
//! - counts, errors by kind, bytes and connections are summed, and so are rates (each shard's
//!   throughput over its own window: the shards ran side by side);
//! - the timelines are summed bucket by bucket (completions, successes, in flight), the mean
//!   latency of a bucket weighted by its completions;
//! - the generator's CPU is the busiest shard's, so a saturated shard shows in the merged figure
//!   (and the diagnosis's generator rule sees it); every shard's own figure is kept in the
//!   [`chokepoint_result::MergeInfo`];
//! - what a shard observed of the shared target (the mock's view, the target's CPU) is taken
//!   from the lowest shard that observed it: every shard watched the same target.
//!
//! [`merge_loads`] does this for `load` results, [`merge_sweeps`] step by step for sweeps (the
//! caller runs the diagnosis on the merged steps). Pure: no files, no clock.
#![deny(missing_docs)]

pub mod describe;
mod measure;
mod set;
mod sweep;

pub use measure::{merge_histograms, merge_reports};
pub use set::check_set;
pub use sweep::merge_sweeps;

use chokepoint_result::{LoadReport, LoadResultFile, MergeInfo, MergedShard, ShardInfo};

/// One shard's result, as read from its file.
#[derive(Debug, Clone)]
pub struct ShardFile<T> {
    /// The file's name, as the user gave it (for messages).
    pub file: String,
    /// Which shard of which run it is.
    pub shard: ShardInfo,
    /// What it measured.
    pub result: T,
}

/// Why files cannot be merged; each message is one line that names the files.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MergeError(pub String);

/// Merges the shards of one load run.
pub fn merge_loads(mut files: Vec<ShardFile<LoadReport>>) -> Result<LoadResultFile, MergeError> {
    check_set(&mut files)?;
    let reports: Vec<&LoadReport> = files.iter().map(|f| &f.result).collect();
    let report = merge_reports(&reports).map_err(|why| {
        MergeError(format!(
            "{}: {why}",
            files
                .iter()
                .map(|f| f.file.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })?;
    let shards: Vec<MergedShard> = files
        .iter()
        .map(|f| MergedShard {
            index: f.shard.index,
            file: f.file.clone(),
            requests: f.result.requests,
            generator_cpu_pct: f.result.generator_cpu_pct,
            step_generator_cpu_pct: Vec::new(),
            generator_saturated: f.result.generator_saturated,
            late_s: f.shard.late_s,
        })
        .collect();
    let starts: Vec<f64> = files.iter().map(|f| f.shard.started_at_unix_s).collect();
    Ok(LoadResultFile {
        report,
        shard: None,
        merge: Some(merge_info(&files[0].shard.run_id, shards, spread(&starts))),
    })
}

fn merge_info(run_id: &str, shards: Vec<MergedShard>, skew_s: f64) -> MergeInfo {
    MergeInfo {
        run_id: run_id.to_string(),
        saturated_shards: shards
            .iter()
            .filter(|s| s.generator_saturated)
            .map(|s| s.index)
            .collect(),
        shards,
        skew_s,
    }
}

/// The largest minus the smallest (0 for none).
fn spread(values: &[f64]) -> f64 {
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    if values.is_empty() {
        0.0
    } else {
        max - min
    }
}
