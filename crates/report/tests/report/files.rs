//! result.json and report.html on disk: round trips, atomic writes, one-line errors, and the
//! repository's fixture files kept in step with the fixtures.
use crate::fixtures;

use chokepoint_report::files::{self, ReportError};
use fixtures::TempDir;
use std::fs;

#[test]
fn a_result_written_reads_back_equal_and_leaves_no_temp_file() {
    let dir = TempDir::new("round-trip");
    let result = fixtures::connection_limit();
    let path = files::write_result(&dir.0, &result).expect("write");
    assert_eq!(path, dir.0.join("result.json"));
    assert_eq!(files::read_result(&dir.0).expect("read"), result);

    // Rewriting (as a sweep does after each step) replaces the file and leaves nothing else.
    let mut shorter = result.clone();
    shorter.steps.truncate(2);
    shorter.diagnosis = None;
    files::write_result(&dir.0, &shorter).expect("rewrite");
    assert_eq!(files::read_result(&dir.0).expect("read"), shorter);
    let html = files::write_html(&dir.0, &shorter).expect("html");
    assert_eq!(html, dir.0.join("report.html"));
    assert!(fs::read_to_string(&html)
        .unwrap()
        .contains("<h2>No finding</h2>"));
    assert_eq!(dir.entries(), ["report.html", "result.json"]);
}

#[test]
fn the_json_keeps_the_contracts_names() {
    let dir = TempDir::new("contract");
    files::write_result(&dir.0, &fixtures::seed000()).expect("write");
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.0.join("result.json")).unwrap()).unwrap();
    assert_eq!(json["target"], "http://127.0.0.1:8080/actors");
    let step = &json["steps"][3];
    for field in [
        "clients",
        "throughput_rps",
        "latency_ms",
        "errors",
        "error_rate",
        "downstream_inflight",
        "target_cpu_pct",
        "generator_cpu_pct",
    ] {
        assert!(step.get(field).is_some(), "step lacks {field}");
    }
    assert_eq!(step["downstream_inflight"]["max"], 20);
    assert_eq!(json["diagnosis"]["kind"], "blocking-pool");
    assert_eq!(json["diagnosis"]["knee_clients"], 40);
}

#[test]
fn write_json_file_is_atomic_and_pretty() {
    let dir = TempDir::new("json-file");
    let path = dir.0.join("demo.json");
    fs::write(&path, "old").unwrap();
    files::write_json_file(&path, &serde_json::json!({"seconds": 1.5})).expect("write");
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "{\n  \"seconds\": 1.5\n}\n"
    );
    assert_eq!(dir.entries(), ["demo.json"]);

    let missing_parent = dir.0.join("no-such-dir").join("demo.json");
    let err = files::write_json_file(&missing_parent, &1).expect_err("no parent");
    assert!(err.to_string().contains("no-such-dir"), "{err}");
    assert_eq!(dir.entries(), ["demo.json"]);
}

#[test]
fn bad_inputs_give_one_line_errors_that_name_the_problem() {
    let dir = TempDir::new("bad-inputs");

    let missing = dir.0.join("nope");
    let err = files::read_result(&missing).expect_err("missing dir");
    assert!(matches!(err, ReportError::NoDirectory(_)));
    assert!(err.to_string().starts_with("no such directory: "));

    let err = files::read_result(&dir.0).expect_err("no result.json");
    assert!(matches!(err, ReportError::NoResult(_)));
    assert!(err.to_string().contains("no result.json in"));
    assert!(err.to_string().contains("chokepoint sweep URL --out"));

    let file = dir.0.join("plain-file");
    fs::write(&file, "x").unwrap();
    let err = files::read_result(&file).expect_err("a file");
    assert!(matches!(err, ReportError::NotADirectory(_)));

    fs::write(
        dir.0.join("result.json"),
        "{\n  \"target\": \"x\",\n  oops\n}",
    )
    .unwrap();
    let err = files::read_result(&dir.0).expect_err("malformed");
    let message = err.to_string();
    assert!(
        matches!(
            err,
            ReportError::BadJson {
                line: 3,
                column: 3,
                ..
            }
        ),
        "{message}"
    );
    assert!(message.ends_with("at line 3, column 3"), "{message}");
    assert!(
        message.contains("is not a sweep result: key must be a string"),
        "{message}"
    );

    fs::write(dir.0.join("result.json"), "{\"target\": \"x\"}").unwrap();
    let message = files::read_result(&dir.0)
        .expect_err("incomplete")
        .to_string();
    assert!(message.contains("missing field"), "{message}");

    for err in [
        files::read_result(&missing).unwrap_err(),
        files::read_result(&dir.0).unwrap_err(),
    ] {
        assert!(!err.to_string().contains('\n'), "{err}");
    }
}

/// The fixture results under tests/fixtures/ (read by `chokepoint report` in the CLI tests and
/// the screenshot script) must match the fixtures here. `CHOKEPOINT_BLESS=1` rewrites them.
#[test]
fn repository_fixture_files_match_the_fixtures() {
    for (dir, result) in [
        (fixtures::seed000_fixture_dir(), fixtures::seed000()),
        (
            fixtures::connection_limit_fixture_dir(),
            fixtures::connection_limit(),
        ),
    ] {
        if std::env::var_os("CHOKEPOINT_BLESS").is_some() {
            files::write_result(&dir, &result).expect("bless");
        }
        let saved = files::read_result(&dir)
            .unwrap_or_else(|err| panic!("{err} (run with CHOKEPOINT_BLESS=1 to write it)"));
        assert_eq!(
            saved,
            result,
            "{} is stale: CHOKEPOINT_BLESS=1",
            dir.display()
        );
    }
}

#[test]
fn concurrent_writers_leave_one_whole_file() {
    let dir = TempDir::new("concurrent");
    let result = fixtures::seed000();
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..5 {
                    files::write_result(&dir.0, &result).expect("write");
                }
            });
        }
    });
    assert_eq!(files::read_result(&dir.0).expect("read"), result);
    assert_eq!(dir.entries(), ["result.json"]);
}
