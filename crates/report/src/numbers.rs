//! The renderers' composite cells (errors with their rate, calls in flight, the downstream in
//! one line). Single numbers read through [`chokepoint_result::format`], the one place every
//! renderer and the diagnosis's sentences format numbers; its functions are re-exported here.
use chokepoint_result::SweepContext;

pub use chokepoint_result::format::{
    clients, concurrency, cpu, ms, parameter, percent, rate, share,
};

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

/// The failed requests of one step, all kinds together.
pub fn error_count(step: &chokepoint_result::Step) -> u64 {
    step.errors.values().sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composite_cells_read_plainly() {
        assert_eq!(errors(0, 0.0), "0");
        assert_eq!(errors(31, 0.124), "31 (12.4%)");
        let d = chokepoint_result::DownstreamInFlight {
            mean: 19.04,
            max: 20,
        };
        assert_eq!(in_flight(Some(&d)), "19.0/20");
        assert_eq!(in_flight(None), "-");
    }
}
