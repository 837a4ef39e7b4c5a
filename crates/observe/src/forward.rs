//! Forwarders: a process on the URL's port whose job is to pass each connection on to another
//! port of this machine — `docker-proxy` and `kubectl port-forward` in front of a container,
//! `socat` or `ssh -L`, nginx, HAProxy or Envoy in front of an application server. Observing it
//! alone describes the wrong process: its threads, CPU and connections are the forwarder's. So
//! the sweep follows it to the process listening where it forwards, and observes both.
//!
//! Two readings, both needed: the program is one whose job is forwarding ([`FORWARDERS`], by its
//! name), and while requests pass through it holds established connections to a port of this
//! machine that another process listens on ([`forwarded_now`]). A service that merely calls a
//! local database holds such connections too, which is why the name is asked first. An upstream
//! at an address that is not this namespace's is looked for in the machine's other network
//! namespaces ([`netns`]: a container on docker's bridge); a forwarder whose upstream is on
//! another host is named and not followed (nothing here can see that process).
//!
//! The upstream may be a unix socket (nginx → PHP-FPM, gunicorn or Puma on a socket, Debian's
//! and most guides' default). `/proc` does not tell who is at the other end of a connected unix
//! socket; the kernel's `sock_diag` does ([`crate::unix_diag`]): the forwarder's end names its
//! peer, the end a server accepted, which carries the listener's path. Only connections opened
//! after [`before_probe`] count: any daemon keeps long-lived unix connections (its stderr to
//! journald, a master's channel to its workers) that carry no request.
pub mod netns;
pub mod probe;

use crate::tree::{holders_of, listening_processes, process_tree};
use crate::unix_diag::{unix_stream_sockets, UnixSocket};
use procfs::net::TcpState;
use std::collections::{BTreeMap, BTreeSet, HashSet};
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

/// Where a forwarder passes connections on to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hop {
    /// A TCP port of this machine.
    Port(u16),
    /// A unix socket, by its path (`@name` for an abstract one).
    UnixSocket(String),
    /// An address in another network namespace of this machine (a container's, on docker's
    /// bridge), by the address the forwarder connects to ([`netns`]).
    OtherNamespace(SocketAddr),
}

/// Where a forwarder passed its connections on, as one look at `/proc` saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forwarded {
    /// Where it held connections to.
    pub to: Hop,
    /// How many.
    pub connections: u32,
    /// The processes listening there (the topmost: a master whose workers serve).
    pub served: Vec<i32>,
    /// The name of the first of them.
    pub served_name: String,
}

impl Forwarded {
    /// As the sweep's result keeps it: forwarder `name` (process `pid`) and this hop.
    pub fn into_forwarder(self, name: String, pid: i32) -> chokepoint_result::Forwarder {
        let (to_port, to_path, to_address) = match self.to {
            Hop::Port(port) => (Some(port), None, None),
            Hop::UnixSocket(path) => (None, Some(path), None),
            Hop::OtherNamespace(address) => (Some(address.port()), None, Some(address.to_string())),
        };
        chokepoint_result::Forwarder {
            name,
            pid,
            to_port,
            to_path,
            to_address,
            served_name: self.served_name,
            served_pids: self.served,
        }
    }
}

/// The unix connections the trees of some forwarders held before a probe: they carry none of
/// its requests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BeforeProbe {
    sockets: HashSet<u64>,
    /// One process of each other network namespace ([`netns::other_namespaces`]).
    namespaces: Vec<i32>,
}

/// What the trees of `pids` hold now, to be told apart from what a probe makes them open.
pub fn before_probe(pids: &[i32]) -> BeforeProbe {
    let (_, inodes) = trees_and_sockets(pids);
    BeforeProbe {
        sockets: inodes,
        namespaces: netns::other_namespaces(),
    }
}

/// Where the trees of `pids` pass connections on now: the port of this machine to which they
/// hold the most established connections, apart from `listen_port` and `skip` (the mock's),
/// when some other process listens there; else the unix socket to which they hold the most
/// connections opened since `before`, when some other process listens there.
pub fn forwarded_now(
    pids: &[i32],
    listen_port: u16,
    skip: &[u16],
    before: &BeforeProbe,
) -> Option<Forwarded> {
    let (tree, inodes) = trees_and_sockets(pids);
    let own: HashSet<i32> = tree.into_iter().collect();
    over_tcp(&own, &inodes, listen_port, skip, &before.namespaces)
        .or_else(|| over_unix(&own, &inodes, before))
}

/// The processes of the trees of `pids`, and the sockets they hold.
fn trees_and_sockets(pids: &[i32]) -> (Vec<i32>, HashSet<u64>) {
    let tree: Vec<i32> = pids
        .iter()
        .flat_map(|&pid| process_tree(pid).unwrap_or_default())
        .collect();
    let inodes: HashSet<u64> = tree
        .iter()
        .filter_map(|&pid| crate::sockets::socket_inodes(pid).ok())
        .flatten()
        .collect();
    (tree, inodes)
}

fn over_tcp(
    own: &HashSet<i32>,
    inodes: &HashSet<u64>,
    listen_port: u16,
    skip: &[u16],
    namespaces: &[i32],
) -> Option<Forwarded> {
    let mut by_port: BTreeMap<u16, u32> = BTreeMap::new();
    let mut elsewhere: BTreeMap<SocketAddr, Vec<(SocketAddr, SocketAddr)>> = BTreeMap::new();
    for entry in [procfs::net::tcp(), procfs::net::tcp6()]
        .into_iter()
        .flatten()
        .flatten()
    {
        let to = entry.remote_address.port();
        if entry.state != TcpState::Established
            || !inodes.contains(&entry.inode)
            || entry.local_address.port() == listen_port
            || to == listen_port
            || skip.contains(&to)
        {
            continue;
        }
        if on_this_machine(entry.local_address, entry.remote_address) {
            *by_port.entry(to).or_default() += 1;
        } else {
            elsewhere
                .entry(entry.remote_address)
                .or_default()
                .push((entry.local_address, entry.remote_address));
        }
    }
    let mut ports: Vec<(u16, u32)> = by_port.into_iter().collect();
    ports.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    let here = ports.into_iter().find_map(|(to_port, connections)| {
        let served = listening_processes(to_port).unwrap_or_default();
        served_by(Hop::Port(to_port), connections, served, own)
    });
    here.or_else(|| {
        let mut addresses: Vec<_> = elsewhere.into_iter().collect();
        addresses.sort_by_key(|(_, connections)| std::cmp::Reverse(connections.len()));
        addresses.into_iter().find_map(|(to, connections)| {
            let (served, ended) = netns::served_across(&connections, namespaces)?;
            served_by(Hop::OtherNamespace(to), ended, served, own)
        })
    })
}

fn over_unix(own: &HashSet<i32>, inodes: &HashSet<u64>, before: &BeforeProbe) -> Option<Forwarded> {
    let table = unix_stream_sockets().ok()?;
    unix_upstreams(&table, inodes, &before.sockets)
        .into_iter()
        .find_map(|upstream| {
            let served = holders_of(&upstream.server_sockets).unwrap_or_default();
            served_by(
                Hop::UnixSocket(upstream.path),
                upstream.connections,
                served,
                own,
            )
        })
}

/// The hop, when a process outside the forwarder's own tree (`own`) serves it.
fn served_by(
    to: Hop,
    connections: u32,
    holders: Vec<i32>,
    own: &HashSet<i32>,
) -> Option<Forwarded> {
    let served: Vec<i32> = holders
        .into_iter()
        .filter(|pid| !own.contains(pid))
        .collect();
    let first = *served.first()?;
    let served_name = procfs::process::Process::new(first).ok()?.stat().ok()?.comm;
    Some(Forwarded {
        to,
        connections,
        served,
        served_name,
    })
}

/// A unix socket path a forwarder holds connections to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnixUpstream {
    /// The listener's path.
    pub path: String,
    /// How many of the forwarder's connections lead there.
    pub connections: u32,
    /// The server's sockets: the listener and the ends it accepted (whoever holds them serves).
    pub server_sockets: BTreeSet<u64>,
}

/// The unix socket paths that the connected sockets `held` (a forwarder's), apart from
/// `before` (held before the probe), lead to, most connections first: each one's peer is the
/// end a server accepted, named with its listener's path.
pub fn unix_upstreams(
    table: &[UnixSocket],
    held: &HashSet<u64>,
    before: &HashSet<u64>,
) -> Vec<UnixUpstream> {
    let by_inode: BTreeMap<u64, &UnixSocket> = table.iter().map(|s| (s.inode, s)).collect();
    let mut by_path: BTreeMap<String, UnixUpstream> = BTreeMap::new();
    for socket in table {
        if !socket.connected || !held.contains(&socket.inode) || before.contains(&socket.inode) {
            continue;
        }
        let Some(peer) = socket.peer.and_then(|p| by_inode.get(&p)) else {
            continue;
        };
        // The peer is the server's end only when the forwarder's own end has no name: two
        // ends of a socketpair have none, and a forwarder's listening side is its own.
        let (Some(path), None) = (&peer.name, &socket.name) else {
            continue;
        };
        let upstream = by_path.entry(path.clone()).or_insert_with(|| UnixUpstream {
            path: path.clone(),
            connections: 0,
            server_sockets: table
                .iter()
                .filter(|s| s.listening && s.name.as_ref() == Some(path))
                .map(|s| s.inode)
                .collect(),
        });
        upstream.connections += 1;
        upstream.server_sockets.insert(peer.inode);
    }
    let mut upstreams: Vec<UnixUpstream> = by_path.into_values().collect();
    upstreams.sort_by_key(|u| std::cmp::Reverse(u.connections));
    upstreams
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

    fn socket(inode: u64, peer: Option<u64>, name: Option<&str>) -> UnixSocket {
        UnixSocket {
            inode,
            peer,
            listening: false,
            connected: peer.is_some(),
            name: name.map(str::to_string),
        }
    }

    #[test]
    fn a_forwarders_new_unix_connections_lead_to_the_path_their_peers_were_accepted_on() {
        let fpm = "/run/php/php-fpm.sock";
        let table = vec![
            UnixSocket {
                listening: true,
                ..socket(10, None, Some(fpm))
            },
            // nginx's two connections to PHP-FPM, and the ends PHP-FPM accepted.
            socket(20, Some(21), None),
            socket(21, Some(20), Some(fpm)),
            socket(22, Some(23), None),
            socket(23, Some(22), Some(fpm)),
            // nginx's stderr to journald, held since before the probe.
            socket(30, Some(31), None),
            socket(31, Some(30), Some("/run/systemd/journal/stdout")),
            // A master-worker socketpair: neither end has a name.
            socket(40, Some(41), None),
            socket(41, Some(40), None),
            // Someone else's connection to PHP-FPM.
            socket(50, Some(51), None),
            socket(51, Some(50), Some(fpm)),
        ];
        let held: HashSet<u64> = [20, 22, 30, 40, 41].into();
        let before: HashSet<u64> = [30, 40, 41].into();
        assert_eq!(
            unix_upstreams(&table, &held, &before),
            vec![UnixUpstream {
                path: fpm.to_string(),
                connections: 2,
                server_sockets: [10, 21, 23].into(),
            }]
        );
        // Without the look before the probe, journald would be an upstream too.
        let upstreams = unix_upstreams(&table, &held, &HashSet::new());
        assert_eq!(upstreams.len(), 2);
        assert_eq!(upstreams[0].path, fpm);
    }

    #[test]
    fn this_test_process_is_no_forwarder() {
        assert_eq!(forwarder_among(&[std::process::id() as i32]), None);
    }
}
