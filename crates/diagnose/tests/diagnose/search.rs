//! The adaptive search: a table of (steps so far → next count), one comment per row, in the
//! style of vegeta's pacer tests; then whole simulated sweeps against model services.

use crate::common;
use chokepoint_diagnose::next_clients;
use chokepoint_result::{Fact, Kind, Step, StepChoice};
use common::*;

/// A pool of 20 slots held 50 ms, measured without noise.
fn pool20(c: u32) -> Step {
    let x = c.min(20) as f64 / 0.05;
    step(c, x, c as f64 / x * 1000.0)
}

/// A target with no limit: 50 ms per request whatever the clients.
fn unlimited(c: u32) -> Step {
    step(c, c as f64 / 0.05, 50.0)
}

fn run(model: fn(u32) -> Step, counts: &[u32]) -> Vec<Step> {
    counts.iter().map(|&c| model(c)).collect()
}

#[test]
fn next_clients_table() {
    let saturated = {
        let mut s = run(unlimited, &[1, 2, 4]);
        s[2].generator_cpu_pct = 95.0;
        s
    };
    let collapsed = {
        let mut s = run(pool20, &[1, 2, 4, 8, 16, 32]);
        s[4].ok_throughput_rps = 60.0; // 16 clients: 38% of the best (8 clients, 160/s)
        s[5].ok_throughput_rps = 50.0; // 32 clients: 31% of the best
        s
    };
    let table: Vec<(&str, Vec<Step>, u32, Option<u32>)> = vec![
        (
            "nothing measured => start at 1 client",
            vec![],
            1000,
            Some(1),
        ),
        ("max 0 clients => nothing to run", vec![], 0, None),
        (
            "1 client follows the ideal => double",
            run(pool20, &[1]),
            1000,
            Some(2),
        ),
        (
            "1 and 2 follow the ideal within 5% => grow four-fold, to 8",
            run(pool20, &[1, 2]),
            1000,
            Some(8),
        ),
        (
            "1, 2, 8 follow => four-fold again, to 32",
            run(pool20, &[1, 2, 8]),
            1000,
            Some(32),
        ),
        (
            "2 waited 9% longer than 1 (92% of ideal): followed, but not within 5% => only \
             double, to 4",
            vec![pool20(1), step(2, 40.0 * 0.92, 50.0 / 0.92)],
            1000,
            Some(4),
        ),
        (
            "2 counted 8% short (a short step's count is off by a request) at the base latency \
             => four-fold, to 8",
            vec![pool20(1), step(2, 40.0 * 0.92, 50.0)],
            1000,
            Some(8),
        ),
        (
            "1..16 follow the ideal => four-fold to 64",
            run(pool20, &[1, 2, 4, 8, 16]),
            1000,
            Some(64),
        ),
        (
            "32 ran at 62% of ideal, estimate 20 => bisect 16..32 at 24",
            run(pool20, &[1, 2, 4, 8, 16, 32]),
            1000,
            Some(24),
        ),
        (
            "24 at 83% is below => bisect 16..24 at 20",
            run(pool20, &[1, 2, 4, 8, 16, 32, 24]),
            1000,
            Some(20),
        ),
        (
            "20 follows => bisect 20..24 at 22",
            run(pool20, &[1, 2, 4, 8, 16, 32, 24, 20]),
            1000,
            Some(22),
        ),
        (
            "22 follows, 22..24 is 2 clients wide; 32 is past 1.5 x 20 and covers the 2x probe \
             (40) => the 4x probe, 80",
            run(pool20, &[1, 2, 4, 8, 16, 32, 24, 20, 22]),
            1000,
            Some(80),
        ),
        (
            "the 4x probe ran => done",
            run(pool20, &[1, 2, 4, 8, 16, 32, 24, 20, 22, 80]),
            1000,
            None,
        ),
        (
            "steps out of order and repeated count once => same as 1..16",
            run(pool20, &[16, 1, 4, 2, 8, 4, 16]),
            1000,
            Some(64),
        ),
        (
            "64 follows and 128 would overshoot 100 => one last step at 100",
            run(unlimited, &[1, 2, 4, 8, 16, 32, 64]),
            100,
            Some(100),
        ),
        (
            "the maximum ran and still follows => done",
            run(unlimited, &[1, 2, 4, 8, 16, 32, 64, 100]),
            100,
            None,
        ),
        (
            "a pool of 1: 2 clients at 50%, estimate 1 => confirm at 2 x first bad = 4",
            run(|c| step(c, 20.0, c as f64 * 50.0), &[1, 2]),
            1000,
            Some(4),
        ),
        (
            "a pool of 1 confirmed at 4 => done",
            run(|c| step(c, 20.0, c as f64 * 50.0), &[1, 2, 4]),
            1000,
            None,
        ),
        (
            "confirmation capped at the maximum => 30",
            run(pool20, &[1, 2, 4, 8, 16, 24, 20, 22]),
            30,
            Some(30),
        ),
        (
            "both probes capped at the maximum, which ran => done",
            run(pool20, &[1, 2, 4, 8, 16, 24, 20, 22, 30]),
            30,
            None,
        ),
        (
            "the generator saturated at 4 clients => stop at once",
            saturated,
            1000,
            None,
        ),
        (
            "ok throughput under half the best at two steps => stop",
            collapsed,
            1000,
            None,
        ),
    ];
    for (comment, steps, max, expected) in table {
        assert_eq!(next_clients(&steps, max), expected, "{comment}");
    }
}

/// Runs the adaptive search against `model` to the end; returns the steps in order.
fn sweep(model: &mut dyn FnMut(u32) -> Step, max: u32) -> Vec<Step> {
    let mut steps = Vec::new();
    while let Some(c) = next_clients(&steps, max) {
        assert!(c >= 1 && c <= max, "{c} outside 1..={max}");
        assert!(
            steps.iter().all(|s: &Step| s.clients != c),
            "{c} proposed twice"
        );
        steps.push(model(c));
        assert!(steps.len() <= 30, "the search does not stop");
    }
    steps
}

#[test]
fn a_pool_of_20_at_50_ms_is_found_in_few_steps() {
    let mut noise = Noise::new(42);
    let steps = sweep(&mut |c| pool_step(20, 50.0, 1.0, c, &mut noise), 1000);
    let counts: Vec<u32> = steps.iter().map(|s| s.clients).collect();
    assert!(steps.len() <= 12, "{counts:?}");
    let d = diagnosed(&steps, &mock_context(50.0));
    assert_eq!(d.kind, Kind::BlockingPool, "{counts:?} {d:#?}");
    assert_near(d.limit.unwrap(), 20.0, 0.1);
    let knee = d.knee_clients.unwrap();
    assert!((21..=26).contains(&knee), "knee {knee} for {counts:?}");
}

#[test]
fn a_pool_of_1_is_found_in_three_steps() {
    let mut noise = Noise::new(1);
    let steps = sweep(&mut |c| pool_step(1, 50.0, 1.0, c, &mut noise), 1000);
    let counts: Vec<u32> = steps.iter().map(|s| s.clients).collect();
    assert_eq!(counts, vec![1, 2, 4]);
    let d = diagnosed(&steps, &mock_context(50.0));
    assert_eq!(d.kind, Kind::BlockingPool);
    assert_eq!(d.limit, Some(1.0));
}

#[test]
fn pools_of_8_and_64_stay_within_12_steps() {
    for pool in [8u32, 64, 100] {
        let mut noise = Noise::new(pool as u64);
        let steps = sweep(&mut |c| pool_step(pool, 50.0, 1.0, c, &mut noise), 1000);
        let counts: Vec<u32> = steps.iter().map(|s| s.clients).collect();
        assert!(steps.len() <= 12, "pool {pool}: {counts:?}");
        println!("pool {pool}: {counts:?}");
        let d = diagnosed(&steps, &mock_context(50.0));
        assert_eq!(d.kind, Kind::BlockingPool, "pool {pool}: {counts:?}");
        assert_near(d.limit.unwrap(), pool as f64, 0.1);
    }
}

#[test]
fn no_limit_up_to_256_ends_at_the_maximum() {
    let mut noise = Noise::new(256);
    let steps = sweep(
        &mut |c| {
            let x = noise.jitter(c as f64 / 0.05, 0.03);
            step(c, x, c as f64 / x * 1000.0)
        },
        256,
    );
    let counts: Vec<u32> = steps.iter().map(|s| s.clients).collect();
    assert_eq!(counts, vec![1, 2, 8, 32, 128, 256]);
    let d = diagnosed(&steps, &bare_context());
    assert_eq!(d.kind, Kind::NoLimitFound);
    // The largest step, the one the summary names, is the 256-client one.
    let largest = facts(&d, |f| match f {
        Fact::Step { clients, .. } => Some(*clients),
        _ => None,
    });
    assert_eq!(largest.last(), Some(&256));
}

#[test]
fn a_noisy_step_that_looks_like_a_knee_is_outvoted() {
    // Pool of 64; the 8-client step ran at 85% of ideal once.
    let mut noise = Noise::new(8);
    let mut first_eight = true;
    let steps = sweep(
        &mut |c| {
            let mut s = pool_step(64, 50.0, 1.0, c, &mut noise);
            if c == 8 && first_eight {
                first_eight = false;
                s.ok_throughput_rps *= 0.85;
            }
            s
        },
        1000,
    );
    let counts: Vec<u32> = steps.iter().map(|s| s.clients).collect();
    assert!(counts.contains(&128), "{counts:?}");
    assert!(steps.len() <= 14, "{counts:?}");
    let d = diagnosed(&steps, &mock_context(50.0));
    assert_near(d.limit.unwrap(), 64.0, 0.1);
}

/// A pool of 20 slots held 50 ms, with the mock in front of it seeing its flat ceiling.
fn pool20_with_mock(c: u32) -> Step {
    with_mock(pool20(c), 50.0, 1.0, u64::from(c.min(20)))
}

/// A pool of 12 slots held 50 ms behind the mock.
fn pool12_with_mock(c: u32) -> Step {
    let x = c.min(12) as f64 / 0.05;
    with_mock(
        step(c, x, c as f64 / x * 1000.0),
        50.0,
        1.0,
        u64::from(c.min(12)),
    )
}

/// A pool of 16 held 20 ms whose waiters each take 0.7% off throughput: 16 -> 800 req/s,
/// 32 -> 720 (90%), 64 -> 598 (75%).
fn thrashing16(c: u32) -> Step {
    let waiters = f64::from(c.saturating_sub(16));
    let x = f64::from(c.min(16)) / 0.02 / (1.0 + 0.007 * waiters);
    step(c, x, f64::from(c) / x * 1000.0)
}

/// One core busy (of 2) from 2 clients on: 50% of the machine, 20 ms of CPU a request.
fn one_core(c: u32) -> Step {
    let mut s = step(c, 50.0, c as f64 * 20.0);
    s.target_cpu_pct = Some(if c >= 2 { 50.0 } else { 48.0 });
    s
}

/// java-thrash's steps in stop 35's CI run (pinned to one core of two): throughput, mean
/// latency and target CPU as printed.
fn java_thrash_stop_35(counts: &[u32]) -> Vec<Step> {
    let measured = [
        (1, 41.3, 23.9, 8.0),
        (2, 85.2, 23.5, 10.0),
        (8, 341.8, 23.4, 20.0),
        (32, 441.6, 69.1, 50.0),
        (64, 357.5, 206.2, 50.0),
    ];
    counts
        .iter()
        .map(|&c| {
            let &(_, x, mean, cpu) = measured.iter().find(|m| m.0 == c).expect("measured");
            let mut s = step(c, x, mean);
            s.target_cpu_pct = Some(cpu);
            s
        })
        .collect()
}

/// A row of the table: comment, steps so far, the machine's cores, the expected next step.
type Row = (
    &'static str,
    Vec<Step>,
    Option<u32>,
    Option<(u32, StepChoice)>,
);

#[test]
fn next_step_table_says_why() {
    use chokepoint_diagnose::next_step;
    use StepChoice::*;
    let table: Vec<Row> =
        vec![
        ("nothing measured => start", vec![], None, Some((1, Start))),
        (
            "16 follows => double",
            run(pool20_with_mock, &[1, 2, 4, 8, 16]),
            None,
            Some((64, Doubling { from: 16, times: Some(4) })),
        ),
        (
            "32 saw a flat ceiling of 20 at the mock => confirm just past it, at 24, no bisection",
            run(pool20_with_mock, &[1, 2, 4, 8, 16, 32]),
            None,
            Some((24, ConfirmCeiling { in_flight: 20, seen_at: 32 })),
        ),
        (
            "24 saw the same ceiling; 32 covers the 2x probe (40) => the 4x probe",
            run(pool20_with_mock, &[1, 2, 4, 8, 16, 32, 24]),
            None,
            Some((80, OverloadProbe { multiple: 4, estimate: 20.0 })),
        ),
        (
            "the 4x probe ran => done",
            run(pool20_with_mock, &[1, 2, 4, 8, 16, 32, 24, 80]),
            None,
            None,
        ),
        (
            "16 saw a ceiling of 12, no step near 2 x 12 => the 2x probe confirms it",
            run(pool12_with_mock, &[1, 2, 4, 8, 16]),
            None,
            Some((24, ConfirmCeiling { in_flight: 12, seen_at: 16 })),
        ),
        (
            "24 agreed => the 4x probe",
            run(pool12_with_mock, &[1, 2, 4, 8, 16, 24]),
            None,
            Some((48, OverloadProbe { multiple: 4, estimate: 12.0 })),
        ),
        (
            "the 2x probe failed 60% of its requests => no 4x probe",
            {
                let mut s = run(pool12_with_mock, &[1, 2, 4, 8, 16, 24]);
                s[5] = with_errors(s[5].clone(), "http_503", 360.0, 1.0);
                s
            },
            None,
            None,
        ),
        (
            "the 4x probe at 64 alone fell 25% from the peak at 16 (20 held at 97%), with a p99 \
             past the stop: one step between them, at 32, tells a collapse from noise",
            {
                let mut s = run(thrashing16, &[1, 2, 4, 8, 16, 20, 18, 64]);
                s[7].latency_ms.p99 = 30.0 * 20.0;
                s
            },
            None,
            Some((32, OverloadProbe { multiple: 2, estimate: 15.56420233463035 })),
        ),
        (
            "32 fell too => confirmed; the p99 at 64 stops the probes",
            {
                let mut s = run(thrashing16, &[1, 2, 4, 8, 16, 20, 18, 64, 32]);
                s[7].latency_ms.p99 = 30.0 * 20.0;
                s
            },
            None,
            None,
        ),
        (
            "the 2x probe's p99 was 25x the base latency => no 4x probe",
            {
                let mut s = run(pool12_with_mock, &[1, 2, 4, 8, 16, 24]);
                s[5].latency_ms.p99 = 25.0 * 50.0;
                s
            },
            None,
            None,
        ),
        (
            "without the mock's ceiling the same steps narrow down",
            run(pool20, &[1, 2, 4, 8, 16, 32]),
            None,
            Some((24, Narrowing { last_good: 16, first_bad: 32 })),
        ),
        (
            "one core flat past the knee at 2 clients => one doubling past it confirms",
            run(one_core, &[1, 2]),
            Some(2),
            Some((4, ConfirmCores { cores: 1.0, seen_at: 2 })),
        ),
        (
            "4 clients kept the same core => done",
            run(one_core, &[1, 2, 4]),
            Some(2),
            None,
        ),
        (
            "4 clients read 1.25 cores (a busy machine): the cores are confirmed once, not \
             chased by doubling; the plateau and the probes (2, 4) are covered => done",
            {
                let mut s = run(one_core, &[1, 2, 4]);
                s[2].target_cpu_pct = Some(62.5);
                s
            },
            Some(2),
            None,
        ),
        (
            "java-thrash on one core (CI, stop 35): one core busy at 32 and 64 clients, but 64 \
             served 19% less than 32 with the same core (each request cost more CPU): the core is \
             not the size, so the peak is looked for between 8 and 32",
            java_thrash_stop_35(&[1, 2, 8, 32, 64]),
            Some(2),
            Some((20, Narrowing { last_good: 8, first_bad: 32 })),
        ),
        (
            "the same steps on a 16-core machine read 8 whole cores at 32 and 64: the same \
             fall, the same search",
            java_thrash_stop_35(&[1, 2, 8, 32, 64]),
            Some(16),
            Some((20, Narrowing { last_good: 8, first_bad: 32 })),
        ),
        (
            "the same two steps serving the same throughput on one core => done, as one_core",
            {
                let mut s = java_thrash_stop_35(&[1, 2, 8, 32, 64]);
                s[4] = step(64, 441.6, 64.0 / 441.6 * 1000.0);
                s[4].target_cpu_pct = Some(50.0);
                s
            },
            Some(2),
            None,
        ),
    ];
    for (comment, steps, cores, expected) in table {
        assert_eq!(next_step(&steps, 1000, cores), expected, "{comment}");
    }
}

#[test]
fn a_pool_of_20_behind_the_mock_is_found_in_six_steps_with_its_overload() {
    let mut steps = Vec::new();
    while let Some((c, _)) = chokepoint_diagnose::next_step(&steps, 1000, None) {
        steps.push(pool20_with_mock(c));
        assert!(steps.len() < 20, "the search does not end");
    }
    let counts: Vec<u32> = steps.iter().map(|s| s.clients).collect();
    // Four-fold while the steps follow within 5%; the mock's ceiling of 20 at 32 is confirmed
    // just past it (24, which places the knee), then the 4x probe (32 covers the 2x one).
    assert_eq!(counts, [1, 2, 8, 32, 24, 80]);
    let finding = diagnosed(&steps, &mock_context(50.0));
    assert!(
        matches!(
            chokepoint_diagnose::overload(&steps, &mock_context(50.0)),
            Some(chokepoint_result::Overload::Queues { to_clients: 80, .. })
        ),
        "the 4x probe shows the pool queueing"
    );
    assert_eq!(finding.kind, Kind::BlockingPool);
    assert_near(finding.limit.unwrap(), 20.0, 0.05);
}

/// The probes reach the overload side: a pool of 16 held 20 ms whose waiters cost throughput
/// (each waiter past 16 takes 2% off, as java-thrash measured: -20% at 32 clients, -48% at 64)
/// is seen to collapse, and a bulkhead of 8 held 100 ms whose callers give up after 250 ms (from
/// 28 clients on) is seen to time out, by an adaptive sweep alone.
#[test]
fn adaptive_sweeps_see_a_collapse_and_a_timeout() {
    use chokepoint_result::Overload;
    let thrashing = |c: u32| {
        let waiters = f64::from(c.saturating_sub(16));
        let x = f64::from(c.min(16)) / 0.02 / (1.0 + 0.02 * waiters);
        step(c, x, f64::from(c) / x * 1000.0)
    };
    let steps = sweep(&mut |c| thrashing(c), 1000);
    let counts: Vec<u32> = steps.iter().map(|s| s.clients).collect();
    let seen = chokepoint_diagnose::overload(&steps, &bare_context());
    assert!(
        matches!(seen, Some(Overload::Collapses { .. })),
        "{counts:?}: {seen:?}"
    );

    let bulkhead = |c: u32| {
        let x = f64::from(c.min(8)) / 0.1;
        let s = step(c, x, f64::from(c) / x * 1000.0);
        if c <= 28 {
            s
        } else {
            with_errors(s, "http_503", f64::from(c - 28) * 4.0, 250.0)
        }
    };
    let steps = sweep(&mut |c| bulkhead(c), 1000);
    let counts: Vec<u32> = steps.iter().map(|s| s.clients).collect();
    let seen = chokepoint_diagnose::overload(&steps, &bare_context());
    assert!(
        matches!(seen, Some(Overload::TimesOut { wait_ms, .. }) if (wait_ms - 250.0).abs() < 1.0),
        "{counts:?}: {seen:?}"
    );
    assert!(steps.len() <= 12, "{counts:?}");
}
