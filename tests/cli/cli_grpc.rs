//! `chokepoint load --grpc` and `sweep --grpc` on bad input: a descriptor set that does not
//! parse, an unknown service or method, JSON that does not fit the message, a server that does
//! not speak HTTP/2: each one line, exit 2, before any request (the not-HTTP/2 server here
//! counts what it was sent: the h2c connection preface and nothing after it).
use super::support::{assert_one_line_error, TempDir};
use std::io::{Read, Write};
use std::process::Command;

const SHOP: &str = "crates/grpc/tests/fixtures/shop.pb";
const PLACE: &str = "shop.v1.Orders/Place";

fn chokepoint(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_chokepoint"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("the binary runs")
}

#[test]
fn bad_grpc_input_is_one_line_and_exit_2_before_any_load() {
    let dir = TempDir::new("grpc-bad");
    let json = dir.0.join("out.json");
    // Never loaded: each mistake is found before any call. Without a descriptor set the
    // schema is asked from the server's reflection first, and nothing listens on port 1.
    let url = "http://127.0.0.1:1".to_string();
    let proto = "crates/grpc/tests/fixtures/shop.proto";
    // (the flags after the URL, a part of the one line)
    let table: [(&[&str], &str); 7] = [
        (
            &["--grpc", PLACE, "--descriptor-set", proto],
            "not a usable descriptor set",
        ),
        (
            &["--grpc", PLACE, "--descriptor-set", "no/such.pb"],
            "cannot read it",
        ),
        (
            &["--grpc", "shop.v1.Order/Place", "--descriptor-set", SHOP],
            "no service 'shop.v1.Order'",
        ),
        (
            &["--grpc", "shop.v1.Orders/Take", "--descriptor-set", SHOP],
            "has no method 'Take'",
        ),
        (
            &["--grpc", "shop.v1.Orders/Watch", "--descriptor-set", SHOP],
            "streaming",
        ),
        (
            &[
                "--grpc",
                PLACE,
                "--descriptor-set",
                SHOP,
                "--data",
                r#"{"custmer": "a"}"#,
            ],
            "does not fit shop.v1.OrderRequest",
        ),
        (
            &["--grpc", PLACE],
            "(while asking its server reflection for the schema)",
        ),
    ];
    for command in ["load", "sweep"] {
        for (flags, why) in table {
            let mut args = vec![command, url.as_str(), "--json", json.to_str().unwrap()];
            args.extend_from_slice(flags);
            let output = chokepoint(&args);
            assert_one_line_error(&output, why);
            assert!(!json.exists(), "{args:?} wrote its JSON");
        }
    }
}

#[test]
fn a_server_that_does_not_speak_http2_is_refused_before_any_call() {
    // A plain HTTP/1.1 server: it answers anything with a 400 and closes, and keeps what came.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let mut got = vec![0; 4096];
        let n = stream.read(&mut got).unwrap_or(0);
        let _ = stream.write_all(
            b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
        got.truncate(n);
        got
    });
    let output = chokepoint(&[
        "load",
        &url,
        "--grpc",
        PLACE,
        "--descriptor-set",
        SHOP,
        "-n",
        "1",
    ]);
    assert_one_line_error(&output, "does not speak HTTP/2");
    assert!(String::from_utf8_lossy(&output.stderr).contains("gRPC port"));
    let got = server.join().unwrap();
    // The h2c preface and the client's SETTINGS (and maybe its PING): no HEADERS of a call.
    assert!(
        got.starts_with(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
        "{got:?}"
    );
    assert!(
        !String::from_utf8_lossy(&got).contains("shop.v1"),
        "{got:?}"
    );
}
