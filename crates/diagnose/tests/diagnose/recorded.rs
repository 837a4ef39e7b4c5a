//! Sweeps recorded by `chokepoint demo` on the 2-core development machine (1 s steps, a busy
//! machine: real noise), saved without their diagnosis. Each must give its scenario's kind and
//! limit (± 10%). The first recording found the diagnosis wrong on three of them: `actors` (an
//! 18-client step measured 30% low made Little's law say 16), `recommendations` (efficiency
//! drifting to 86% while throughput still grew was taken for a pool) and `cpu` (one thread
//! doing CPU work: 40% of all cores, under the saturation rule, with an idle mock).

use chokepoint_diagnose::diagnose;
use chokepoint_result::{Fact, FanOutShape, Kind, SweepResult};

fn recorded(name: &str) -> SweepResult {
    let path = format!(
        "{}/tests/data/demo-run-1/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn recorded_demo_sweeps_give_their_scenarios_finding() {
    let table: &[(&str, Kind, Option<f64>)] = &[
        ("actors", Kind::BlockingPool, Some(20.0)),
        ("global", Kind::BlockingPool, Some(2.0)),
        ("blocking", Kind::BlockingPool, Some(25.0)),
        ("dispatcher", Kind::BlockingPool, Some(16.0)),
        ("async", Kind::NoLimitFound, None),
        ("recommendations", Kind::NoLimitFound, None),
        ("cpu", Kind::CpuBound, None),
        ("leaky", Kind::ConnectionLimit, Some(10.0)),
    ];
    let mut wrong = Vec::new();
    for &(name, kind, limit) in table {
        let r = recorded(name);
        let d = diagnose(&r.steps, &r.context);
        let limit_ok = match (limit, d.limit) {
            (Some(want), Some(got)) => (got - want).abs() <= 0.1 * want,
            (None, _) => true,
            (Some(_), None) => false,
        };
        if d.kind != kind || !limit_ok {
            let summary = chokepoint_diagnose::describe(&d).summary;
            wrong.push(format!("{name}: {} {:?} — {summary}", d.kind, d.limit));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn recorded_fan_out_is_parallel() {
    let r = recorded("recommendations");
    let d = diagnose(&r.steps, &r.context);
    assert_eq!(d.fan_out, Some(FanOutShape::Parallel));
}

/// The second recording's `dispatcher` sweep (a pool of 16) ran while the machine paused: at
/// 16 and 12 clients a 0.2 s gap in the timeline cut throughput to 75% and 70% of ideal, and the
/// search stopped at 7 steps with a "pool of 10". The mock saw all 16 and all 12 calls in
/// flight at once, which no pool of 10 allows: those steps follow clients, and the search goes on.
#[test]
fn a_paused_machine_is_not_taken_for_a_pool_when_the_mock_saw_every_call() {
    let path = format!(
        "{}/tests/data/demo-run-2/dispatcher.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let r: SweepResult = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let counts: Vec<u32> = r.steps.iter().map(|s| s.clients).collect();
    assert_eq!(counts, vec![1, 2, 4, 8, 16, 12, 10]);
    assert_eq!(chokepoint_diagnose::next_clients(&r.steps, 128), Some(32));
    let d = diagnose(&r.steps, &r.context);
    assert_eq!(d.kind, Kind::NoLimitFound, "{d:#?}");
    assert!(d
        .facts
        .iter()
        .any(|f| matches!(f, Fact::AllInFlight { clients: 16, .. })));
}

/// The third recording's `cpu` sweep ran on a machine busy with builds: 42, 36 and 58 req/s at
/// 1, 2 and 4 clients, no two steps within 10% of each other. The plateau then stands on every
/// step past the knee, and the CPU evidence still decides.
#[test]
fn a_noisy_cpu_sweep_without_a_flat_plateau_is_still_cpu_bound() {
    let path = format!(
        "{}/tests/data/demo-run-3/cpu.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let r: SweepResult = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let d = diagnose(&r.steps, &r.context);
    assert_eq!(d.kind, Kind::CpuBound, "{d:#?}");
}

/// The facts of the `actors` recording (a pool of 20 behind a 50 ms mock) carry the numbers the
/// evidence tells, and name the steps they were read from.
#[test]
fn recorded_actors_facts_name_their_steps() {
    use chokepoint_result::CeilingReading;
    let r = recorded("actors");
    let d = diagnose(&r.steps, &r.context);
    assert_eq!(d.knee_clients, Some(24));
    assert!(d.facts.iter().any(|f| matches!(
        f,
        Fact::Knee { clients: 24, efficiency, .. } if (0.83..0.85).contains(efficiency)
    )));
    let plateau = d.plateau.as_ref().unwrap();
    assert_eq!(plateau.clients, [20, 24, 32]);
    assert_eq!(plateau.from_clients, 20);
    let ceiling: Vec<_> = d
        .facts
        .iter()
        .filter_map(|f| match f {
            Fact::MockCeiling {
                clients,
                max_in_flight,
                reading,
                ..
            } => Some((clients.clone(), *max_in_flight, *reading)),
            _ => None,
        })
        .collect();
    assert_eq!(
        ceiling,
        [(vec![20, 24, 32], 20.0, CeilingReading::Agrees)],
        "{d:#?}"
    );
    // The steps the mock saw every call of are named, with their measured efficiency.
    let all_in_flight: Vec<u32> = d
        .facts
        .iter()
        .filter_map(|f| match f {
            Fact::AllInFlight { clients, .. } => Some(*clients),
            _ => None,
        })
        .collect();
    assert_eq!(all_in_flight, [18, 20]);
    assert_eq!(d.limit, Some(20.0));
}
