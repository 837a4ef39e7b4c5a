//! The probe that makes a forwarder show where it forwards: requests to its port, one after
//! another on a few threads, while `/proc` (and `sock_diag`) are read every few milliseconds for
//! the connections it passes on. Used by the sweep (`--pid auto`) and by the observer beside the
//! target, which sees the forwarder where the sweep cannot.
//!
//! Bounded: [`PROBE_THREADS`] threads, at most [`PROBE_REQUESTS`] requests each (a plain `GET`
//! of the path with `Connection: close`; for TLS a TCP connection held open, which a forwarder
//! of connections such as docker-proxy or socat passes on at once), all within
//! [`PROBE_LIMIT`], to the one address and port given: the forwarder's own listener.
use super::{before_probe, forwarded_now, Forwarded};
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest the probe runs.
pub const PROBE_LIMIT: Duration = Duration::from_secs(3);
/// Threads sending at once.
pub const PROBE_THREADS: usize = 4;
/// Requests per thread, at most.
pub const PROBE_REQUESTS: usize = 10;
const LOOK_EVERY: Duration = Duration::from_millis(2);

/// Where the probe sends: the forwarder's listener and the path a request is forwarded for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// The host (a name or an address; an IPv6 one without brackets).
    pub host: String,
    /// The forwarder's port.
    pub port: u16,
    /// The path and query of a request (`/` when none).
    pub path: String,
    /// Whether the port speaks TLS: then no request is written, the connection is held open.
    pub tls: bool,
}

/// Probes `probe` while watching forwarder `pid`: where it passed the probe's connections on,
/// apart from ports `skip` (the mock's); `None` when it passed none to a process of this
/// machine within [`PROBE_LIMIT`].
pub fn follow(pid: i32, probe: &Probe, skip: &[u16]) -> Option<Forwarded> {
    let before = before_probe(&[pid]);
    let done = Arc::new(AtomicBool::new(false));
    let deadline = Instant::now() + PROBE_LIMIT;
    let senders: Vec<_> = (0..PROBE_THREADS)
        .map(|_| {
            let (probe, done) = (probe.clone(), done.clone());
            std::thread::spawn(move || send(&probe, deadline, &done))
        })
        .collect();
    let mut seen = None;
    while Instant::now() < deadline && senders.iter().any(|s| !s.is_finished()) {
        if let Some(forwarded) = forwarded_now(&[pid], probe.port, skip, &before) {
            seen = Some(forwarded);
            break;
        }
        std::thread::sleep(LOOK_EVERY);
    }
    done.store(true, Ordering::Relaxed);
    for sender in senders {
        let _ = sender.join();
    }
    seen
}

/// Requests to the probe's address one after another until `done`, the deadline, or the count.
fn send(probe: &Probe, deadline: Instant, done: &AtomicBool) {
    let Probe {
        host,
        port,
        path,
        tls,
    } = probe;
    let host_header = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    for _ in 0..PROBE_REQUESTS {
        let left = deadline.saturating_duration_since(Instant::now());
        if done.load(Ordering::Relaxed) || left.is_zero() {
            return;
        }
        let Some(addr) = (host.as_str(), *port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut addrs| addrs.next())
        else {
            return;
        };
        let Ok(mut stream) = TcpStream::connect_timeout(&addr, left) else {
            return;
        };
        let _ = stream.set_read_timeout(Some(left.max(Duration::from_millis(1))));
        if *tls {
            // Held open: a forwarder of connections passes it on before any byte.
            let mut byte = [0u8; 1];
            let _ = stream.set_read_timeout(Some(Duration::from_millis(300).min(left)));
            let _ = stream.read(&mut byte);
            continue;
        }
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: {host_header}\r\nConnection: close\r\n\r\n");
        if stream.write_all(request.as_bytes()).is_err() {
            return;
        }
        let mut sink = [0u8; 4096];
        while !done.load(Ordering::Relaxed) {
            match stream.read(&mut sink) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    }
}
