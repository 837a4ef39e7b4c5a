//! Merging the shards of a sweep, step by step.
use crate::{check_set, merge_info, merge_reports, spread, MergeError, MergedShard, ShardFile};
use chokepoint_load::SATURATED_PCT;
use chokepoint_result::{LoadReport, Step, SweepResult};

/// Merges the shards of one sweep: step k of the merge adds step k of every shard (the shards
/// ran the same schedule from the clock). A shard that stopped early limits the merge to the
/// steps every shard finished, marked interrupted. The diagnosis is left to the caller
/// (`diagnosis: None`).
pub fn merge_sweeps(mut files: Vec<ShardFile<SweepResult>>) -> Result<SweepResult, MergeError> {
    check_set(&mut files)?;
    let steps = files
        .iter()
        .map(|f| f.result.steps.len())
        .min()
        .unwrap_or(0);
    if steps == 0 {
        let empty = files
            .iter()
            .find(|f| f.result.steps.is_empty())
            .expect("min is 0");
        return Err(MergeError(format!(
            "{} has no finished step: nothing to merge",
            empty.file
        )));
    }
    let mut merged = Vec::with_capacity(steps);
    for k in 0..steps {
        let parts: Vec<&Step> = files.iter().map(|f| &f.result.steps[k]).collect();
        let step = merge_step(&parts).map_err(|why| {
            MergeError(format!(
                "step {} of {}: {why}",
                k + 1,
                files
                    .iter()
                    .map(|f| f.file.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        merged.push(step);
    }
    let first = &files[0].result;
    let mut context = first.context.clone();
    context.max_clients = files.iter().map(|f| f.result.context.max_clients).sum();
    context.target_observed = files.iter().any(|f| f.result.context.target_observed);
    context.mock_present = files.iter().any(|f| f.result.context.mock_present);
    if let Some(observer) = files.iter().find(|f| f.result.context.target_observed) {
        context.cores = observer.result.context.cores;
    }
    let shards = files
        .iter()
        .map(|f| {
            let cpu: Vec<f64> = f.result.steps.iter().map(|s| s.generator_cpu_pct).collect();
            MergedShard {
                index: f.shard.index,
                file: f.file.clone(),
                requests: f.result.steps.iter().map(|s| s.requests).sum(),
                generator_cpu_pct: cpu.iter().copied().fold(0.0, f64::max),
                generator_saturated: cpu.iter().any(|c| *c > SATURATED_PCT),
                step_generator_cpu_pct: cpu,
                late_s: f.shard.late_s,
            }
        })
        .collect();
    let starts: Vec<f64> = files.iter().map(|f| f.shard.started_at_unix_s).collect();
    let step_skew = (0..steps)
        .map(|k| {
            let late: Vec<f64> = files
                .iter()
                .filter_map(|f| f.shard.step_late_s.get(k).copied())
                .collect();
            spread(&late)
        })
        .fold(spread(&starts), f64::max);
    Ok(SweepResult {
        target: first.target.clone(),
        context,
        steps: merged,
        diagnosis: None,
        interrupted: files
            .iter()
            .any(|f| f.result.interrupted || f.result.steps.len() > steps),
        chokepoint_version: env!("CARGO_PKG_VERSION").to_string(),
        shard: None,
        merge: Some(merge_info(&files[0].shard.run_id, shards, step_skew)),
        // The shards ran at once: the merged sweep took as long as the longest.
        duration_s: files
            .iter()
            .map(|f| f.result.duration_s)
            .fold(0.0, f64::max),
        load_s: files.iter().map(|f| f.result.load_s).fold(0.0, f64::max),
    })
}

/// The shards' step k as one step: the load figures merged as for `load`, what the shards saw
/// of the shared target from the lowest shard that saw it.
fn merge_step(parts: &[&Step]) -> Result<Step, String> {
    let views: Vec<LoadReport> = parts.iter().map(|s| load_view(s)).collect();
    let report = merge_reports(&views.iter().collect::<Vec<_>>())?;
    let observed = |pick: fn(&Step) -> bool| parts.iter().copied().find(|s| pick(s));
    let mock = observed(|s| s.downstream.is_some());
    let target = observed(|s| s.target_cpu_pct.is_some());
    let machine = observed(|s| s.machine_cpu_pct.is_some());
    let proc_view = observed(|s| !s.observed_pids.is_empty());
    Ok(Step {
        error_rate: report.error_rate(),
        downstream_inflight: mock.and_then(|s| s.downstream_inflight),
        downstream: mock.and_then(|s| s.downstream.clone()),
        target_cpu_pct: target.and_then(|s| s.target_cpu_pct),
        machine_cpu_pct: machine.and_then(|s| s.machine_cpu_pct),
        machine_niced_cpu_pct: machine.and_then(|s| s.machine_niced_cpu_pct),
        observed_pids: proc_view
            .map(|s| s.observed_pids.clone())
            .unwrap_or_default(),
        threads_by_pool: proc_view.and_then(|s| s.threads_by_pool.clone()),
        connections: proc_view.and_then(|s| s.connections.clone()),
        cpu_quota: proc_view.and_then(|s| s.cpu_quota.clone()),
        stacks: proc_view.and_then(|s| s.stacks.clone()),
        observation_notes: proc_view
            .map(|s| s.observation_notes.clone())
            .unwrap_or_default(),
        ramp_s: parts.iter().map(|s| s.ramp_s).fold(0.0, f64::max),
        load: report,
        chosen_because: parts.first().and_then(|s| s.chosen_because),
        measured_s: parts.iter().map(|s| s.measured_s).fold(0.0, f64::max),
        ended: parts.first().and_then(|s| s.ended),
    })
}

/// The load figures of a step, as a report (a step holds its run's report; saturation is read
/// again from the CPU figure, which steps saved before they held the report carry alone).
fn load_view(step: &Step) -> LoadReport {
    LoadReport {
        generator_saturated: step.generator_cpu_pct > SATURATED_PCT,
        ..step.load.clone()
    }
}
