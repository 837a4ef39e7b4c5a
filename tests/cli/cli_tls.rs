//! `chokepoint load` over TLS against a real server: Debian's nginx (`nginx-light`, installed by
//! `.ci/run`; its absence fails these tests), with certificates made here (rcgen). nginx logs
//! every request with its connection's serial number, so the counts are checked server-side.
use chokepoint_testkit::Server;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

pub(crate) fn chokepoint(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chokepoint"))
        .args(args)
        .output()
        .expect("the chokepoint binary runs")
}

/// A scratch folder for one test, removed on drop.
pub(crate) struct Scratch(pub(crate) PathBuf);

impl Scratch {
    pub(crate) fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("cp-cli-tls-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub(crate) fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    pub(crate) fn path(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A CA, a server certificate it signed (for 127.0.0.1 and localhost), and a self-signed one.
/// Returns (ca.pem, server cert, server key, self-signed cert, self-signed key) paths.
pub(crate) fn certificates(scratch: &Scratch) -> [PathBuf; 5] {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "chokepoint test CA");
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let names = vec!["127.0.0.1".to_string(), "localhost".to_string()];
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(names.clone())
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    let lone_key = KeyPair::generate().unwrap();
    let mut lone_params = CertificateParams::new(names).unwrap();
    lone_params
        .distinguished_name
        .push(DnType::CommonName, "chokepoint self-signed test");
    let lone = lone_params.self_signed(&lone_key).unwrap();
    [
        scratch.write("ca.pem", &ca_cert.pem()),
        scratch.write("server.pem", &cert.pem()),
        scratch.write("server.key", &key.serialize_pem()),
        scratch.write("lone.pem", &lone.pem()),
        scratch.write("lone.key", &lone_key.serialize_pem()),
    ]
}

fn nginx_binary() -> PathBuf {
    for candidate in ["/usr/sbin/nginx", "/usr/bin/nginx"] {
        if Path::new(candidate).exists() {
            return candidate.into();
        }
    }
    panic!("nginx is missing: install Debian's nginx-light (apt-get install nginx-light; .ci/run does)");
}

/// nginx serving on a free port: 200 "ok\n" for every path, keep-alive, one line per request
/// in `access.log`: method, path, connection serial number, protocol (`HTTP/2.0`, ...).
pub(crate) struct Nginx {
    _server: Server,
    pub(crate) port: u16,
    pub(crate) log: PathBuf,
}

impl Nginx {
    /// HTTPS with this certificate.
    fn start(scratch: &Scratch, cert: &Path, key: &Path) -> Nginx {
        let listen = |port: u16| {
            format!(
                "listen 127.0.0.1:{port} ssl; ssl_certificate {}; ssl_certificate_key {};",
                cert.display(),
                key.display()
            )
        };
        Nginx::serve(scratch, listen, "keepalive_requests 1000000;")
    }

    /// `server { listen(port) location / {...} }`, with `http` directives of the caller's.
    pub(crate) fn serve(scratch: &Scratch, listen: impl Fn(u16) -> String, http: &str) -> Nginx {
        let dir = scratch.0.display();
        let log = scratch.0.join("access.log");
        let (server, port) = Server::spawn_on_free_port("nginx", Duration::from_secs(10), |port| {
            let conf = format!(
                "worker_processes 1;\ndaemon off;\npid {dir}/nginx.pid;\nerror_log {dir}/error.log;\n\
                 events {{ worker_connections 1024; }}\n\
                 http {{\n  log_format counts '$request_method $uri $connection $server_protocol';\n\
                   access_log {log} counts;\n  {http}\n\
                   client_body_temp_path {dir}; proxy_temp_path {dir}; fastcgi_temp_path {dir};\n\
                   uwsgi_temp_path {dir}; scgi_temp_path {dir};\n\
                   server {{ {listen} location / {{ return 200 \"ok\\n\"; }} }}\n}}\n",
                log = log.display(),
                listen = listen(port),
            );
            let conf_path = scratch.write("nginx.conf", &conf);
            let mut command = Command::new(nginx_binary());
            command
                .args(["-c", conf_path.to_str().unwrap(), "-p", &scratch.path("")])
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            command
        });
        Nginx {
            _server: server,
            port,
            log,
        }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }

    /// (method path → requests, distinct connections) from the access log.
    pub(crate) fn seen(&self) -> (BTreeMap<String, u64>, usize) {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let mut by_request = BTreeMap::new();
        let mut connections = std::collections::BTreeSet::new();
        for line in text.lines() {
            let fields: Vec<&str> = line.split(' ').collect();
            *by_request
                .entry(format!("{} {}", fields[0], fields[1]))
                .or_insert(0) += 1;
            connections.insert(fields[2].to_string());
        }
        (by_request, connections.len())
    }
}

pub(crate) fn report(path: &str) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub(crate) fn assert_ran(output: &Output) {
    assert!(
        output.status.success(),
        "exit {:?}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn keep_alive_counts_are_exact_over_tls_and_one_handshake_per_client() {
    let scratch = Scratch::new("keepalive");
    let [ca, cert, key, ..] = certificates(&scratch);
    let nginx = Nginx::start(&scratch, &cert, &key);
    let json = scratch.path("out.json");
    let output = chokepoint(&[
        "load",
        &nginx.url("/ok"),
        "-n",
        "500",
        "-c",
        "5",
        "--cacert",
        ca.to_str().unwrap(),
        "--no-progress",
        "--json",
        &json,
    ]);
    assert_ran(&output);
    let report = report(&json);
    assert_eq!(report["requests"], 500);
    assert_eq!(report["ok"], 500);
    assert_eq!(report["connections_opened"], 5);
    assert_eq!(report["tls_handshakes"], 5);
    let (seen, connections) = nginx.seen();
    assert_eq!(seen.get("GET /ok"), Some(&500), "{seen:?}");
    assert_eq!(connections, 5, "nginx saw one connection per client");
}

#[test]
fn no_keepalive_opens_one_tls_connection_per_request_and_reports_the_handshakes() {
    let scratch = Scratch::new("close");
    let [ca, cert, key, ..] = certificates(&scratch);
    let nginx = Nginx::start(&scratch, &cert, &key);
    let json = scratch.path("out.json");
    let output = chokepoint(&[
        "load",
        &nginx.url("/"),
        "-n",
        "200",
        "-c",
        "4",
        "--no-keepalive",
        "--cacert",
        ca.to_str().unwrap(),
        "--no-progress",
        "--json",
        &json,
    ]);
    assert_ran(&output);
    let report = report(&json);
    assert_eq!(report["ok"], 200);
    assert_eq!(report["connections_opened"], 200);
    assert_eq!(report["tls_handshakes"], 200);
    let handshake_mean = report["tls_handshake_ms"]["mean"].as_f64().unwrap();
    let connect_mean = report["connect_ms"]["mean"].as_f64().unwrap();
    assert!(handshake_mean > 0.0 && connect_mean > 0.0, "{report}");
    assert!(
        handshake_mean <= report["latency_ms"]["max"].as_f64().unwrap(),
        "a handshake is part of its request's latency"
    );
    let (seen, connections) = nginx.seen();
    assert_eq!(seen.get("GET /"), Some(&200));
    assert_eq!(connections, 200, "nginx saw one connection per request");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("TLS handshakes:         200"), "{text}");
    assert!(text.contains("tls handshake"), "{text}");
}

#[test]
fn a_self_signed_certificate_is_refused_in_one_line_unless_trusted() {
    let scratch = Scratch::new("selfsigned");
    let [_, _, _, lone, lone_key] = certificates(&scratch);
    let nginx = Nginx::start(&scratch, &lone, &lone_key);
    let json = scratch.path("out.json");
    let url = nginx.url("/");
    let refused = chokepoint(&["load", &url, "-n", "5", "--json", &json]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    for word in [url.as_str(), "certificate", "--cacert", "--insecure"] {
        assert!(stderr.contains(word), "'{word}' missing from: {stderr}");
    }
    assert!(!Path::new(&json).exists(), "no report after a refusal");
    assert_eq!(nginx.seen().0.len(), 0, "no request reached the server");

    for trust in [vec!["--insecure"], vec!["--cacert", lone.to_str().unwrap()]] {
        let mut args = vec!["load", &url, "-n", "5", "--no-progress", "--json", &json];
        args.extend(trust.iter().copied());
        assert_ran(&chokepoint(&args));
        assert_eq!(report(&json)["ok"], 5, "{trust:?}");
    }
    let not_pem = scratch.write("not.pem", "hello\n");
    let bad = chokepoint(&[
        "load",
        &url,
        "-n",
        "5",
        "--cacert",
        not_pem.to_str().unwrap(),
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--cacert"));
}

#[test]
fn a_targets_file_of_three_requests_sends_each_its_exact_share() {
    let scratch = Scratch::new("targets");
    let [ca, cert, key, ..] = certificates(&scratch);
    let nginx = Nginx::start(&scratch, &cert, &key);
    let body = scratch.write("item.json", "{\"name\":\"x\"}");
    let targets = scratch.write(
        "targets.txt",
        &format!(
            "# list, detail, create\nGET {}\n\nGET {}\nX-Detail: 1\n\nPOST {}\n\
             Content-Type: application/json\n@{}\n",
            nginx.url("/items"),
            nginx.url("/items/1"),
            nginx.url("/items"),
            body.display()
        ),
    );
    let ca = ca.to_str().unwrap();
    let json = scratch.path("out.json");
    let targets_arg = targets.to_str().unwrap();
    for (order, n) in [("round-robin", 300), ("random", 301)] {
        let n_text = n.to_string();
        let output = chokepoint(&[
            "load",
            "--targets",
            targets_arg,
            "--targets-order",
            order,
            "-n",
            &n_text,
            "-c",
            "3",
            "--cacert",
            ca,
            "--no-progress",
            "--json",
            &json,
        ]);
        assert_ran(&output);
        let report = report(&json);
        let per_target: Vec<u64> = report["targets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                assert!(t["latency_ms"]["p50"].as_f64().unwrap() > 0.0, "{t}");
                t["requests"].as_u64().unwrap()
            })
            .collect();
        let mut sorted = per_target.clone();
        sorted.sort();
        let expected = if n == 300 {
            vec![100, 100, 100]
        } else {
            vec![100, 100, 101]
        };
        assert_eq!(sorted, expected, "{order}");
        assert_eq!(report["targets"][2]["method"], "POST");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(text.contains("Per request"), "{text}");
    }
    // Server-side, both runs together: 601 requests in the same proportions.
    let (seen, _) = nginx.seen();
    let counts: Vec<u64> = ["GET /items", "GET /items/1", "POST /items"]
        .iter()
        .map(|k| seen.get(*k).copied().unwrap_or(0))
        .collect();
    assert_eq!(counts.iter().sum::<u64>(), 601, "{seen:?}");
    assert!(counts.iter().all(|c| (200..=201).contains(c)), "{seen:?}");

    let bad = scratch.write("bad.txt", "GET http://127.0.0.1:1/\nno colon here\n");
    let refused = chokepoint(&["load", "--targets", bad.to_str().unwrap(), "-n", "3"]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("line 2") && stderr.lines().count() == 1,
        "{stderr}"
    );
}

/// `chokepoint mock --port 0 --https-port 0`: (its http URL, its https URL, the PEM it wrote).
struct HttpsMock {
    _server: Server,
    http: String,
    https: String,
    cert: PathBuf,
}

impl HttpsMock {
    fn start() -> HttpsMock {
        use std::io::BufRead;
        let mut server = Server::spawn(
            "https-mock",
            Command::new(env!("CARGO_BIN_EXE_chokepoint"))
                .args(["mock", "--port", "0", "--https-port", "0", "--delay", "5ms"])
                .stdout(Stdio::piped())
                .stderr(Stdio::null()),
        );
        let stdout = server.child_mut().stdout.take().unwrap();
        let mut lines = std::io::BufReader::new(stdout).lines();
        let mut next = || lines.next().expect("a start line").unwrap();
        let url_in = |line: &str| line.split_whitespace().nth(4).unwrap().to_string();
        let (http, https, cert_line) = (url_in(&next()), url_in(&next()), next());
        let cert = cert_line
            .split_whitespace()
            .nth(5)
            .map(PathBuf::from)
            .expect("the certificate's path");
        assert!(https.starts_with("https://"), "{https}");
        HttpsMock {
            _server: server,
            http,
            https,
            cert,
        }
    }

    /// The mock's stats, read over its plain port.
    fn stats(&self) -> serde_json::Value {
        use std::io::{Read, Write};
        let addr = self.http.trim_start_matches("http://");
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        write!(
            stream,
            "GET /__chokepoint/stats HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n"
        )
        .unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        let body = text.split_once("\r\n\r\n").unwrap().1;
        serde_json::from_str(body).unwrap()
    }
}

impl Drop for HttpsMock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.cert);
    }
}

#[test]
fn the_mock_serves_https_with_the_certificate_it_made_and_counts_exactly() {
    let scratch = Scratch::new("mock");
    let mock = HttpsMock::start();
    let cert = mock.cert.to_str().unwrap().to_string();
    let json = scratch.path("out.json");
    let url = format!("{}/api", mock.https);
    let keepalive = chokepoint(&[
        "load",
        &url,
        "-n",
        "300",
        "-c",
        "3",
        "--cacert",
        &cert,
        "--no-progress",
        "--json",
        &json,
    ]);
    assert_ran(&keepalive);
    let kept = report(&json);
    assert_eq!(
        (kept["ok"].as_u64(), kept["tls_handshakes"].as_u64()),
        (Some(300), Some(3))
    );
    let stats = mock.stats();
    assert_eq!(stats["requests"], 300, "server-side count: {stats}");

    let close = chokepoint(&[
        "load",
        &url,
        "-n",
        "40",
        "-c",
        "2",
        "--no-keepalive",
        "--cacert",
        &cert,
        "--no-progress",
        "--json",
        &json,
    ]);
    assert_ran(&close);
    let closed = report(&json);
    assert_eq!(closed["ok"], 40);
    assert_eq!(closed["tls_handshakes"], 40, "one handshake per request");
    assert_eq!(mock.stats()["requests"], 340);

    // Without the certificate: one line, exit 2.
    let refused = chokepoint(&["load", &url, "-n", "5"]);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&refused.stderr).lines().count(), 1);
}

#[test]
fn the_mock_refuses_a_certificate_it_cannot_use_in_one_line() {
    let scratch = Scratch::new("mock-bad");
    let not_pem = scratch.write("cert.pem", "not a certificate\n");
    let output = Command::new(env!("CARGO_BIN_EXE_chokepoint"))
        .args(["mock", "--https-port", "0", "--tls-cert"])
        .arg(&not_pem)
        .arg("--tls-key")
        .arg(&not_pem)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--tls-cert") && stderr.lines().count() == 1,
        "{stderr}"
    );
}
