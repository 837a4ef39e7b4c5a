//! The target's TCP connections, from its own network namespace's `/proc/PID/net/tcp{,6}` and
//! the sockets its processes hold (`/proc/PID/fd` → `socket:[inode]`): the client side (on the
//! port it listens on) and the downstream side (its own outgoing connections, by the peer's
//! address), by state.
use procfs::net::TcpState;
use procfs::process::{FDTarget, Process};
use std::collections::{BTreeMap, HashSet};
use std::net::{IpAddr, SocketAddr};

/// One socket of the machine's TCP table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Socket {
    /// The local port.
    pub local_port: u16,
    /// The peer's port (0 for a listening socket).
    pub remote_port: u16,
    /// The peer's IP address (an IPv4-mapped IPv6 one as IPv4).
    pub remote_ip: IpAddr,
    /// Its state.
    pub state: SocketState,
    /// The socket's inode (0 while no process holds it: TIME_WAIT, or not yet accepted).
    pub inode: u64,
    /// Bytes received and not yet read by the process that holds it.
    pub rx_queue: u32,
}

impl Socket {
    /// The peer's address.
    pub fn remote(&self) -> SocketAddr {
        SocketAddr::new(self.remote_ip, self.remote_port)
    }
}

/// The TCP states that matter here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SocketState {
    /// LISTEN.
    Listen,
    /// ESTABLISHED.
    Established,
    /// TIME_WAIT.
    TimeWait,
    /// CLOSE_WAIT.
    CloseWait,
    /// Any other.
    Other,
}

/// Counts by state, in one sample.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StateCounts {
    /// ESTABLISHED.
    pub established: u32,
    /// TIME_WAIT.
    pub time_wait: u32,
    /// CLOSE_WAIT.
    pub close_wait: u32,
    /// Anything else but LISTEN.
    pub other: u32,
    /// Of the established ones, those the peer (on this machine) is not serving: its end is
    /// still in its listener's accept queue (no inode yet), or holds bytes it has not read. A
    /// server that caps its connections (seed 001's Apache) leaves them so. A loopback peer's
    /// end that the read missed counts here too: served is only what was seen served.
    pub unserved: u32,
}

impl StateCounts {
    fn add(&mut self, state: SocketState) {
        match state {
            SocketState::Established => self.established += 1,
            SocketState::TimeWait => self.time_wait += 1,
            SocketState::CloseWait => self.close_wait += 1,
            SocketState::Other => self.other += 1,
            SocketState::Listen => {}
        }
    }
}

/// One sample of the target's connections.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectionSample {
    /// On the listening port.
    pub client_side: StateCounts,
    /// The target's outgoing connections by the peer's address.
    pub downstream: BTreeMap<SocketAddr, StateCounts>,
    /// Clients' connections to the listening port from this namespace (the load generator's,
    /// when it runs beside the target) that are established at the client's end while the
    /// target's side has no socket for them at all: the handshake's last step was dropped
    /// with the listen queue full, and the client does not know it.
    pub half_open_clients: u32,
}

/// Every TCP socket (IPv4 and IPv6) of the network namespaces `pids` are in, each namespace's
/// table read once, from the first of its processes (`/proc/PID/net/tcp{,6}`): a target in a
/// container of its own has its sockets in its own namespace's table, not in this one's.
pub fn socket_table(pids: &[i32]) -> Vec<Socket> {
    let mut namespaces = HashSet::new();
    let mut table = Vec::new();
    for &pid in pids {
        let Ok(namespace) = std::fs::read_link(format!("/proc/{pid}/ns/net")) else {
            continue;
        };
        if !namespaces.insert(namespace) {
            continue;
        }
        let Ok(process) = Process::new(pid) else {
            continue;
        };
        table.extend(sockets([process.tcp(), process.tcp6()]));
    }
    table
}

/// The kernel writes `/proc/net/tcp` a page per `read`, resuming each page at a position
/// (bucket, offset) counted before sockets were added or removed: under churn one read can
/// list a socket twice or skip one. A socket once: (local address, peer address, inode) names
/// one socket of a namespace's table, so a second entry with all three is the same one again.
fn sockets(
    tables: [procfs::ProcResult<Vec<procfs::net::TcpNetEntry>>; 2],
) -> impl Iterator<Item = Socket> {
    let mut seen = HashSet::new();
    let entries = tables.into_iter().flatten().flatten();
    entries
        .filter(move |entry| seen.insert((entry.local_address, entry.remote_address, entry.inode)))
        .map(|entry| Socket {
            local_port: entry.local_address.port(),
            remote_port: entry.remote_address.port(),
            remote_ip: entry.remote_address.ip().to_canonical(),
            state: match entry.state {
                TcpState::Listen => SocketState::Listen,
                TcpState::Established => SocketState::Established,
                TcpState::TimeWait => SocketState::TimeWait,
                TcpState::CloseWait => SocketState::CloseWait,
                _ => SocketState::Other,
            },
            inode: entry.inode,
            rx_queue: entry.rx_queue,
        })
}

/// The socket inodes process `pid` holds.
pub fn socket_inodes(pid: i32) -> Result<HashSet<u64>, procfs::ProcError> {
    Ok(Process::new(pid)?
        .fd()?
        .flatten()
        .filter_map(|fd| match fd.target {
            FDTarget::Socket(inode) => Some(inode),
            _ => None,
        })
        .collect())
}

/// The target's connections in `table`: the client side is every socket on `listen_port`
/// (whoever holds it: TIME_WAIT sockets belong to no process), its `unserved` those not yet
/// accepted; the downstream side is every
/// socket the target holds (`owned` inodes) that is not on a port the target listens on and
/// not to `listen_port` (an in-process target shares its process with the load generator), by
/// the peer's address, plus the TIME_WAIT sockets to the peer addresses found so.
pub fn count_connections(
    table: &[Socket],
    owned: &HashSet<u64>,
    listen_port: Option<u16>,
) -> ConnectionSample {
    let mut sample = ConnectionSample::default();
    // The other end of each connection on this machine, by (its local port, its peer's port).
    let ends: std::collections::HashMap<(u16, u16), &Socket> = table
        .iter()
        .filter(|s| s.state == SocketState::Established)
        .map(|s| ((s.local_port, s.remote_port), s))
        .collect();
    let target_listens = listening_ports(table, owned, listen_port);
    // The target's ends on the listening port, in any state, by the client's port.
    let server_ends: HashSet<u16> = table
        .iter()
        .filter(|s| Some(s.local_port) == listen_port && s.state != SocketState::Listen)
        .map(|s| s.remote_port)
        .collect();
    sample.half_open_clients = table
        .iter()
        .filter(|s| Some(s.remote_port) == listen_port && s.state == SocketState::Established)
        .filter(|s| !owned.contains(&s.inode) && !server_ends.contains(&s.local_port))
        .count() as u32;
    for socket in table.iter().filter(|s| s.state != SocketState::Listen) {
        if Some(socket.local_port) == listen_port {
            sample.client_side.add(socket.state);
            // Established by the kernel and held by no process: still in the listen queue,
            // not accepted yet (an accepted socket has its file's inode at once).
            if socket.state == SocketState::Established && socket.inode == 0 {
                sample.client_side.unserved += 1;
            }
        } else if owned.contains(&socket.inode)
            && !target_listens.contains(&socket.local_port)
            && Some(socket.remote_port) != listen_port
        {
            let counts = sample.downstream.entry(socket.remote()).or_default();
            counts.add(socket.state);
            // A peer on loopback is in this table: an end missing from it was skipped by the
            // read (see [`sockets`]), and is not evidence that the peer served it.
            let unserved = match ends.get(&(socket.remote_port, socket.local_port)) {
                Some(end) => end.inode == 0 || end.rx_queue > 0,
                None => socket.remote_ip.is_loopback(),
            };
            if socket.state == SocketState::Established && unserved {
                counts.unserved += 1;
            }
        }
    }
    for socket in table.iter().filter(|s| s.state == SocketState::TimeWait) {
        if let Some(counts) = sample.downstream.get_mut(&socket.remote()) {
            counts.time_wait += 1;
        }
    }
    sample
}

/// The ports the target listens on: its own listening sockets, and `listen_port`.
fn listening_ports(
    table: &[Socket],
    owned: &HashSet<u64>,
    listen_port: Option<u16>,
) -> HashSet<u16> {
    table
        .iter()
        .filter(|s| s.state == SocketState::Listen && owned.contains(&s.inode))
        .map(|s| s.local_port)
        .chain(listen_port)
        .collect()
}

/// The inodes of the target's client side: the sockets it holds (`owned`) on a port it listens
/// on, its listening sockets and the connections it accepted from its clients.
pub fn client_side_inodes(
    table: &[Socket],
    owned: &HashSet<u64>,
    listen_port: Option<u16>,
) -> HashSet<u64> {
    let ports = listening_ports(table, owned, listen_port);
    table
        .iter()
        .filter(|s| s.inode != 0 && owned.contains(&s.inode))
        .filter(|s| ports.contains(&s.local_port))
        .map(|s| s.inode)
        .collect()
}

/// `TcpExt ListenOverflows` of process `pid`'s network namespace (`/proc/PID/net/netstat`): the
/// handshakes its kernel dropped because a listen queue was full, since boot. Read by hand:
/// procfs 0.17 parses `/proc/net/snmp` but not `netstat`'s `TcpExt` lines.
pub fn listen_overflows(pid: i32) -> Option<u64> {
    let netstat = std::fs::read_to_string(format!("/proc/{pid}/net/netstat")).ok()?;
    counter(&netstat, "TcpExt:", "ListenOverflows")
}

/// One counter of a `/proc/net/netstat`-shaped text: a line of names after `prefix`, then a
/// line of values after it.
fn counter(text: &str, prefix: &str, name: &str) -> Option<u64> {
    let mut lines = text.lines().filter(|line| line.starts_with(prefix));
    while let (Some(names), Some(values)) = (lines.next(), lines.next()) {
        let at = names.split_whitespace().position(|n| n == name);
        if let Some(at) = at {
            return values.split_whitespace().nth(at)?.parse().ok();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;
    use SocketState::*;

    /// A peer on loopback.
    fn local(port: u16) -> SocketAddr {
        SocketAddr::new(Ipv4Addr::LOCALHOST.into(), port)
    }

    fn socket(local_port: u16, remote_port: u16, state: SocketState, inode: u64) -> Socket {
        Socket {
            local_port,
            remote_port,
            remote_ip: Ipv4Addr::LOCALHOST.into(),
            state,
            inode,
            rx_queue: 0,
        }
    }

    #[test]
    fn connections_split_into_the_client_side_and_the_downstream_by_peer_port() {
        // The target (inodes 1..=99) listens on 8080 and calls the mock on 9090 and a
        // database on 5432; the generator (inodes 100..) connects to 8080; the mock (200..)
        // listens on 9090; some sockets wait in TIME_WAIT (inode 0).
        let table = [
            socket(8080, 0, Listen, 1),
            socket(8080, 40001, Established, 2),
            socket(8080, 40002, Established, 3),
            socket(8080, 40003, CloseWait, 4),
            socket(8080, 40004, TimeWait, 0),
            socket(40001, 8080, Established, 100),
            socket(40002, 8080, Established, 101),
            socket(50001, 9090, Established, 10),
            socket(50002, 9090, Established, 11),
            socket(50003, 9090, TimeWait, 0),
            socket(50005, 9090, Established, 13), // the mock has not accepted it yet:
            socket(9090, 50005, Established, 0),  // its end has no inode
            socket(50006, 9090, Established, 14), // the mock accepted it, never read it
            Socket {
                rx_queue: 78,
                ..socket(9090, 50006, Established, 203)
            },
            socket(50004, 5432, Established, 12),
            socket(9090, 0, Listen, 200),
            socket(9090, 50001, Established, 201),
            socket(9090, 50002, Established, 202),
            socket(33333, 443, Established, 300), // another process's
        ];
        let owned: HashSet<u64> = (1..=99).collect();
        let sample = count_connections(&table, &owned, Some(8080));
        assert_eq!(
            sample.client_side,
            StateCounts {
                established: 2,
                time_wait: 1,
                close_wait: 1,
                other: 0,
                unserved: 0
            }
        );
        assert_eq!(
            sample.downstream.get(&local(9090)),
            Some(&StateCounts {
                established: 4,
                time_wait: 1,
                unserved: 2,
                ..StateCounts::default()
            })
        );
        assert_eq!(
            sample.downstream.get(&local(5432)).map(|c| c.established),
            Some(1)
        );
        assert_eq!(sample.downstream.len(), 2, "{:?}", sample.downstream);
    }

    #[test]
    fn client_connections_no_process_holds_yet_wait_unaccepted_or_are_half_open() {
        // The target (inodes 1..=99) accepted two connections on 8080; the kernel established
        // two more that wait in its listen queue (no inode yet); one closed (TIME_WAIT).
        let table = [
            socket(8080, 0, Listen, 1),
            socket(8080, 40001, Established, 2),
            socket(8080, 40002, Established, 3),
            socket(8080, 40003, Established, 0),
            socket(8080, 40004, Established, 0),
            socket(8080, 40005, TimeWait, 0),
            // The generator's ends (inodes 100..): of those, 40006's has no end at the
            // target's side at all (its handshake was dropped), 40003's waits unaccepted.
            socket(40001, 8080, Established, 101),
            socket(40003, 8080, Established, 103),
            socket(40006, 8080, Established, 106),
        ];
        let owned: HashSet<u64> = (1..=99).collect();
        let sample = count_connections(&table, &owned, Some(8080));
        assert_eq!(
            (
                sample.client_side.established,
                sample.client_side.unserved,
                sample.client_side.time_wait,
                sample.half_open_clients
            ),
            (4, 2, 1, 1)
        );
    }

    #[test]
    fn the_listen_overflows_are_read_from_the_tcpext_lines() {
        // The layout of /proc/net/netstat (Linux 6.x, cut): two lines per group.
        let netstat = "TcpExt: SyncookiesSent SyncookiesRecv ListenOverflows ListenDrops\n\
                       TcpExt: 0 0 687 690\n\
                       IpExt: InNoRoutes ListenOverflows\n\
                       IpExt: 0 5\n";
        assert_eq!(counter(netstat, "TcpExt:", "ListenOverflows"), Some(687));
        assert_eq!(counter(netstat, "TcpExt:", "ListenDrops"), Some(690));
        assert_eq!(counter(netstat, "TcpExt:", "Missing"), None);
        assert_eq!(counter("", "TcpExt:", "ListenOverflows"), None);
        // This machine's own file has it.
        assert!(listen_overflows(std::process::id() as i32).is_some());
    }

    /// `/proc/net/tcp` as the kernel writes it, from `(local, peer, state, rx_queue, inode)`.
    fn proc_net_tcp(rows: &[(&str, &str, &str, u32, u64)]) -> Vec<procfs::net::TcpNetEntry> {
        let mut text = String::from(
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n",
        );
        for (i, (local, peer, state, rx, inode)) in rows.iter().enumerate() {
            text += &format!(
                "{i:4}: {local} {peer} {state} 00000000:{rx:08X} 00:00000000 00000000     0        0 {inode} 1 0000000000000000 20 4 30 10 -1\n"
            );
        }
        let entries: procfs::net::TcpNetEntries =
            procfs::FromBufReadSI::from_buf_read(text.as_bytes(), procfs::current_system_info())
                .expect("a table in the kernel's format");
        entries.0
    }

    #[test]
    fn a_socket_a_read_lists_twice_is_one_socket() {
        // 127.0.0.1:50001 -> 127.0.0.1:9090 (0x2382) and the mock's end, the first listed
        // again on the next page of a read under churn.
        let to_mock = ("0100007F:C351", "0100007F:2382", "01", 0, 10);
        let mocks_end = ("0100007F:2382", "0100007F:C351", "01", 0, 201);
        let listed = proc_net_tcp(&[to_mock, mocks_end, to_mock]);
        assert_eq!(listed.len(), 3, "the parser keeps every line");
        let table: Vec<Socket> = sockets([Ok(listed), Ok(Vec::new())]).collect();
        assert_eq!(
            table.iter().map(|s| s.inode).collect::<Vec<_>>(),
            vec![10, 201]
        );
        let owned: HashSet<u64> = [10].into();
        let sample = count_connections(&table, &owned, Some(8080));
        assert_eq!(
            sample.downstream.get(&local(9090)).map(|c| c.established),
            Some(1),
            "{table:?}"
        );
    }

    #[test]
    fn a_loopback_peers_end_missing_from_the_read_is_not_served() {
        // The target's two connections to the mock on loopback; the read skipped the mock's end
        // of the second. One to a server elsewhere has no end here, and stays served.
        let elsewhere: IpAddr = Ipv4Addr::new(10, 0, 0, 5).into();
        let table = [
            socket(50001, 9090, Established, 10),
            socket(9090, 50001, Established, 201),
            socket(50002, 9090, Established, 11),
            Socket {
                remote_ip: elsewhere,
                ..socket(50003, 9090, Established, 12)
            },
        ];
        let owned: HashSet<u64> = (1..=99).collect();
        let sample = count_connections(&table, &owned, Some(8080));
        let mock = &sample.downstream[&local(9090)];
        assert_eq!((mock.established, mock.unserved), (2, 1));
        let remote = &sample.downstream[&SocketAddr::new(elsewhere, 9090)];
        assert_eq!((remote.established, remote.unserved), (1, 0));
    }

    #[test]
    fn an_in_process_target_leaves_out_the_generator_and_the_mock() {
        // One process holds the demo service (8080), the mock (9090) and the generator.
        let table = [
            socket(8080, 0, Listen, 1),
            socket(9090, 0, Listen, 2),
            socket(8080, 40001, Established, 3),
            socket(40001, 8080, Established, 4), // the generator's end
            socket(50001, 9090, Established, 5), // the service's downstream call
            socket(9090, 50001, Established, 6), // the mock's end of it
        ];
        let owned: HashSet<u64> = (1..=6).collect();
        let sample = count_connections(&table, &owned, Some(8080));
        assert_eq!(sample.client_side.established, 1);
        assert_eq!(
            sample.downstream.keys().copied().collect::<Vec<_>>(),
            vec![local(9090)]
        );
        assert_eq!(sample.downstream[&local(9090)].established, 1);
    }

    #[test]
    fn two_peers_on_one_port_are_two_addresses() {
        // The target (1..=99) keeps one HTTP/2 connection to a proxy on this machine and two
        // to a server elsewhere, both on port 8443; a closed one to the proxy waits in TIME_WAIT.
        let elsewhere: IpAddr = Ipv4Addr::new(10, 0, 0, 5).into();
        let to = |local_port: u16, ip: IpAddr, state: SocketState, inode: u64| Socket {
            remote_ip: ip,
            ..socket(local_port, 8443, state, inode)
        };
        let table = [
            to(50001, Ipv4Addr::LOCALHOST.into(), Established, 10),
            to(50002, elsewhere, Established, 11),
            to(50003, elsewhere, Established, 12),
            to(50004, Ipv4Addr::LOCALHOST.into(), TimeWait, 0),
        ];
        let owned: HashSet<u64> = (1..=99).collect();
        let sample = count_connections(&table, &owned, Some(8080));
        let proxy = &sample.downstream[&local(8443)];
        assert_eq!((proxy.established, proxy.time_wait), (1, 1));
        let remote = &sample.downstream[&SocketAddr::new(elsewhere, 8443)];
        assert_eq!((remote.established, remote.time_wait), (2, 0));
    }
}
