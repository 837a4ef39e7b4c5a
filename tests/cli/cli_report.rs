//! `chokepoint report DIR` as a user runs it: the binary, a saved result, and bad inputs.
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

/// A fresh directory under the temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let path = std::env::temp_dir().join(format!(
            "chokepoint-cli-report-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("temp dir");
        TempDir(path)
    }

    fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn assert_one_line_error(output: &Output, needle: &str) {
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(output.stdout.is_empty(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("chokepoint: "), "{stderr}");
    assert!(stderr.contains(needle), "{stderr} lacks {needle}");
}

#[test]
fn report_rerenders_a_saved_sweep_and_prints_the_table() {
    let dir = TempDir::new("ok");
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
    let dir = TempDir::new("missing");
    let missing = dir.0.join("no-such-sweep");
    assert_one_line_error(&report(&missing), "no such directory");
    assert!(!missing.exists());
}

#[test]
fn report_of_a_directory_without_result_json_fails_and_writes_nothing() {
    let dir = TempDir::new("empty");
    assert_one_line_error(&report(&dir.0), "no result.json in");
    assert!(dir.entries().is_empty());
}

#[test]
fn report_of_malformed_json_names_the_line_and_writes_nothing() {
    let dir = TempDir::new("malformed");
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
