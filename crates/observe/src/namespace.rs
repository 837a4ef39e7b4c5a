//! A target in a PID namespace of its own (a container, `unshare --pid`), seen from the host.
//!
//! Its runtime knows its threads by that namespace's ids: a JVM dump's `nid`, py-spy's
//! `os_thread_id` (read from the interpreter's thread state) are not the ids under the host's
//! `/proc/PID/task/`. The kernel lists each thread's id at every level in
//! `/proc/PID/task/TID/status`'s `NSpid:` line, from the namespace `/proc` was mounted for (the
//! host's) down to the thread's own. [`HostThreadIds::of`] reads those lines once per dump and
//! maps the runtime's ids to the host's; for a process in the reader's own namespace it maps
//! each id to itself.
//!
//! What else crosses the boundary: `jcmd` finds the JVM's attach socket itself (JDK 10+'s
//! `VirtualMachineImpl` reads the innermost `NSpid` and looks in `/proc/PID/root/tmp`), and
//! py-spy reads the interpreter through `/proc/PID/root` and the process's memory. py-spy's own
//! "active" flag, though, is read from the OS thread its namespace id names on the host, a
//! wrong or missing one: chokepoint reads the right thread's state instead (`stacks::pyspy`).
use chokepoint_result::StackEvidence;
use std::collections::HashMap;

/// The ids in a `status` file's `NSpid:` line, outermost (the reader's `/proc`) first; empty
/// when the line is missing (kernels before 4.1).
pub fn nspid(status: &str) -> Vec<i32> {
    status
        .lines()
        .find_map(|line| line.strip_prefix("NSpid:"))
        .map(|ids| {
            ids.split_whitespace()
                .filter_map(|id| id.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Process `pid`'s id in its own PID namespace (the innermost of `NSpid`: what a JVM names its
/// attach files by); `None` when its status cannot be read.
pub fn own_pid(pid: i32) -> Option<i32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    Some(nspid(&status).last().copied().unwrap_or(pid))
}

/// A process's thread ids as its runtime knows them, mapped to the host's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostThreadIds {
    /// The runtime's id → the host's; `None` when the process shares the reader's namespace.
    namespaced: Option<HashMap<i32, i32>>,
}

impl HostThreadIds {
    /// The map for process `pid` now (its threads as they are: read it again for a later dump).
    pub fn of(pid: i32) -> HostThreadIds {
        let own = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        if nspid(&own).len() < 2 {
            return HostThreadIds::default();
        }
        let statuses = std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten()
            .filter_map(|entry| std::fs::read_to_string(entry.ok()?.path().join("status")).ok());
        HostThreadIds::from_statuses(statuses)
    }

    /// The map from the `status` texts of a process's threads (a namespaced process's).
    pub fn from_statuses(statuses: impl IntoIterator<Item = String>) -> HostThreadIds {
        let map = statuses
            .into_iter()
            .filter_map(|status| {
                let ids = nspid(&status);
                Some((*ids.last()?, *ids.first()?))
            })
            .collect();
        HostThreadIds {
            namespaced: Some(map),
        }
    }

    /// Whether the process is in a PID namespace below the reader's.
    pub fn namespaced(&self) -> bool {
        self.namespaced.is_some()
    }

    /// The host's id of the thread its runtime calls `tid`; `None` when no thread of the process
    /// has that id in its namespace (it ended since).
    pub fn host(&self, tid: i32) -> Option<i32> {
        match &self.namespaced {
            None => Some(tid),
            Some(map) => map.get(&tid).copied(),
        }
    }

    /// The pools' thread ids of `evidence`, which the runtime gave, as the host's (those of
    /// threads that ended since are left out).
    pub fn to_host(&self, evidence: &mut StackEvidence) {
        if self.namespaced() {
            for pool in &mut evidence.pools {
                pool.tids = pool.tids.iter().filter_map(|&tid| self.host(tid)).collect();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nspid_lists_a_threads_ids_outermost_first() {
        for (status, ids) in [
            (
                "Name:\tjava\nNSpid:\t19839\t1\nNSpgid:\t1\n",
                vec![19839, 1],
            ),
            ("Name:\tpython3\nNSpid:\t4242\n", vec![4242]),
            // Nested: host, a container's runtime, the container.
            ("NSpid:\t900\t45\t7\n", vec![900, 45, 7]),
            // A kernel before 4.1 has no NSpid line.
            ("Name:\tjava\nPid:\t12\n", vec![]),
        ] {
            assert_eq!(nspid(status), ids, "{status:?}");
        }
    }

    #[test]
    fn a_namespaced_processs_ids_map_to_the_hosts_and_its_own_to_themselves() {
        let threads = [
            "NSpid:\t19839\t1\n",
            "NSpid:\t19850\t12\n",
            "NSpid:\t19851\t13\n",
        ];
        let ids = HostThreadIds::from_statuses(threads.map(String::from));
        assert!(ids.namespaced());
        for (runtime, host) in [(1, Some(19839)), (12, Some(19850)), (13, Some(19851))] {
            assert_eq!(ids.host(runtime), host, "{runtime}");
        }
        assert_eq!(ids.host(14), None, "a thread that ended");
        let own = HostThreadIds::default();
        assert!(!own.namespaced());
        assert_eq!(own.host(19839), Some(19839));
    }
}
