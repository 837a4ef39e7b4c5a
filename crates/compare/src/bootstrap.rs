//! The bootstrap of a latency percentile's change, from the exact distributions the steps keep
//! (their HdrHistograms, decoded by the caller into a [`Distribution`] of values and counts).
//!
//! Resampling n requests with replacement and taking the k-th smallest costs n draws per
//! replicate; it needs none: the k-th smallest of n draws from a distribution F is
//! F⁻¹(U), U ~ Beta(k, n + 1 − k) (the quantile transform keeps order, for a discrete F too). So a
//! replicate of the percentile is one Beta draw and one binary search, whatever n is.
//!
//! Data flows: two [`Distribution`]s, a quantile and a seed → [`quantile_shift`] → the change
//! after − before with its 95 % percentile interval, or `None` when a side has fewer than
//! [`MIN_TAIL`] requests on the quantile's thinner side. Pure: the seed makes it repeatable.
use crate::rank::Interval;
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Beta, Distribution as _};

/// Bootstrap replicates per interval.
pub const REPLICATES: usize = 2000;
/// The fewest requests a side must have beyond the quantile (above the p99, below and above
/// the median): fewer, and the percentile is one or two requests, not a distribution's figure.
pub const MIN_TAIL: u64 = 5;

/// An empirical distribution: ascending values, each with how many samples had it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Distribution {
    values: Vec<f64>,
    /// Samples at or below `values[i]`.
    cumulative: Vec<u64>,
}

impl Distribution {
    /// From (value, count) pairs in any order; pairs with no count are left out.
    pub fn from_counts(pairs: impl IntoIterator<Item = (f64, u64)>) -> Distribution {
        let mut pairs: Vec<(f64, u64)> = pairs
            .into_iter()
            .filter(|(v, c)| *c > 0 && v.is_finite())
            .collect();
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut total = 0;
        let (values, cumulative) = pairs
            .into_iter()
            .map(|(v, c)| {
                total += c;
                (v, total)
            })
            .unzip();
        Distribution { values, cumulative }
    }

    /// From raw samples, one count each.
    pub fn from_samples(samples: &[f64]) -> Distribution {
        Distribution::from_counts(samples.iter().map(|&v| (v, 1)))
    }

    /// How many samples.
    pub fn len(&self) -> u64 {
        self.cumulative.last().copied().unwrap_or(0)
    }

    /// Whether it holds no sample.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The quantile `q` (0..1): the k-th smallest sample, k = ⌈q·n⌉ (at least 1); `None` when
    /// empty.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let n = self.len();
        (n > 0).then(|| self.at_rank(rank_of(q, n) as f64 / n as f64))
    }

    /// F⁻¹(u): the smallest value with at least u·n samples at or below it.
    fn at_rank(&self, u: f64) -> f64 {
        let needed = (u * self.len() as f64).ceil().max(1.0) as u64;
        let i = self.cumulative.partition_point(|&c| c < needed);
        self.values[i.min(self.values.len() - 1)]
    }
}

/// k = ⌈q·n⌉, within 1..=n.
fn rank_of(q: f64, n: u64) -> u64 {
    ((q * n as f64).ceil() as u64).clamp(1, n)
}

/// Whether `d` has [`MIN_TAIL`] samples on each side of its quantile `q`.
pub fn enough_for(d: &Distribution, q: f64) -> bool {
    let n = d.len();
    if n == 0 {
        return false;
    }
    let k = rank_of(q, n);
    k.min(n + 1 - k) >= MIN_TAIL
}

/// The change of quantile `q`, after − before, with the 95 % percentile interval of
/// [`REPLICATES`] bootstrap replicates (seeded with `seed`); `None` when a side has too few
/// samples ([`enough_for`]).
pub fn quantile_shift(
    before: &Distribution,
    after: &Distribution,
    q: f64,
    seed: u64,
) -> Option<Interval> {
    if !enough_for(before, q) || !enough_for(after, q) {
        return None;
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let replicate = |d: &Distribution, rng: &mut StdRng| {
        let n = d.len();
        let k = rank_of(q, n);
        let beta = Beta::new(k as f64, (n + 1 - k) as f64).expect("both shapes are at least 1");
        d.at_rank(beta.sample(rng))
    };
    let mut diffs: Vec<f64> = (0..REPLICATES)
        .map(|_| replicate(after, &mut rng) - replicate(before, &mut rng))
        .collect();
    diffs.sort_by(f64::total_cmp);
    let at = |share: f64| diffs[(share * (REPLICATES - 1) as f64).round() as usize];
    Some(Interval {
        estimate: after.quantile(q)? - before.quantile(q)?,
        low: at(0.025),
        high: at(0.975),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_read_the_kth_smallest() {
        // 1..=100, one each: the median is the 50th, p99 the 99th.
        let d = Distribution::from_samples(&(1..=100).map(f64::from).collect::<Vec<_>>());
        assert_eq!(d.quantile(0.5), Some(50.0));
        assert_eq!(d.quantile(0.99), Some(99.0));
        assert_eq!(d.quantile(1.0), Some(100.0));
        // Counts: 3 × 10, 1 × 20 → the median is 10, the max 20.
        let d = Distribution::from_counts([(20.0, 1), (10.0, 3)]);
        assert_eq!(d.quantile(0.5), Some(10.0));
        assert_eq!(d.quantile(0.99), Some(20.0));
    }

    #[test]
    fn the_tail_rule_wants_five_beyond_the_quantile() {
        let d = |n: u32| Distribution::from_samples(&(1..=n).map(f64::from).collect::<Vec<_>>());
        // p99 of 400: k = 396, 5 above → enough; of 399: k = 396, 4 above → not.
        assert!(enough_for(&d(400), 0.99));
        assert!(!enough_for(&d(399), 0.99));
        assert!(enough_for(&d(10), 0.5));
        assert!(!enough_for(&d(8), 0.5));
    }
}
