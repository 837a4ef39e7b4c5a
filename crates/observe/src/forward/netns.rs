//! A forwarder whose upstream is in another network namespace of this machine: docker's bridge
//! (`docker run -p 8080:80` puts docker-proxy on the host, passing each connection to
//! 172.17.0.2:80 inside the container's namespace), a pod's address behind a node's proxy. This
//! namespace's `/proc/net/tcp` holds only the forwarder's end; the server's end is in the
//! container's own table, read through any of its processes (`/proc/PID/net/tcp`). A TCP
//! connection is the same pair of addresses seen from both ends, swapped: the forwarder's
//! L → R is R → L there. So a namespace whose table holds the forwarder's connections swapped
//! is where the server is, and the process listening there on R's port serves. The exact pair
//! is asked, not the address alone: every container on a bridge may use the same private
//! addresses, and only one namespace holds these very connections.
use crate::tree::holders_of;
use procfs::net::{TcpNetEntry, TcpState};
use std::collections::{BTreeSet, HashSet};
use std::net::SocketAddr;

/// One entry of a namespace's TCP table, as this module reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The local address (an IPv4-mapped IPv6 one as IPv4).
    pub local: SocketAddr,
    /// The peer's.
    pub remote: SocketAddr,
    /// LISTEN.
    pub listening: bool,
    /// ESTABLISHED.
    pub established: bool,
    /// The socket's inode.
    pub inode: u64,
}

impl From<&TcpNetEntry> for Entry {
    fn from(entry: &TcpNetEntry) -> Entry {
        Entry {
            local: canonical(entry.local_address),
            remote: canonical(entry.remote_address),
            listening: entry.state == TcpState::Listen,
            established: entry.state == TcpState::Established,
            inode: entry.inode,
        }
    }
}

fn canonical(address: SocketAddr) -> SocketAddr {
    SocketAddr::new(address.ip().to_canonical(), address.port())
}

/// The server's side of `connections` (each the forwarder's own `(local, remote)`) in one
/// namespace's `table`: how many of them end there, and the sockets of whoever serves — the
/// listener on the remote port (on that address or on every address) and the ends it accepted.
/// `None` when none of them ends in this table.
pub fn server_side(
    table: &[Entry],
    connections: &[(SocketAddr, SocketAddr)],
) -> Option<(u32, BTreeSet<u64>)> {
    let swapped: HashSet<(SocketAddr, SocketAddr)> = connections
        .iter()
        .map(|&(local, remote)| (canonical(remote), canonical(local)))
        .collect();
    let accepted: Vec<&Entry> = table
        .iter()
        .filter(|e| e.established && swapped.contains(&(e.local, e.remote)))
        .collect();
    let ended = u32::try_from(accepted.len()).unwrap_or(u32::MAX);
    if ended == 0 {
        return None;
    }
    let served_at: HashSet<SocketAddr> = accepted.iter().map(|e| e.local).collect();
    let listens_for = |listener: &Entry| {
        served_at.iter().any(|at| {
            at.port() == listener.local.port()
                && (listener.local.ip() == at.ip() || listener.local.ip().is_unspecified())
        })
    };
    let sockets = table
        .iter()
        .filter(|e| e.listening && listens_for(e))
        .chain(accepted.iter().copied())
        .map(|e| e.inode)
        .filter(|&inode| inode != 0)
        .collect();
    Some((ended, sockets))
}

/// One process of each network namespace of this machine but this process's own: where a
/// forwarder's upstream may be. Read once before a probe, not at each of its looks.
pub fn other_namespaces() -> Vec<i32> {
    let Ok(own) = std::fs::read_link("/proc/self/ns/net") else {
        return Vec::new();
    };
    let mut seen = HashSet::from([own]);
    let Ok(processes) = procfs::process::all_processes() else {
        return Vec::new();
    };
    processes
        .flatten()
        .filter(|process| {
            std::fs::read_link(format!("/proc/{}/ns/net", process.pid))
                .is_ok_and(|namespace| seen.insert(namespace))
        })
        .map(|process| process.pid)
        .collect()
}

/// Where `connections` (the forwarder's, to an address no process of this namespace serves)
/// end among the namespaces of `namespaces` (one process each, [`other_namespaces`]): the
/// processes that serve there, and how many of the connections end there. `None` when none
/// holds them (the upstream is on another host).
pub fn served_across(
    connections: &[(SocketAddr, SocketAddr)],
    namespaces: &[i32],
) -> Option<(Vec<i32>, u32)> {
    namespaces.iter().find_map(|&pid| {
        let process = procfs::process::Process::new(pid).ok()?;
        let table: Vec<Entry> = [process.tcp(), process.tcp6()]
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| Entry::from(&entry))
            .collect();
        let (ended, sockets) = server_side(&table, connections)?;
        let served = holders_of(&sockets).ok()?;
        (!served.is_empty()).then_some((served, ended))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    fn established(local: &str, remote: &str, inode: u64) -> Entry {
        Entry {
            local: at(local),
            remote: at(remote),
            listening: false,
            established: true,
            inode,
        }
    }

    fn listener(local: &str, inode: u64) -> Entry {
        Entry {
            local: at(local),
            remote: at("0.0.0.0:0"),
            listening: true,
            established: false,
            inode,
        }
    }

    /// docker-proxy on the host (172.17.0.1) holds two connections to a container's port 80.
    fn proxied() -> Vec<(SocketAddr, SocketAddr)> {
        vec![
            (at("172.17.0.1:41000"), at("172.17.0.2:80")),
            (at("172.17.0.1:41002"), at("172.17.0.2:80")),
        ]
    }

    #[test]
    fn the_namespace_holding_the_connections_swapped_serves_them_from_its_listener() {
        let container = [
            listener("0.0.0.0:80", 7),
            established("172.17.0.2:80", "172.17.0.1:41000", 8),
            established("172.17.0.2:80", "172.17.0.1:41002", 9),
            // Its own call to a database, and a client of someone else's proxy.
            established("172.17.0.2:50000", "172.17.0.9:5432", 10),
            established("172.17.0.2:80", "172.17.0.1:43999", 11),
        ];
        assert_eq!(
            server_side(&container, &proxied()),
            Some((2, [7, 8, 9].into()))
        );
    }

    #[test]
    fn another_container_with_the_same_address_holds_none_of_them() {
        // Two bridges may hand out the same address; only the exact pairs tell.
        let twin = [
            listener("0.0.0.0:80", 20),
            established("172.17.0.2:80", "172.17.0.1:39000", 21),
        ];
        assert_eq!(server_side(&twin, &proxied()), None);
    }

    #[test]
    fn a_listener_on_another_address_of_the_same_port_does_not_serve() {
        let container = [
            listener("127.0.0.1:80", 30),
            listener("172.17.0.2:80", 31),
            established("172.17.0.2:80", "172.17.0.1:41000", 32),
        ];
        assert_eq!(
            server_side(&container, &proxied()),
            Some((1, [31, 32].into()))
        );
    }

    #[test]
    fn ipv4_mapped_addresses_match_their_ipv4_selves() {
        // A server listening on `::` sees IPv4 clients as ::ffff:a.b.c.d; procfs reports
        // them so and `Entry::from` makes them IPv4.
        let container = [Entry {
            local: canonical(at("[::ffff:172.17.0.2]:80")),
            remote: canonical(at("[::ffff:172.17.0.1]:41000")),
            listening: false,
            established: true,
            inode: 40,
        }];
        assert_eq!(server_side(&container, &proxied()), Some((1, [40].into())));
    }
}
