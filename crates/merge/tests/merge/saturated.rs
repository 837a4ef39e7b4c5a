//! A shard whose generator saturated invalidates the merge's claim about the target: the merged
//! step carries the busiest generator's CPU, the merge names the shard, and the diagnosis of the
//! merged steps says the generator, not the target, is the limit.
use chokepoint_load::hdr::histograms_of;
use chokepoint_load::recorder::{latency_ms, Outcome, Samples};
use chokepoint_merge::{describe, merge_sweeps, ShardFile};
use chokepoint_result::{Kind, LoadReport, ShardInfo, Step, SweepContext, SweepResult};
use std::time::Duration;

/// A shard's step: `rps` for 10 s at `mean_ms`, its generator at `cpu` percent.
fn step(clients: u32, rps: f64, mean_ms: u64, cpu: f64) -> Step {
    let mut samples = Samples::default();
    let requests = (rps * 10.0) as u64;
    for i in 0..requests {
        samples.record(&Outcome {
            latency: Duration::from_millis(mean_ms + i % 3),
            uncorrected: None,
            lateness: None,
            failure: None,
            bytes: 2,
            bucket: i * 100 / requests,
            connect: None,
            handshake: None,
            target: None,
        });
    }
    Step {
        load: LoadReport {
            clients,
            throughput_rps: rps,
            ok_throughput_rps: rps,
            requests,
            ok: requests,
            latency_ms: latency_ms(&samples.latency),
            generator_cpu_pct: cpu,
            duration_s: 10.0,
            timeline_bucket_s: 0.1,
            histograms: Some(histograms_of(&samples, false)),
            ..LoadReport::default()
        },
        ..Step::default()
    }
}

fn shard(index: u32, steps: Vec<Step>) -> ShardFile<SweepResult> {
    ShardFile {
        file: format!("shard-{index}"),
        shard: ShardInfo {
            run_id: "run".into(),
            index,
            count: 2,
            ..ShardInfo::default()
        },
        result: SweepResult {
            target: "http://t/".into(),
            context: SweepContext {
                max_clients: 20,
                ..SweepContext::default()
            },
            steps,
            diagnosis: None,
            interrupted: false,
            chokepoint_version: "test".into(),
            shard: None,
            merge: None,
            duration_s: 0.0,
            load_s: 0.0,
        },
    }
}

#[test]
fn a_saturated_shard_makes_the_merged_finding_generator_bound() {
    // Each shard: 5, 10, 20 clients; throughput follows until shard 1's generator saturates.
    let calm = vec![
        step(5, 100.0, 50, 10.0),
        step(10, 200.0, 50, 20.0),
        step(20, 210.0, 95, 40.0),
    ];
    let busy = vec![
        step(5, 100.0, 50, 30.0),
        step(10, 200.0, 50, 60.0),
        step(20, 210.0, 95, 97.0),
    ];
    let merged = merge_sweeps(vec![shard(1, busy), shard(0, calm)]).unwrap();

    let cpu: Vec<f64> = merged.steps.iter().map(|s| s.generator_cpu_pct).collect();
    assert_eq!(cpu, [30.0, 60.0, 97.0]);
    let clients: Vec<u32> = merged.steps.iter().map(|s| s.clients).collect();
    assert_eq!(clients, [10, 20, 40]);
    assert_eq!(merged.context.max_clients, 40);
    let info = merged.merge.as_ref().unwrap();
    assert_eq!(info.saturated_shards, [1]);
    assert_eq!(info.shards[1].step_generator_cpu_pct, [30.0, 60.0, 97.0]);
    let sentences = describe::saturation_sentences(info, Some((&merged.steps, 90.0)));
    assert_eq!(sentences.len(), 1);
    assert!(
        sentences[0].starts_with("Shard 1's generator used 97% of its CPU at 40 clients"),
        "{}",
        sentences[0]
    );

    let diagnosis = chokepoint_diagnose::diagnose(&merged.steps, &merged.context);
    assert_eq!(diagnosis.kind, Kind::GeneratorBound, "{diagnosis:#?}");

    // The same run without the saturation is a claim about the target.
    let calm = |index| {
        shard(
            index,
            vec![
                step(5, 100.0, 50, 10.0),
                step(10, 200.0, 50, 20.0),
                step(20, 210.0, 95, 40.0),
            ],
        )
    };
    let merged = merge_sweeps(vec![calm(0), calm(1)]).unwrap();
    assert!(merged.merge.as_ref().unwrap().saturated_shards.is_empty());
    let diagnosis = chokepoint_diagnose::diagnose(&merged.steps, &merged.context);
    assert_ne!(diagnosis.kind, Kind::GeneratorBound, "{diagnosis:#?}");
}
