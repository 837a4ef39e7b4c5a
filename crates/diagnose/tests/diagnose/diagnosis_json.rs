//! The diagnosis JSON of every recorded sweep, diagnosed afresh, writes the finding as it was
//! decided: every fact in its order (the place and overload facts too, though a `Diagnosis`
//! holds them in its fields), the `place` key beside its fact and `overload` beside its own;
//! and it reads back to the same record.

use chokepoint_result::{Diagnosis, SweepResult};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn sweeps(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a directory") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            sweeps(&path, found);
        } else if path.extension().is_some_and(|e| e == "json") {
            found.push(path);
        }
    }
}

#[test]
fn a_fresh_diagnosis_writes_the_findings_facts_place_and_overload_as_decided() {
    let mut files = Vec::new();
    sweeps(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data"),
        &mut files,
    );
    let (mut places, mut overloads, mut read) = (0, 0, 0);
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable");
        let Ok(result) = serde_json::from_str::<SweepResult>(&text) else {
            continue; // not a sweep (the recorded prose)
        };
        read += 1;
        let name = path.display();
        let finding = chokepoint_diagnose::diagnose(&result.steps, &result.context);
        let json = serde_json::to_value(finding.clone().into_diagnosis()).expect("JSON");
        assert_eq!(
            json["facts"],
            serde_json::to_value(&finding.facts).expect("JSON"),
            "{name}"
        );
        let place = serde_json::to_value(finding.place()).expect("JSON");
        assert_eq!(json.get("place").unwrap_or(&Value::Null), &place, "{name}");
        let overload = serde_json::to_value(&finding.overload).expect("JSON");
        assert_eq!(json["overload"], overload, "{name}");
        places += usize::from(!place.is_null());
        overloads += usize::from(!overload.is_null());
        let back: Diagnosis = serde_json::from_value(json.clone()).expect("reads back");
        assert_eq!(serde_json::to_value(&back).expect("JSON"), json, "{name}");
    }
    assert!(read >= 25, "{read} sweeps");
    assert!(
        places > 0 && overloads > 0,
        "{places} places, {overloads} overloads"
    );
}
