//! The rank test for two sets of samples (a step's per-bucket throughput before and after):
//! Mann-Whitney U, normal approximation with the tie correction and a continuity correction,
//! and the Hodges-Lehmann shift with its distribution-free 95 % interval.
//!
//! Data flows: two slices of numbers → [`rank_test`] → a [`RankTest`] (U, z, two-sided p, the
//! shift after − before with its interval), or `None` when a side has fewer than
//! [`MIN_SAMPLES`]. Pure numbers: no clock, no files.
use crate::normal::{standard_normal_cdf, Z_975};
use serde::{Deserialize, Serialize};

/// The fewest samples a side the test calls a difference on: below it the normal approximation
/// is too rough and a difference cannot be told from chance.
pub const MIN_SAMPLES: usize = 5;

/// A change, after − before, with its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The estimate of the change.
    pub estimate: f64,
    /// The interval's lower end.
    pub low: f64,
    /// The interval's upper end.
    pub high: f64,
}

impl Interval {
    /// Whether the interval holds zero (the data cannot tell the change's sign).
    pub fn holds_zero(&self) -> bool {
        self.low <= 0.0 && self.high >= 0.0
    }
}

/// What the rank test found.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RankTest {
    /// Mann-Whitney U of the after samples (how many (before, after) pairs the after one wins,
    /// ties counting a half).
    pub u: f64,
    /// The standardised U (continuity-corrected, signed: positive when after is larger).
    pub z: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// Hodges-Lehmann shift after − before (median of the pairwise differences) and its
    /// distribution-free 95 % interval (order statistics of the pairwise differences).
    pub shift: Interval,
}

/// The rank test of `after` against `before`; `None` when a side has fewer than
/// [`MIN_SAMPLES`] or a sample is not a finite number.
pub fn rank_test(before: &[f64], after: &[f64]) -> Option<RankTest> {
    let (n, m) = (before.len(), after.len());
    if n < MIN_SAMPLES || m < MIN_SAMPLES || before.iter().chain(after).any(|v| !v.is_finite()) {
        return None;
    }
    let (u, sigma) = mann_whitney_u(before, after);
    let (nf, mf) = (n as f64, m as f64);
    let mean = nf * mf / 2.0;
    let (z, p_value) = if sigma > 0.0 {
        let corrected = ((u - mean).abs() - 0.5).max(0.0);
        let z = corrected / sigma * (u - mean).signum();
        (z, (2.0 * (1.0 - standard_normal_cdf(z.abs()))).min(1.0))
    } else {
        // Every sample the same value: nothing to tell apart.
        (0.0, 1.0)
    };
    Some(RankTest {
        u,
        z,
        p_value,
        shift: hodges_lehmann(before, after),
    })
}

/// U of `after` and its standard deviation under no difference, with the tie correction.
fn mann_whitney_u(before: &[f64], after: &[f64]) -> (f64, f64) {
    let mut all: Vec<(f64, bool)> = before
        .iter()
        .map(|&v| (v, false))
        .chain(after.iter().map(|&v| (v, true)))
        .collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total = all.len();
    let mut after_rank_sum = 0.0;
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < total {
        let mut j = i;
        while j + 1 < total && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        // Ranks i+1 ..= j+1 share their mean.
        let rank = (i + j + 2) as f64 / 2.0;
        let tied = (j - i + 1) as f64;
        tie_term += tied * tied * tied - tied;
        after_rank_sum += rank * all[i..=j].iter().filter(|(_, a)| *a).count() as f64;
        i = j + 1;
    }
    let (n, m, big_n) = (before.len() as f64, after.len() as f64, total as f64);
    let u = after_rank_sum - m * (m + 1.0) / 2.0;
    let variance = n * m / 12.0 * ((big_n + 1.0) - tie_term / (big_n * (big_n - 1.0)));
    (u, variance.max(0.0).sqrt())
}

/// The Hodges-Lehmann shift after − before and its 95 % interval: the median of the n·m
/// differences, and the differences of rank C+1 and n·m − C, C the Mann-Whitney critical value
/// (normal approximation).
fn hodges_lehmann(before: &[f64], after: &[f64]) -> Interval {
    let mut diffs: Vec<f64> = after
        .iter()
        .flat_map(|a| before.iter().map(move |b| a - b))
        .collect();
    diffs.sort_by(f64::total_cmp);
    let count = diffs.len();
    let estimate = if count % 2 == 1 {
        diffs[count / 2]
    } else {
        (diffs[count / 2 - 1] + diffs[count / 2]) / 2.0
    };
    let (n, m) = (before.len() as f64, after.len() as f64);
    let critical = (n * m / 2.0 - Z_975 * (n * m * (n + m + 1.0) / 12.0).sqrt()).floor();
    let c = (critical.max(0.0) as usize).min((count - 1) / 2);
    Interval {
        estimate,
        low: diffs[c],
        high: diffs[count - 1 - c],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u_counts_the_pairs_after_wins_ties_a_half() {
        // after = [3, 5], before = [1, 3, 4]: 3 beats 1, ties 3 (½); 5 beats all three → 4.5.
        let (u, _) = mann_whitney_u(&[1.0, 3.0, 4.0], &[3.0, 5.0]);
        assert_eq!(u, 4.5);
    }

    #[test]
    fn the_shift_of_a_set_moved_by_ten_is_ten() {
        let before: Vec<f64> = (0..10).map(f64::from).collect();
        let after: Vec<f64> = before.iter().map(|v| v + 10.0).collect();
        let test = rank_test(&before, &after).unwrap();
        assert_eq!(test.shift.estimate, 10.0);
        assert!(test.shift.low > 0.0 && test.shift.high >= 10.0, "{test:?}");
        assert!(test.p_value < 0.001, "{test:?}");
    }
}
