//! Every recorded sweep against its truth (`tests/data/truth.toml`): what the service really
//! was, from how it was built, not what chokepoint said when the sweep was recorded. The
//! summaries test keeps the words from changing unseen; this one keeps them from being wrong
//! unseen. A sweep whose finding is known to be wrong says why (`wrong`) and must still disagree
//! with its truth: when a change makes it right, this test fails and asks for the mark to go.
use crate::summaries::recorded_sweeps;
use chokepoint_diagnose::diagnose;
use std::collections::BTreeMap;

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Truth {
    kinds: Vec<String>,
    limit: Option<f64>,
    source: String,
    wrong: Option<String>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TruthFile {
    sweep: BTreeMap<String, Truth>,
}

/// A limit within 10% of the truth, as the live targets' tests ask.
const LIMIT_SHARE: f64 = 0.1;

#[test]
fn every_recorded_sweep_is_right_or_marked_wrong_with_why() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/truth.toml");
    let text = std::fs::read_to_string(&path).expect("tests/data/truth.toml");
    let truths: TruthFile = toml::from_str(&text).expect("truth.toml parses");
    let sweeps = recorded_sweeps();
    let names: Vec<&String> = sweeps.iter().map(|(name, _, _)| name).collect();
    assert_eq!(
        truths.sweep.keys().collect::<Vec<_>>(),
        names
            .iter()
            .copied()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>(),
        "every recorded sweep has its truth in tests/data/truth.toml, and only those"
    );
    let mut problems = Vec::new();
    let mut table = Vec::new();
    for (name, steps, context) in &sweeps {
        let truth = &truths.sweep[name];
        assert!(
            !truth.source.trim().is_empty(),
            "{name}: a truth says where it comes from"
        );
        let finding = diagnose(steps, context);
        let kind = finding.kind.to_string();
        let kind_right = truth.kinds.contains(&kind);
        let limit_right = match (truth.limit, finding.limit) {
            (None, _) => true,
            (Some(want), Some(got)) => (got - want).abs() <= LIMIT_SHARE * want,
            (Some(_), None) => false,
        };
        let right = kind_right && limit_right;
        let found = format!(
            "{kind} {}",
            finding.limit.map_or("-".to_string(), |l| format!("{l:.1}"))
        );
        let want = format!(
            "{} {}",
            truth.kinds.join("|"),
            truth.limit.map_or("-".to_string(), |l| format!("{l}"))
        );
        table.push(format!(
            "{name:45} truth {want:28} found {found:24} {}",
            match (right, &truth.wrong) {
                (true, None) => "right",
                (false, Some(_)) => "WRONG (marked)",
                (true, Some(_)) => "right, but marked wrong",
                (false, None) => "WRONG",
            }
        ));
        match (right, &truth.wrong) {
            (true, Some(why)) => problems.push(format!(
                "{name}: now right ({found}), but marked wrong ({why}): remove its `wrong` line"
            )),
            (false, None) => problems.push(format!(
                "{name}: found {found}, the truth is {want} ({})",
                truth.source
            )),
            _ => {}
        }
    }
    println!("{}", table.join("\n"));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
