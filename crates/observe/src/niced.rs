//! Whether the machine's niced work gave its cores to the target: the processes at a positive
//! nice value, found in `/proc`, and the scheduling group each competes in.
//!
//! Linux's fair scheduler weighs runnable tasks by their nice value only against the other
//! tasks of the same group: a CPU control group (v1's `cpu` hierarchy, or v2's) and, where the
//! kernel groups sessions (`/proc/sys/kernel/sched_autogroup_enabled`), an autogroup. Groups
//! share the cores by their own weights, whatever their tasks' nice values. So a niced build in
//! the target's own group yields its cores (15 of 1039 for nice 19 against one nice-0 thread),
//! and one in another group (a systemd service, another terminal's session) does not.
//!
//! A window lists the niced processes in other groups than the target's, with their CPU time,
//! when it opens and when it closes ([`NicedElsewhere`]). The machine's niced share counts as
//! yielding unless one of them ran in between. One that only slept (a desktop's indexer at
//! nice 19 waiting for work) took no core from the target. Left out of the lists:
//! - kernel threads (`ksmd` at nice 5, `khugepaged` at 19): they belong to no session and are
//!   seldom busy;
//! - zombies: a process that has exited runs nothing, and the kernel has already taken it out
//!   of its group (`/proc/PID/cgroup` reads the root), yet it stays listed until its parent
//!   reaps it, which a container's first process may never do.
//!
//! A niced process in another group born and ended inside the window is not seen.
//!
//! The processes of session 0 are in no autogroup of their own, and `/proc/PID/autogroup` is
//! empty for them. CI, by what it printed, runs the tests there: until the empty line was read
//! as the root group, every window there lost the target's group, left the niced share untold,
//! and counted CI's niced build as others holding the machine (two CI runs failed so).
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
        Some(std::fs::read_to_string(format!("/proc/{pid}/autogroup")).ok()?)
    } else {
        None
    };
    Some(SchedGroup::read(&cgroups, autogroup.as_deref()))
}

impl SchedGroup {
    /// The group of a process whose `/proc/PID/cgroup` is `cgroups` and `/proc/PID/autogroup`
    /// is `autogroup` (`None` where the kernel groups no sessions). A session's autogroup
    /// applies only in the root CPU control group (`task_wants_autogroup` in
    /// `kernel/sched/autogroup.h`): two sessions in one container's group compete as one group.
    fn read(cgroups: &str, autogroup: Option<&str>) -> SchedGroup {
        let cgroup = cpu_group(cgroups);
        let in_root = cgroup.as_ref().is_none_or(|(_, path)| path == "/");
        SchedGroup {
            autogroup: autogroup.filter(|_| in_root).map(autogroup_name),
            cgroup,
        }
    }
}

/// The autogroup a `/proc/PID/autogroup` line names: `/autogroup-8575 nice 0` is the group's
/// name, then its own nice value. The kernel prints nothing for a task in no session's
/// autogroup but the root task group (`proc_sched_autogroup_show_task` in
/// `kernel/sched/autogroup.c`): the processes of session 0, such as a VM's first process and
/// whatever it starts without `setsid` (most likely CI's test runner). They share that one
/// group, so the empty line names it too.
fn autogroup_name(line: &str) -> String {
    line.split_whitespace()
        .next()
        .unwrap_or(ROOT_AUTOGROUP)
        .to_string()
}

/// The name given to the root task group, where the kernel prints no autogroup.
const ROOT_AUTOGROUP: &str = "/";

/// The user processes at a positive nice value that can still run and compete in another
/// scheduling group than a target's, each with its CPU time so far (clock ticks).
#[derive(Debug, Clone, PartialEq)]
pub struct NicedElsewhere(Vec<(i32, u64)>);

impl NicedElsewhere {
    /// Those of now, beside the target `pid`; `None` when its group or the process list cannot
    /// be read. A process gone between the listing and the reading of its group is left out.
    pub fn now(pid: i32) -> Option<NicedElsewhere> {
        let autogroups = std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled")
            .is_ok_and(|enabled| enabled.trim() == "1");
        let target = sched_group(pid, autogroups)?;
        let processes = all_processes().ok()?;
        Some(NicedElsewhere(
            processes
                .flatten()
                .filter_map(|p| Some((p.pid, p.stat().ok()?)))
                .filter(|(_, stat)| {
                    let runs = !matches!(stat.state, 'Z' | 'X' | 'x');
                    stat.nice > 0 && runs && stat.flags & KERNEL_THREAD == 0
                })
                .filter(|&(pid, _)| {
                    sched_group(pid, autogroups).is_some_and(|group| group != target)
                })
                .map(|(pid, stat)| (pid, stat.utime + stat.stime))
                .collect(),
        ))
    }

    /// The pids listed.
    pub fn pids(&self) -> Vec<i32> {
        self.0.iter().map(|&(pid, _)| pid).collect()
    }

    /// Whether any process listed `later` ran since `self` was listed: its CPU time grew, or it
    /// is new and has any.
    pub fn ran_until(&self, later: &NicedElsewhere) -> bool {
        later.0.iter().any(|&(pid, ticks)| {
            let before = self
                .0
                .iter()
                .find(|&&(p, _)| p == pid)
                .map_or(0, |&(_, t)| t);
            ticks > before
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Child, Command};
    use std::time::{Duration, Instant};

    /// A `sleep` in a v1 `cpu` group of its own, and the group (removed by `leave`).
    fn sleeper_in_own_group(tag: &str) -> (Child, std::path::PathBuf) {
        let group = std::path::Path::new("/sys/fs/cgroup/cpu")
            .join(format!("chokepoint-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&group).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (this test needs root and the v1 cpu controller, as CI has)",
                group.display()
            )
        });
        let script = format!(
            "echo $$ > {}/cgroup.procs && exec sleep 10",
            group.display()
        );
        let sleeper = Command::new("sh")
            .args(["-c", &script])
            .spawn()
            .expect("sh is on every Debian machine");
        let moved = Instant::now();
        while !std::fs::read_to_string(format!("/proc/{}/cgroup", sleeper.id()))
            .is_ok_and(|c| c.contains(&format!("chokepoint-{tag}")))
        {
            assert!(
                moved.elapsed() < Duration::from_secs(5),
                "the sleeper never moved"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        (sleeper, group)
    }

    fn leave(mut child: Child, group: &std::path::Path) {
        let _ = child.kill();
        let _ = child.wait();
        for _ in 0..50 {
            if std::fs::remove_dir(group).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("{} was left behind", group.display());
    }

    /// A nice-5 `true` whose parent (`sleep`, after `exec`) never reaps it, as when a
    /// container's first process reaps nothing; and its pid once it is a zombie.
    fn niced_zombie() -> (Child, i32) {
        let mut parent = Command::new("sh")
            .args(["-c", "nice -n 5 true & exec sleep 10"])
            .spawn()
            .expect("sh and nice are on every Debian machine");
        for _ in 0..500 {
            let zombie = all_processes().ok().and_then(|all| {
                all.flatten().find_map(|p| {
                    let stat = p.stat().ok()?;
                    (stat.ppid == parent.id() as i32 && stat.state == 'Z').then_some(p.pid)
                })
            });
            if let Some(pid) = zombie {
                return (parent, pid);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = parent.kill();
        let _ = parent.wait();
        panic!("no zombie came in 5 s");
    }

    #[test]
    fn sessions_are_groups_of_their_own_only_in_the_root_cpu_group() {
        let in_group = |cgroup: &str, autogroup: &str| {
            SchedGroup::read(&format!("1:cpu:{cgroup}\n0::/\n"), Some(autogroup))
        };
        let session = "/autogroup-4 nice 0\n";
        let other_session = "/autogroup-9 nice 0\n";
        assert_ne!(in_group("/", session), in_group("/", other_session));
        assert_ne!(in_group("/", session), in_group("/", ""));
        assert_eq!(in_group("/ci", session), in_group("/ci", other_session));
        assert_eq!(in_group("/ci", session), in_group("/ci", ""));
        assert_ne!(in_group("/ci", session), in_group("/", session));
        let no_autogroups = SchedGroup::read("1:cpu:/ci\n", None);
        assert_eq!(no_autogroups, in_group("/ci", session));
    }

    #[test]
    fn a_session_0_process_prints_no_autogroup_and_is_in_the_root_group_with_the_others() {
        assert_eq!(autogroup_name("/autogroup-4 nice 0\n"), "/autogroup-4");
        assert_eq!(autogroup_name(""), ROOT_AUTOGROUP);
        assert_eq!(autogroup_name(""), autogroup_name("\n"));
        assert_ne!(autogroup_name(""), autogroup_name("/autogroup-4 nice 0"));
        // This machine's first process is in session 0, as CI's test runner is: its group is
        // read, not lost.
        let first = std::fs::read_to_string("/proc/1/autogroup").expect("/proc/1 is readable");
        if first.is_empty() {
            let autogroups = std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled")
                .is_ok_and(|enabled| enabled.trim() == "1");
            assert!(
                sched_group(1, autogroups).is_some(),
                "process 1's group was lost"
            );
            assert!(
                NicedElsewhere::now(1).is_some(),
                "the niced processes beside process 1 were not listed"
            );
        }
    }

    #[test]
    fn a_niced_process_elsewhere_ran_when_its_cpu_time_grew_or_it_came_with_some() {
        let listed = |entries: &[(i32, u64)]| NicedElsewhere(entries.to_vec());
        let before = listed(&[(10, 500), (11, 7)]);
        assert!(
            !before.ran_until(&listed(&[(10, 500), (11, 7)])),
            "both slept"
        );
        assert!(!before.ran_until(&listed(&[(10, 500)])), "one ended");
        assert!(
            before.ran_until(&listed(&[(10, 501), (11, 7)])),
            "one ran a tick"
        );
        assert!(
            before.ran_until(&listed(&[(10, 500), (12, 3)])),
            "one came and ran"
        );
        assert!(
            !before.ran_until(&listed(&[(10, 500), (12, 0)])),
            "one came asleep"
        );
    }

    #[test]
    fn a_niced_zombie_is_not_listed_and_a_live_niced_process_elsewhere_is() {
        let (target, group) = sleeper_in_own_group("niced-target");
        let (zombie_parent, zombie) = niced_zombie();
        let seen_with_zombie = NicedElsewhere::now(target.id() as i32);
        let mut niced_live = Command::new("nice")
            .args(["-n", "5", "sleep", "10"])
            .spawn()
            .expect("nice and sleep are on every Debian machine");
        std::thread::sleep(Duration::from_millis(100));
        let seen_with_live = NicedElsewhere::now(target.id() as i32);
        let _ = niced_live.kill();
        let _ = niced_live.wait();
        let mut zombie_parent = zombie_parent;
        let _ = zombie_parent.kill();
        let _ = zombie_parent.wait();
        leave(target, &group);
        let with_zombie = seen_with_zombie.expect("the target's group is read").pids();
        assert!(
            !with_zombie.contains(&zombie),
            "the zombie {zombie} was counted: {with_zombie:?}"
        );
        let with_live = seen_with_live.expect("the target's group is read").pids();
        assert!(
            with_live.contains(&(niced_live.id() as i32)),
            "a live niced process in this group, not the target's, was not counted: {with_live:?}"
        );
    }
}
