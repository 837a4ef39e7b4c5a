//! Each WireMock fault, as a raw TCP client sees it.
use super::client::{connect, start_with};
use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;

const FAULTS: &str = r#"{"mappings": [
  {"request": {"urlPath": "/reset"}, "response": {"fault": "CONNECTION_RESET_BY_PEER"}},
  {"request": {"urlPath": "/empty"}, "response": {"fault": "EMPTY_RESPONSE"}},
  {"request": {"urlPath": "/malformed"}, "response": {"fault": "MALFORMED_RESPONSE_CHUNK"}},
  {"request": {"urlPath": "/random"}, "response": {"fault": "RANDOM_DATA_THEN_CLOSE"}},
  {"request": {"urlPath": "/slow-reset"},
   "response": {"fault": "CONNECTION_RESET_BY_PEER", "fixedDelayMilliseconds": 100}}
]}"#;

/// Sends a keep-alive GET and reads until the server closes: the bytes, or the read error.
fn exchange(addr: SocketAddr, path: &str) -> Result<Vec<u8>, std::io::Error> {
    let mut stream = connect(addr);
    stream
        .write_all(format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes())
        .unwrap();
    let mut received = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return Ok(received),
            Ok(n) => received.extend_from_slice(&buf[..n]),
            Err(err) => return Err(err),
        }
    }
}

#[test]
fn connection_reset_by_peer_is_a_tcp_reset() {
    let mock = start_with(FAULTS);
    let err = exchange(mock.addr(), "/reset").expect_err("the read must fail");
    assert_eq!(err.kind(), ErrorKind::ConnectionReset, "{err}");
    let started = std::time::Instant::now();
    let err = exchange(mock.addr(), "/slow-reset").expect_err("the read must fail");
    assert_eq!(err.kind(), ErrorKind::ConnectionReset, "{err}");
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(100),
        "the delay comes first"
    );
}

#[test]
fn empty_response_closes_without_a_byte() {
    let mock = start_with(FAULTS);
    let received = exchange(mock.addr(), "/empty").expect("a clean close");
    assert!(
        received.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&received)
    );
}

#[test]
fn malformed_chunk_sends_a_200_head_then_garbage() {
    let mock = start_with(FAULTS);
    let received = exchange(mock.addr(), "/malformed").expect("a close after the garbage");
    let text = String::from_utf8_lossy(&received);
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(
        text.contains("Transfer-Encoding: chunked\r\n\r\n"),
        "{text}"
    );
    let body = &text[text.find("\r\n\r\n").unwrap() + 4..];
    assert!(!body.is_empty());
    let first_line = body.split("\r\n").next().unwrap();
    assert!(
        usize::from_str_radix(first_line, 16).is_err(),
        "the chunk size line must be garbage: {first_line:?}"
    );
}

#[test]
fn random_data_then_close_is_not_http() {
    let mock = start_with(FAULTS);
    let received = exchange(mock.addr(), "/random").expect("a close after the garbage");
    assert!(!received.is_empty());
    assert!(!received.starts_with(b"HTTP/"));
}

#[test]
fn faults_are_counted_and_leave_nothing_in_flight() {
    let mock = start_with(FAULTS);
    for path in ["/reset", "/empty", "/malformed", "/random"] {
        let _ = exchange(mock.addr(), path);
    }
    // The server drops a faulted connection just after the client sees it close.
    let mut stats = super::client::stats(mock.addr());
    for _ in 0..50 {
        if stats.in_flight == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        stats = super::client::stats(mock.addr());
    }
    assert_eq!(stats.requests, 4);
    assert_eq!(stats.in_flight, 0);
    assert!(
        stats.stubs.iter().take(4).all(|s| s.requests == 1),
        "{:?}",
        stats.stubs
    );
}
