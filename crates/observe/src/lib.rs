//! The target (or chokepoint itself) seen from outside, through `/proc`.
//!
//! For now one observation: CPU time. A [`CpuMeter`] reads the CPU seconds a process has used
//! (or only those of its threads whose names start with a prefix, which is how chokepoint tells
//! its load generator's threads apart from an in-process demo service), and turns two readings
//! into a share of the machine's cores. The load engine uses it on its own threads to say when
//! it is the bottleneck (seed 001); the sweep uses it on the target's process.
#![deny(missing_docs)]

use std::time::Instant;

/// Which CPU time to count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuScope {
    /// All threads of a process.
    Process(i32),
    /// Only the threads of a process whose name (`comm`, at most 15 bytes) starts with a prefix.
    Threads {
        /// The process id.
        pid: i32,
        /// The thread-name prefix.
        prefix: String,
    },
    /// All threads of a process except those whose names start with one of the prefixes (an
    /// in-process target: everything but chokepoint's own generator and mock threads).
    ThreadsExcept {
        /// The process id.
        pid: i32,
        /// Thread-name prefixes to leave out.
        prefixes: Vec<String>,
    },
}

impl CpuScope {
    /// This process.
    pub fn this_process() -> CpuScope {
        CpuScope::Process(std::process::id() as i32)
    }

    /// The threads of this process whose names start with `prefix`.
    pub fn own_threads(prefix: &str) -> CpuScope {
        CpuScope::Threads {
            pid: std::process::id() as i32,
            prefix: prefix.to_string(),
        }
    }
}

/// Why a CPU reading failed.
#[derive(Debug)]
pub struct ObserveError(String);

impl std::fmt::Display for ObserveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ObserveError {}

/// CPU seconds (user + system) used so far by the threads in `scope`.
///
/// Threads that ended are not counted in [`CpuScope::Threads`] (their time is gone from
/// `/proc`), so a meter over a thread prefix suits long-lived worker threads.
pub fn cpu_seconds(scope: &CpuScope) -> Result<f64, ObserveError> {
    let ticks = procfs::ticks_per_second() as f64;
    let pid = match scope {
        CpuScope::Process(pid)
        | CpuScope::Threads { pid, .. }
        | CpuScope::ThreadsExcept { pid, .. } => *pid,
    };
    let process = procfs::process::Process::new(pid)
        .map_err(|e| ObserveError(format!("cannot read /proc/{pid}: {e}")))?;
    match scope {
        CpuScope::Process(_) => {
            let stat = process
                .stat()
                .map_err(|e| ObserveError(format!("cannot read /proc/{pid}/stat: {e}")))?;
            Ok((stat.utime + stat.stime) as f64 / ticks)
        }
        CpuScope::Threads { prefix, .. } => {
            thread_ticks(&process, |name| name.starts_with(prefix.as_str())).map(|t| t / ticks)
        }
        CpuScope::ThreadsExcept { prefixes, .. } => thread_ticks(&process, |name| {
            !prefixes.iter().any(|p| name.starts_with(p.as_str()))
        })
        .map(|t| t / ticks),
    }
}

/// CPU ticks of the threads of `process` whose names pass `keep`.
fn thread_ticks(
    process: &procfs::process::Process,
    keep: impl Fn(&str) -> bool,
) -> Result<f64, ObserveError> {
    let tasks = process
        .tasks()
        .map_err(|e| ObserveError(format!("cannot list /proc/{}/task: {e}", process.pid)))?;
    // A thread may end between listing and reading: skip it.
    let total: u64 = tasks
        .flatten()
        .filter_map(|task| task.stat().ok())
        .filter(|stat| keep(&stat.comm))
        .map(|stat| stat.utime + stat.stime)
        .sum();
    Ok(total as f64)
}

/// Busy and total CPU ticks of the whole machine since boot (`/proc/stat`), all cores together.
pub fn machine_ticks() -> Result<(u64, u64), ObserveError> {
    use procfs::CurrentSI;
    let stats = procfs::KernelStats::current()
        .map_err(|e| ObserveError(format!("cannot read /proc/stat: {e}")))?;
    let t = &stats.total;
    let idle = t.idle + t.iowait.unwrap_or(0);
    let busy = t.user
        + t.nice
        + t.system
        + t.irq.unwrap_or(0)
        + t.softirq.unwrap_or(0)
        + t.steal.unwrap_or(0);
    Ok((busy, busy + idle))
}

/// Measures how busy the whole machine's CPU was (every process, not only the target), so a
/// finding can tell the target's CPU limit from a machine kept busy by others.
#[derive(Debug, Clone)]
pub struct MachineCpuMeter {
    start: (u64, u64),
}

impl MachineCpuMeter {
    /// Starts measuring now.
    pub fn start() -> Result<MachineCpuMeter, ObserveError> {
        Ok(MachineCpuMeter {
            start: machine_ticks()?,
        })
    }

    /// Percent of all cores busy since the start (100 = every core busy all the time).
    pub fn percent(&self) -> Result<f64, ObserveError> {
        let (busy, total) = machine_ticks()?;
        let busy = busy.saturating_sub(self.start.0) as f64;
        let total = total.saturating_sub(self.start.1) as f64;
        Ok(if total > 0.0 {
            100.0 * busy / total
        } else {
            0.0
        })
    }
}

/// The number of cores this process may run on.
pub fn available_cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// Measures the CPU share of a scope between its creation and each [`CpuMeter::percent`] call.
#[derive(Debug, Clone)]
pub struct CpuMeter {
    scope: CpuScope,
    start_cpu_s: f64,
    start: Instant,
}

impl CpuMeter {
    /// Starts measuring now.
    pub fn start(scope: CpuScope) -> Result<CpuMeter, ObserveError> {
        let start_cpu_s = cpu_seconds(&scope)?;
        Ok(CpuMeter {
            scope,
            start_cpu_s,
            start: Instant::now(),
        })
    }

    /// CPU used since the start as a percentage of `cores` fully busy
    /// (100 = all `cores` busy the whole time).
    pub fn percent(&self, cores: usize) -> Result<f64, ObserveError> {
        let used = cpu_seconds(&self.scope)? - self.start_cpu_s;
        let wall = self.start.elapsed().as_secs_f64();
        Ok(share_percent(used, wall, cores))
    }

    /// Starts a new measuring window now.
    pub fn restart(&mut self) -> Result<(), ObserveError> {
        self.start_cpu_s = cpu_seconds(&self.scope)?;
        self.start = Instant::now();
        Ok(())
    }
}

/// `cpu_s` seconds of CPU over `wall_s` seconds as a percentage of `cores` cores.
pub fn share_percent(cpu_s: f64, wall_s: f64, cores: usize) -> f64 {
    if wall_s <= 0.0 || cores == 0 {
        return 0.0;
    }
    (100.0 * cpu_s / (wall_s * cores as f64)).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machine_is_at_least_as_busy_as_a_spinning_thread_makes_it() {
        let meter = MachineCpuMeter::start().unwrap();
        let until = Instant::now() + std::time::Duration::from_millis(300);
        let mut x = 0u64;
        while Instant::now() < until {
            x = x.wrapping_add(1);
        }
        let busy = meter.percent().unwrap();
        // One of the machine's cores spun the whole time (ticks are 10 ms, so leave room).
        let one_core = 100.0 / available_cores().max(1) as f64;
        assert!(busy >= 0.5 * one_core && busy <= 100.0, "{busy}% (x = {x})");
    }

    #[test]
    fn share_is_relative_to_cores() {
        assert_eq!(share_percent(1.0, 1.0, 1), 100.0);
        assert_eq!(share_percent(1.0, 1.0, 2), 50.0);
        assert_eq!(share_percent(0.5, 0.0, 2), 0.0);
    }

    #[test]
    fn a_busy_named_thread_is_counted_and_others_are_not() {
        let busy = std::thread::Builder::new()
            .name("cp-test-busy".into())
            .spawn(|| {
                let until = Instant::now() + std::time::Duration::from_millis(300);
                let mut x = 0u64;
                while Instant::now() < until {
                    x = x.wrapping_add(1);
                }
                x
            })
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        let named = cpu_seconds(&CpuScope::own_threads("cp-test-busy")).unwrap();
        let nobody = cpu_seconds(&CpuScope::own_threads("no-such-thread")).unwrap();
        let all_but_busy = cpu_seconds(&CpuScope::ThreadsExcept {
            pid: std::process::id() as i32,
            prefixes: vec!["cp-test-busy".into()],
        })
        .unwrap();
        busy.join().unwrap();
        assert!(named > 0.0, "the spinning thread used {named} s");
        assert_eq!(nobody, 0.0);
        let whole = cpu_seconds(&CpuScope::this_process()).unwrap();
        assert!(whole >= named);
        assert!(all_but_busy < whole, "{all_but_busy} of {whole} s");
    }
}
