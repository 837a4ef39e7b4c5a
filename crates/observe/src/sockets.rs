//! The target's TCP connections, from `/proc/net/tcp{,6}` and the sockets its processes hold
//! (`/proc/PID/fd` → `socket:[inode]`): the client side (on the port it listens on) and the
//! downstream side (its own outgoing connections, by the peer's port), by state.
use procfs::net::TcpState;
use procfs::process::{FDTarget, Process};
use std::collections::{BTreeMap, HashSet};

/// One socket of the machine's TCP table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Socket {
    /// The local port.
    pub local_port: u16,
    /// The peer's port (0 for a listening socket).
    pub remote_port: u16,
    /// Its state.
    pub state: SocketState,
    /// The socket's inode (0 while no process holds it: TIME_WAIT, or not yet accepted).
    pub inode: u64,
    /// Bytes received and not yet read by the process that holds it.
    pub rx_queue: u32,
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
    /// server that caps its connections (seed 001's Apache) leaves them so.
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
    /// The target's outgoing connections by the peer's port.
    pub downstream: BTreeMap<u16, StateCounts>,
}

/// Every TCP socket of this network namespace (IPv4 and IPv6).
pub fn socket_table() -> Vec<Socket> {
    let tables = [procfs::net::tcp(), procfs::net::tcp6()];
    tables
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| Socket {
            local_port: entry.local_address.port(),
            remote_port: entry.remote_address.port(),
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
        .collect()
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
/// (whoever holds it: TIME_WAIT sockets belong to no process); the downstream side is every
/// socket the target holds (`owned` inodes) that is not on a port the target listens on and
/// not to `listen_port` (an in-process target shares its process with the load generator), plus
/// the TIME_WAIT sockets to the peer ports found so.
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
    let target_listens: HashSet<u16> = table
        .iter()
        .filter(|s| s.state == SocketState::Listen && owned.contains(&s.inode))
        .map(|s| s.local_port)
        .chain(listen_port)
        .collect();
    for socket in table.iter().filter(|s| s.state != SocketState::Listen) {
        if Some(socket.local_port) == listen_port {
            sample.client_side.add(socket.state);
        } else if owned.contains(&socket.inode)
            && !target_listens.contains(&socket.local_port)
            && Some(socket.remote_port) != listen_port
        {
            let counts = sample.downstream.entry(socket.remote_port).or_default();
            counts.add(socket.state);
            let other_end = ends.get(&(socket.remote_port, socket.local_port));
            let unserved = other_end.is_some_and(|end| end.inode == 0 || end.rx_queue > 0);
            if socket.state == SocketState::Established && unserved {
                counts.unserved += 1;
            }
        }
    }
    for socket in table.iter().filter(|s| s.state == SocketState::TimeWait) {
        if let Some(counts) = sample.downstream.get_mut(&socket.remote_port) {
            counts.time_wait += 1;
        }
    }
    sample
}

#[cfg(test)]
mod tests {
    use super::*;
    use SocketState::*;

    fn socket(local_port: u16, remote_port: u16, state: SocketState, inode: u64) -> Socket {
        Socket {
            local_port,
            remote_port,
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
            sample.downstream.get(&9090),
            Some(&StateCounts {
                established: 4,
                time_wait: 1,
                unserved: 2,
                ..StateCounts::default()
            })
        );
        assert_eq!(sample.downstream.get(&5432).map(|c| c.established), Some(1));
        assert_eq!(sample.downstream.len(), 2, "{:?}", sample.downstream);
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
            vec![9090]
        );
        assert_eq!(sample.downstream[&9090].established, 1);
    }
}
