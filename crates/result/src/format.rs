//! How numbers read, in every sentence and every table: the diagnosis's describer, the terminal
//! tables, the load report and the HTML page all format through here, so the same figure reads
//! the same everywhere. Sentences and tables differ only where a table wants more digits (a
//! latency column in `1.02 s`, a limit as `19.8`); each such style is one function here.
//! Non-finite values read `-` in the table styles.

/// A rate per second in three significant figures: `0.98`, `19.7`, `336`, `1213`.
pub fn rate(value: f64) -> String {
    if !value.is_finite() {
        "-".into()
    } else if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

/// A latency in a sentence, always in ms: `4.3 ms`, `53 ms`, `20036 ms`.
pub fn whole_ms(ms: f64) -> String {
    if ms >= 10.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

/// A duration in a sentence: [`whole_ms`] under a second, else `1.0 s`, `20.0 s`.
pub fn duration(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else {
        whole_ms(ms)
    }
}

/// A latency in a table, three significant figures with the unit picked: `0.42 ms`, `12.3 ms`,
/// `123 ms`, `2.01 s`, `20.1 s`, `512 s`.
pub fn ms(value: f64) -> String {
    if !value.is_finite() || value < 0.0 {
        return "-".into();
    }
    if value < 1.0 {
        format!("{value:.2} ms")
    } else if value < 10.0 {
        format!("{value:.1} ms")
    } else if value < 999.5 {
        format!("{value:.0} ms")
    } else if value < 9_995.0 {
        format!("{:.2} s", value / 1000.0)
    } else if value < 99_950.0 {
        format!("{:.1} s", value / 1000.0)
    } else {
        format!("{:.0} s", value / 1000.0)
    }
}

/// A latency in ab's percentile table (the unit is in the header): `0.421`, `4.3`, `123`.
pub fn ab_ms(ms: f64) -> String {
    if ms >= 100.0 {
        format!("{ms:.0}")
    } else if ms >= 1.0 {
        format!("{ms:.1}")
    } else {
        format!("{ms:.3}")
    }
}

/// A count estimated from rates, in a sentence: `20`, `4.1`, `3` (whole numbers and counts of
/// 10 or more without decimals).
pub fn count(v: f64) -> String {
    if v >= 10.0 || (v == v.trunc() && v.abs() < 1e15) {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// A concurrency such as a limit, in a table: `20` when it is a whole number (to a tenth), else
/// `19.8`.
pub fn concurrency(value: f64) -> String {
    if !value.is_finite() {
        "-".into()
    } else if (value - value.round()).abs() < 0.05 {
        format!("{:.0}", value.round())
    } else {
        format!("{value:.1}")
    }
}

/// A share (0..1) in a sentence: `84%`, `7.8%`.
pub fn percent(share: f64) -> String {
    let pct = share * 100.0;
    if pct >= 10.0 {
        format!("{pct:.0}%")
    } else {
        format!("{pct:.1}%")
    }
}

/// A share (0..1) in a table, one decimal: `12.4%`.
pub fn share(value: f64) -> String {
    if !value.is_finite() {
        "-".into()
    } else {
        format!("{:.1}%", value * 100.0)
    }
}

/// A CPU percentage, or `-` when it was not observed.
pub fn cpu(value: Option<f64>) -> String {
    match value {
        Some(v) if v.is_finite() => format!("{v:.0}%"),
        _ => "-".into(),
    }
}

/// A model parameter with enough significant digits to be told apart from zero.
pub fn parameter(value: f64) -> String {
    if !value.is_finite() {
        "-".into()
    } else if value == 0.0 {
        "0".into()
    } else if value.abs() >= 100.0 {
        format!("{value:.0}")
    } else if value.abs() >= 0.01 {
        format!("{value:.3}")
    } else {
        format!("{value:.2e}")
    }
}

/// `1 client`, `20 clients`.
pub fn clients(count: u32) -> String {
    if count == 1 {
        "1 client".into()
    } else {
        format!("{count} clients")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_read_three_significant_figures() {
        assert_eq!(rate(0.98), "0.98");
        assert_eq!(rate(19.71), "19.7");
        assert_eq!(rate(336.4), "336");
        assert_eq!(rate(12345.6), "12346");
        assert_eq!(whole_ms(4.26), "4.3 ms");
        assert_eq!(whole_ms(20036.0), "20036 ms");
        assert_eq!(duration(1000.0), "1.0 s");
        assert_eq!(duration(50.0), "50 ms");
        assert_eq!(count(4.06), "4.1");
        assert_eq!(count(4.0), "4");
        assert_eq!(count(19.6), "20");
        assert_eq!(percent(0.84), "84%");
        assert_eq!(percent(0.078), "7.8%");
        assert_eq!(clients(1), "1 client");
        assert_eq!(clients(20), "20 clients");
    }

    #[test]
    fn tables_pick_a_readable_unit() {
        assert_eq!(ms(0.4213), "0.42 ms");
        assert_eq!(ms(4.26), "4.3 ms");
        assert_eq!(ms(123.4), "123 ms");
        assert_eq!(ms(1010.0), "1.01 s");
        assert_eq!(ms(20_100.0), "20.1 s");
        assert_eq!(ms(3.6e9), "3600000 s");
        assert_eq!(ms(f64::NAN), "-");
        assert_eq!(ab_ms(0.4213), "0.421");
        assert_eq!(ab_ms(1018.4), "1018");
        assert_eq!(concurrency(20.02), "20");
        assert_eq!(concurrency(19.8), "19.8");
        assert_eq!(share(0.124), "12.4%");
        assert_eq!(cpu(None), "-");
        assert_eq!(cpu(Some(42.4)), "42%");
        assert_eq!(parameter(0.00012), "1.20e-4");
    }
}
