//! The tests behind the verdicts, on tables of numbers: no difference where there is none, the
//! right verdict and an interval holding the true shift where there is one, no call on too few
//! samples, and how often two draws of one distribution are called different (the false
//! positive rate, which the 5 % level promises to keep near 5 %).
use chokepoint_compare::bootstrap::{quantile_shift, Distribution};
use chokepoint_compare::steps::rank_figure;
use chokepoint_compare::{FigureName, NoCall, Verdict, DEFAULT_MIN_CHANGE};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution as _, LogNormal, Normal, Poisson};

fn normal(rng: &mut StdRng, mean: f64, sd: f64, n: usize) -> Vec<f64> {
    let d = Normal::new(mean, sd).unwrap();
    (0..n).map(|_| d.sample(rng)).collect()
}

/// Bucket rates as a timeline makes them: whole completions per 100 ms bucket, × 10.
fn bucket_rates(rng: &mut StdRng, per_bucket: f64, n: usize) -> Vec<f64> {
    let d = Poisson::new(per_bucket).unwrap();
    (0..n).map(|_| d.sample(rng) * 10.0).collect()
}

/// The throughput figure of two sample sets, without a value before: the verdict is the test's
/// alone (no 5 % floor), so the false positive checks below measure the test.
fn throughput(before: &[f64], after: &[f64]) -> chokepoint_compare::Figure {
    rank_figure(
        FigureName::Throughput,
        (None, None),
        before,
        after,
        DEFAULT_MIN_CHANGE,
    )
}

#[test]
fn a_sure_change_under_five_percent_of_the_figure_is_no_difference() {
    use chokepoint_compare::steps::verdict;
    use chokepoint_compare::Interval;
    let change = |estimate: f64, low: f64, high: f64| Interval {
        estimate,
        low,
        high,
    };
    // figure, change, significant, value before → verdict, why not.
    let table = [
        // p50 102 ms → +0.06 ms, sure but a hundredth of a percent: no call.
        (
            FigureName::P50,
            change(0.06, 0.06, 0.19),
            true,
            Some(102.0),
            Verdict::NoDifference,
            Some(NoCall::Small),
        ),
        // p99 105 → 110 ms: +4.8 %, under 5 %.
        (
            FigureName::P99,
            change(5.0, 4.0, 6.0),
            true,
            Some(105.0),
            Verdict::NoDifference,
            Some(NoCall::Small),
        ),
        // p99 100 → 106 ms: +6 %, worse.
        (
            FigureName::P99,
            change(6.0, 4.0, 8.0),
            true,
            Some(100.0),
            Verdict::Worse,
            None,
        ),
        // Throughput 196 → 392: better.
        (
            FigureName::Throughput,
            change(200.0, 200.0, 200.0),
            true,
            Some(196.0),
            Verdict::Better,
            None,
        ),
        // Throughput down 10 % but the interval holds zero: no call.
        (
            FigureName::Throughput,
            change(-20.0, -40.0, 0.0),
            true,
            Some(200.0),
            Verdict::NoDifference,
            Some(NoCall::WithinChance),
        ),
        // Not significant: no call, whatever the interval says.
        (
            FigureName::Throughput,
            change(-20.0, -40.0, -1.0),
            false,
            Some(200.0),
            Verdict::NoDifference,
            Some(NoCall::WithinChance),
        ),
        // No value before: the test alone.
        (
            FigureName::Throughput,
            change(0.1, 0.05, 0.2),
            true,
            None,
            Verdict::Better,
            None,
        ),
    ];
    for (name, change, significant, before, expected, why) in table {
        assert_eq!(
            verdict(name, &change, significant, before, DEFAULT_MIN_CHANGE),
            (expected, why),
            "{name:?} {change:?} before {before:?}"
        );
    }
    // --min-change moves the floor: +6 % is worse over a 5 % floor, no call under a 10 % one,
    // and with a floor of 0 the sure +0.06 ms is called.
    let p99 = change(6.0, 4.0, 8.0);
    assert_eq!(
        verdict(FigureName::P99, &p99, true, Some(100.0), 0.10),
        (Verdict::NoDifference, Some(NoCall::Small))
    );
    assert_eq!(
        verdict(
            FigureName::P50,
            &change(0.06, 0.06, 0.19),
            true,
            Some(102.0),
            0.0
        ),
        (Verdict::Worse, None)
    );
}

#[test]
fn identical_sample_sets_are_no_difference() {
    let mut rng = StdRng::seed_from_u64(1);
    // Continuous samples, and bucket rates full of ties.
    for samples in [
        normal(&mut rng, 200.0, 15.0, 50),
        bucket_rates(&mut rng, 20.0, 100),
        vec![200.0; 30],
    ] {
        let figure = throughput(&samples, &samples);
        assert_eq!(figure.verdict, Verdict::NoDifference, "{figure:?}");
        assert_eq!(figure.no_call, Some(NoCall::WithinChance));
        let change = figure.change.unwrap();
        assert_eq!(change.estimate, 0.0);
        let d = Distribution::from_samples(&samples);
        for q in [0.5, 0.99] {
            if let Some(shift) = quantile_shift(&d, &d, q, 7) {
                assert!(shift.holds_zero(), "q {q}: {shift:?}");
                assert_eq!(shift.estimate, 0.0);
            }
        }
    }
}

#[test]
fn a_level_twice_as_high_is_called_with_an_interval_holding_the_true_shift() {
    let mut rng = StdRng::seed_from_u64(2);
    // 20 samples a side; before around 100, after around 200: the true shift is +100.
    // Throughput up is better; the same numbers as latency are worse.
    let before = normal(&mut rng, 100.0, 10.0, 20);
    let after = normal(&mut rng, 200.0, 10.0, 20);
    let up = throughput(&before, &after);
    assert_eq!(up.verdict, Verdict::Better, "{up:?}");
    let shift = up.change.unwrap();
    assert!(shift.low <= 100.0 && 100.0 <= shift.high, "{shift:?}");
    assert!(up.p_value.unwrap() < 0.001);
    let down = throughput(&after, &before);
    assert_eq!(down.verdict, Verdict::Worse, "{down:?}");
    let slower = rank_figure(
        FigureName::P50,
        (None, None),
        &before,
        &after,
        DEFAULT_MIN_CHANGE,
    );
    assert_eq!(slower.verdict, Verdict::Worse);

    // The bootstrap of the median: 100 ms → 200 ms is +100 ms.
    let shift = quantile_shift(
        &Distribution::from_samples(&before),
        &Distribution::from_samples(&after),
        0.5,
        3,
    )
    .unwrap();
    assert!(shift.low > 0.0, "{shift:?}");
    assert!(shift.low <= 100.0 && 100.0 <= shift.high, "{shift:?}");
}

#[test]
fn too_few_samples_are_no_difference_however_far_apart() {
    // 4 a side: below the 5 the test needs, even for 10 → 1000.
    let figure = throughput(&[10.0, 11.0, 9.0, 10.0], &[1000.0, 1001.0, 999.0, 1000.0]);
    assert_eq!(figure.verdict, Verdict::NoDifference);
    assert_eq!(figure.no_call, Some(NoCall::TooFewSamples));
    assert_eq!(figure.change, None);
    // 5 a side is enough.
    let figure = throughput(
        &[10.0, 11.0, 9.0, 10.0, 12.0],
        &[1000.0, 1001.0, 999.0, 1000.0, 998.0],
    );
    assert_eq!(figure.verdict, Verdict::Better);
    // A p99 of 399 requests has 4 above it: no call; the median of 8 neither.
    let many = |n: u32, at: f64| Distribution::from_samples(&vec![at; n as usize]);
    assert_eq!(
        quantile_shift(&many(399, 10.0), &many(1000, 50.0), 0.99, 1),
        None
    );
    assert_eq!(quantile_shift(&many(8, 10.0), &many(8, 50.0), 0.5, 1), None);
    assert!(quantile_shift(&many(400, 10.0), &many(400, 50.0), 0.99, 1).is_some());
}

/// How many of 200 pairs of draws from one distribution `called` calls different.
fn false_positives(mut called: impl FnMut(&mut StdRng) -> bool) -> usize {
    let mut rng = StdRng::seed_from_u64(2026);
    (0..200).filter(|_| called(&mut rng)).count()
}

#[test]
fn the_rank_test_calls_at_most_about_one_pair_in_twelve_of_one_distribution_different() {
    // 20 samples a side, continuous.
    let continuous = false_positives(|rng| {
        let (a, b) = (normal(rng, 100.0, 10.0, 20), normal(rng, 100.0, 10.0, 20));
        throughput(&a, &b).verdict != Verdict::NoDifference
    });
    // 50 buckets a side of ~20 completions each: rates in steps of 10, many ties.
    let tied = false_positives(|rng| {
        let (a, b) = (bucket_rates(rng, 20.0, 50), bucket_rates(rng, 20.0, 50));
        throughput(&a, &b).verdict != Verdict::NoDifference
    });
    // 5 a side, the fewest it tests.
    let fewest = false_positives(|rng| {
        let (a, b) = (normal(rng, 100.0, 10.0, 5), normal(rng, 100.0, 10.0, 5));
        throughput(&a, &b).verdict != Verdict::NoDifference
    });
    eprintln!("false positives of 200: continuous {continuous}, tied {tied}, fewest {fewest}");
    for (what, count) in [
        ("continuous", continuous),
        ("tied", tied),
        ("fewest", fewest),
    ] {
        assert!(count <= 16, "{what}: {count} of 200 called different");
    }
}

#[test]
fn the_bootstrap_calls_at_most_about_one_pair_in_twelve_of_one_distribution_different() {
    // Latencies with a long right tail, 500 requests a side: the median and the p99.
    let latencies = |rng: &mut StdRng| {
        let d = LogNormal::new(4.6, 0.3).unwrap();
        Distribution::from_samples(&(0..500).map(|_| d.sample(rng)).collect::<Vec<_>>())
    };
    for q in [0.5, 0.99] {
        let mut seed = 0;
        let count = false_positives(|rng| {
            seed += 1;
            let (a, b) = (latencies(rng), latencies(rng));
            !quantile_shift(&a, &b, q, seed).unwrap().holds_zero()
        });
        eprintln!("bootstrap q {q}: {count} of 200 called different");
        assert!(count <= 16, "q {q}: {count} of 200 called different");
    }
}
