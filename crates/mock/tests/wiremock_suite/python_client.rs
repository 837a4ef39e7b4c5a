//! WireMock's Python admin client (the `wiremock` package on PyPI) drives the mock: a script
//! (`tests/fixtures/python/client_check.py`) registers, calls, counts, finds, edits and
//! removes a stub, sets the global delay and resets the journal. A missing `python3` or a
//! missing package fails the test with the fix (`.ci/run` installs both).
use chokepoint_mock::MockConfig;
use std::path::Path;
use std::process::Command;

#[test]
fn wiremocks_python_client_drives_the_mock() {
    let _alone = super::jvm::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let found = Command::new("python3")
        .args(["-c", "import wiremock.client"])
        .output();
    match found {
        Ok(out) => assert!(
            out.status.success(),
            "the wiremock package is missing: pip install wiremock (.ci/run does): {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ),
        Err(err) => panic!("python3 is missing ({err}): install it (.ci/run does)"),
    }
    let mock = chokepoint_mock::start(
        "127.0.0.1:0".parse().unwrap(),
        MockConfig {
            journal: 100,
            ..MockConfig::default()
        },
    )
    .expect("mock starts");
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/python/client_check.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(mock.url())
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    print!("{stdout}");
    assert!(
        out.status.success() && stdout.contains("all steps passed"),
        "the Python client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
