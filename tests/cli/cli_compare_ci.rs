//! `chokepoint compare` for CI and for people: `--junit FILE` read back as Jenkins and GitLab
//! read it (and by Python's parser), `--out DIR`'s page, and `--min-change`, on the recorded
//! pool-20 → pool-40 sweeps of `tests/fixtures/compare/`.
use crate::support::{assert_one_line_error, junit_cases, TempDir};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn compare<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chokepoint"))
        .arg("compare")
        .args(args)
        .output()
        .expect("run chokepoint")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/compare")
        .join(name)
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The verdicts of a `--json` comparison, the plateau first, as the JUnit file orders them.
fn verdicts(c: &serde_json::Value) -> Vec<String> {
    let mut all = vec![c["plateau"]["verdict"].as_str().unwrap().to_string()];
    for step in c["steps"].as_array().unwrap() {
        for figure in ["throughput", "p50", "p99"] {
            all.push(step[figure]["verdict"].as_str().unwrap().to_string());
        }
    }
    all
}

#[test]
fn junit_fails_exactly_the_worse_figures_under_fail_on_worse() {
    let dir = TempDir::new("junit-worse");
    let (xml, out) = (dir.0.join("compare.xml"), dir.0.join("c.json"));
    // pool 40 → pool 20: the change made it worse.
    let output = compare(&[
        fixture("pool-40").as_os_str(),
        fixture("pool-20").as_os_str(),
        "--fail-on".as_ref(),
        "worse".as_ref(),
        "--junit".as_ref(),
        xml.as_os_str(),
        "--json".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let cases = junit_cases(&xml);
    let verdicts = verdicts(&json(&out));
    assert_eq!(cases.len(), verdicts.len());
    assert_eq!(cases.len(), 13);
    assert_eq!(cases[0].name, "plateau");
    assert_eq!(cases[1].name, "throughput at 10 clients");
    assert_eq!(cases[12].name, "p99 at 80 clients");
    for (case, verdict) in cases.iter().zip(&verdicts) {
        assert_eq!(case.classname, "chokepoint.compare");
        assert!(case.suite.ends_with("/actors"), "{case:?}");
        match &case.failure {
            Some(message) => {
                assert_eq!(verdict, "worse", "{case:?}");
                assert!(message.starts_with(&format!("{}: ", case.name)), "{case:?}");
                assert!(message.ends_with(": WORSE"), "{case:?}");
            }
            None => assert_ne!(verdict, "worse", "{case:?}"),
        }
    }
    // The plateau halved: 392 → 196.
    assert_eq!(
        cases[0].failure.as_deref(),
        Some("plateau: 392 → 196 ok req/s, change -200 [-200, -200]: WORSE")
    );
    let failed = cases.iter().filter(|c| c.failure.is_some()).count();
    assert_eq!(failed, verdicts.iter().filter(|v| *v == "worse").count());
    assert!(failed >= 7, "{cases:?}");

    // Without --fail-on the same figures are reported, none failed.
    let output = compare(&[
        fixture("pool-40").as_os_str(),
        fixture("pool-20").as_os_str(),
        "--junit".as_ref(),
        xml.as_os_str(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let cases = junit_cases(&xml);
    assert_eq!(cases.len(), 13);
    assert!(cases.iter().all(|c| c.failure.is_none()), "{cases:?}");
    assert_eq!(dir.entries(), ["c.json", "compare.xml"]);
}

#[test]
fn the_page_holds_both_curves_the_findings_and_every_verdict_and_nothing_from_outside() {
    let dir = TempDir::new("page");
    let out = dir.0.join("page");
    let output = compare(&[
        fixture("pool-20").as_os_str(),
        fixture("pool-40").as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["compare.html"]);
    let page = std::fs::read_to_string(out.join("compare.html")).unwrap();
    assert_eq!(page.matches("<svg").count(), 2, "two charts");
    // plotters writes each legend's text on a line of its own.
    for legend in [
        "after",
        "before",
        "p99 before",
        "p99 after",
        "p50 before",
        "p50 after",
    ] {
        assert!(page.lines().any(|l| l.trim() == legend), "no {legend} line");
    }
    assert!(page.contains("blocking-pool, limit 20, pool actor-pool"));
    assert!(page.contains("blocking-pool, limit 40, pool actor-pool"));
    assert!(page.contains("196 → 392"));
    // The plateau and 4 client counts × 3 figures, each row with its verdict.
    assert_eq!(page.matches("<tr class=\"better").count(), 7);
    assert_eq!(page.matches("<tr class=\"same").count(), 6);
    assert!(page.contains("no difference (under 5%)"));
    for outside in ["<script", "src=", "href=", "http://www.w3.org"] {
        assert!(!page.contains(outside), "{outside}");
    }

    // Two load runs: the table, no curves (one client count each).
    let output = compare(&[
        fixture("load-40.json").as_os_str(),
        fixture("load-40.json").as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let page = std::fs::read_to_string(out.join("compare.html")).unwrap();
    assert!(!page.contains("<svg"));
    assert_eq!(page.matches("<tr class=\"same").count(), 3);
}

#[test]
fn min_change_moves_the_floor_under_which_nothing_is_called() {
    let dir = TempDir::new("min-change");
    let out = dir.0.join("c.json");
    let run = |min_change: &str| {
        compare(&[
            fixture("pool-20").as_os_str(),
            fixture("pool-40").as_os_str(),
            "--fail-on".as_ref(),
            "worse".as_ref(),
            "--min-change".as_ref(),
            min_change.as_ref(),
            "--json".as_ref(),
            out.as_os_str(),
        ])
    };
    // 5 %, the default: the p50 +0.06 ms and p99 +1.1 ms at 20 clients are no difference.
    let output = run("5");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let c = json(&out);
    assert_eq!(c["min_change"], 0.05);
    assert_eq!(c["steps"][1]["p50"]["no_call"], "small");
    // No floor: the test alone calls them worse, and the build fails.
    let output = run("0");
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let c = json(&out);
    assert_eq!(c["steps"][1]["p50"]["verdict"], "worse");
    assert!(String::from_utf8_lossy(&output.stdout).contains("change of at least 0%"));
    // A floor of 60 %: the doubled plateau (+102 %) is still better, the halved p50 (-50 %) not.
    let output = run("60%");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let c = json(&out);
    assert_eq!(c["plateau"]["verdict"], "better");
    assert_eq!(c["steps"][2]["p50"]["no_call"], "small");
    assert!(String::from_utf8_lossy(&output.stdout).contains("no difference (under 60%)"));
}

#[test]
fn bad_ci_flags_are_one_line_exit_2_and_no_file() {
    let dir = TempDir::new("compare-ci-bad");
    let a_file = dir.0.join("a-file");
    std::fs::write(&a_file, "x").unwrap();
    let pool20 = fixture("pool-20");
    let nowhere = dir.0.join("no/such/dir/j.xml");
    let cases: [(&[&OsStr], &str); 5] = [
        (
            &["--min-change".as_ref(), "abc".as_ref()],
            "not a percentage",
        ),
        (
            &["--min-change".as_ref(), "100".as_ref()],
            "from 0 to under 100",
        ),
        (
            &["--min-change".as_ref(), "-1".as_ref()],
            "from 0 to under 100",
        ),
        (&["--out".as_ref(), a_file.as_os_str()], "--out"),
        (&["--junit".as_ref(), nowhere.as_os_str()], "--junit"),
    ];
    for (flags, needle) in cases {
        let mut args: Vec<&OsStr> = vec![pool20.as_os_str(), pool20.as_os_str()];
        args.extend_from_slice(flags);
        assert_one_line_error(&compare(&args), needle);
    }
    assert_eq!(dir.entries(), ["a-file"]);
}
