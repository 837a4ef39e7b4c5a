//! `--expect` gates: a parse table (valid and invalid) and an evaluation table on seed 000.

use crate::common;
use chokepoint_diagnose::{check_gates, Gate};
use chokepoint_result::{Kind, SweepContext};
use common::*;

#[test]
fn valid_gates_parse() {
    for text in [
        "limit>=100",
        "limit<30",
        "knee>=20",
        "kind!=blocking-pool",
        "kind==no-limit-found",
        "p99<500ms@40",
        "p50<=2s",
        "p90>1ms",
        "p95<1.5s@8",
        "p999<3s",
        "mean<100ms",
        "max<10s@100",
        "throughput>=50@20",
        "throughput>=50rps",
        "error_rate<1%@40",
        "error_rate<0.01",
        "error_rate==0",
        " limit >= 100 ",
    ] {
        let gate: Gate = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(gate.to_string(), text.replace(' ', ""));
    }
}

#[test]
fn invalid_gates_name_the_problem_and_what_is_valid() {
    // (gate, words the one-line error must contain)
    let table: &[(&str, &[&str])] = &[
        (
            "latency<5ms",
            &["unknown metric 'latency'", "p99", "throughput"],
        ),
        ("p99<500", &["no unit", "ms or s"]),
        ("p99<500us", &["unknown unit 'us'", "ms or s"]),
        (
            "limit=>100",
            &["unknown operator '=>'", "<, <=, >, >=, ==, !="],
        ),
        ("limit=100", &["unknown operator '='"]),
        ("limit100", &["no operator"]),
        ("limit>=lots", &["'lots' is not a number"]),
        ("kind<blocking-pool", &["== or !="]),
        (
            "kind==blocking_pool",
            &["unknown kind 'blocking_pool'", "blocking-pool, cpu-bound"],
        ),
        ("p99<500ms@", &["not a client count"]),
        ("p99<500ms@0", &["not a client count"]),
        ("limit>=10@40", &["remove '@40'"]),
        ("error_rate<150%", &["outside 0..100%"]),
        ("p99<", &["no value"]),
        ("", &["empty"]),
    ];
    for (text, words) in table {
        let err = text.parse::<Gate>().expect_err(text).to_string();
        assert!(!err.contains('\n'), "{err}");
        assert!(err.starts_with("invalid gate '"), "{err}");
        for word in *words {
            assert!(err.contains(word), "{text}: '{err}' lacks '{word}'");
        }
    }
}

#[test]
fn gates_are_evaluated_on_the_steps_and_the_finding() {
    let context = SweepContext {
        downstream_delay_ms: Some(1000.0),
        max_clients: 100,
        ..SweepContext::default()
    };
    let steps = vec![
        step(1, 1.0, 1017.0),
        step(5, 5.0, 1017.0),
        step(20, 19.7, 1018.0),
        with_errors(step(40, 19.5, 2027.0), "request_timeout", 0.3, 5000.0),
        step(100, 19.7, 5070.0),
    ];
    let d = diagnosed(&steps, &context).into_diagnosis();
    assert_eq!(d.kind(), Kind::BlockingPool);
    // p99 of the table's latencies is 1.1 × mean (see common::latency).
    let p99_at_40: f64 = (1.1 * ((2027.0 * 195.0 + 5000.0 * 3.0) / 198.0_f64)).round();
    let table: &[(&str, Option<String>)] = &[
        ("limit>=15", None),
        ("limit>=100", Some("gate 'limit>=100' failed: the limit was 19.7".into())),
        ("limit<30", None),
        ("knee>=20", None),
        ("knee<40", Some("gate 'knee<40' failed: the knee was at 40 clients".into())),
        ("kind==blocking-pool", None),
        ("kind!=blocking-pool", Some("gate 'kind!=blocking-pool' failed: the kind was blocking-pool".into())),
        (
            "p99<500ms@40",
            Some(format!("gate 'p99<500ms@40' failed: p99 was {p99_at_40} ms at 40 clients")),
        ),
        ("p99<10s@40", None),
        ("p99<2s", Some("gate 'p99<2s' failed: p99 was 2279 ms at 40 clients (and at 1 more step)".into())),
        ("p50<1.1s@20", None),
        ("throughput>=19@20", None),
        ("throughput>=50@20", Some("gate 'throughput>=50@20' failed: throughput was 19.7 req/s at 20 clients".into())),
        ("throughput>=2", Some("gate 'throughput>=2' failed: throughput was 1 req/s at 1 client".into())),
        ("error_rate<1%@20", None),
        ("error_rate<1%@40", Some("gate 'error_rate<1%@40' failed: error rate was 1.52% at 40 clients".into())),
        ("error_rate<0.05", None),
        ("p99<500ms@30", Some("gate 'p99<500ms@30' failed: no step ran with 30 clients (steps: 1, 5, 20, 40, 100)".into())),
    ];
    for (text, expected) in table {
        let gate: Gate = text.parse().unwrap();
        let failures = check_gates(&[gate], &steps, &d);
        assert_eq!(failures.first(), expected.as_ref(), "{text}");
        assert!(failures.len() <= 1);
    }
    let all: Vec<Gate> = table.iter().map(|(t, _)| t.parse().unwrap()).collect();
    let failures = check_gates(&all, &steps, &d);
    assert_eq!(
        failures.len(),
        table.iter().filter(|(_, e)| e.is_some()).count()
    );
}

#[test]
fn a_limit_gate_fails_when_no_limit_was_found() {
    let steps = vec![step(1, 10.0, 100.0), step(2, 20.0, 100.0)];
    let d = diagnosed(&steps, &bare_context()).into_diagnosis();
    let gate: Gate = "limit>=100".parse().unwrap();
    assert_eq!(
        check_gates(&[gate], &steps, &d),
        vec!["gate 'limit>=100' failed: no limit was found (no-limit-found)".to_string()]
    );
}
