//! `chokepoint load --http2` against Debian's nginx (`nginx-light`, built with its http_v2
//! module): h2 by ALPN over TLS and h2c with prior knowledge, the counts checked in nginx's
//! access log (one line per request with its connection's serial and protocol); a server
//! without HTTP/2 refused in one line. And `--cacert` given the server's own self-signed
//! certificate, as `openssl req -x509` (CA:TRUE) and rcgen make it.
use super::cli_tls::{assert_ran, certificates, chokepoint, report, Nginx, Scratch};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// (requests by protocol, distinct connections) in nginx's access log.
fn protocols(nginx: &Nginx) -> (BTreeMap<String, u64>, usize) {
    let text = std::fs::read_to_string(&nginx.log).unwrap_or_default();
    let mut by_protocol = BTreeMap::new();
    let mut connections = BTreeSet::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        *by_protocol.entry(fields[3].to_string()).or_insert(0) += 1;
        connections.insert(fields[2].to_string());
    }
    (by_protocol, connections.len())
}

/// A self-signed certificate and key made by `openssl req -x509` (which marks it CA:TRUE) for
/// these subject alternative names.
fn openssl_self_signed(scratch: &Scratch, name: &str, alt_names: &str) -> (PathBuf, PathBuf) {
    let (cert, key) = (
        scratch.0.join(format!("{name}.pem")),
        scratch.0.join(format!("{name}.key")),
    );
    let made = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .args(["ec_paramgen_curve:P-256", "-nodes", "-days", "2"])
        .args(["-subj", "/CN=chokepoint test", "-addext"])
        .arg(format!("subjectAltName={alt_names}"))
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl is missing: install Debian's openssl (scripts/install-test-deps.sh)");
    assert!(made.status.success(), "{made:?}");
    let text = Command::new("openssl")
        .args(["x509", "-noout", "-text", "-in"])
        .arg(&cert)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("CA:TRUE"),
        "openssl req -x509 marks its certificate CA:TRUE (the case under test)"
    );
    (cert, key)
}

fn tls_listen(cert: PathBuf, key: PathBuf, http2: &'static str) -> impl Fn(u16) -> String {
    move |port| {
        format!(
            "listen 127.0.0.1:{port} ssl{http2}; ssl_certificate {}; ssl_certificate_key {};",
            cert.display(),
            key.display()
        )
    }
}

#[test]
fn h2_over_tls_counts_are_exact_with_streams_spread_over_two_connections() {
    let scratch = Scratch::new("h2-tls");
    let (cert, key) = openssl_self_signed(&scratch, "server", "IP:127.0.0.1,DNS:localhost");
    let listen = tls_listen(cert.clone(), key, " http2");
    let nginx = Nginx::serve(&scratch, listen, "keepalive_requests 1000000;");
    let json = scratch.path("out.json");
    let output = chokepoint(&[
        "load",
        &nginx.url("/h2"),
        "--http2",
        "-n",
        "1000",
        "-c",
        "20",
        "--connections",
        "2",
        "--cacert",
        cert.to_str().unwrap(),
        "--no-progress",
        "--json",
        &json,
    ]);
    assert_ran(&output);
    let report = report(&json);
    assert_eq!(
        (report["requests"].as_u64(), report["ok"].as_u64()),
        (Some(1000), Some(1000))
    );
    assert_eq!(report["connections_opened"], 2, "{report}");
    assert_eq!(report["tls_handshakes"], 2);
    let h2 = &report["http2"];
    assert_eq!(h2["protocol"], "h2");
    assert_eq!(h2["connections"], 2);
    assert_eq!(h2["server_max_concurrent_streams"], 128, "nginx's default");
    let max = h2["max_streams_in_flight"].as_u64().unwrap();
    assert!((1..=10).contains(&max), "10 streams per connection: {h2}");
    let per_connection: u64 = h2["per_connection"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["requests"].as_u64().unwrap())
        .sum();
    assert_eq!(per_connection, 1000);
    let (by_protocol, connections) = protocols(&nginx);
    assert_eq!(by_protocol.get("HTTP/2.0"), Some(&1000), "{by_protocol:?}");
    assert_eq!(by_protocol.len(), 1, "{by_protocol:?}");
    assert_eq!(connections, 2, "nginx saw the two connections");
    let text = String::from_utf8_lossy(&output.stdout);
    for line in [
        "h2: streams over 2 connections",
        "Streams in flight:",
        "GOAWAYs received:",
    ] {
        assert!(text.contains(line), "'{line}' missing from: {text}");
    }
}

#[test]
fn h2c_resends_what_a_graceful_goaway_left_and_respects_the_stream_limit() {
    let scratch = Scratch::new("h2c");
    // nginx closes each connection with a GOAWAY after 100 requests, and allows 4 streams.
    let nginx = Nginx::serve(
        &scratch,
        |port| format!("listen 127.0.0.1:{port} http2;"),
        "keepalive_requests 100; http2_max_concurrent_streams 4;",
    );
    let json = scratch.path("out.json");
    let url = format!("http://127.0.0.1:{}/h2c", nginx.port);
    let output = chokepoint(&[
        "load",
        &url,
        "--http2",
        "-n",
        "1000",
        "-c",
        "12",
        "--no-progress",
        "--json",
        &json,
    ]);
    assert_ran(&output);
    let report = report(&json);
    assert_eq!(report["ok"], 1000, "{}", report["errors"]);
    assert_eq!(report["errors"], serde_json::json!({}));
    let h2 = &report["http2"];
    assert_eq!(
        (h2["protocol"].as_str(), h2["connections"].as_u64()),
        (Some("h2c"), Some(1))
    );
    assert_eq!(h2["server_max_concurrent_streams"], 4);
    let goaways = h2["goaways"].as_u64().unwrap();
    assert!((9..=10).contains(&goaways), "one per 100 requests: {h2}");
    assert!(
        report["connections_opened"].as_u64().unwrap() >= 10,
        "{report}"
    );
    let (by_protocol, _) = protocols(&nginx);
    assert_eq!(by_protocol.get("HTTP/2.0"), Some(&1000), "{by_protocol:?}");
    let errors = std::fs::read_to_string(scratch.0.join("error.log")).unwrap_or_default();
    assert!(
        !errors.contains("concurrent streams exceeded"),
        "the client waited for nginx's SETTINGS: {errors}"
    );
}

#[test]
fn a_server_without_http2_is_refused_in_one_line_before_any_request() {
    let scratch = Scratch::new("no-h2");
    let [_, cert, key, ..] = certificates(&scratch);
    let tls = Nginx::serve(&scratch, tls_listen(cert, key, ""), "");
    let plain_scratch = Scratch::new("no-h2c");
    let plain = Nginx::serve(
        &plain_scratch,
        |port| format!("listen 127.0.0.1:{port};"),
        "",
    );
    let cases = [
        (tls.url("/"), "chose 'http/1.1' by ALPN"),
        (format!("http://127.0.0.1:{}/", plain.port), "h2c"),
    ];
    for (url, why) in cases {
        let output = chokepoint(&["load", &url, "--http2", "-n", "10", "-k"]);
        assert_eq!(output.status.code(), Some(2), "{url}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        for word in ["does not speak HTTP/2", why, "--http2"] {
            assert!(stderr.contains(word), "'{word}' missing from: {stderr}");
        }
    }
    assert_eq!(tls.seen().0.len(), 0, "no request reached the server");
    // The plain server logs the h2c connection preface as a request it could not parse (a 400
    // with no method, `- -`), and nothing else.
    let (seen, _) = plain.seen();
    assert!(seen.keys().all(|k| k == "- -"), "{seen:?}");
    let refused = chokepoint(&["load", &tls.url("/"), "--connections", "2", "-n", "1"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--http2"));
}

/// `load -n 5 --cacert CERT` against nginx serving `cert`: its exit code and stderr.
fn load_trusting(scratch: &Scratch, cert: &Path, key: &Path, trust: &Path) -> (i32, String) {
    let nginx = Nginx::serve(scratch, tls_listen(cert.into(), key.into(), ""), "");
    let output = chokepoint(&[
        "load",
        &nginx.url("/"),
        "-n",
        "5",
        "--cacert",
        trust.to_str().unwrap(),
        "--no-progress",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output.status.code().unwrap_or(-1), stderr)
}

#[test]
fn cacert_accepts_the_servers_own_self_signed_certificate_and_still_checks_it() {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let scratch = Scratch::new("cacert");
    // openssl req -x509 (CA:TRUE): accepted, as curl and wrk accept it.
    let (cert, key) = openssl_self_signed(&scratch, "openssl", "IP:127.0.0.1");
    assert_eq!(
        load_trusting(&scratch, &cert, &key, &cert),
        (0, String::new())
    );
    // The same kind of certificate for another name: refused, the name is still checked.
    let (other, other_key) = openssl_self_signed(&scratch, "other", "DNS:other.example");
    let (code, stderr) = load_trusting(&scratch, &other, &other_key, &other);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not valid for the URL's host"), "{stderr}");
    // rcgen, CA:TRUE, valid: accepted; expired: refused, the dates are still checked.
    for (name, expired) in [("rcgen", false), ("rcgen-expired", true)] {
        let key_pair = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        if expired {
            params.not_before = rcgen::date_time_ymd(2020, 1, 1);
            params.not_after = rcgen::date_time_ymd(2021, 1, 1);
        }
        let made = params.self_signed(&key_pair).unwrap();
        let cert = scratch.write(&format!("{name}.pem"), &made.pem());
        let key = scratch.write(&format!("{name}.key"), &key_pair.serialize_pem());
        let (code, stderr) = load_trusting(&scratch, &cert, &key, &cert);
        if expired {
            assert_eq!(code, 2, "{stderr}");
            assert!(stderr.contains("has expired"), "{stderr}");
        } else {
            assert_eq!((code, stderr.as_str()), (0, ""));
        }
    }
    // A CA and a leaf it signed (mkcert's shape): the CA in --cacert still vouches for the leaf.
    let [ca, leaf, leaf_key, ..] = certificates(&scratch);
    assert_eq!(
        load_trusting(&scratch, &leaf, &leaf_key, &ca),
        (0, String::new())
    );
}
