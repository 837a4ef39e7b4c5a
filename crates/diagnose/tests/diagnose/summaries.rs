//! The prose of the finding stays the same when the code that writes it changes: every recorded
//! sweep (the demo recordings in `tests/data`, the fixtures of `tests/fixtures` and the report
//! crate's fixture sweeps) is diagnosed again and its summary and evidence compared, byte for
//! byte, with `tests/data/summaries.json`, recorded from the code before it was split into
//! deciding and describing.
//!
//! When a sentence is meant to change, record the file again with
//! `CHOKEPOINT_RECORD_SUMMARIES=1 cargo test -p chokepoint-diagnose --test diagnose summaries` and read
//! the diff before committing it.

use chokepoint_diagnose::diagnose;
use chokepoint_result::{Step, SweepContext, SweepResult};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[path = "../../../report/tests/fixtures/mod.rs"]
mod report_fixtures;

#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Prose {
    summary: String,
    evidence: Vec<String>,
}

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> SweepResult {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every recorded sweep, by a stable name.
pub(crate) fn recorded_sweeps() -> Vec<(String, Vec<Step>, SweepContext)> {
    let mut sweeps = Vec::new();
    let data = manifest().join("tests/data");
    let mut runs: Vec<PathBuf> = std::fs::read_dir(&data)
        .expect("tests/data")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    runs.sort();
    for run in runs {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&run)
            .expect("run dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for file in files {
            let r = read(&file);
            let name = format!(
                "{}/{}",
                run.file_name().unwrap().to_string_lossy(),
                file.file_stem().unwrap().to_string_lossy()
            );
            sweeps.push((name, r.steps, r.context));
        }
    }
    for fixture in ["sweep-leaky", "sweep-seed000"] {
        let r = read(&manifest().join(format!("../../tests/fixtures/{fixture}/result.json")));
        sweeps.push((format!("fixtures/{fixture}"), r.steps, r.context));
    }
    for (name, r) in [
        ("report/seed000", report_fixtures::seed000()),
        (
            "report/seed000_without_mock",
            report_fixtures::seed000_without_mock(),
        ),
        (
            "report/connection_limit",
            report_fixtures::connection_limit(),
        ),
    ] {
        sweeps.push((name.to_string(), r.steps, r.context));
    }
    sweeps
}

#[test]
fn recorded_sweeps_are_described_in_the_same_words() {
    let golden = manifest().join("tests/data/summaries.json");
    let now: BTreeMap<String, Prose> = recorded_sweeps()
        .into_iter()
        .map(|(name, steps, context)| {
            let d = diagnose(&steps, &context).into_diagnosis();
            (
                name,
                Prose {
                    summary: d.summary,
                    evidence: d.evidence,
                },
            )
        })
        .collect();
    if std::env::var_os("CHOKEPOINT_RECORD_SUMMARIES").is_some() {
        let text = serde_json::to_string_pretty(&now).expect("json");
        std::fs::write(&golden, text + "\n").expect("write summaries.json");
        return;
    }
    let text = std::fs::read_to_string(&golden).expect("tests/data/summaries.json");
    let before: BTreeMap<String, Prose> = serde_json::from_str(&text).expect("summaries.json");
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        now.keys().collect::<Vec<_>>()
    );
    let mut differ = Vec::new();
    for (name, prose) in &now {
        let old = &before[name];
        if old.summary != prose.summary {
            differ.push(format!(
                "{name} summary:\n  was {}\n  now {}",
                old.summary, prose.summary
            ));
        }
        if old.evidence != prose.evidence {
            differ.push(format!(
                "{name} evidence:\n  was {:#?}\n  now {:#?}",
                old.evidence, prose.evidence
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
