//! A network namespace made by a test: `ip netns add`, a veth pair, 10.201.N.1 on this side and
//! 10.201.N.2 inside — a "second host", or a container on a bridge as docker makes one. Needs
//! root (CI runs as root) and `ip` (iproute2).
use chokepoint_testkit::Server;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// A network namespace and its veth pair, deleted (with every address in it) when dropped,
/// panics included.
pub struct Netns {
    name: String,
    host_side: String,
    subnet: u8,
}

pub fn ip(args: &[&str]) {
    let output = Command::new("ip").args(args).output().expect("ip runs");
    assert!(
        output.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
}

impl Netns {
    pub fn new() -> Netns {
        // Unique per test process and per namespace made in it; interface names fit the
        // kernel's 15 bytes (a PID has 7 digits at most).
        static MADE: AtomicU32 = AtomicU32::new(0);
        let pid = std::process::id();
        let nth = MADE.fetch_add(1, Ordering::Relaxed);
        let netns = Netns {
            name: format!("cp-test-{pid}-{nth}"),
            host_side: format!("cp{pid}h{nth}"),
            // Another run's leftover namespace keeps its own subnet.
            subnet: ((pid * 7 + nth) % 250) as u8 + 1,
        };
        let inside = format!("cp{pid}n{nth}");
        // `netns` exists before the namespace does: a step that fails below still drops it.
        ip(&["netns", "add", &netns.name]);
        ip(&[
            "link",
            "add",
            &netns.host_side,
            "type",
            "veth",
            "peer",
            "name",
            &inside,
        ]);
        ip(&["link", "set", &inside, "netns", &netns.name]);
        ip(&[
            "addr",
            "add",
            &format!("{}/24", netns.here()),
            "dev",
            &netns.host_side,
        ]);
        ip(&["link", "set", &netns.host_side, "up"]);
        let within = |args: &[&str]| {
            let mut all = vec!["netns", "exec", &netns.name, "ip"];
            all.extend_from_slice(args);
            ip(&all);
        };
        within(&[
            "addr",
            "add",
            &format!("{}/24", netns.there()),
            "dev",
            &inside,
        ]);
        within(&["link", "set", &inside, "up"]);
        within(&["link", "set", "lo", "up"]);
        netns
    }

    /// This side's address.
    pub fn here(&self) -> String {
        format!("10.201.{}.1", self.subnet)
    }

    /// The address inside the namespace.
    pub fn there(&self) -> String {
        format!("10.201.{}.2", self.subnet)
    }

    /// `program args` run inside the namespace.
    pub fn command(&self, program: &str) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", &self.name, program]);
        command
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["link", "del", &self.host_side])
            .status();
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

/// Starts `command` (a server in a namespace, listening on an address of its own) and reads
/// the port from the end of its first stdout line.
pub fn launch(name: &str, command: &mut Command) -> (Server, u16) {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut server = Server::spawn(name, command);
    let stdout = server.child_mut().stdout.take().expect("piped");
    let mut lines = BufReader::new(stdout).lines();
    let line = lines
        .next()
        .unwrap_or_else(|| panic!("{name}: no start line"))
        .expect("a line");
    std::thread::spawn(move || for _ in lines {});
    let port = line
        .rsplit(':')
        .next()
        .and_then(|port| port.trim().parse().ok())
        .unwrap_or_else(|| panic!("{name}: no port in {line:?}"));
    (server, port)
}
