//! What overload does past the knee: tables of steps of model services, then the sweeps recorded
//! from real targets (tests/targets: java-thrash, py-pool-timeout, node-cpu-downstream; the
//! demo's scenarios; the fixtures).

use crate::common;
use chokepoint_diagnose::{overload, peak};
use chokepoint_result::{Overload, Peak, Step, SweepContext, SweepResult};
use common::*;

/// A pool of `size` slots held `hold_ms`, measured without noise: flat past the pool.
fn pool(size: u32, hold_ms: f64, c: u32) -> Step {
    let x = f64::from(c.min(size)) * 1000.0 / hold_ms;
    step(c, x, f64::from(c) / x * 1000.0)
}

/// The USL with contention σ and crosstalk κ, one client doing `lambda` per second.
fn usl(lambda: f64, sigma: f64, kappa: f64, c: u32) -> Step {
    let n = f64::from(c);
    let x = lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0));
    step(c, x, n / x * 1000.0)
}

fn run(model: impl Fn(u32) -> Step, counts: &[u32]) -> Vec<Step> {
    counts.iter().map(|&c| model(c)).collect()
}

/// A pool of 30 at 100 ms whose excess requests get a 503 in 1.2 ms from 40 clients on.
fn shedding(c: u32) -> Step {
    let s = pool(30, 100.0, c);
    if c <= 30 {
        return s;
    }
    // Each excess client cycles through 503s at 1.2 ms each.
    with_errors(s, "http_503", f64::from(c - 30) * 1000.0 / 1.2, 1.2)
}

/// A bulkhead of 8 held 100 ms whose waiters give up after 250 ms, from 32 clients on.
fn timing_out(c: u32) -> Step {
    let s = pool(8, 100.0, c);
    if c < 32 {
        return s;
    }
    with_errors(s, "http_503", f64::from(c - 28) * 4.0, 250.0)
}

fn queues(from: u32, to: u32) -> impl Fn(&Overload) -> bool {
    move |o| {
        matches!(o, Overload::Queues { from_clients, to_clients, .. }
            if *from_clients == from && *to_clients == to)
    }
}

type Row = (&'static str, Vec<Step>, Option<&'static str>);

#[test]
fn overload_table() {
    let mut noisy_plateau = run(|c| pool(20, 50.0, c), &[1, 2, 4, 8, 16, 32, 64]);
    noisy_plateau[6].ok_throughput_rps *= 0.75; // the last step alone 25% low
    let mut old_errors = run(timing_out, &[1, 2, 4, 8, 16, 32, 64]);
    for s in &mut old_errors {
        s.error_latency_ms = None; // recorded before error latency was
    }
    let table: Vec<Row> = vec![
        (
            "a pool of 20 measured to 4x => queues",
            run(|c| pool(20, 50.0, c), &[1, 2, 4, 8, 16, 32, 64, 80]),
            Some("queues"),
        ),
        (
            "503s in 1.2 ms against 100 ms of work => sheds",
            run(shedding, &[1, 10, 20, 40, 80]),
            Some("sheds"),
        ),
        (
            "503s after 250 ms against 100 ms of work => times out",
            run(timing_out, &[1, 2, 4, 8, 16, 32, 64]),
            Some("times-out"),
        ),
        (
            "USL kappa 0.002: peak near 22, half of it at 128 => collapses",
            run(|c| usl(50.0, 0.0, 0.002, c), &[1, 2, 4, 8, 16, 32, 64, 128]),
            Some("collapses"),
        ),
        (
            "only the last step 25% low, the one before held => a noisy queue, not a collapse",
            noisy_plateau,
            Some("queues"),
        ),
        (
            "errors without their latency (older results) => judged by throughput: it queues",
            old_errors,
            Some("queues"),
        ),
        (
            "throughput follows clients to the end => no knee, nothing to say",
            run(|c| pool(1000, 50.0, c), &[1, 2, 4, 8, 16]),
            None,
        ),
        (
            "the knee is the largest step => one step past it is not enough",
            run(|c| pool(8, 50.0, c), &[1, 2, 4, 8, 16]),
            None,
        ),
    ];
    for (comment, steps, expected) in table {
        let found = overload(&steps, &bare_context());
        assert_eq!(
            found.as_ref().map(Overload::name),
            expected,
            "{comment}: {found:?}"
        );
    }
}

#[test]
fn overload_figures() {
    let ctx = bare_context();
    let o = overload(
        &run(|c| pool(20, 50.0, c), &[1, 2, 4, 8, 16, 32, 64, 80]),
        &ctx,
    );
    let o = o.expect("a pool past its knee");
    assert!(queues(32, 80)(&o), "{o:?}");
    let Overload::Queues {
        throughput_rps,
        from_latency_ms,
        to_latency_ms,
        ..
    } = o
    else {
        unreachable!()
    };
    assert_near(throughput_rps, 400.0, 0.001);
    assert_near(from_latency_ms, 80.0, 0.001);
    assert_near(to_latency_ms, 200.0, 0.001);

    let sheds = overload(&run(shedding, &[1, 10, 20, 40, 80]), &ctx);
    let Some(Overload::Sheds {
        from_clients,
        at_clients,
        error_rate,
        error_latency_ms,
        error_kind,
    }) = sheds
    else {
        panic!("{sheds:?}")
    };
    assert_eq!((from_clients, at_clients), (40, 80));
    assert_near(error_latency_ms, 1.2, 0.001);
    assert_eq!(error_kind, "http_503");
    assert!(error_rate > 0.99, "{error_rate}");

    let times_out = overload(&run(timing_out, &[1, 2, 4, 8, 16, 32, 64]), &ctx);
    let Some(Overload::TimesOut {
        from_clients,
        at_clients,
        wait_ms,
        ..
    }) = times_out
    else {
        panic!("{times_out:?}")
    };
    assert_eq!((from_clients, at_clients), (32, 64));
    assert_near(wait_ms, 250.0, 0.001);

    let steps = run(|c| usl(50.0, 0.0, 0.002, c), &[1, 2, 4, 8, 16, 32, 64, 128]);
    let collapse = overload(&steps, &ctx);
    let Some(Overload::Collapses {
        peak: top,
        at_clients,
        throughput_rps,
        fall,
    }) = collapse
    else {
        panic!("{collapse:?}")
    };
    // X(16) = 800 / 1.48 = 540.5, X(32) = 1600 / 2.984 = 536.2: the peak is the 16-client step.
    assert_eq!(top.clients, 16);
    assert_near(top.throughput_rps, 540.54, 0.001);
    assert_eq!(at_clients, 128);
    // X(128) = 6400 / 33.512 = 191.0.
    assert_near(throughput_rps, 190.98, 0.001);
    assert_near(fall, 1.0 - 190.98 / 540.54, 0.001);
    assert_eq!(peak(&steps), Some(top));
}

#[test]
fn the_peak_is_the_fewest_clients_among_equal_throughputs() {
    let steps = run(|c| pool(8, 100.0, c), &[1, 4, 8, 16, 32]);
    assert_eq!(
        peak(&steps),
        Some(Peak {
            clients: 8,
            throughput_rps: 80.0
        })
    );
    assert_eq!(peak(&[]), None);
}

fn recorded(path: &str) -> SweepResult {
    let file = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn recorded_overload(path: &str) -> (Option<Overload>, SweepContext) {
    let r = recorded(path);
    (overload(&r.steps, &r.context), r.context)
}

/// java-thrash (a spinning permit pool of 16 pinned to one core), swept with a list to 256
/// clients: 651 req/s at 16, 601 at 24, 521 at 32, 338 at 64, 209 at 128, 148 at 256.
#[test]
fn recorded_java_thrash_collapses_past_16_clients() {
    let (o, _) = recorded_overload("tests/data/overload/java-thrash-list.json");
    let Some(Overload::Collapses {
        peak,
        at_clients,
        fall,
        ..
    }) = o
    else {
        panic!("{o:?}")
    };
    assert_eq!(peak.clients, 16);
    assert_eq!(at_clients, 256);
    assert!(fall > 0.7, "fell {fall}");
    // The adaptive search of the time stopped at 28 clients, before the fall: it only queued.
    let (o, _) = recorded_overload("tests/data/overload/java-thrash-adaptive.json");
    assert!(queues(14, 28)(o.as_ref().expect("a knee")), "{o:?}");
}

/// py-pool-timeout (a bulkhead of 8 held 100 ms, 0.25 s acquire wait) swept to 128 clients.
#[test]
fn recorded_pool_with_an_acquire_timeout_times_out_after_its_wait() {
    let (o, _) = recorded_overload("tests/data/overload/py-pool-timeout-list.json");
    let Some(Overload::TimesOut {
        from_clients,
        wait_ms,
        error_kind,
        ..
    }) = o
    else {
        panic!("{o:?}")
    };
    assert_eq!(
        from_clients, 32,
        "2.8% of 503s at 16 clients are under the 5% mark"
    );
    assert_near(wait_ms, 250.0, 0.05);
    assert_eq!(error_kind, "http_503");
    // The adaptive search of the time stopped at 16 clients, where callers only queued.
    let (o, _) = recorded_overload("tests/data/overload/py-pool-timeout-adaptive.json");
    assert_eq!(o.as_ref().map(Overload::name), Some("queues"), "{o:?}");
}

/// Every recorded sweep of a pool or a CPU queues past its knee; the leaking pool of the
/// fixture loses its connections and collapses; sweeps without two steps from the knee on
/// say nothing.
#[test]
fn recorded_sweeps_queue_except_the_leak() {
    let table = [
        ("tests/data/demo-run-1/actors.json", Some("queues")),
        ("tests/data/demo-run-1/async.json", None),
        ("tests/data/demo-run-1/blocking.json", Some("queues")),
        ("tests/data/demo-run-1/cpu.json", Some("queues")),
        ("tests/data/demo-run-1/dispatcher.json", Some("queues")),
        ("tests/data/demo-run-1/global.json", Some("queues")),
        ("tests/data/demo-run-1/leaky.json", Some("queues")),
        ("tests/data/demo-run-1/recommendations.json", Some("queues")),
        ("tests/data/demo-run-3/cpu.json", Some("queues")),
        ("tests/data/long-steps/cpu.json", Some("queues")),
        (
            "tests/data/overload/node-cpu-downstream-adaptive.json",
            Some("queues"),
        ),
        (
            "tests/data/overload/node-cpu-downstream-list.json",
            Some("queues"),
        ),
        (
            "../../tests/fixtures/sweep-seed000/result.json",
            Some("queues"),
        ),
        (
            "../../tests/fixtures/sweep-leaky/result.json",
            Some("collapses"),
        ),
    ];
    for (path, expected) in table {
        let (o, _) = recorded_overload(path);
        assert_eq!(o.as_ref().map(Overload::name), expected, "{path}: {o:?}");
    }
}

/// The adaptive sweep with the overload probes of py-pool-timeout: 1..16, 12, 10, then the 4x
/// probe at 32 where 38% of requests got a 503 after the 250 ms wait. The errors came only
/// past a plateau that held without them: the finding stays a pool of 8, and says it times out.
#[test]
fn errors_only_in_the_overload_probe_keep_the_pool_and_say_it_times_out() {
    let r = recorded("tests/data/overload/py-pool-timeout-probes.json");
    let finding = chokepoint_diagnose::diagnose(&r.steps, &r.context);
    assert_eq!(finding.kind, chokepoint_result::Kind::BlockingPool);
    assert_near(finding.limit.expect("a limit"), 8.0, 0.1);
    let Some(Overload::TimesOut {
        wait_ms,
        from_clients,
        ..
    }) = &finding.overload
    else {
        panic!("{:?}", finding.overload)
    };
    assert_eq!(*from_clients, 32);
    assert_near(*wait_ms, 250.0, 0.05);
    assert!(finding
        .facts
        .iter()
        .any(|f| matches!(f, chokepoint_result::Fact::Overload { .. })));
    let diagnosis = finding.into_diagnosis();
    let line = diagnosis
        .evidence
        .iter()
        .find(|e| e.starts_with("Past the knee: it times out."))
        .unwrap_or_else(|| panic!("{:#?}", diagnosis.evidence));
    assert!(line.contains("250 ms"), "{line}");
    let json = serde_json::to_value(&diagnosis).expect("json");
    assert_eq!(json["overload"]["behaviour"], "times-out");
    // The plateau's steps all ran at 80 req/s within noise: the peak is one of them.
    assert_near(
        json["peak"]["throughput_rps"].as_f64().expect("a peak"),
        80.0,
        0.02,
    );
}

/// The adaptive sweep with the overload probes of java-thrash: the 4x probe at 62 clients ran at
/// 169 req/s against 668 at 18: the finding says it collapses.
#[test]
fn the_thrashing_target_is_seen_to_collapse_by_its_probes() {
    let r = recorded("tests/data/overload/java-thrash-probes.json");
    let finding = chokepoint_diagnose::diagnose(&r.steps, &r.context);
    let Some(Overload::Collapses {
        peak,
        at_clients,
        fall,
        ..
    }) = finding.overload
    else {
        panic!("{:?}", finding.overload)
    };
    assert_eq!((peak.clients, at_clients), (18, 62));
    assert!(fall > 0.7, "{fall}");
    assert_eq!(finding.peak, Some(peak));
    // A falling throughput is its own finding: contention, sized by the USL's peak concurrency,
    // with the USL named over the bounded-pool model that cannot fall.
    assert_eq!(finding.kind, chokepoint_result::Kind::Contention);
    let usl = finding.usl.expect("a USL fit");
    assert!(usl.kappa > 0.0, "{usl:?}");
    assert_eq!(finding.limit, usl.n_max);
    assert_eq!(finding.better_model, Some(chokepoint_result::Model::Usl));
    let summary = chokepoint_diagnose::describe(&finding).summary;
    assert!(
        summary.starts_with("Throughput peaks at 668 req/s at 18 clients and falls 75%"),
        "{summary}"
    );
    assert!(summary.contains("κ = "), "{summary}");
}
