//! `compare` on runs built in the test: steps matched by clients, the verdicts of figures whose
//! samples moved, the finding read, and the runs it refuses.
use chokepoint_compare::{compare, CompareError, FigureName, NoCall, Run, RunKind, Verdict};
use chokepoint_load::{hdr, recorder::new_histogram};
use chokepoint_result::{
    Diagnosis, LatencyHistograms, LoadReport, Step, SweepContext, SweepResult, TimelinePoint,
};

/// A load run at `clients`: `buckets` 100 ms buckets of `per_bucket` completions (one more in
/// every third, so the buckets vary), every request taking `latency_ms` (± a tenth, evenly).
fn run(clients: u32, buckets: usize, per_bucket: u64, latency_ms: f64) -> LoadReport {
    let timeline: Vec<TimelinePoint> = (0..buckets)
        .map(|i| {
            let n = per_bucket + u64::from(i % 3 == 0);
            TimelinePoint {
                t_s: i as f64 * 0.1,
                completed: n,
                ok: n,
                mean_latency_ms: latency_ms,
                in_flight: u64::from(clients),
            }
        })
        .collect();
    let requests: u64 = timeline.iter().map(|p| p.ok).sum();
    let mut histogram = new_histogram();
    for i in 0..requests {
        let spread = 0.9 + 0.2 * (i as f64 / requests as f64);
        histogram
            .record((latency_ms * spread * 1000.0) as u64)
            .unwrap();
    }
    let duration_s = buckets as f64 * 0.1;
    LoadReport {
        target: "http://127.0.0.1:8080/actors".into(),
        clients,
        requests,
        ok: requests,
        throughput_rps: requests as f64 / duration_s,
        ok_throughput_rps: requests as f64 / duration_s,
        duration_s,
        timeline_bucket_s: 0.1,
        timeline,
        histograms: Some(LatencyHistograms {
            latency: hdr::encode(&histogram),
            ok: hdr::encode(&histogram),
            error: hdr::encode(&new_histogram()),
            uncorrected: None,
        }),
        ..LoadReport::default()
    }
}

fn diagnosis(kind: &str, limit: f64, pool: &str, plateau: (f64, &[u32])) -> Diagnosis {
    serde_json::from_value(serde_json::json!({
        "kind": kind, "limit": limit, "knee_clients": null, "summary": "", "evidence": [],
        "usl": null, "attribution": null,
        "place": { "kind": "thread-pool", "pool": pool, "size": limit, "held": limit,
                   "waiting": null, "frames": [], "clients": 40, "source": null, "setting": null },
        "plateau": { "throughput_rps": plateau.0, "from_clients": plateau.1[0], "clients": plateau.1 },
    }))
    .unwrap()
}

fn sweep(steps: Vec<LoadReport>, diagnosis: Diagnosis) -> Run {
    Run::Sweep(Box::new(SweepResult {
        target: steps[0].target.clone(),
        steps: steps
            .into_iter()
            .map(|load| Step {
                load,
                ..Step::default()
            })
            .collect(),
        diagnosis: Some(diagnosis),
        context: SweepContext::default(),
        interrupted: false,
        chokepoint_version: String::new(),
        shard: None,
        merge: None,
        duration_s: 0.0,
        load_s: 0.0,
    }))
}

/// Pool 20 → pool 40 at 100 ms a call: 10 clients alike; from 40 on, twice the throughput and
/// half the latency.
fn pool_20_and_40() -> (Run, Run) {
    let before = sweep(
        vec![
            run(10, 50, 10, 100.0),
            run(20, 50, 20, 100.0),
            run(40, 50, 20, 200.0),
        ],
        diagnosis("blocking-pool", 20.0, "cp-demo-actors", (200.0, &[20, 40])),
    );
    let after = sweep(
        vec![
            run(10, 50, 10, 100.0),
            run(40, 50, 40, 100.0),
            run(80, 50, 40, 200.0),
        ],
        diagnosis("blocking-pool", 40.0, "cp-demo-actors", (400.0, &[40, 80])),
    );
    (before, after)
}

#[test]
fn a_pool_twice_as_large_is_better_where_it_mattered_and_no_different_where_it_did_not() {
    let (before, after) = pool_20_and_40();
    let c = compare(&before, &after, false).unwrap();
    assert_eq!(c.kind, RunKind::Sweep);
    let clients: Vec<u32> = c.steps.iter().map(|s| s.clients).collect();
    assert_eq!(clients, [10, 40]);
    assert_eq!(
        (c.only_before.as_slice(), c.only_after.as_slice()),
        (&[20][..], &[80][..])
    );
    let at10 = &c.steps[0];
    for f in [&at10.throughput, &at10.p50, &at10.p99] {
        assert_eq!(f.verdict, Verdict::NoDifference, "{f:?}");
    }
    let at40 = &c.steps[1];
    assert_eq!(at40.throughput.verdict, Verdict::Better);
    let shift = at40.throughput.change.unwrap();
    assert!(shift.low <= 200.0 && 200.0 <= shift.high, "{shift:?}");
    assert_eq!(at40.p50.verdict, Verdict::Better);
    assert_eq!(at40.p99.verdict, Verdict::Better);
    let plateau = c.plateau.as_ref().unwrap();
    assert_eq!(plateau.name, FigureName::Plateau);
    assert_eq!((plateau.before, plateau.after), (Some(200.0), Some(400.0)));
    assert_eq!(plateau.verdict, Verdict::Better);
    assert_eq!(
        (
            c.plateau_steps_before.as_slice(),
            c.plateau_steps_after.as_slice()
        ),
        (&[20, 40][..], &[40, 80][..])
    );
    let finding = c.finding.as_ref().unwrap();
    let (b, a) = (
        finding.before.as_ref().unwrap(),
        finding.after.as_ref().unwrap(),
    );
    assert_eq!((b.limit, a.limit), (Some(20.0), Some(40.0)));
    assert_eq!(a.pool.as_deref(), Some("cp-demo-actors"));
    assert!(!c.any_worse());

    // The other way round, every called figure is worse.
    let back = compare(&after, &before, false).unwrap();
    assert!(back.any_worse());
    assert_eq!(back.steps[1].throughput.verdict, Verdict::Worse);
    assert_eq!(back.plateau.unwrap().verdict, Verdict::Worse);
}

#[test]
fn a_run_compared_with_itself_has_no_difference_anywhere() {
    let (before, _) = pool_20_and_40();
    let c = compare(&before, &before, false).unwrap();
    assert!(c.figures().count() > 0);
    for f in c.figures() {
        assert_eq!(f.verdict, Verdict::NoDifference, "{f:?}");
    }
}

#[test]
fn two_load_runs_compare_as_one_row_whatever_their_clients() {
    let c = compare(
        &Run::Load(Box::new(run(20, 50, 20, 100.0))),
        &Run::Load(Box::new(run(40, 50, 40, 100.0))),
        false,
    )
    .unwrap();
    assert_eq!(c.kind, RunKind::Load);
    assert_eq!(c.steps.len(), 1);
    assert_eq!((c.steps[0].clients, c.steps[0].clients_after), (20, 40));
    assert_eq!(c.steps[0].throughput.verdict, Verdict::Better);
    assert!(c.finding.is_none() && c.plateau.is_none());
}

#[test]
fn runs_without_histograms_or_with_few_buckets_make_no_call() {
    let mut short = run(20, 4, 20, 100.0);
    short.histograms = None;
    let c = compare(
        &Run::Load(Box::new(short)),
        &Run::Load(Box::new(run(20, 50, 40, 50.0))),
        false,
    )
    .unwrap();
    let s = &c.steps[0];
    assert_eq!(s.throughput.no_call, Some(NoCall::TooFewSamples));
    assert_eq!(s.p50.no_call, Some(NoCall::NoHistograms));
    assert_eq!(s.p50.before, None, "a report without ok latency shows none");
}

#[test]
fn a_sweep_and_a_load_run_or_two_paths_are_refused() {
    let (sweep_run, _) = pool_20_and_40();
    let load = Run::Load(Box::new(run(20, 50, 20, 100.0)));
    assert_eq!(
        compare(&sweep_run, &load, true).unwrap_err(),
        CompareError::DifferentKinds {
            before: RunKind::Sweep,
            after: RunKind::Load
        }
    );
    let mut other = run(20, 50, 20, 100.0);
    other.target = "http://127.0.0.1:8080/async".into();
    let other = Run::Load(Box::new(other));
    let err = compare(&load, &other, false).unwrap_err();
    assert!(matches!(err, CompareError::DifferentTargets { .. }));
    assert!(err.to_string().contains("--force"), "{err}");
    assert!(compare(&load, &other, true).is_ok());
    // Another port alone is the same experiment.
    let mut moved = run(20, 50, 20, 100.0);
    moved.target = "http://127.0.0.1:9999/actors".into();
    assert!(compare(&load, &Run::Load(Box::new(moved)), false).is_ok());
}

#[test]
fn the_text_says_the_finding_the_plateau_and_a_row_per_figure() {
    let (before, after) = pool_20_and_40();
    let text = chokepoint_compare::text::render(&compare(&before, &after, false).unwrap());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "compare sweeps of http://127.0.0.1:8080/actors");
    assert_eq!(
        lines[1],
        "finding: blocking-pool, limit 20, pool cp-demo-actors → blocking-pool, limit 40, pool cp-demo-actors"
    );
    assert!(
        lines[2].starts_with("plateau: 200 → 400 ok req/s, change +"),
        "{}",
        lines[2]
    );
    assert!(
        lines[2].ends_with("(better; the buckets of 20,40 clients → 40,80)"),
        "{}",
        lines[2]
    );
    let row = |clients: &str, figure: &str| {
        let at = lines
            .iter()
            .position(|l| l.split_whitespace().next() == Some(clients))
            .unwrap();
        lines[at..at + 3]
            .iter()
            .find(|l| l.contains(&format!(" {figure} ")))
            .copied()
            .unwrap()
    };
    assert!(row("40", "ok req/s").ends_with("better"), "{text}");
    assert!(row("40", "p50").contains("200 ms    100 ms"), "{text}");
    assert!(row("10", "p99").ends_with("no difference"), "{text}");
    assert_eq!(lines.last(), Some(&"4 better, 0 worse, 3 no difference"));
    assert!(text.contains("not compared: clients only before 20, only after 80"));
}
