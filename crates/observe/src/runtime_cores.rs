//! The core count the target's runtime saw and sized its own threads for ([`RuntimeCores`]),
//! read from the process: what a quota finding tells beside the quota.
//!
//! - A HotSpot JVM: `jcmd PID VM.info` prints `CPU: total 2 (initial active 2)` (JDK 17's
//!   `os::print_cpu_info`, hotspot/share/runtime/os.cpp at jdk-17+35): the active processor
//!   count when the JVM started, the one it sized its GC and compiler threads and the common
//!   pool by. Since JDK 10 (JDK-8146115) that count follows the container's CPU quota, rounded
//!   up (`-XX:-UseContainerSupport` or `-XX:ActiveProcessorCount` change it); a JVM moved into a
//!   group after it started keeps the machine's.
//! - A Go program: `GOMAXPROCS` in `/proc/PID/environ` when set. Else Go's default for the
//!   toolchain in the binary's build info (`.go.buildinfo`, inline strings since Go 1.18): the
//!   CPUs the process may run on (`Cpus_allowed_list`), and from Go 1.25, unless the GODEBUG
//!   `containermaxprocs=0` is in force (the build's `DefaultGODEBUG`, which a `go` line before
//!   1.25 in go.mod sets, or the environment's `GODEBUG`), at most the quota rounded up and 2 at
//!   least (runtime/cgroup_linux.go `adjustCgroupGOMAXPROCS`, go1.25.0; the Go 1.25 release
//!   notes, "Container-aware GOMAXPROCS").
//!
//! `jcmd` and the binary are read once per process ([`of`] keeps the reading by PID and start
//! time); the Go default is derived again at each call from the quota it is given.
use crate::stacks::jvm::{find_jvm, jcmd};
use chokepoint_result::{Runtime, RuntimeCores, RuntimeCoresSource};
use std::sync::Mutex;
use std::time::Duration;

/// How long `jcmd VM.info` may take (its own JVM's start, then the answer).
const VM_INFO_LIMIT: Duration = Duration::from_secs(5);

/// What was read once from a process.
#[derive(Debug, Clone, PartialEq)]
enum Reading {
    /// A JVM's initial active processor count.
    Jvm(u32),
    /// A Go program with GOMAXPROCS in its environment.
    GoEnv(u32),
    /// A Go program without: its toolchain and whether its default follows the quota.
    GoBuild {
        version: String,
        follows_quota: bool,
    },
    /// Neither, or not readable.
    Unknown,
}

/// Readings by (PID, start time in clock ticks).
static READINGS: Mutex<Vec<((i32, u64), Reading)>> = Mutex::new(Vec::new());

/// The core count process `pid`'s runtime sized itself for, under a quota of `quota_cores`;
/// `None` when it is no JVM or Go program, or it could not be read.
pub fn of(pid: i32, quota_cores: f64) -> Option<RuntimeCores> {
    let key = (pid, start_time(pid)?);
    let known = READINGS
        .lock()
        .ok()?
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, r)| r.clone());
    let reading = match known {
        Some(reading) => reading,
        None => {
            let reading = read(pid);
            READINGS.lock().ok()?.push((key, reading.clone()));
            reading
        }
    };
    let (runtime, cores, source) = match reading {
        Reading::Jvm(cores) => (Runtime::Jvm, cores, RuntimeCoresSource::JcmdVmInfo),
        Reading::GoEnv(cores) => (Runtime::Go, cores, RuntimeCoresSource::GomaxprocsEnv),
        Reading::GoBuild {
            version,
            follows_quota,
        } => {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
            let cpus = allowed_cpus(&status)?;
            let cores = go_default(cpus, follows_quota.then_some(quota_cores));
            let source = RuntimeCoresSource::GoDefault {
                version,
                follows_quota,
            };
            (Runtime::Go, cores, source)
        }
        Reading::Unknown => return None,
    };
    Some(RuntimeCores {
        runtime,
        cores,
        source,
    })
}

fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Field 22; the fields after the command name (in parentheses) start at field 3.
    stat.rsplit_once(") ")?
        .1
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()
}

fn read(pid: i32) -> Reading {
    if let Ok(Some(jvm)) = find_jvm(pid, false) {
        return jcmd(jvm, &["VM.info"], VM_INFO_LIMIT)
            .ok()
            .and_then(|text| jvm_initial_active(&text))
            .map_or(Reading::Unknown, Reading::Jvm);
    }
    let Ok(exe) = std::fs::read(format!("/proc/{pid}/exe")) else {
        return Reading::Unknown;
    };
    let Some(build) = go_build_info(&exe) else {
        return Reading::Unknown;
    };
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
    if let Some(cores) = env_var(&environ, "GOMAXPROCS").and_then(|v| v.parse().ok()) {
        if cores > 0 {
            return Reading::GoEnv(cores);
        }
    }
    let env_godebug = env_var(&environ, "GODEBUG").unwrap_or_default();
    Reading::GoBuild {
        follows_quota: go_follows_quota(&build.version, &build.default_godebug, &env_godebug),
        version: build.version,
    }
}

/// The initial active processor count in `jcmd VM.info`'s text (`CPU: total 2 (initial
/// active 1)`).
pub fn jvm_initial_active(vm_info: &str) -> Option<u32> {
    vm_info.lines().find_map(|line| {
        // `CPU: total 2` (JDK 17), and `CPU:total 2` as older JDKs printed it.
        let rest = line.trim_start().strip_prefix("CPU:")?.trim_start();
        let rest = rest.strip_prefix("total ")?;
        let (_, after) = rest.split_once("(initial active ")?;
        after.split(')').next()?.trim().parse().ok()
    })
}

/// The value of `name` in a NUL-separated environment (`/proc/PID/environ`).
pub fn env_var(environ: &[u8], name: &str) -> Option<String> {
    environ.split(|&b| b == 0).find_map(|entry| {
        let entry = std::str::from_utf8(entry).ok()?;
        let (key, value) = entry.split_once('=')?;
        (key == name).then(|| value.to_string())
    })
}

/// The CPUs in a `status` file's `Cpus_allowed_list` (`0-1,4`): what sched_getaffinity gives.
pub fn allowed_cpus(status: &str) -> Option<u32> {
    let list = status
        .lines()
        .find_map(|line| line.strip_prefix("Cpus_allowed_list:"))?;
    let mut count = 0;
    for range in list.trim().split(',').filter(|r| !r.is_empty()) {
        count += match range.split_once('-') {
            Some((low, high)) => high.parse::<u32>().ok()? - low.parse::<u32>().ok()? + 1,
            None => range.parse::<u32>().map(|_| 1).ok()?,
        };
    }
    Some(count)
}

/// A Go binary's build info: its toolchain and the GODEBUG defaults its go.mod set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoBuild {
    /// `go1.24.3`.
    pub version: String,
    /// The `DefaultGODEBUG` build setting (`containermaxprocs=0,...`); empty when none.
    pub default_godebug: String,
}

/// The magic at the start of a Go binary's `.go.buildinfo` (debug/buildinfo, Go 1.18+).
const BUILDINFO_MAGIC: &[u8] = b"\xff Go buildinf:";

/// The build info of a Go binary's bytes; `None` when it is none, or older than Go 1.18 (whose
/// build info holds pointers, not the strings).
pub fn go_build_info(binary: &[u8]) -> Option<GoBuild> {
    // The 32-byte header is 16-byte aligned; flag bit 2 says the strings follow it inline.
    let at = (0..binary.len().saturating_sub(32))
        .step_by(16)
        .find(|&at| binary[at..].starts_with(BUILDINFO_MAGIC))?;
    let flags = binary[at + 15];
    if flags & 0x2 == 0 {
        return None;
    }
    let (version, rest) = varint_bytes(&binary[at + 32..])?;
    let version = std::str::from_utf8(version).ok()?;
    // The module info is wrapped in 16 bytes of binary sentinel at each end.
    let (modinfo, _) = varint_bytes(rest)?;
    let default_godebug = String::from_utf8_lossy(modinfo)
        .lines()
        .find_map(|line| line.strip_prefix("build\tDefaultGODEBUG="))
        .unwrap_or_default()
        .to_string();
    Some(GoBuild {
        version: version.to_string(),
        default_godebug,
    })
}

/// Bytes prefixed by their length as an unsigned varint, and the bytes after them.
fn varint_bytes(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut length = 0usize;
    let mut shift = 0;
    for (i, &byte) in bytes.iter().enumerate().take(10) {
        length |= usize::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            let start = i + 1;
            let text = bytes.get(start..start + length)?;
            return Some((text, &bytes[start + length..]));
        }
        shift += 7;
    }
    None
}

/// Whether a Go program's default GOMAXPROCS follows its cgroup's quota: built by Go 1.25 or
/// later, and `containermaxprocs` not 0 (the environment's GODEBUG decides over the build's
/// default; the last setting in each wins, as the runtime parses them).
pub fn go_follows_quota(version: &str, default_godebug: &str, env_godebug: &str) -> bool {
    let minor = version
        .strip_prefix("go1.")
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|minor| minor.parse::<u32>().ok());
    if minor.is_none_or(|minor| minor < 25) {
        return false;
    }
    let setting = |godebug: &str| {
        godebug
            .split(',')
            .rev()
            .find_map(|kv| kv.trim().strip_prefix("containermaxprocs="))
            .map(str::to_string)
    };
    setting(env_godebug)
        .or_else(|| setting(default_godebug))
        .is_none_or(|value| value != "0")
}

/// Go's default GOMAXPROCS: the CPUs it may run on, and under a followed quota at most the
/// quota rounded up, 2 at least (runtime/cgroup_linux.go, `adjustCgroupGOMAXPROCS`).
pub fn go_default(cpus: u32, followed_quota: Option<f64>) -> u32 {
    match followed_quota {
        Some(quota) => cpus.min((quota.ceil() as u32).max(2)),
        None => cpus,
    }
}

#[cfg(test)]
mod tests;
