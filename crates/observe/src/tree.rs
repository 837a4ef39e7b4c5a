//! Which processes are the target: a process and its descendants (nginx, Apache, php-fpm and
//! gunicorn serve from worker processes, children of the one a user sees first), and the
//! process that listens on a loopback port (`--pid auto`).
use crate::ObserveError;
use procfs::process::{FDTarget, Process};
use std::collections::{BTreeSet, HashMap};

/// `root` and every process descended from it, listed from `/proc` now, `root` first.
/// An error when `root` does not exist (or cannot be read).
pub fn process_tree(root: i32) -> Result<Vec<i32>, ObserveError> {
    Process::new(root)
        .and_then(|p| p.stat())
        .map_err(|e| ObserveError(format!("process {root} cannot be read: {e}")))?;
    let parents: Vec<(i32, i32)> = procfs::process::all_processes()
        .map_err(|e| ObserveError(format!("cannot list /proc: {e}")))?
        .flatten()
        .filter_map(|p| p.stat().ok())
        .map(|stat| (stat.pid, stat.ppid))
        .collect();
    Ok(descendants(root, &parents))
}

/// `root` and the processes below it, given every process's `(pid, parent pid)`: `root` first,
/// then the others in increasing order.
pub fn descendants(root: i32, parents: &[(i32, i32)]) -> Vec<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for &(pid, ppid) in parents {
        if pid != ppid {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut found = BTreeSet::new();
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        for &child in children.get(&pid).into_iter().flatten() {
            if child != root && found.insert(child) {
                stack.push(child);
            }
        }
    }
    std::iter::once(root).chain(found).collect()
}

/// The processes that listen on TCP `port` (any local address, IPv4 or IPv6), reduced to the
/// topmost ones: nginx's master and its workers all hold the listening socket, and the master's
/// tree holds them all. Empty when nothing listens there that this process may see.
pub fn listening_processes(port: u16) -> Result<Vec<i32>, ObserveError> {
    let mut inodes = BTreeSet::new();
    let tables = [procfs::net::tcp(), procfs::net::tcp6()];
    for table in tables.into_iter().flatten() {
        for entry in table {
            if entry.state == procfs::net::TcpState::Listen && entry.local_address.port() == port {
                inodes.insert(entry.inode);
            }
        }
    }
    holders_of(&inodes)
}

/// The address to reach the listener on TCP `port` here: its own, or loopback when it listens
/// on every address; `None` when nothing listens there.
pub fn listening_address(port: u16) -> Option<std::net::SocketAddr> {
    let tables = [procfs::net::tcp(), procfs::net::tcp6()];
    let local = tables
        .into_iter()
        .flatten()
        .flatten()
        .find(|entry| {
            entry.state == procfs::net::TcpState::Listen && entry.local_address.port() == port
        })?
        .local_address;
    let ip = match local.ip() {
        std::net::IpAddr::V4(ip) if ip.is_unspecified() => std::net::Ipv4Addr::LOCALHOST.into(),
        std::net::IpAddr::V6(ip) if ip.is_unspecified() => std::net::Ipv6Addr::LOCALHOST.into(),
        ip => ip.to_canonical(),
    };
    Some(std::net::SocketAddr::new(ip, port))
}

/// The processes that hold any of the sockets `inodes` (`socket:[inode]` among their open
/// files), the topmost of each tree: a master whose workers inherited its socket. Init (PID 1)
/// counts only when nobody else holds them: with socket activation systemd keeps the listener
/// it handed to the service, and as every process's ancestor it would stand for them all; in
/// a container whose server is PID 1, the server is the only holder.
pub fn holders_of(inodes: &BTreeSet<u64>) -> Result<Vec<i32>, ObserveError> {
    if inodes.is_empty() {
        return Ok(Vec::new());
    }
    let mut holders = Vec::new();
    let mut parents = Vec::new();
    for process in procfs::process::all_processes()
        .map_err(|e| ObserveError(format!("cannot list /proc: {e}")))?
        .flatten()
    {
        let Ok(stat) = process.stat() else { continue };
        parents.push((stat.pid, stat.ppid));
        let Ok(fds) = process.fd() else { continue };
        let holds = fds
            .flatten()
            .any(|fd| matches!(fd.target, FDTarget::Socket(inode) if inodes.contains(&inode)));
        if holds {
            holders.push(stat.pid);
        }
    }
    if holders.len() > 1 {
        holders.retain(|&pid| pid != 1);
    }
    Ok(topmost(&holders, &parents))
}

/// Of `pids`, those with no ancestor among `pids` (given every process's `(pid, parent pid)`).
pub fn topmost(pids: &[i32], parents: &[(i32, i32)]) -> Vec<i32> {
    let parent_of: HashMap<i32, i32> = parents.iter().copied().collect();
    let set: BTreeSet<i32> = pids.iter().copied().collect();
    set.iter()
        .copied()
        .filter(|&pid| {
            let mut at = pid;
            // Bounded walk up: a table with a cycle must not hang it.
            for _ in 0..parents.len() {
                match parent_of.get(&at) {
                    Some(&parent) if parent != at && parent > 0 => {
                        if set.contains(&parent) {
                            return false;
                        }
                        at = parent;
                    }
                    _ => break,
                }
            }
            true
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_is_the_root_and_everything_below_it() {
        // init(1) ─ nginx master(100) ─ workers 101, 102; 102 forked a helper 103;
        // an unrelated shell(200) with its child 201.
        let table = [
            (1, 0),
            (100, 1),
            (101, 100),
            (102, 100),
            (103, 102),
            (200, 1),
            (201, 200),
        ];
        assert_eq!(descendants(100, &table), vec![100, 101, 102, 103]);
        assert_eq!(descendants(102, &table), vec![102, 103]);
        assert_eq!(descendants(101, &table), vec![101]);
        // A pid that is in nobody's table is still its own tree (it may have just exited).
        assert_eq!(descendants(999, &table), vec![999]);
        // A cycle (pid reuse mid-listing) ends.
        assert_eq!(descendants(5, &[(5, 6), (6, 5)]), vec![5, 6]);
    }

    #[test]
    fn the_topmost_holders_of_a_listening_socket_are_the_masters() {
        let table = [
            (1, 0),
            (100, 1),
            (101, 100),
            (102, 100),
            (300, 1),
            (301, 300),
        ];
        // The master and its workers hold the socket: the master is the target.
        assert_eq!(topmost(&[101, 100, 102], &table), vec![100]);
        // Two unrelated servers on one port (SO_REUSEPORT): both.
        assert_eq!(topmost(&[101, 301], &table), vec![101, 301]);
        assert_eq!(topmost(&[], &table), Vec::<i32>::new());
    }

    #[test]
    fn this_process_listening_is_found_by_its_port_and_a_child_is_in_its_tree() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let me = std::process::id() as i32;
        assert_eq!(listening_processes(port).unwrap(), vec![me]);
        drop(listener);
        assert_eq!(listening_processes(port).unwrap(), Vec::<i32>::new());

        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let tree = process_tree(me).unwrap();
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(tree[0], me);
        assert!(tree.contains(&(child.id() as i32)), "{tree:?}");
        assert!(process_tree(i32::MAX).is_err());
    }
}
