//! `--pid auto` behind a forwarder: when the process on the URL's port is a forwarder
//! (`chokepoint_observe::forward`), a short probe of the URL makes it pass connections on, and
//! the process listening where they go is observed beside it.
//!
//! The probe is bounded: four threads, at most ten requests each (a plain `GET` of the URL's
//! path with `Connection: close`; for `https://` a TCP connection held open, which a forwarder of
//! connections such as docker-proxy or socat passes on at once), all within [`PROBE_LIMIT`],
//! to the URL's own loopback port only (`listening_target` follows nothing else). While it runs,
//! `/proc` is read every few milliseconds for the forwarder's connections to a local listener.
use crate::SweepConfig;
use chokepoint_observe::forward::{forwarded_now, forwarder_among};
use chokepoint_result::Forwarder;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest the probe runs.
pub const PROBE_LIMIT: Duration = Duration::from_secs(3);
const PROBE_THREADS: usize = 4;
const PROBE_REQUESTS: usize = 10;
const LOOK_EVERY: Duration = Duration::from_millis(2);

impl SweepConfig {
    /// Observes `found` (the processes on the URL's port, `--pid auto`) and, when one of them
    /// is a forwarder, the process it passes connections on to, kept in `self.forwarder`.
    pub fn with_listening_target(self, found: Vec<i32>) -> SweepConfig {
        let forwarder = self.follow_forwarder(&found);
        let mut roots = found;
        roots.extend(forwarder.iter().flat_map(|f| f.served_pids.iter().copied()));
        let mut config = self.with_target_pids(roots);
        config.forwarder = forwarder;
        config
    }

    /// The forwarder among `found` (the processes on the URL's port) and the process it passes
    /// connections on to; `None` when none of them is a forwarder, or the probe saw it pass none
    /// to a process of this machine.
    pub fn follow_forwarder(&self, found: &[i32]) -> Option<Forwarder> {
        let (pid, name) = forwarder_among(found)?;
        let uri: http::Uri = self.base.url.parse().ok()?;
        let host = uri
            .host()?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let tls = uri.scheme_str() == Some("https");
        let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
        let path = uri
            .path_and_query()
            .map_or("/".to_string(), |p| p.as_str().to_string());
        let skip: Vec<u16> = self
            .mock
            .as_deref()
            .and_then(|m| m.parse::<http::Uri>().ok())
            .and_then(|m| m.port_u16())
            .into_iter()
            .collect();
        let done = Arc::new(AtomicBool::new(false));
        let deadline = Instant::now() + PROBE_LIMIT;
        let probes: Vec<_> = (0..PROBE_THREADS)
            .map(|_| {
                let (host, path, done) = (host.clone(), path.clone(), done.clone());
                std::thread::spawn(move || probe(&host, port, &path, tls, deadline, &done))
            })
            .collect();
        let mut seen = None;
        while Instant::now() < deadline && probes.iter().any(|p| !p.is_finished()) {
            if let Some(forwarded) = forwarded_now(&[pid], port, &skip) {
                seen = Some(forwarded);
                break;
            }
            std::thread::sleep(LOOK_EVERY);
        }
        done.store(true, Ordering::Relaxed);
        for p in probes {
            let _ = p.join();
        }
        let forwarded = seen?;
        Some(Forwarder {
            name,
            pid,
            to_port: forwarded.to_port,
            served_name: forwarded.served_name,
            served_pids: forwarded.served,
        })
    }
}

/// Requests to `host:port` one after another until `done`, the deadline, or the count.
fn probe(host: &str, port: u16, path: &str, tls: bool, deadline: Instant, done: &AtomicBool) {
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
        let Some(addr) = (host, port)
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
        if tls {
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
