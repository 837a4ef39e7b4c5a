//! What a merge says about itself, in sentences made from its [`MergeInfo`].
use chokepoint_result::{MergeInfo, Step};

/// Above this skew between shards (as a share of the measured window) the shards did not run
/// side by side for long enough to read their sum as one load.
pub const SKEW_WARNING_SHARE: f64 = 0.05;

/// Lines for the terminal after a merged report: what was merged and how far apart the shards
/// started. `window_s` is the measured window (of a step).
pub fn merge_lines(info: &MergeInfo, window_s: f64) -> Vec<String> {
    let mut lines = vec![format!(
        "merged {} shards of run {}; their starts were {:.0} ms apart at most",
        info.shards.len(),
        info.run_id,
        info.skew_s * 1000.0
    )];
    if window_s > 0.0 && info.skew_s > SKEW_WARNING_SHARE * window_s {
        lines.push(format!(
            "the shards' skew ({:.2} s) is over {:.0}% of the {:.1} s window: they overlapped for only part of it; start them further ahead",
            info.skew_s,
            SKEW_WARNING_SHARE * 100.0,
            window_s
        ));
    }
    for shard in info.shards.iter().filter(|s| s.late_s > 0.1) {
        lines.push(format!(
            "shard {} ({}) started {:.2} s after --start-at",
            shard.index, shard.file, shard.late_s
        ));
    }
    lines
}

/// One sentence per saturated shard: its generator's CPU and, for a sweep, the steps where it
/// passed `threshold` (the merged `steps`' client counts).
pub fn saturation_sentences(info: &MergeInfo, steps: Option<(&[Step], f64)>) -> Vec<String> {
    info.shards
        .iter()
        .filter(|s| s.generator_saturated)
        .map(|shard| {
            let at = match steps {
                Some((steps, threshold)) => {
                    let clients: Vec<String> = shard
                        .step_generator_cpu_pct
                        .iter()
                        .zip(steps)
                        .filter(|(cpu, _)| **cpu > threshold)
                        .map(|(_, step)| step.clients.to_string())
                        .collect();
                    format!(" at {} clients in all", clients.join(", "))
                }
                None => String::new(),
            };
            format!(
                "Shard {}'s generator used {:.0}% of its CPU{at}: the merged figures there may be that generator's limit, not the target's; give the shards more cores or add shards.",
                shard.index, shard.generator_cpu_pct
            )
        })
        .collect()
}
