//! Forwarders: a process on the URL's port whose job is to pass each connection on to another
//! port of this machine — `docker-proxy` and `kubectl port-forward` in front of a container,
//! `socat` or `ssh -L`, nginx, HAProxy or Envoy in front of an application server. Observing it
//! alone describes the wrong process: its threads, CPU and connections are the forwarder's. So
//! the sweep follows it to the process listening where it forwards, and observes both.
//!
//! Two readings, both needed: the program is one whose job is forwarding ([`FORWARDERS`], by its
//! name), and while requests pass through it holds established connections to a port of this
//! machine that another process listens on ([`forwarded_now`]). A service that merely calls a
//! local database holds such connections too, which is why the name is asked first; a
//! forwarder whose upstream is on another host is named and not followed (nothing here can see
//! that process). Unix-socket upstreams (nginx → gunicorn on a socket) are not followed yet:
//! `/proc` does not tell which process is at the other end of a connected unix socket.
use crate::tree::{listening_processes, process_tree};
use procfs::net::TcpState;
use std::collections::{BTreeMap, HashSet};
use std::net::SocketAddr;

/// Programs (their `comm`, as the kernel keeps it, 15 bytes at most) whose job is forwarding
/// connections or requests to another server.
pub const FORWARDERS: &[&str] = &[
    "docker-proxy",
    "kubectl",
    "socat",
    "ssh",
    "nginx",
    "haproxy",
    "envoy",
    "caddy",
    "traefik",
    "stunnel",
    "stunnel4",
    "rinetd",
    "sslh",
    "varnishd",
    "h2o",
];

/// The name of the first of `pids` that is a forwarder, with its PID.
pub fn forwarder_among(pids: &[i32]) -> Option<(i32, String)> {
    pids.iter().find_map(|&pid| {
        let comm = procfs::process::Process::new(pid).ok()?.stat().ok()?.comm;
        FORWARDERS.contains(&comm.as_str()).then_some((pid, comm))
    })
}

/// Where a forwarder passed its connections on, as one look at `/proc` saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forwarded {
    /// The port of this machine it held connections to.
    pub to_port: u16,
    /// How many.
    pub connections: u32,
    /// The processes listening there (the topmost: a master whose workers serve).
    pub served: Vec<i32>,
    /// The name of the first of them.
    pub served_name: String,
}

/// The port of this machine to which the trees of `pids` hold the most established
/// connections now, apart from `listen_port` and `skip` (the mock's), when some other process
/// listens there.
pub fn forwarded_now(pids: &[i32], listen_port: u16, skip: &[u16]) -> Option<Forwarded> {
    let tree: Vec<i32> = pids
        .iter()
        .flat_map(|&pid| process_tree(pid).unwrap_or_default())
        .collect();
    let inodes: HashSet<u64> = tree
        .iter()
        .filter_map(|&pid| crate::sockets::socket_inodes(pid).ok())
        .flatten()
        .collect();
    let mut by_port: BTreeMap<u16, u32> = BTreeMap::new();
    for entry in [procfs::net::tcp(), procfs::net::tcp6()]
        .into_iter()
        .flatten()
        .flatten()
    {
        let to = entry.remote_address.port();
        if entry.state == TcpState::Established
            && inodes.contains(&entry.inode)
            && entry.local_address.port() != listen_port
            && to != listen_port
            && !skip.contains(&to)
            && on_this_machine(entry.local_address, entry.remote_address)
        {
            *by_port.entry(to).or_default() += 1;
        }
    }
    let own: HashSet<i32> = tree.into_iter().collect();
    let mut ports: Vec<(u16, u32)> = by_port.into_iter().collect();
    ports.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    ports.into_iter().find_map(|(to_port, connections)| {
        let served: Vec<i32> = listening_processes(to_port)
            .unwrap_or_default()
            .into_iter()
            .filter(|pid| !own.contains(pid))
            .collect();
        let first = *served.first()?;
        let served_name = procfs::process::Process::new(first).ok()?.stat().ok()?.comm;
        Some(Forwarded {
            to_port,
            connections,
            served,
            served_name,
        })
    })
}

/// A connection between two ends of this machine: to a loopback address, or to the very
/// address it leaves from.
fn on_this_machine(local: SocketAddr, remote: SocketAddr) -> bool {
    remote.ip().is_loopback() || remote.ip() == local.ip()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_to_a_loopback_or_the_same_address_stay_on_this_machine() {
        let at = |s: &str| s.parse::<SocketAddr>().unwrap();
        assert!(on_this_machine(at("127.0.0.1:40000"), at("127.0.0.1:9000")));
        assert!(on_this_machine(at("10.0.0.5:40000"), at("10.0.0.5:9000")));
        assert!(on_this_machine(at("[::1]:40000"), at("[::1]:9000")));
        assert!(!on_this_machine(at("10.0.0.5:40000"), at("10.0.0.6:9000")));
    }

    #[test]
    fn this_test_process_is_no_forwarder() {
        assert_eq!(forwarder_among(&[std::process::id() as i32]), None);
    }
}
