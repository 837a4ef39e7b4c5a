//! The findings table of `chokepoint demo`: one row per scenario, then a total line.
use crate::numbers;
use chokepoint_result::DemoResult;
use std::fmt::Write;

/// The table: scenario, seed, expected limit and kind, found limit and kind, ✓/✗, seconds; then
/// how many scenarios came out right and how long the demo took.
pub fn render(result: &DemoResult) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<16} {:<8} {:<24} {:>7}  {:<18} {:>2} {:>8}",
        "scenario", "seed", "expected", "found", "kind", "ok", "seconds"
    );
    for scenario in &result.scenarios {
        let expected = match scenario.expected_limit {
            Some(limit) => format!("{} {}", scenario.expected_kind, numbers::concurrency(limit)),
            None => scenario.expected_kind.to_string(),
        };
        let found = scenario
            .found_limit
            .map(numbers::concurrency)
            .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "{:<16} {:<8} {:<24} {:>7}  {:<18} {:>2} {:>8.1}",
            scenario.name,
            scenario.seed,
            expected,
            found,
            scenario.kind.as_str(),
            if scenario.ok { "✓" } else { "✗" },
            scenario.seconds
        );
    }
    let right = result.scenarios.iter().filter(|s| s.ok).count();
    let _ = writeln!(
        out,
        "{right}/{} scenarios found as expected in {:.1} s",
        result.scenarios.len(),
        result.seconds
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chokepoint_result::{DemoScenario, Kind};

    fn scenario(name: &str, found: Option<f64>, kind: Kind, ok: bool) -> DemoScenario {
        DemoScenario {
            name: name.into(),
            seed: "000".into(),
            expected_limit: Some(20.0),
            found_limit: found,
            kind,
            expected_kind: Kind::BlockingPool,
            ok,
            seconds: 9.84,
            summary: String::new(),
        }
    }

    #[test]
    fn rows_show_expected_and_found_and_the_total_counts_the_right_ones() {
        let result = DemoResult {
            scenarios: vec![
                scenario("actors", Some(19.8), Kind::BlockingPool, true),
                scenario("global", None, Kind::NoLimitFound, false),
            ],
            seconds: 61.04,
        };
        let text = render(&result);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(lines[0].starts_with("scenario"));
        assert!(lines[1].contains("actors") && lines[1].contains("blocking-pool 20"));
        assert!(lines[1].contains("19.8") && lines[1].contains('✓') && lines[1].contains("9.8"));
        assert!(lines[2].contains("no-limit-found") && lines[2].contains('✗'));
        assert!(lines[2].contains(" - "), "{}", lines[2]);
        assert_eq!(lines[3], "1/2 scenarios found as expected in 61.0 s");
    }
}
