//! How numbers read in every renderer, so the terminal table and the HTML table agree.
use chokepoint_result::{SweepContext, SweepResult};

/// A duration given in milliseconds: `0.42 ms`, `12.3 ms`, `123 ms`, `2.01 s`, `20.1 s`, `512 s`.
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

/// A rate per second: `0.98`, `19.7`, `1234`.
pub fn rate(value: f64) -> String {
    if !value.is_finite() {
        "-".into()
    } else if value.abs() < 9.995 {
        format!("{value:.2}")
    } else if value.abs() < 999.95 {
        format!("{value:.1}")
    } else {
        format!("{value:.0}")
    }
}

/// A share (0..1) as a percentage: `12.4%`.
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

/// A concurrency such as a limit: `20` when it is a whole number (to a tenth), else `19.8`.
pub fn concurrency(value: f64) -> String {
    if !value.is_finite() {
        "-".into()
    } else if (value - value.round()).abs() < 0.05 {
        format!("{:.0}", value.round())
    } else {
        format!("{value:.1}")
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

/// The error column: `0`, or `31 (12.4%)`.
pub fn errors(count: u64, rate: f64) -> String {
    if count == 0 {
        "0".into()
    } else {
        format!("{count} ({})", share(rate))
    }
}

/// Downstream calls in flight as `mean/max`, or `-` when no mock was watched.
pub fn in_flight(value: Option<&chokepoint_result::DownstreamInFlight>) -> String {
    match value {
        Some(d) => format!("{:.1}/{}", d.mean, d.max),
        None => "-".into(),
    }
}

/// One line saying what the downstream was: its delay and caps, or that it was not watched.
pub fn downstream_context(context: &SweepContext) -> String {
    if !context.mock_present {
        return "no mock given: the downstream evidence is missing (the finding rests on the \
                client side alone)"
            .into();
    }
    let mut parts = vec![match context.downstream_delay_ms {
        Some(delay) => format!("mock with a {} delay", ms(delay)),
        None => "mock without a fixed delay".into(),
    }];
    if let Some(cap) = context.mock_max_connections {
        parts.push(format!("at most {cap} connections"));
    }
    if let Some(keepalive) = context.mock_keepalive_timeout_ms {
        parts.push(format!("idle connections kept {}", ms(keepalive as f64)));
    }
    parts.join(", ")
}

/// The base latency of a sweep in milliseconds: the mean successful latency of its smallest step
/// (the mean of all requests when none succeeded). `None` without steps or with a zero latency.
pub fn base_latency_ms(result: &SweepResult) -> Option<f64> {
    let smallest = result.steps.iter().min_by_key(|s| s.clients)?;
    let mean = smallest
        .ok_latency_ms
        .map(|l| l.mean)
        .unwrap_or(smallest.latency_ms.mean);
    (mean.is_finite() && mean > 0.0).then_some(mean)
}

/// `1 client`, `20 clients`.
pub fn clients(count: u32) -> String {
    if count == 1 {
        "1 client".into()
    } else {
        format!("{count} clients")
    }
}

/// The failed requests of one step, all kinds together.
pub fn error_count(step: &chokepoint_result::Step) -> u64 {
    step.errors.values().sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_pick_a_readable_unit() {
        assert_eq!(ms(0.4213), "0.42 ms");
        assert_eq!(ms(4.26), "4.3 ms");
        assert_eq!(ms(123.4), "123 ms");
        assert_eq!(ms(1010.0), "1.01 s");
        assert_eq!(ms(20_100.0), "20.1 s");
        assert_eq!(ms(3.6e9), "3600000 s");
        assert_eq!(ms(f64::NAN), "-");
    }

    #[test]
    fn rates_limits_and_errors_read_plainly() {
        assert_eq!(rate(0.98), "0.98");
        assert_eq!(rate(19.71), "19.7");
        assert_eq!(rate(12345.6), "12346");
        assert_eq!(concurrency(20.02), "20");
        assert_eq!(concurrency(19.8), "19.8");
        assert_eq!(errors(0, 0.0), "0");
        assert_eq!(errors(31, 0.124), "31 (12.4%)");
        assert_eq!(cpu(None), "-");
        assert_eq!(cpu(Some(42.4)), "42%");
        assert_eq!(parameter(0.00012), "1.20e-4");
    }
}
