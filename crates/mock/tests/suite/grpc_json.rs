//! gRPC stubs written as WireMock's gRPC extension writes them: a WireMock root with
//! `grpc/shop.dsc` (crates/grpc's test schema) and mappings that match the request message as
//! JSON and answer with a `jsonBody` and a `grpc-status-name`. A real client (grpcio, raw bytes
//! on a generic channel) must get the reply message encoded from the JSON, a named status with
//! its reason, and INTERNAL for JSON that does not fit the reply. python3 and grpcio must be
//! there (scripts/install-test-deps.sh): a missing one fails the test.
use super::h2::{run, start_mock};
use chokepoint_mock::MockConfig;
use std::path::Path;

const MAPPINGS: &str = r#"{"mappings": [
  {"request": {"method": "POST", "urlPath": "/shop.v1.Orders/Place",
               "bodyPatterns": [{"equalToJson": {"customer": "ada"}}]},
   "response": {"status": 200, "jsonBody": {"id": "order-7"},
                "headers": {"grpc-status-name": "OK"}}},
  {"request": {"method": "POST", "urlPath": "/shop.v1.Orders/Place",
               "bodyPatterns": [{"equalToJson": {"customer": "nobody"}}]},
   "response": {"status": 200, "headers": {"grpc-status-name": "NOT_FOUND",
                                           "grpc-status-reason": "no such customer"}}},
  {"request": {"method": "POST", "urlPath": "/shop.v1.Orders/Place",
               "bodyPatterns": [{"equalToJson": {"customer": "misfit"}}]},
   "response": {"status": 200, "jsonBody": {"ident": 7}}}
]}"#;

/// Three calls of shop.v1.Orders/Place, each OrderRequest{customer} as raw bytes; prints the
/// reply's hex or the status and details, as JSON.
const CLIENT: &str = r#"
import grpc, json, sys
channel = grpc.insecure_channel(sys.argv[1])
place = channel.unary_unary("/shop.v1.Orders/Place")
out = {}
for who in ["ada", "nobody", "misfit"]:
    request = b"\x0a" + bytes([len(who)]) + who.encode()
    try:
        out[who] = place(request, timeout=20).hex()
    except grpc.RpcError as err:
        out[who] = [err.code().name, err.details()]
print(json.dumps(out))
"#;

#[test]
fn stubs_written_for_wiremocks_grpc_extension_answer_a_grpc_channel_from_json() {
    let root = std::env::temp_dir().join(format!("cp-mock-grpc-json-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("mappings")).unwrap();
    std::fs::create_dir_all(root.join("grpc")).unwrap();
    std::fs::write(root.join("mappings/orders.json"), MAPPINGS).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../grpc/tests/fixtures/shop.pb"),
        root.join("grpc/shop.dsc"),
    )
    .unwrap();
    let schema = chokepoint_mock::mapping::grpc_schema(&root)
        .expect("the grpc/ folder reads")
        .expect("a schema");
    let (mock, _) = start_mock(
        MockConfig {
            mappings: chokepoint_mock::load_mappings(&root).expect("the mappings load"),
            grpc_schema: Some(std::sync::Arc::new(schema)),
            ..MockConfig::default()
        },
        false,
    );
    let out = run("python3", &["-c", CLIENT, &mock.addr().to_string()]);
    let _ = std::fs::remove_dir_all(&root);
    assert!(
        out.status.success(),
        "grpcio (pip install grpcio, scripts/install-test-deps.sh): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    // OrderReply{id: "order-7"}: field 1, length 7, encoded from the stub's jsonBody.
    assert_eq!(report["ada"], "0a076f726465722d37", "{report}");
    assert_eq!(
        report["nobody"],
        serde_json::json!(["NOT_FOUND", "no such customer"]),
        "{report}"
    );
    assert_eq!(report["misfit"][0], "INTERNAL", "{report}");
    let why = report["misfit"][1].as_str().unwrap_or_default();
    assert!(why.contains("shop.v1.OrderReply"), "{report}");
}

#[test]
fn a_descriptor_set_that_does_not_parse_is_one_line_naming_the_file() {
    let root = std::env::temp_dir().join(format!("cp-mock-grpc-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("grpc")).unwrap();
    std::fs::write(root.join("grpc/broken.dsc"), b"not a descriptor set").unwrap();
    let error = chokepoint_mock::mapping::grpc_schema(&root)
        .unwrap_err()
        .to_string();
    let _ = std::fs::remove_dir_all(&root);
    assert!(
        error.contains("broken.dsc is not a usable descriptor set"),
        "{error}"
    );
    assert!(error.contains("protoc --include_imports"), "{error}");
    assert!(!error.contains('\n'), "{error}");
}
