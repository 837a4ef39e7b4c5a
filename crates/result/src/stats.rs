//! Summary statistics that more than one stage reads from samples: each defined here once.

/// The median of the finite `values` (the mean of the middle two when their count is even);
/// `None` when there is none.
pub fn median(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut values: Vec<f64> = values.into_iter().filter(|v| v.is_finite()).collect();
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    match values.len() {
        0 => None,
        n if n % 2 == 1 => Some(values[mid]),
        _ => Some((values[mid - 1] + values[mid]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn the_middle_value_or_the_mean_of_the_middle_two_of_the_finite_ones() {
        assert_eq!(median([3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median([4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median([f64::NAN, 5.0, f64::INFINITY]), Some(5.0));
        assert_eq!(median([f64::NAN]), None);
        assert_eq!(median(Vec::new()), None);
    }
}
