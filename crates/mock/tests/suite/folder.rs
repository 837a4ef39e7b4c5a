//! Mappings from a folder of WireMock-style files, `__files` bodies, and path escapes refused.
use super::client::{request, start};
use chokepoint_mock::{load_mappings, MockConfig};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

#[test]
fn a_wiremock_root_folder_loads_and_serves() {
    let mappings = load_mappings(&fixture("wiremock")).expect("the fixtures load");
    assert_eq!(
        mappings.len(),
        4,
        "three files, one of them with two mappings, one nested"
    );
    let mock = start(MockConfig {
        mappings,
        ..MockConfig::default()
    });
    let addr = mock.addr();
    let users = request(
        addr,
        "GET",
        "/api/users?page=2",
        &[("Accept", "application/json")],
        "",
    );
    assert_eq!(users.status, 200);
    assert_eq!(users.json()[1]["name"], "Grace");
    assert_eq!(users.header("content-type"), Some("application/json"));
    assert_eq!(
        request(
            addr,
            "GET",
            "/api/users?page=x",
            &[("Accept", "application/json")],
            ""
        )
        .status,
        404
    );

    let created = request(
        addr,
        "POST",
        "/api/orders",
        &[("Content-Type", "application/json")],
        "{}",
    );
    assert_eq!(created.status, 201);
    assert_eq!(created.header("location"), Some("/api/orders/42"));
    assert_eq!(created.json()["state"], "accepted");
    assert_eq!(
        request(addr, "GET", "/api/orders/42", &[], "").text(),
        "{\"id\": 42}"
    );
    assert!(request(addr, "DELETE", "/pages/a/b", &[], "")
        .text()
        .contains("index"));

    let stats = mock.stats();
    let users_stub = stats.stubs.iter().find(|s| s.name == "list users").unwrap();
    assert_eq!(users_stub.id, "8c5db8b0-2db4-4ad7-a99f-38c9b00da3f7");
    assert_eq!((users_stub.requests, users_stub.delay_ms), (1, Some(20.0)));
}

#[test]
fn a_single_file_loads_with_the_files_folder_beside_its_folder() {
    let mappings = load_mappings(&fixture("wiremock/mappings/users.json")).expect("loads");
    assert_eq!(mappings.len(), 1);
    assert!(String::from_utf8_lossy(&mappings[0].response.body).contains("Ada"));
}

#[test]
fn a_body_file_outside_files_is_refused() {
    let message = load_mappings(&fixture("escape")).unwrap_err().to_string();
    assert!(
        message.contains("escape.json: $.response.bodyFileName"),
        "{message}"
    );
    assert!(message.contains("outside the __files folder"), "{message}");
    let message = load_mappings(&fixture("escape-absolute"))
        .unwrap_err()
        .to_string();
    assert!(message.contains("outside the __files folder"), "{message}");
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_out_of_files_is_refused() {
    let root = std::env::temp_dir().join(format!("cp-mock-link-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("mappings")).unwrap();
    std::fs::create_dir_all(root.join("__files")).unwrap();
    std::fs::write(root.join("outside.txt"), "secret").unwrap();
    std::os::unix::fs::symlink(root.join("outside.txt"), root.join("__files/link.txt")).unwrap();
    std::fs::write(
        root.join("mappings/link.json"),
        r#"{"request": {"urlPath": "/l"}, "response": {"bodyFileName": "link.txt"}}"#,
    )
    .unwrap();
    let outcome = load_mappings(&root);
    let _ = std::fs::remove_dir_all(&root);
    let message = outcome.unwrap_err().to_string();
    assert!(message.contains("outside the __files folder"), "{message}");
}

#[test]
fn unreadable_paths_and_bad_files_are_named() {
    let missing = load_mappings(Path::new("/no/such/mappings"))
        .unwrap_err()
        .to_string();
    assert!(
        missing.starts_with("cannot read mappings at /no/such/mappings"),
        "{missing}"
    );
}
