//! `chokepoint report DIR` as a user runs it: the binary, a saved result, and bad inputs.
use crate::support::{assert_one_line_error, TempDir};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn chokepoint(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chokepoint"))
        .args(args)
        .output()
        .expect("run chokepoint")
}

fn report(dir: &Path) -> Output {
    chokepoint(&["report".as_ref(), dir.as_os_str()])
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sweep-seed000")
}

#[test]
fn report_rerenders_a_saved_sweep_and_prints_the_table() {
    let dir = TempDir::new("report-ok");
    std::fs::copy(fixture_dir().join("result.json"), dir.0.join("result.json")).expect("copy");
    std::fs::write(dir.0.join("report.html"), "stale").expect("stale report");

    let output = report(&dir.0);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("chokepoint sweep of http://127.0.0.1:8080/actors"));
    assert!(stdout.contains("Finding: blocking-pool, limit 19.8, knee at 40 clients"));
    let row = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("100 "))
        .expect("row of 100 clients");
    assert!(row.contains("19.6") && row.contains("5.02 s"), "{row}");
    assert!(stdout.contains("report.html"));

    let html = std::fs::read_to_string(dir.0.join("report.html")).expect("report.html");
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("</svg>").count(), 4);
    assert_eq!(dir.entries(), ["report.html", "result.json"]);
}

#[test]
fn report_of_a_missing_directory_fails_in_one_line() {
    let dir = TempDir::new("report-missing");
    let missing = dir.0.join("no-such-sweep");
    assert_one_line_error(&report(&missing), "no such directory");
    assert!(!missing.exists());
}

#[test]
fn report_of_a_directory_without_result_json_fails_and_writes_nothing() {
    let dir = TempDir::new("report-empty");
    assert_one_line_error(&report(&dir.0), "no result.json in");
    assert!(dir.entries().is_empty());
}

#[test]
fn report_of_malformed_json_names_the_line_and_writes_nothing() {
    let dir = TempDir::new("report-malformed");
    std::fs::write(
        dir.0.join("result.json"),
        "{\"target\": \"x\",\n \"steps\": [1,\n",
    )
    .unwrap();
    assert_one_line_error(&report(&dir.0), "at line");
    assert_eq!(dir.entries(), ["result.json"]);

    std::fs::write(dir.0.join("result.json"), "[]").unwrap();
    assert_one_line_error(&report(&dir.0), "is not a sweep result");
    assert_eq!(dir.entries(), ["result.json"]);
}

#[test]
fn report_without_a_directory_is_a_usage_error() {
    let output = chokepoint(&["report".as_ref()]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stderr).lines().count(), 1);
}
