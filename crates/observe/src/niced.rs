//! Whether the machine's niced work gave its cores to the target: the processes at a positive
//! nice value, found in `/proc`, and the scheduling group each competes in.
//!
//! Linux's fair scheduler weighs runnable tasks by their nice value only against the other
//! tasks of the same group: a CPU control group (v1's `cpu` hierarchy, or v2's) and, where the
//! kernel groups sessions (`/proc/sys/kernel/sched_autogroup_enabled`), an autogroup. Groups
//! share the cores by their own weights, whatever their tasks' nice values. So a niced build in
//! the target's own group yields its cores (15 of 1039 for nice 19 against one nice-0 thread),
//! and one in another group (a systemd service, another terminal's session) does not. A window
//! counts the niced share as yielding only when every niced process alive at its end shares
//! the target's group. Kernel threads (`ksmd` at nice 5, `khugepaged` at 19) are left out:
//! they belong to no session and are seldom busy. A niced process that ended inside the window
//! is not seen.
use crate::cgroup::cpu_group;
use procfs::process::{all_processes, Process};

/// `PF_KTHREAD` in a process's `stat` flags (`include/linux/sched.h`).
const KERNEL_THREAD: u32 = 0x0020_0000;

/// Whether any of `pids` runs at a positive nice value (a process gone counts as not): its CPU
/// time is then in the machine's niced share.
pub fn any_niced(pids: &[i32]) -> bool {
    pids.iter().any(|&pid| {
        Process::new(pid)
            .and_then(|p| p.stat())
            .is_ok_and(|stat| stat.nice > 0)
    })
}

/// Where a process's threads compete for the CPU: its CPU control group, and its autogroup
/// when the kernel groups sessions.
#[derive(Debug, Clone, PartialEq)]
struct SchedGroup {
    cgroup: Option<(u8, String)>,
    autogroup: Option<String>,
}

fn sched_group(pid: i32, autogroups: bool) -> Option<SchedGroup> {
    let cgroups = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let autogroup = if autogroups {
        // `/autogroup-8575 nice 0`: the group's name, then its own nice value.
        let line = std::fs::read_to_string(format!("/proc/{pid}/autogroup")).ok()?;
        Some(line.split_whitespace().next()?.to_string())
    } else {
        None
    };
    Some(SchedGroup {
        cgroup: cpu_group(&cgroups),
        autogroup,
    })
}

/// Whether every user process at a positive nice value now competes in the scheduling group
/// of `pid` (true when there is none); false when the target's group cannot be read. A
/// process gone between the listing and the reading of its group is left out.
pub fn niced_beside(pid: i32) -> bool {
    let autogroups = std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled")
        .is_ok_and(|enabled| enabled.trim() == "1");
    let Some(target) = sched_group(pid, autogroups) else {
        return false;
    };
    let Ok(processes) = all_processes() else {
        return false;
    };
    processes
        .flatten()
        .filter_map(|p| Some((p.pid, p.stat().ok()?)))
        .filter(|(_, stat)| stat.nice > 0 && stat.flags & KERNEL_THREAD == 0)
        .all(|(pid, _)| sched_group(pid, autogroups).is_none_or(|group| group == target))
}
