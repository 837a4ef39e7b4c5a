//! WireMock's own Java client (`com.github.tomakehurst.wiremock.client.WireMock`, from the
//! standalone jar on Maven Central) drives the mock: `tests/fixtures/java/ClientCheck.java`
//! registers stubs, calls them, verifies the calls, edits, lists and removes stubs, and walks a
//! scenario; it throws on the first thing that is not as WireMock would have it.
use crate::wiremock_suite::jvm::{require, wiremock_jar};
use chokepoint_mock::MockConfig;
use std::path::Path;
use std::process::Command;

#[test]
fn wiremocks_java_client_registers_matches_and_verifies_stubs() {
    let _alone = super::jvm::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    require("javac");
    require("java");
    let jar = wiremock_jar();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/java/ClientCheck.java");
    let classes = std::env::temp_dir().join(format!("cp-java-client-{}", std::process::id()));
    std::fs::create_dir_all(&classes).unwrap();
    let compiled = Command::new("javac")
        .arg("-cp")
        .arg(&jar)
        .arg("-d")
        .arg(&classes)
        .arg(&source)
        .output()
        .expect("javac runs");
    assert!(
        compiled.status.success(),
        "javac failed: {}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let mock = chokepoint_mock::start(
        "127.0.0.1:0".parse().unwrap(),
        MockConfig {
            journal: 100,
            ..MockConfig::default()
        },
    )
    .expect("mock starts");
    let classpath = format!("{}:{}", jar.display(), classes.display());
    let run = Command::new("java")
        .args(["-cp", &classpath, "ClientCheck"])
        .arg(mock.addr().port().to_string())
        .output()
        .expect("java runs");
    let _ = std::fs::remove_dir_all(&classes);
    assert!(
        run.status.success(),
        "the Java client found a difference:\n{}\n{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(String::from_utf8_lossy(&run.stdout).contains("all checks passed"));
    // What the client did reached the mock as downstream traffic.
    assert!(mock.stats().requests >= 8, "{:?}", mock.stats().requests);
}
