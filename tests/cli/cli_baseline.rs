//! `--baseline` on `load` and `sweep` as a user runs it in CI: real runs against `chokepoint
//! mock` (short, loopback), the comparison printed after the report, `--fail-on worse` failing
//! a run made slower, the JUnit file of the gates and the figures; and every baseline that
//! cannot be compared refused in one line, exit 2, before any load (the URL is a dead port, so
//! a load would have said so first).
use crate::support::{assert_one_line_error, junit_cases, mock, TempDir};
use std::process::{Command, Output};

fn chokepoint(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chokepoint"))
        .args(args)
        .output()
        .expect("run chokepoint")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A short closed-loop run of 4 clients, its JSON written to `json`, with `more` flags.
fn load(url: &str, json: &str, more: &[&str]) -> Output {
    let mut args = vec![
        "load",
        url,
        "-c",
        "4",
        "-d",
        "2s",
        "--no-progress",
        "--json",
        json,
    ];
    args.extend_from_slice(more);
    chokepoint(&args)
}

#[test]
fn a_load_run_three_times_slower_than_its_baseline_fails_under_fail_on_worse() {
    let dir = TempDir::new("baseline-load");
    let path = |name: &str| dir.0.join(name).to_str().unwrap().to_string();
    let (_fast, fast_url) = mock(&["--delay", "20ms"]);
    let (_slow, slow_url) = mock(&["--delay", "60ms"]);
    let base = path("base.json");
    let output = load(&fast_url, &base, &[]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");

    // The same service again: compared and printed after the report; no gate, exit 0.
    let output = load(&fast_url, &path("again.json"), &["--baseline", &base]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = stdout(&output);
    let (report, comparison) = text
        .split_once("compared with the baseline:")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(report.contains("Requests per second"), "{report}");
    assert!(comparison.contains("compare loads of "), "{comparison}");

    // The downstream three times slower (another port, the same path): worse, exit 1.
    let xml = path("load.xml");
    let output = load(
        &slow_url,
        &path("slow.json"),
        &["--baseline", &base, "--fail-on", "worse", "--junit", &xml],
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    assert!(text.contains("WORSE"), "{text}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--fail-on worse"), "{stderr}");
    let cases = junit_cases(std::path::Path::new(&xml));
    let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "throughput at 4 clients",
            "p50 at 4 clients",
            "p99 at 4 clients"
        ]
    );
    for case in &cases[..2] {
        let message = case
            .failure
            .as_deref()
            .unwrap_or_else(|| panic!("{case:?}"));
        assert!(message.ends_with(": WORSE"), "{message}");
    }
    // The JSON of the run is written as without --baseline.
    assert!(std::path::Path::new(&path("slow.json")).is_file());
}

#[test]
fn a_sweep_with_a_baseline_and_gates_writes_both_to_junit() {
    let dir = TempDir::new("baseline-sweep");
    let path = |name: &str| dir.0.join(name).to_str().unwrap().to_string();
    let (_mock, url) = mock(&["--delay", "20ms"]);
    let sweep = |out: &str, more: &[&str]| {
        let mut args = vec![
            "sweep",
            &url,
            "-c",
            "1,2",
            "--step",
            "1s",
            "--step-fixed",
            "--warmup",
            "0s",
            "--pid",
            "none",
            "--out",
            out,
        ];
        args.extend_from_slice(more);
        chokepoint(&args)
    };
    let output = sweep(&path("before"), &[]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let xml = path("sweep.xml");
    let output = sweep(
        &path("after"),
        &[
            "--baseline",
            &path("before"),
            "--expect",
            "throughput>=1",
            "--expect",
            "p99<1ms",
            "--junit",
            &xml,
        ],
    );
    // The mock answers in 20 ms: 'p99<1ms' fails, exit 1.
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(stdout(&output).contains("compared with the baseline:\ncompare sweeps of "));
    let cases = junit_cases(std::path::Path::new(&xml));
    let expect: Vec<_> = cases
        .iter()
        .filter(|c| c.classname == "chokepoint.expect")
        .collect();
    assert_eq!(expect.len(), 2, "{cases:?}");
    assert_eq!(expect[0].name, "throughput>=1");
    assert_eq!(expect[0].failure, None);
    assert_eq!(expect[1].name, "p99<1ms");
    let message = expect[1].failure.as_deref().unwrap();
    assert!(
        message.starts_with("gate 'p99<1ms' failed: p99 was"),
        "{message}"
    );
    // The same sentence as on stderr.
    assert!(String::from_utf8_lossy(&output.stderr).contains(message));
    // The plateau (or best step) and 2 client counts × 3 figures; no --fail-on, none failed.
    let figures: Vec<_> = cases
        .iter()
        .filter(|c| c.classname == "chokepoint.compare")
        .collect();
    assert_eq!(figures.len(), 7, "{cases:?}");
    assert!(figures.iter().all(|c| c.failure.is_none()), "{figures:?}");
}

#[test]
fn a_baseline_that_cannot_be_compared_is_refused_before_any_load() {
    let dir = TempDir::new("baseline-bad");
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compare");
    let sweep_dir = fixtures.join("pool-20");
    let load_json = fixtures.join("load-40.json");
    let (sweep_dir, load_json) = (sweep_dir.to_str().unwrap(), load_json.to_str().unwrap());
    let empty = dir.0.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let notes = dir.0.join("notes.txt");
    std::fs::write(&notes, "a run, by eye\n").unwrap();
    let (empty, notes) = (empty.to_str().unwrap(), notes.to_str().unwrap());
    let missing = dir.0.join("missing");
    let missing = missing.to_str().unwrap();
    let nowhere = dir.0.join("no/such/dir/j.xml");
    let nowhere = nowhere.to_str().unwrap();
    // Nothing listens there: a run that started loading would end on "nothing listens on".
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let actors = format!("http://127.0.0.1:{port}/actors");
    let other = format!("http://127.0.0.1:{port}/async");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["sweep", &actors, "--baseline", missing],
            "no such file or folder",
        ),
        (
            vec!["sweep", &actors, "--baseline", empty],
            "has no result.json",
        ),
        (vec!["load", &actors, "--baseline", notes], "not JSON"),
        (
            vec!["sweep", &actors, "--baseline", load_json],
            "a load run, and this is a sweep",
        ),
        (
            vec!["load", &actors, "--baseline", sweep_dir],
            "a sweep run, and this is a load",
        ),
        (
            vec!["sweep", &other, "--baseline", sweep_dir],
            "another path is another experiment",
        ),
        (
            vec!["load", &other, "--baseline", load_json],
            "another path is another experiment",
        ),
        (vec!["sweep", &actors, "--fail-on", "worse"], "--baseline"),
        (vec!["load", &actors, "--min-change", "3"], "--baseline"),
        (vec!["load", &actors, "--junit", "j.xml"], "--baseline"),
        (
            vec!["sweep", &actors, "--junit", "j.xml"],
            "--expect GATE or --baseline",
        ),
        (
            vec!["sweep", &actors, "--expect", "limit>=1", "--junit", nowhere],
            "--junit",
        ),
        (
            vec![
                "load",
                &actors,
                "--baseline",
                load_json,
                "--min-change",
                "x",
            ],
            "not a percentage",
        ),
    ];
    for (args, needle) in cases {
        let output = chokepoint(&args);
        assert_one_line_error(&output, needle);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("nothing listens"), "{args:?}: {stderr}");
    }
    assert_eq!(dir.entries(), ["empty", "notes.txt"]);
}
