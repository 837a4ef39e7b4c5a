//! Every recorded `result.json` in the repository reads into a [`SweepResult`] and writes back
//! the same JSON: the `diagnosis` object keeps every key and value it was recorded with (a
//! result recorded before a key existed gains only that key, empty), and a second round trip
//! changes nothing. Results recorded with every key write back exactly.

use chokepoint_result::{Diagnosis, SweepResult};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Where results are recorded, from this crate's directory.
const RECORDED: [&str; 3] = [
    "../../tests/fixtures",
    "../diagnose/tests/data",
    "../report/tests",
];

/// Keys a result recorded before they existed lacks, by their path in `diagnosis`, and what
/// is written for them.
const ADDED_SINCE: [(&str, &str); 10] = [
    ("pool", "null"),
    ("better_model", "null"),
    ("fan_out", "null"),
    ("base_latency_ms", "null"),
    ("plateau", "null"),
    ("facts", "[]"),
    ("key_evidence", "[]"),
    ("overload", "null"),
    ("peak", "null"),
    ("pool.base_latency_ms", "0.0"),
];

fn json_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            json_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "json") {
            found.push(path);
        }
    }
}

/// The recorded results: every JSON file under [`RECORDED`] with steps and a diagnosis key.
fn recorded() -> Vec<(PathBuf, Value)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in RECORDED {
        json_files(&root.join(dir), &mut files);
    }
    files.sort();
    files
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).expect("readable");
            let value: Value = serde_json::from_str(&text).ok()?;
            let is_result = value.get("steps").is_some() && value.get("diagnosis").is_some();
            is_result.then_some((path, value))
        })
        .collect()
}

/// `written` is `recorded` with, at most, the keys of [`ADDED_SINCE`] added, each with what is
/// written for it; `at` is the path so far.
fn assert_kept(name: &str, at: &str, recorded: &Value, written: &Value) {
    let (Some(recorded), Some(written)) = (recorded.as_object(), written.as_object()) else {
        assert_eq!(written, recorded, "{name}: diagnosis.{at}");
        return;
    };
    for (key, value) in written {
        let path = if at.is_empty() {
            key.clone()
        } else {
            format!("{at}.{key}")
        };
        match recorded.get(key) {
            Some(was) => assert_kept(name, &path, was, value),
            None => {
                let added = ADDED_SINCE.iter().find(|(p, _)| *p == path);
                let Some((_, empty)) = added else {
                    panic!("{name}: diagnosis.{path} was not recorded");
                };
                let empty: Value = serde_json::from_str(empty).expect("JSON");
                assert_eq!(value, &empty, "{name}: diagnosis.{path}");
            }
        }
    }
    for key in recorded.keys() {
        assert!(
            written.contains_key(key),
            "{name}: diagnosis.{at}.{key} dropped"
        );
    }
}

#[test]
fn recorded_results_write_back_the_json_they_were_read_from() {
    let recorded = recorded();
    assert!(recorded.len() >= 20, "found {} results", recorded.len());
    let mut diagnoses = 0;
    for (path, value) in recorded {
        let name = path.display().to_string();
        let result: SweepResult =
            serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let written = serde_json::to_value(&result).expect("JSON");
        if let Some(diagnosis) = value["diagnosis"].as_object() {
            diagnoses += 1;
            let recorded = Value::Object(diagnosis.clone());
            assert_kept(&name, "", &recorded, &written["diagnosis"]);
        } else {
            assert!(written["diagnosis"].is_null(), "{name}");
        }
        let again: SweepResult = serde_json::from_value(written.clone()).expect("read back");
        assert_eq!(again, result, "{name}");
        assert_eq!(
            serde_json::to_value(&again).expect("JSON"),
            written,
            "{name}"
        );
    }
    assert!(diagnoses >= 15, "{diagnoses} diagnoses");
}

#[test]
fn results_with_every_key_write_back_exactly() {
    let full: Vec<_> = recorded()
        .into_iter()
        .filter(|(_, v)| v["diagnosis"].get("overload").is_some())
        .collect();
    assert!(!full.is_empty());
    for (path, value) in full {
        let diagnosis: Diagnosis =
            serde_json::from_value(value["diagnosis"].clone()).expect("read");
        let written = serde_json::to_value(&diagnosis).expect("JSON");
        assert_eq!(written, value["diagnosis"], "{}", path.display());
    }
}
