//! CPU time: of a process, of its whole tree, of some of its threads, of a group of threads that
//! come and go (the load generator's), and of the whole machine; and two readings turned into a
//! share of the cores.
use crate::tree::process_tree;
use crate::ObserveError;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Which CPU time to count.
#[derive(Debug, Clone, PartialEq)]
pub enum CpuScope {
    /// All threads of one process.
    Process(i32),
    /// Processes (the roots) and all their descendants, listed again at every reading (workers
    /// come and go). Children that ended and were reaped inside the tree still count: their
    /// time is in their parent's `cutime`/`cstime`.
    Tree(Vec<i32>),
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
    /// The threads that joined a [`ThreadGroupCpu`], ended ones included.
    Group(ThreadGroupCpu),
}

impl CpuScope {
    /// This process.
    pub fn this_process() -> CpuScope {
        CpuScope::Process(std::process::id() as i32)
    }

    /// The processes whose threads the scope counts now (a tree's, listed from `/proc`; this
    /// process for a group).
    pub fn processes(&self) -> Vec<i32> {
        match self {
            CpuScope::Process(pid)
            | CpuScope::Threads { pid, .. }
            | CpuScope::ThreadsExcept { pid, .. } => vec![*pid],
            CpuScope::Tree(roots) => roots
                .iter()
                .flat_map(|&root| process_tree(root).unwrap_or_default())
                .collect(),
            CpuScope::Group(_) => vec![std::process::id() as i32],
        }
    }

    /// The threads of this process whose names start with `prefix`.
    pub fn own_threads(prefix: &str) -> CpuScope {
        CpuScope::Threads {
            pid: std::process::id() as i32,
            prefix: prefix.to_string(),
        }
    }
}

/// CPU seconds (user + system) used so far by the threads in `scope`.
///
/// Threads that ended are not counted in [`CpuScope::Threads`] and [`CpuScope::ThreadsExcept`]
/// (their time is gone from `/proc`); [`CpuScope::Group`] keeps it.
pub fn cpu_seconds(scope: &CpuScope) -> Result<f64, ObserveError> {
    let ticks = procfs::ticks_per_second() as f64;
    let pid = match scope {
        CpuScope::Group(group) => return group.seconds(),
        CpuScope::Tree(roots) => {
            let mut tree = Vec::new();
            for root in roots {
                tree.extend(process_tree(*root)?);
            }
            tree.sort_unstable();
            tree.dedup();
            let total: u64 = tree
                .iter()
                .filter_map(|pid| procfs::process::Process::new(*pid).ok()?.stat().ok())
                .map(|stat| {
                    stat.utime + stat.stime + stat.cutime.max(0) as u64 + stat.cstime.max(0) as u64
                })
                .sum();
            return Ok(total as f64 / ticks);
        }
        CpuScope::Process(pid)
        | CpuScope::Threads { pid, .. }
        | CpuScope::ThreadsExcept { pid, .. } => *pid,
    };
    let process = procfs::process::Process::new(pid)
        .map_err(|e| ObserveError(format!("cannot read /proc/{pid}: {e}")))?;
    match scope {
        CpuScope::Threads { prefix, .. } => {
            thread_ticks(&process, |name| name.starts_with(prefix.as_str())).map(|t| t / ticks)
        }
        CpuScope::ThreadsExcept { prefixes, .. } => thread_ticks(&process, |name| {
            !prefixes.iter().any(|p| name.starts_with(p.as_str()))
        })
        .map(|t| t / ticks),
        _ => {
            let stat = process
                .stat()
                .map_err(|e| ObserveError(format!("cannot read /proc/{pid}/stat: {e}")))?;
            Ok((stat.utime + stat.stime) as f64 / ticks)
        }
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

/// The CPU time of a set of this process's threads that start and end at will (the load
/// generator's control and worker threads): each thread [`join`](ThreadGroupCpu::join)s the
/// group when it starts, and the [`GroupMember`] it gets banks the thread's CPU time when it
/// is dropped, just before the thread ends. The group's time is what it banked plus what its
/// live threads have used, so it holds however long the threads lived (a meter over thread
/// names in `/proc` loses the time of every thread that ended).
#[derive(Debug, Clone, Default)]
pub struct ThreadGroupCpu {
    inner: Arc<Mutex<GroupLedger>>,
}

#[derive(Debug, Default)]
struct GroupLedger {
    live: Vec<i32>,
    banked_s: f64,
}

impl PartialEq for ThreadGroupCpu {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

/// A thread's membership of a [`ThreadGroupCpu`]; keep it alive for the thread's whole life.
#[derive(Debug)]
pub struct GroupMember {
    group: ThreadGroupCpu,
    tid: i32,
}

impl ThreadGroupCpu {
    /// An empty group.
    pub fn new() -> ThreadGroupCpu {
        ThreadGroupCpu::default()
    }

    /// Adds the calling thread to the group until the returned member is dropped.
    pub fn join(&self) -> GroupMember {
        let tid = current_tid();
        self.ledger().live.push(tid);
        GroupMember {
            group: self.clone(),
            tid,
        }
    }

    /// CPU seconds the group's threads have used, ended threads included.
    pub fn seconds(&self) -> Result<f64, ObserveError> {
        // Under the lock: a thread cannot leave (move its time from live to banked) meanwhile.
        let ledger = self.ledger();
        let live: f64 = ledger
            .live
            .iter()
            .filter_map(|tid| own_thread_seconds(*tid).ok())
            .sum();
        Ok(ledger.banked_s + live)
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, GroupLedger> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Drop for GroupMember {
    fn drop(&mut self) {
        let mut ledger = self.group.ledger();
        ledger.banked_s += own_thread_seconds(self.tid).unwrap_or(0.0);
        ledger.live.retain(|tid| *tid != self.tid);
    }
}

/// The calling thread's id (its `/proc/self/task` entry).
fn current_tid() -> i32 {
    // SAFETY: gettid has no preconditions and cannot fail.
    unsafe { libc::gettid() }
}

/// CPU seconds used by thread `tid` of this process.
fn own_thread_seconds(tid: i32) -> Result<f64, ObserveError> {
    let stat = procfs::process::Process::myself()
        .and_then(|me| me.task_from_tid(tid))
        .and_then(|task| task.stat())
        .map_err(|e| ObserveError(format!("cannot read /proc/self/task/{tid}/stat: {e}")))?;
    Ok((stat.utime + stat.stime) as f64 / procfs::ticks_per_second() as f64)
}

/// CPU ticks of the whole machine since boot (`/proc/stat`), all cores together.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MachineTicks {
    /// Busy at any priority: user, nice, system, interrupts, steal.
    pub busy: u64,
    /// Of `busy`, user time at a positive nice value (the `nice` column).
    pub niced: u64,
    /// Busy and idle (idle, iowait).
    pub total: u64,
}

/// The machine's CPU ticks since boot.
pub fn machine_ticks() -> Result<MachineTicks, ObserveError> {
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
    Ok(MachineTicks {
        busy,
        niced: t.nice,
        total: busy + idle,
    })
}

/// How busy the whole machine was over a while, percent of all its cores (100 = every core
/// busy all the time).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MachineShare {
    /// Busy at any priority.
    pub busy_pct: f64,
    /// Of `busy_pct`, work at a positive nice value.
    pub niced_pct: f64,
}

/// Measures how busy the whole machine's CPU was (every process, not only the target), so a
/// finding can tell the target's CPU limit from a machine kept busy by others.
#[derive(Debug, Clone)]
pub struct MachineCpuMeter {
    start: MachineTicks,
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
        Ok(self.share()?.busy_pct)
    }

    /// The machine's busy and niced shares since the start.
    pub fn share(&self) -> Result<MachineShare, ObserveError> {
        let now = machine_ticks()?;
        let total = now.total.saturating_sub(self.start.total) as f64;
        let pct = |ticks: u64| {
            if total > 0.0 {
                100.0 * ticks as f64 / total
            } else {
                0.0
            }
        };
        Ok(MachineShare {
            busy_pct: pct(now.busy.saturating_sub(self.start.busy)),
            niced_pct: pct(now.niced.saturating_sub(self.start.niced)),
        })
    }
}

/// The number of cores this process may run on.
pub fn available_cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// The number of cores of the machine (online), whatever this process may use.
pub fn machine_cores() -> usize {
    use procfs::CurrentSI;
    procfs::KernelStats::current()
        .map(|stats| stats.cpu_time.len())
        .ok()
        .filter(|n| *n > 0)
        .unwrap_or_else(available_cores)
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
    use std::time::Duration;

    fn spin(for_: Duration) -> u64 {
        let until = Instant::now() + for_;
        let mut x = 0u64;
        while Instant::now() < until {
            x = x.wrapping_add(1);
        }
        x
    }

    #[test]
    fn the_machine_is_at_least_as_busy_as_a_spinning_thread_makes_it() {
        let meter = MachineCpuMeter::start().unwrap();
        let x = spin(Duration::from_millis(300));
        let busy = meter.percent().unwrap();
        // One of the machine's cores spun the whole time (ticks are 10 ms, so leave room).
        let one_core = 100.0 / machine_cores().max(1) as f64;
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
            .spawn(|| spin(Duration::from_millis(300)))
            .unwrap();
        std::thread::sleep(Duration::from_millis(200));
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

    /// This thread's CPU clock, in seconds (the kernel's own count, not /proc's ticks).
    fn thread_clock_s() -> f64 {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid pointer to a timespec we own.
        assert_eq!(
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) },
            0
        );
        now.tv_sec as f64 + now.tv_nsec as f64 / 1e9
    }

    #[test]
    fn a_group_keeps_the_time_of_threads_that_ended() {
        let group = ThreadGroupCpu::new();
        let spinners: Vec<_> = (0..2)
            .map(|_| {
                let group = group.clone();
                std::thread::spawn(move || {
                    let _member = group.join();
                    spin(Duration::from_millis(300));
                    thread_clock_s()
                })
            })
            .collect();
        let used: f64 = spinners.into_iter().map(|s| s.join().unwrap()).sum();
        // Both threads are gone from /proc; the CPU their own clocks counted is still the
        // group's (to a clock tick per thread).
        let seconds = group.seconds().unwrap();
        let tick = 1.0 / procfs::ticks_per_second() as f64;
        assert!(used > 0.05, "the spinners ran {used} s");
        assert!(
            (seconds - used).abs() <= 2.0 * tick + 0.002,
            "the group kept {seconds} s of the {used} s its threads used"
        );
        assert!(group.ledger().live.is_empty());
    }
}
