//! Java and WireMock's standalone jar: where they are, and a WireMock process that stops when
//! dropped.
use chokepoint_testkit::Server;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Held by each test of this suite while it runs: a JVM starting (javac, the Java client) on
/// the same two cores would stretch the other test's timings past the 20 ms it compares.
pub static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The WireMock version compared against.
pub const WIREMOCK_VERSION: &str = "3.9.1";

/// The standalone jar: `$WIREMOCK_JAR`, or where `.ci/run` and `bench/` put it.
pub fn wiremock_jar() -> PathBuf {
    if let Ok(path) = std::env::var("WIREMOCK_JAR") {
        return PathBuf::from(path);
    }
    let cache = std::env::var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into())).join(".cache")
        });
    let jar = cache
        .join("chokepoint-bench")
        .join(format!("wiremock-standalone-{WIREMOCK_VERSION}.jar"));
    assert!(
        jar.is_file(),
        "WireMock's jar is missing at {}: run .ci/run, or mvn -q dependency:copy \
         -Dartifact=org.wiremock:wiremock-standalone:{WIREMOCK_VERSION} -DoutputDirectory={}",
        jar.display(),
        jar.parent().unwrap().display()
    );
    jar
}

/// Fails (never skips) when a JDK tool is missing.
pub fn require(tool: &str) {
    let found = Command::new(tool)
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    assert!(
        found,
        "{tool} is missing: install a JDK (apt-get install openjdk-17-jdk-headless; .ci/run does)"
    );
}

/// WireMock standalone, serving `root` (mappings/ and __files/); its process group stopped
/// when dropped.
pub struct WireMock {
    _server: Server,
    pub addr: SocketAddr,
}

impl WireMock {
    pub fn start(root: &Path) -> WireMock {
        require("java");
        let jar = wiremock_jar();
        // The JVM starts in seconds; 90 s leaves room for a machine busy with the other tests.
        let (server, port) =
            Server::spawn_on_free_port("wiremock", Duration::from_secs(90), |port| {
                let mut command = Command::new("java");
                command
                    .args(["-Xshare:auto", "-jar"])
                    .arg(&jar)
                    .args(["--port", &port.to_string(), "--bind-address", "127.0.0.1"])
                    .arg("--root-dir")
                    .arg(root)
                    .arg("--disable-banner")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null());
                command
            });
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        // Jetty listens before WireMock has read its mappings: wait for its health check.
        let started = Instant::now();
        while crate::client::get(addr, "/__admin/health").status != 200 {
            assert!(
                started.elapsed() < Duration::from_secs(90),
                "WireMock did not answer its health check within 90 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        WireMock {
            _server: server,
            addr,
        }
    }
}
