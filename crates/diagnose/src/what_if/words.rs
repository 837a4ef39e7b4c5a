//! The what-if in one sentence, from the [`WhatIf`] alone: every number in it is a field.
use chokepoint_result::format::{count, duration, percent};
use chokepoint_result::{MeasuredBy, NextLimit, NotEmulated, WhatIf};

/// "with `actor-pool` at 40 the service would serve ~390 req/s (measured by emulation: ...);
/// past ~28,000 req/s its CPU stops it (...)", or why there is only the bound.
pub fn words(what_if: &WhatIf) -> String {
    let name = what_if
        .name
        .as_ref()
        .map_or("the pool".to_string(), |n| format!("`{n}`"));
    let bound = bound_words(what_if);
    if what_if.measured_by == MeasuredBy::Bound {
        let why = match what_if.not_emulated {
            Some(NotEmulated::NoMock) => "the sweep had no mock whose delay could be scaled",
            Some(NotEmulated::NotAPool) | None => {
                "the limit found is not a pool held for the mock's delay"
            }
            Some(NotEmulated::NotTheMocksDelay) => {
                "the pool is not held for the mock's global delay alone (a stub's own delay, several calls, or a hold far from the delay)"
            }
            Some(NotEmulated::DelayTooShort) => {
                "that pool would need the mock's delay cut below a millisecond"
            }
            Some(NotEmulated::Interrupted) => "the emulated steps were interrupted",
        };
        let asked = what_if
            .pool
            .map_or(String::new(), |m| format!(" of {name} at {m}"));
        return match bound {
            Some(bound) => format!(
                "No what-if{asked} by emulation: {why}; only the bound: {bound}."
            ),
            None => format!(
                "No what-if{asked} by emulation: {why}; and no bound either: the target's CPU was not observed."
            ),
        };
    }
    let m = what_if.pool.unwrap_or_default();
    let predicted = about(what_if.predicted_rps.unwrap_or_default());
    let how = match (what_if.delay_ms, what_if.emulated_delay_ms) {
        (Some(d), Some(e)) => {
            let clients: Vec<String> = what_if
                .steps
                .iter()
                .map(|s| s.clients.to_string())
                .collect();
            format!(
                " (measured by emulation: the mock's {} delay {} {} at {} clients)",
                duration(d),
                if e < d { "cut to" } else { "raised to" },
                duration(e),
                clients.join(" and ")
            )
        }
        _ => " (measured by emulation)".to_string(),
    };
    let head = format!("With {name} at {m} the service would serve ~{predicted} req/s{how}");
    let short_of = || {
        format!(
            ", short of the ~{} req/s a pool of {m} allows",
            about(what_if.pool_rps.unwrap_or_default())
        )
    };
    match &what_if.next_limit {
        Some(NextLimit::Cpu {
            stopped_the_emulation: false,
            ..
        }) => match bound {
            Some(_) => format!("{head}; past ~{}", bound_past(what_if)),
            None => format!("{head}."),
        },
        Some(NextLimit::Cpu {
            cores_busy,
            usable_cores,
            ..
        }) => format!(
            "{head}{}: its CPU stops it first ({} of {} cores busy).",
            short_of(),
            count(cores_busy.unwrap_or_default()),
            count(*usable_cores)
        ),
        Some(NextLimit::Concurrency { in_flight }) => format!(
            "{head}{}: no more than {in_flight} calls reached the mock at once, so another pool or a connection cap of ~{in_flight} stops it first.",
            short_of()
        ),
        Some(NextLimit::Errors { error_rate }) => format!(
            "{head}{}: {} of its requests failed.",
            short_of(),
            percent(*error_rate)
        ),
        Some(NextLimit::Unknown) => format!(
            "{head}{}, and nothing measured says what stops it first.",
            short_of()
        ),
        None => format!("{head}; what stops it past that is not known: the target's CPU was not observed."),
    }
}

/// "its CPU allows at most ~2,100 req/s (0.95 ms of CPU a request on 2 cores)".
fn bound_words(what_if: &WhatIf) -> Option<String> {
    let (bound, cpu_ms, cores) = (
        what_if.bound_rps?,
        what_if.cpu_ms_per_request?,
        what_if.usable_cores?,
    );
    Some(format!(
        "its CPU allows at most ~{} req/s ({} of CPU a request on {} cores)",
        about(bound),
        cpu_time(cpu_ms),
        count(cores)
    ))
}

/// "28,000 req/s its CPU stops it (0.07 ms of CPU a request on 2 cores)."
fn bound_past(what_if: &WhatIf) -> String {
    format!(
        "{} req/s its CPU stops it ({} of CPU a request on {} cores).",
        about(what_if.bound_rps.unwrap_or_default()),
        cpu_time(what_if.cpu_ms_per_request.unwrap_or_default()),
        count(what_if.usable_cores.unwrap_or_default())
    )
}

/// CPU time in ms with two significant figures: `0.071 ms`, `0.95 ms`, `12 ms`.
fn cpu_time(ms: f64) -> String {
    if ms >= 10.0 {
        format!("{ms:.0} ms")
    } else if ms >= 1.0 {
        format!("{ms:.1} ms")
    } else if ms >= 0.1 {
        format!("{ms:.2} ms")
    } else {
        format!("{ms:.3} ms")
    }
}

/// A throughput to two significant figures past a thousand, with separators: `780`, `2,100`,
/// `28,000`; three below (`392`, `19.6`).
pub(crate) fn about(rps: f64) -> String {
    if !rps.is_finite() {
        return "-".into();
    }
    if rps < 1000.0 {
        return chokepoint_result::format::rate(rps);
    }
    let magnitude = 10f64.powi(rps.log10().floor() as i32 - 1);
    let rounded = ((rps / magnitude).round() * magnitude) as u64;
    let digits = rounded.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
