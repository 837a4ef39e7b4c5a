//! The CPU a process may use by its control group, and how often the kernel held it back.
//!
//! A container's `--cpus 0.5` or a pod's `resources.limits.cpu: 500m` is a CFS quota: the
//! group's threads may run `quota` microseconds per `period`, then wait for the next period
//! (throttled), however idle the machine. The quota in force is the smallest along the group's
//! path to the root (the kernel applies every level), read from cgroup v2's `cpu.max`
//! (`50000 100000`, or `max` for none) or v1's `cpu.cfs_quota_us` and `cpu.cfs_period_us` (-1 for
//! none). The throttling counters are the group's `cpu.stat`: `nr_periods`, `nr_throttled`, and
//! `throttled_usec` (v2) or `throttled_time` in nanoseconds (v1). A step keeps their difference
//! from its start to its end ([`QuotaGroup::since`]).
//!
//! Where: `/proc/PID/cgroup` names the process's group per hierarchy (`0::/path` for v2,
//! `N:cpu,cpuacct:/path` for v1), and `/proc/self/mountinfo` where each hierarchy is mounted.
//! Paths are as this process's cgroup namespace sees them: run chokepoint in the target's
//! namespace (or on the host) to read a container's group.
use chokepoint_result::CpuQuota;
use std::path::{Path, PathBuf};

/// The group that holds a process's CPU quota.
#[derive(Debug, Clone, PartialEq)]
pub struct QuotaGroup {
    /// Cores the quota allows, the smallest along the path.
    pub cores: f64,
    /// The CFS period of that level, microseconds.
    pub period_us: u64,
    /// The process's group (its `cpu.stat` counts the throttling).
    pub group: String,
    /// 1 or 2.
    pub version: u8,
    dir: PathBuf,
}

/// The throttling counters of a group at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Throttling {
    /// CFS periods so far.
    pub periods: u64,
    /// Periods throttled so far.
    pub throttled: u64,
    /// Time held back so far, seconds.
    pub throttled_s: f64,
}

impl QuotaGroup {
    /// The quota of `pid`'s group; `None` when it has none (or the files cannot be read).
    pub fn of(pid: i32) -> Option<QuotaGroup> {
        let cgroups = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        let (version, group) = cpu_group(&cgroups)?;
        let root = mount_point(&mountinfo, version)?;
        let dir = root.join(group.trim_start_matches('/'));
        let mut level = Some(dir.as_path());
        let mut tightest: Option<(f64, u64)> = None;
        while let Some(at) = level.filter(|at| at.starts_with(&root)) {
            if let Some((cores, period)) = quota_at(at, version) {
                if tightest.is_none_or(|(least, _)| cores < least) {
                    tightest = Some((cores, period));
                }
            }
            level = at.parent();
        }
        let (cores, period_us) = tightest?;
        Some(QuotaGroup {
            cores,
            period_us,
            group,
            version,
            dir,
        })
    }

    /// The group's throttling counters now.
    pub fn throttling(&self) -> Option<Throttling> {
        parse_stat(
            &std::fs::read_to_string(self.dir.join("cpu.stat")).ok()?,
            self.version,
        )
    }

    /// The quota with the throttling between `start` and now.
    pub fn since(&self, start: Throttling) -> CpuQuota {
        let now = self.throttling().unwrap_or(start);
        CpuQuota {
            cores: self.cores,
            period_us: self.period_us,
            group: self.group.clone(),
            version: self.version,
            periods: now.periods.saturating_sub(start.periods),
            throttled_periods: now.throttled.saturating_sub(start.throttled),
            throttled_s: (now.throttled_s - start.throttled_s).max(0.0),
            runtime_cores: None,
        }
    }
}

/// The process's group in the hierarchy that holds the cpu controller: v1's `cpu` hierarchy
/// when one is mounted with it (a hybrid machine's v2 root has no controllers), else v2's.
pub(crate) fn cpu_group(cgroups: &str) -> Option<(u8, String)> {
    let mut v2 = None;
    for line in cgroups.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if controllers.split(',').any(|c| c == "cpu") {
            return Some((1, path.to_string()));
        }
        if id == "0" && controllers.is_empty() {
            v2 = Some((2, path.to_string()));
        }
    }
    v2
}

/// Where the hierarchy of `version` is mounted: v1's with the `cpu` option, or the `cgroup2`
/// file system.
fn mount_point(mountinfo: &str, version: u8) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (mount, after) = line.split_once(" - ")?;
        let point = mount.split(' ').nth(4)?;
        let mut rest = after.split(' ');
        let fstype = rest.next()?;
        let options = rest.nth(1).unwrap_or("");
        let found = match version {
            1 => fstype == "cgroup" && options.split(',').any(|o| o == "cpu"),
            _ => fstype == "cgroup2",
        };
        found.then(|| PathBuf::from(point))
    })
}

/// The quota set at one level: (cores, period in µs); `None` without one.
fn quota_at(dir: &Path, version: u8) -> Option<(f64, u64)> {
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    match version {
        1 => parse_v1(&read("cpu.cfs_quota_us")?, &read("cpu.cfs_period_us")?),
        _ => parse_v2(&read("cpu.max")?),
    }
}

/// v1: a quota of -1 is none.
fn parse_v1(quota: &str, period: &str) -> Option<(f64, u64)> {
    let quota: i64 = quota.trim().parse().ok()?;
    let period: u64 = period.trim().parse().ok()?;
    (quota > 0 && period > 0).then(|| (quota as f64 / period as f64, period))
}

/// v2: `QUOTA PERIOD`, or `max PERIOD` for none.
fn parse_v2(max: &str) -> Option<(f64, u64)> {
    let mut fields = max.split_whitespace();
    let quota: u64 = fields.next()?.parse().ok()?;
    let period: u64 = fields.next()?.parse().ok()?;
    (quota > 0 && period > 0).then(|| (quota as f64 / period as f64, period))
}

fn parse_stat(stat: &str, version: u8) -> Option<Throttling> {
    let field = |name: &str| {
        stat.lines().find_map(|line| {
            let (key, value) = line.split_once(' ')?;
            (key == name)
                .then(|| value.trim().parse::<u64>().ok())
                .flatten()
        })
    };
    let throttled_s = match version {
        1 => field("throttled_time")? as f64 / 1e9,
        _ => field("throttled_usec")? as f64 / 1e6,
    };
    Some(Throttling {
        periods: field("nr_periods")?,
        throttled: field("nr_throttled")?,
        throttled_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_group_is_v1s_cpu_hierarchy_on_a_hybrid_machine_else_v2s() {
        // This machine (hybrid: v1 controllers, an empty v2 root), a docker container on v2, a
        // pod on v1.
        let table = [
            (
                "9:name=systemd:/\n2:cpuacct:/\n1:cpu:/cp-test\n0::/\n",
                Some((1, "/cp-test")),
            ),
            (
                "0::/system.slice/docker-0f1e.scope\n",
                Some((2, "/system.slice/docker-0f1e.scope")),
            ),
            (
                "4:cpu,cpuacct:/kubepods/burstable/pod1/abc\n",
                Some((1, "/kubepods/burstable/pod1/abc")),
            ),
            ("", None),
        ];
        for (cgroups, want) in table {
            let got = cpu_group(cgroups);
            assert_eq!(
                got.as_ref().map(|(v, p)| (*v, p.as_str())),
                want,
                "{cgroups:?}"
            );
        }
    }

    #[test]
    fn the_mount_points_of_the_cpu_hierarchies_are_found() {
        let mountinfo = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
            32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n\
            33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n\
            41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        assert_eq!(
            mount_point(mountinfo, 1),
            Some(PathBuf::from("/sys/fs/cgroup/cpu"))
        );
        assert_eq!(
            mount_point(mountinfo, 2),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
    }

    #[test]
    fn quotas_and_counters_are_read_in_both_versions() {
        assert_eq!(parse_v1("50000\n", "100000\n"), Some((0.5, 100_000)));
        assert_eq!(parse_v1("-1\n", "100000\n"), None);
        assert_eq!(parse_v2("150000 100000\n"), Some((1.5, 100_000)));
        assert_eq!(parse_v2("max 100000\n"), None);
        let v1 = "nr_periods 40\nnr_throttled 25\nthrottled_time 1500000000\nnr_bursts 0\n";
        assert_eq!(
            parse_stat(v1, 1),
            Some(Throttling {
                periods: 40,
                throttled: 25,
                throttled_s: 1.5
            })
        );
        let v2 = "usage_usec 10\nnr_periods 40\nnr_throttled 25\nthrottled_usec 1500000\n";
        assert_eq!(parse_stat(v2, 2).map(|t| t.throttled_s), Some(1.5));
    }
}
