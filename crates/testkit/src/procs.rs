//! The processes of a group and the marked ones, read from `/proc`.
use std::path::Path;

/// A process that carries a test server's mark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Survivor {
    /// Its PID.
    pub pid: i32,
    /// Its name (`/proc/PID/comm`).
    pub comm: String,
    /// The mark it carries: which server of which test run started it.
    pub mark: String,
}

/// Every live (not zombie) process that carries [`crate::MARK`], or only those whose mark is
/// `only` when given.
pub fn survivors(only: Option<&str>) -> Vec<Survivor> {
    let prefix = format!("{}=", crate::MARK);
    pids()
        .filter(|&pid| !is_zombie(pid))
        .filter_map(|pid| {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
            let mark = environ
                .split(|&b| b == 0)
                .find_map(|var| var.strip_prefix(prefix.as_bytes()))
                .map(|m| String::from_utf8_lossy(m).into_owned())?;
            if only.is_some_and(|only| only != mark) {
                return None;
            }
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            Some(Survivor {
                pid,
                comm: comm.trim().to_string(),
                mark,
            })
        })
        .collect()
}

/// The live (not zombie) processes of process group `group`.
pub(crate) fn live_in_group(group: i32) -> Vec<i32> {
    pids()
        .filter(|&pid| stat_fields(pid).is_some_and(|(state, pgrp)| state != 'Z' && pgrp == group))
        .collect()
}

/// The kernel's ephemeral port range (`net.ipv4.ip_local_port_range`), Linux's default when
/// it cannot be read.
pub(crate) fn ephemeral_range() -> (u16, u16) {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| {
            let mut bounds = text.split_whitespace().map(|n| n.parse::<u16>().ok());
            Some((bounds.next()??, bounds.next()??))
        })
        .unwrap_or((32_768, 60_999))
}

fn pids() -> impl Iterator<Item = i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
}

fn is_zombie(pid: i32) -> bool {
    stat_fields(pid).is_none_or(|(state, _)| state == 'Z')
}

/// A process's state letter and process group, from `/proc/PID/stat` (after the command name,
/// which may hold spaces and parentheses: the fields start after its last `)`).
fn stat_fields(pid: i32) -> Option<(char, i32)> {
    let stat =
        std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("stat")).ok()?;
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let pgrp = fields.nth(1)?.parse().ok()?;
    Some((state, pgrp))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Server;
    use std::process::Command;
    use std::time::Duration;

    #[test]
    fn a_server_and_the_children_it_forks_are_stopped_whole() {
        // A shell that forks a child ignoring SIGTERM: the group is killed after the grace.
        let mut command = Command::new("sh");
        command.args(["-c", "(trap '' TERM; sleep 60) & sleep 60"]);
        let server = Server::spawn("sh", &mut command);
        let group = server.pid();
        let mark = server.mark.clone();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while live_in_group(group).len() < 3 {
            assert!(std::time::Instant::now() < deadline, "the shell forked");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(survivors(Some(&mark)).len(), 3);
        drop(server);
        assert!(live_in_group(group).is_empty());
        assert!(survivors(Some(&mark)).is_empty());
    }

    #[test]
    fn a_daemon_that_leaves_the_group_fails_the_stop() {
        let mut command = Command::new("sh");
        command.args(["-c", "setsid sleep 60 & sleep 60"]);
        let server = Server::spawn("escaper", &mut command);
        let (group, mark) = (server.pid(), server.mark.clone());
        // Waits for the escape itself: a marked process in another group. (Two marked processes
        // alone may still be the shell and a child that has not yet called setsid.)
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while survivors(Some(&mark)).len() <= live_in_group(group).len() {
            assert!(
                std::time::Instant::now() < deadline,
                "the sleep left the group"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let stopped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(server)));
        let message = stopped.expect_err("the escaped sleep fails the stop");
        let message = message.downcast_ref::<String>().expect("a message");
        assert!(message.contains("outlived"), "{message}");
        assert!(survivors(Some(&mark)).is_empty(), "and it was killed");
    }

    #[test]
    fn a_stat_line_with_parentheses_in_the_name_is_read() {
        let me = std::process::id() as i32;
        let (state, pgrp) = stat_fields(me).expect("this process's stat");
        assert!(matches!(state, 'R' | 'S'), "{state}");
        // SAFETY: getpgrp(2) cannot fail.
        assert_eq!(pgrp, unsafe { libc::getpgrp() });
    }

    #[test]
    fn a_free_port_is_below_the_ephemeral_range_and_bindable() {
        let (low, _) = ephemeral_range();
        let port = crate::free_port();
        assert!(port < low, "{port}");
        std::net::TcpListener::bind(("127.0.0.1", port)).expect("free");
    }
}
