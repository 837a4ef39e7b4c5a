//! A JVM's threads from `jcmd PID Thread.print`: which process is a JVM, the dumps taken during
//! a step ([`ThreadDumps`]: over the JVM's attach socket, `super::attach`, or with `jcmd` when
//! that fails), and the dump's text read into [`ThreadStack`]s.
//!
//! Each dump stops the JVM at a safepoint, so a step takes few: the first [`FIRST_DUMP`] into
//! the step (the ramp is over, the load is full), then one every [`DUMP_EVERY`], at most
//! [`MOST_DUMPS`]. Each `jcmd` has [`JCMD_LIMIT`] to answer; a JVM that does not is a
//! [`ObservationNote::ToolFailed`]. A dump that was still running when the step ended is left
//! out (`jcmd` starts a JVM of its own first, ~0.3 s: the dump may show the pool drained after
//! the load).
//!
//! The dump's format across JDK versions (HotSpot's `JavaThread::print_on`):
//! - JDK 8-18: `"name" #16 daemon prio=5 os_prio=0 tid=0x00007f.. nid=0x293 runnable [0x..]`
//!   (`cpu=` and `elapsed=` from JDK 11); `nid` is the OS thread id in hex.
//! - JDK 19+: `"name" #16 [659] daemon prio=5 ... nid=659 runnable [0x..]`: the OS thread id in
//!   brackets, and `nid` in decimal.
//! - JVM-internal threads (`"VM Thread" os_prio=0 ... nid=0x1d8 runnable`) have no
//!   `java.lang.Thread.State` line and no frames: they are not Java threads and are left out.
//!
//! - JDK 21+: a carrier thread with a virtual thread mounted has `   Carrying virtual thread #N`
//!   in place of its state line, and shows the continuation it runs
//!   (`jdk.internal.vm.Continuation.run`), never the virtual thread's frames: its state is read
//!   as [`CARRYING`].
//!
//! Then `   java.lang.Thread.State: WAITING (parking)` and the frames,
//! `\tat java.util.concurrent.locks.LockSupport.park(java.base@17.0.15/LockSupport.java:211)`
//! (`(LockSupport.java:175)` or `(Native Method)` before JDK 9), innermost first.
use super::java_frames::read_stack;
use super::snapshots::{find_on_path, run_bounded, step_result, take_until_stopped, Schedule};
use super::virtual_threads::{dump_path, parse_virtual_threads, VirtualThreads};
use super::{StackOptions, StackTool, ThreadStack};
use crate::namespace::HostThreadIds;
use chokepoint_result::{ObservationNote, StackEvidence, StackSource};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::time::Duration;

/// When the first dump of a step is taken.
pub const FIRST_DUMP: Duration = Duration::from_millis(500);
/// Time between a step's dumps.
pub const DUMP_EVERY: Duration = Duration::from_millis(1500);
/// Dumps per step, at most.
pub const MOST_DUMPS: u32 = 3;
const DUMPS: Schedule = Schedule {
    first: FIRST_DUMP,
    every: DUMP_EVERY,
    most: MOST_DUMPS,
};
/// How long one `jcmd` may take: about 1 s for the JVM to answer, plus `jcmd`'s own start (a
/// JVM too: 0.2-0.4 s on a quiet machine, more than 1 s on a 2-core one at a load average of
/// 22, where a 1 s limit lost dumps of a JVM that answered).
pub const JCMD_LIMIT: Duration = Duration::from_secs(2);

/// How to get `jcmd`.
pub const JCMD_INSTALL: &str =
    "it comes with a JDK (not a JRE): e.g. apt-get install openjdk-17-jdk-headless";

/// Options for `jcmd`'s own JVM that make it start faster and use less CPU beside the target:
/// C1 only, the serial collector.
const JCMD_JVM_OPTIONS: &[&str] = &["-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"];

/// Whether process `pid` is a HotSpot JVM: its executable is called `java`, or it has
/// `libjvm.so` mapped (a JVM under another name: a launcher, an embedded one).
pub fn is_jvm(pid: i32) -> bool {
    let exe_is_java = std::fs::read_link(format!("/proc/{pid}/exe"))
        .ok()
        .and_then(|exe| exe.file_name().map(|name| name == "java"))
        .unwrap_or(false);
    exe_is_java
        || std::fs::read_to_string(format!("/proc/{pid}/maps"))
            .is_ok_and(|maps| maps.lines().any(|line| line.ends_with("/libjvm.so")))
}

/// The JVM to dump for the target rooted at `root`: the root itself, or else its first
/// descendant that is one (a JVM started by a shell script). With `forced` (`--jvm`) and no
/// JVM found, a note saying so: nothing is sent to a process that is not a JVM (the attach
/// mechanism's `SIGQUIT` would end it).
pub fn find_jvm(root: i32, forced: bool) -> Result<Option<i32>, ObservationNote> {
    if is_jvm(root) {
        return Ok(Some(root));
    }
    let tree = crate::tree::process_tree(root).unwrap_or_default();
    if let Some(jvm) = tree.into_iter().find(|&pid| pid != root && is_jvm(pid)) {
        return Ok(Some(jvm));
    }
    if forced {
        return Err(ObservationNote::ToolFailed {
            tool: "jcmd".into(),
            why: format!(
                "--jvm: process {root} is not a Java VM (no libjvm.so in /proc/{root}/maps, nor in its children's): no thread dumps"
            ),
        });
    }
    Ok(None)
}

/// Whether `jcmd` is on the PATH: a note saying how to install it when it is not.
pub fn jcmd_on_path() -> Result<(), ObservationNote> {
    match find_on_path("jcmd") {
        Some(_) => Ok(()),
        None => Err(ObservationNote::ToolMissing {
            tool: "jcmd".into(),
            install: JCMD_INSTALL.into(),
        }),
    }
}

/// Runs `command` within `limit`: its stdout when it succeeds, else why (`what` failed: the
/// first line of its output that says something).
pub(super) fn run_tool(
    command: &mut Command,
    what: &str,
    limit: Duration,
) -> Result<String, String> {
    let output = run_bounded(command, limit).map_err(|why| format!("{what}: {why}"))?;
    let out = String::from_utf8_lossy(&output.stdout).into_owned();
    if output.status.success() {
        return Ok(out);
    }
    let err = String::from_utf8_lossy(&output.stderr);
    let said = err
        .lines()
        .chain(out.lines())
        .map(str::trim)
        // Not a stack trace's line, nor jcmd's `PID:` heading.
        .find(|line| {
            !line.is_empty()
                && !line.starts_with("at ")
                && line.trim_end_matches(':').parse::<u32>().is_err()
        })
        .map_or_else(|| format!("it exited with {}", output.status), String::from);
    Err(format!("{what} failed: {said}"))
}

/// Runs `jcmd PID COMMAND...` within `limit` (see [`run_tool`]).
pub fn jcmd(pid: i32, command: &[&str], limit: Duration) -> Result<String, String> {
    let mut jcmd = Command::new("jcmd");
    jcmd.args(JCMD_JVM_OPTIONS)
        .arg(pid.to_string())
        .args(command);
    let ran = run_tool(&mut jcmd, command.first().copied().unwrap_or("jcmd"), limit);
    if ran.is_err() {
        // A jcmd killed while attaching leaves its empty trigger file in the JVM's working
        // folder (or its /tmp): it is ours to remove. It is named by the JVM's own PID, its
        // namespace's (JDK's VirtualMachineImpl reads the innermost of `NSpid`).
        let own_pid = crate::namespace::own_pid(pid).unwrap_or(pid);
        for folder in [format!("/proc/{pid}/cwd"), format!("/proc/{pid}/root/tmp")] {
            let trigger = std::path::Path::new(&folder).join(format!(".attach_pid{own_pid}"));
            if std::fs::metadata(&trigger).is_ok_and(|m| m.is_file() && m.len() == 0) {
                let _ = std::fs::remove_file(trigger);
            }
        }
    }
    ran
}

/// Runs the `jcmd` command `command` in JVM `pid` over its attach socket (`super::attach`: no
/// JVM of jcmd's own beside the target), or with `jcmd` when that fails for a reason `jcmd` may
/// not share; the output is the same.
pub fn attach_or_jcmd(pid: i32, command: &[&str], limit: Duration) -> Result<String, String> {
    match super::attach::jcmd_command(pid, &command.join(" "), limit) {
        Ok(text) => Ok(text),
        Err(super::attach::Failed::Retry(_)) => jcmd(pid, command, limit),
        Err(unasked) => Err(unasked.to_string()),
    }
}

/// The JVM's tool for the target rooted at `pid`, when the target is a JVM (or `--jvm` says it
/// is): thread dumps with `jcmd`, or a Flight Recorder recording with `--stacks jfr`. `None`
/// when it is no JVM.
pub(super) fn tool_for(
    pid: i32,
    options: &StackOptions,
) -> Option<Result<Box<dyn StackTool>, ObservationNote>> {
    let jvm = match find_jvm(pid, options.force_jvm) {
        Ok(jvm) => jvm?,
        Err(note) => return Some(Err(note)),
    };
    if let Err(note) = jcmd_on_path() {
        return Some(Err(note));
    }
    if options.jfr {
        return Some(Ok(Box::new(super::jfr::JfrRecording::new(jvm))));
    }
    Some(Ok(Box::new(ThreadDumps::new(jvm))))
}

/// One JVM's thread dumps during a step.
#[derive(Debug)]
pub struct ThreadDumps {
    pid: i32,
    /// Whether a JSON dump of this step showed virtual threads (the step's source then says so).
    saw_virtual_threads: std::cell::Cell<bool>,
    /// False once a JSON dump of this step listed no virtual thread at all: the JVM runs none,
    /// and the step's later dumps skip it (most JDK 21+ services use platform threads only).
    may_run_virtual_threads: std::cell::Cell<bool>,
}

impl ThreadDumps {
    /// Dumps of the JVM `pid`.
    pub fn new(pid: i32) -> ThreadDumps {
        ThreadDumps {
            pid,
            saw_virtual_threads: std::cell::Cell::new(false),
            may_run_virtual_threads: std::cell::Cell::new(true),
        }
    }

    fn dump(&self) -> Result<Vec<ThreadStack>, String> {
        // Over the attach socket first (no JVM of jcmd's own beside the target: see
        // `attach`), with jcmd when that fails; the dump's text is the same.
        let text = attach_or_jcmd(self.pid, &["Thread.print"], JCMD_LIMIT)
            .map_err(|why| format!("{why} (JVM {})", self.pid))?;
        let mut threads = parse_thread_dump(&text);
        // A JVM in a PID namespace of its own gives its namespace's thread ids as `nid`.
        let ids = HostThreadIds::of(self.pid);
        for thread in &mut threads {
            thread.tid = thread.tid.and_then(|tid| ids.host(tid));
        }
        if threads.is_empty() {
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            return Err(format!(
                "jcmd Thread.print listed no Java thread of JVM {} (it said: {first:?})",
                self.pid
            ));
        }
        if self.may_run_virtual_threads.get()
            && runtime_feature(&text).is_some_and(|feature| feature >= VIRTUAL_THREADS_FROM)
        {
            // A virtual thread that waits unpinned is in no text dump: the JSON one has it. A
            // JSON dump that fails leaves the platform threads, which are still evidence.
            let seen = self.virtual_threads().unwrap_or_default();
            self.may_run_virtual_threads.set(seen.any);
            if !seen.parked.is_empty() {
                self.saw_virtual_threads.set(true);
            }
            threads.extend(seen.parked);
        }
        Ok(threads)
    }

    /// The JVM's virtual threads, from a JSON thread dump it writes to its own `/tmp`, read
    /// through `/proc/PID/root` and removed ([`super::virtual_threads`]).
    fn virtual_threads(&self) -> Result<VirtualThreads, String> {
        static DUMPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let dump = DUMPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = dump_path(self.pid, dump);
        let command = ["Thread.dump_to_file", "-overwrite", "-format=json", &path];
        let written = attach_or_jcmd(self.pid, &command, JCMD_LIMIT);
        let seen = format!("/proc/{}/root{path}", self.pid);
        let text = std::fs::read_to_string(&seen);
        let _ = std::fs::remove_file(&seen);
        written?;
        Ok(parse_virtual_threads(
            &text.map_err(|e| format!("{seen}: {e}"))?,
        ))
    }
}

/// The first Java release whose JVM has virtual threads and JSON thread dumps (JEP 444).
const VIRTUAL_THREADS_FROM: u32 = 21;

/// The Java release of the JVM whose `Thread.print` this is, from its heading: `Full thread
/// dump OpenJDK 64-Bit Server VM (21.0.8+9-LTS mixed mode, sharing):` is 21. JDK 8 gives its
/// HotSpot version there (`25.412-b08`), read as 8.
fn runtime_feature(text: &str) -> Option<u32> {
    let heading = text.lines().find(|l| l.starts_with("Full thread dump"))?;
    let version = heading.split(" VM (").nth(1)?.split_whitespace().next()?;
    let feature: u32 = version
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()?;
    Some(if version.contains("-b") && feature == 25 {
        8
    } else {
        feature
    })
}

impl StackTool for ThreadDumps {
    fn watch_step(
        &mut self,
        stop: &mpsc::Receiver<()>,
        looked: &AtomicBool,
    ) -> (Option<StackEvidence>, Vec<ObservationNote>) {
        let (snapshots, failures) = take_until_stopped(stop, DUMPS, looked, || self.dump());
        let source = if self.saw_virtual_threads.get() {
            StackSource::JcmdVirtualThreads
        } else {
            StackSource::JcmdThreadPrint
        };
        step_result(source, "jcmd", &snapshots, &failures)
    }
}

/// The state a carrier thread is read in while a virtual thread is mounted on it: the dump
/// gives none (the mounted thread may run or be pinned in a wait; `/proc` tells which).
pub const CARRYING: &str = "CARRYING";

/// A thread of a dump as it is read: its header, then its state and frames.
struct Reading {
    name: String,
    tid: Option<i32>,
    state: Option<String>,
    frames: Vec<String>,
}

impl Reading {
    /// The thread, when it is a Java thread (JVM-internal ones have no `Thread.State`).
    fn into_thread(self) -> Option<ThreadStack> {
        let state = self.state?;
        let (waiting, frames) = read_stack(&state, &self.frames);
        Some(ThreadStack {
            name: self.name,
            tid: self.tid,
            state,
            waiting,
            frames,
        })
    }
}

/// The Java threads of a `Thread.print` dump (any JDK from 8 on), in the dump's order.
pub fn parse_thread_dump(text: &str) -> Vec<ThreadStack> {
    let mut threads = Vec::new();
    let mut current: Option<Reading> = None;
    for line in text.lines() {
        if line.starts_with('"') {
            threads.extend(current.take().and_then(Reading::into_thread));
            current = parse_header(line).map(|(name, tid)| Reading {
                name,
                tid,
                state: None,
                frames: Vec::new(),
            });
            continue;
        }
        let Some(reading) = current.as_mut() else {
            continue;
        };
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("java.lang.Thread.State:") {
            // `WAITING (parking)`: the state's name, its detail in brackets dropped.
            reading.state = rest.split_whitespace().next().map(String::from);
        } else if line.starts_with("Carrying virtual thread") {
            reading.state = Some(CARRYING.to_string());
        } else if let Some(frame) = line.strip_prefix("at ") {
            let frame = frame.split('(').next().unwrap_or(frame).trim();
            reading.frames.push(frame.to_string());
        }
    }
    threads.extend(current.and_then(Reading::into_thread));
    threads
}

/// A thread's header line: its name (between the first and the last quote) and its OS thread
/// id (`nid=0x293` hex, `nid=659` decimal, or JDK 19+'s `[659]`).
fn parse_header(line: &str) -> Option<(String, Option<i32>)> {
    let close = line.rfind('"').filter(|&close| close > 0)?;
    let name = line[1..close].to_string();
    let attributes = &line[close + 1..];
    let nid = attributes
        .split_whitespace()
        .find_map(|field| field.strip_prefix("nid="))
        .and_then(|nid| match nid.strip_prefix("0x") {
            Some(hex) => i32::from_str_radix(hex, 16).ok(),
            None => nid.parse().ok(),
        });
    let bracketed = attributes.split_whitespace().find_map(|field| {
        field
            .strip_prefix('[')
            .and_then(|f| f.strip_suffix(']'))
            .filter(|f| !f.starts_with("0x"))
            .and_then(|f| f.parse().ok())
    });
    Some((name, nid.or(bracketed)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stacks::test_support::data;
    use chokepoint_result::WaitKind;

    fn thread<'t>(threads: &'t [ThreadStack], name: &str) -> &'t ThreadStack {
        threads
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("no thread {name:?}"))
    }

    #[test]
    fn jdk21_carriers_of_pinned_virtual_threads_are_kept_carrying_a_continuation() {
        // jcmd Thread.print of tests/targets/java-virtual-threads (JDK 21) at 8 clients: both
        // carriers of this 2-core machine hold a virtual thread pinned in its call.
        let threads = parse_thread_dump(&data("jvm", "jdk21-pinned-carriers.txt"));
        let carriers: Vec<&ThreadStack> = threads
            .iter()
            .filter(|t| t.name.starts_with("ForkJoinPool-1-worker-"))
            .collect();
        assert_eq!(carriers.len(), 2);
        for carrier in carriers {
            assert_eq!(carrier.state, CARRYING);
            assert_eq!(carrier.waiting, WaitKind::Other);
            assert_eq!(carrier.frames, vec!["jdk.internal.vm.Continuation.run"]);
        }
    }

    #[test]
    fn the_twins_actor_pool_under_load_waits_downstream_in_its_blocking_call() {
        // jcmd Thread.print of examples/jvm/BlockingDemo.java (JDK 17) at 40 clients on
        // /actors, a mock of 150 ms downstream.
        let threads = parse_thread_dump(&data("jvm", "jdk17-twin-actors.txt"));
        let actors: Vec<&ThreadStack> = threads
            .iter()
            .filter(|t| t.name.starts_with("actor-pool-"))
            .collect();
        assert_eq!(actors.len(), 20);
        let one = thread(&threads, "actor-pool-1");
        assert_eq!(one.tid, Some(0x293));
        assert_eq!(one.state, "RUNNABLE");
        assert_eq!(one.waiting, WaitKind::Downstream);
        assert_eq!(
            one.frames,
            [
                "java.net.HttpURLConnection.getResponseCode",
                "BlockingDemo.blockingCall"
            ]
        );
        let downstream = actors
            .iter()
            .filter(|t| t.waiting == WaitKind::Downstream)
            .count();
        assert!(
            downstream >= 18,
            "{downstream} of 20 in the downstream call"
        );
        // The server's dispatcher waits for connections; the JVM's own threads are no pool.
        let dispatcher = thread(&threads, "HTTP-Dispatcher");
        assert_eq!(dispatcher.waiting, WaitKind::Idle);
        assert_eq!(dispatcher.frames, ["sun.nio.ch.SelectorImpl.select"]);
        assert!(threads.iter().all(|t| t.name != "VM Thread"));
        assert_eq!(
            thread(&threads, "Reference Handler").waiting,
            WaitKind::Idle
        );
    }

    #[test]
    fn the_twins_cpu_pool_is_read_the_same_way() {
        let threads = parse_thread_dump(&data("jvm", "jdk17-twin-global.txt"));
        let pool: Vec<&ThreadStack> = threads
            .iter()
            .filter(|t| t.name.starts_with("cpu-pool-"))
            .collect();
        assert!(!pool.is_empty());
        assert!(pool.iter().all(
            |t| t.waiting == WaitKind::Downstream && t.frames[1] == "BlockingDemo.blockingCall"
        ));
        // Idle pools of the twin (the routes not swept) wait for tasks.
        let idle = thread(&threads, "actor-pool-1");
        assert_eq!(idle.waiting, WaitKind::Idle);
        assert_eq!(
            idle.frames,
            ["java.util.concurrent.ThreadPoolExecutor.getTask"]
        );
    }

    #[test]
    fn httpclient_send_parks_on_a_future_and_is_read_as_a_downstream_call() {
        // tests/targets/java-shed with --downstream (HttpClient.send on 30 permits of a
        // 256-thread pool), JDK 17, 40 clients.
        let threads = parse_thread_dump(&data("jvm", "jdk17-shed-httpclient.txt"));
        let senders: Vec<&ThreadStack> = threads
            .iter()
            .filter(|t| {
                t.frames.first().map(String::as_str) == Some("java.net.http.HttpClient.send")
            })
            .collect();
        assert!(!senders.is_empty());
        for sender in &senders {
            assert_eq!(sender.state, "WAITING");
            assert_eq!(sender.waiting, WaitKind::Downstream);
            assert_eq!(
                sender.frames,
                ["java.net.http.HttpClient.send", "ShedServer.work"]
            );
        }
        let selector = thread(&threads, "HttpClient-1-SelectorManager");
        assert_eq!(selector.waiting, WaitKind::Downstream);
        let workers = threads
            .iter()
            .filter(|t| t.name.starts_with("pool-1-thread-"));
        assert_eq!(workers.clone().count(), 256);
        assert!(workers.clone().any(|t| t.waiting == WaitKind::Idle));
    }

    #[test]
    fn locks_permits_sleeps_and_spins_are_told_apart() {
        // tests/data/jvm/Waits.java's threads, each waiting one way (JDK 17).
        let threads = parse_thread_dump(&data("jvm", "jdk17-waits.txt"));
        let expect: &[(&str, &str, WaitKind, &[&str])] = &[
            (
                "holder-1",
                "TIMED_WAITING",
                WaitKind::Sleep,
                &["java.lang.Thread.sleep", "Waits.holdMonitor"],
            ),
            (
                "monitor-waiter-1",
                "BLOCKED",
                WaitKind::Lock,
                &["Waits.enterMonitor"],
            ),
            (
                "lock-waiter-2",
                "WAITING",
                WaitKind::Lock,
                &[
                    "java.util.concurrent.locks.ReentrantLock.lock",
                    "Waits.takeLock",
                ],
            ),
            (
                "permit-waiter-1",
                "WAITING",
                WaitKind::Lock,
                &["java.util.concurrent.Semaphore.acquire", "Waits.takePermit"],
            ),
            // A lambda's body is the service's code when it is the first.
            (
                "sleeper-1",
                "TIMED_WAITING",
                WaitKind::Sleep,
                &["java.lang.Thread.sleep", "Waits.lambda$main$4"],
            ),
            (
                "idle-worker-3",
                "WAITING",
                WaitKind::Idle,
                &["java.util.concurrent.ThreadPoolExecutor.getTask"],
            ),
            ("spinner-1", "RUNNABLE", WaitKind::Running, &["Waits.spin"]),
            (
                "caller-1",
                "WAITING",
                WaitKind::Downstream,
                &["java.net.http.HttpClient.send", "Waits.callSlowServer"],
            ),
            (
                "main",
                "TIMED_WAITING",
                WaitKind::Sleep,
                &["java.lang.Thread.sleep", "Waits.main"],
            ),
        ];
        for (name, state, waiting, frames) in expect {
            let seen = thread(&threads, name);
            assert_eq!(
                (seen.state.as_str(), seen.waiting, seen.frames.clone()),
                (
                    *state,
                    *waiting,
                    frames.iter().map(|f| f.to_string()).collect()
                ),
                "{name}"
            );
        }
    }

    #[test]
    fn headers_of_every_jdk_give_the_name_and_the_os_thread_id() {
        // (header line, name, OS thread id)
        let table: &[(&str, &str, Option<i32>)] = &[
            // JDK 8: no cpu=/elapsed=, hex nid.
            (
                r#""pool-1-thread-1" #9 prio=5 os_prio=0 tid=0x00007f3c6c0d8800 nid=0x2b0f waiting on condition [0x00007f3c5a1f6000]"#,
                "pool-1-thread-1",
                Some(0x2b0f),
            ),
            // JDK 7: no #N, no os_prio.
            (
                r#""main" prio=10 tid=0x00007f8c48009800 nid=0x6f3 runnable [0x00007f8c50fd6000]"#,
                "main",
                Some(0x6f3),
            ),
            // JDK 17.
            (
                r#""actor-pool-1" #16 daemon prio=5 os_prio=0 cpu=19.46ms elapsed=2.28s tid=0x00007fd494022270 nid=0x293 runnable  [0x00007fd4aaffd000]"#,
                "actor-pool-1",
                Some(0x293),
            ),
            // JDK 21: [OS thread id] after #N, decimal nid.
            (
                r#""main" #1 [8707] prio=5 os_prio=31 cpu=207.44ms elapsed=16.32s tid=0x0000000132808200 nid=8707 waiting on condition  [0x000000016fcda000]"#,
                "main",
                Some(8707),
            ),
            (
                r#""Reference Handler" #9 [1267612] daemon prio=10 os_prio=0 cpu=0.10ms elapsed=1.24s tid=0x00007f2a1c13c800 nid=1267612 waiting on condition  [0x00007f29f8afe000]"#,
                "Reference Handler",
                Some(1267612),
            ),
            // A name with quotes and brackets in it.
            (
                r#""worker "a" [1]" #20 prio=5 os_prio=0 tid=0x00007f nid=0x10 runnable"#,
                r#"worker "a" [1]"#,
                Some(0x10),
            ),
            // JVM-internal threads.
            (
                r#""GC Thread#0" os_prio=0 cpu=5.05ms elapsed=8.61s tid=0x00007f14640419b0 nid=0x22d3 runnable  "#,
                "GC Thread#0",
                Some(0x22d3),
            ),
        ];
        for (line, name, tid) in table {
            assert_eq!(parse_header(line), Some((name.to_string(), *tid)), "{line}");
        }
    }

    #[test]
    fn a_jdk_21_dump_is_read_whole() {
        // The JDK 21 form (as HotSpot prints it: [tid], decimal nid, Thread.sleep0).
        let dump = "\
12345:
2024-06-04 02:09:09
Full thread dump OpenJDK 64-Bit Server VM (21.0.2+13-58 mixed mode, sharing):

\"worker-1\" #31 [4242] daemon prio=5 os_prio=0 cpu=1.21ms elapsed=266.12s tid=0x0000000126089200 nid=4242 waiting on condition  [0x00000002b1a96000]
   java.lang.Thread.State: TIMED_WAITING (sleeping)
\tat java.lang.Thread.sleep0(java.base@21.0.2/Native Method)
\tat java.lang.Thread.sleep(java.base@21.0.2/Thread.java:509)
\tat Poller.poll(Poller.java:12)
\tat java.lang.Thread.runWith(java.base@21.0.2/Thread.java:1596)
\tat java.lang.Thread.run(java.base@21.0.2/Thread.java:1583)

\"VM Thread\" os_prio=0 cpu=3.41ms elapsed=8.59s tid=0x00007f14640f2450 nid=4100 runnable

JNI global refs: 15, weak refs: 0
";
        let threads = parse_thread_dump(dump);
        assert_eq!(
            threads,
            vec![ThreadStack {
                name: "worker-1".into(),
                tid: Some(4242),
                state: "TIMED_WAITING".into(),
                waiting: WaitKind::Sleep,
                frames: vec!["java.lang.Thread.sleep".into(), "Poller.poll".into()],
            }]
        );
    }

    #[test]
    fn the_dumps_heading_gives_the_java_release() {
        // (the heading, the release)
        let table = [
            ("Full thread dump OpenJDK 64-Bit Server VM (21.0.8+9-LTS mixed mode, sharing):", Some(21)),
            ("Full thread dump OpenJDK 64-Bit Server VM (17.0.15+6-Debian-1deb12u1 mixed mode, sharing):", Some(17)),
            ("Full thread dump Java HotSpot(TM) 64-Bit Server VM (25.0.1+8-LTS-27 mixed mode, sharing):", Some(25)),
            ("Full thread dump OpenJDK 64-Bit Server VM (25.412-b08 mixed mode):", Some(8)),
            ("Full thread dump OpenJDK 64-Bit Server VM (11.0.21+9-post-Debian-1deb11u1 mixed mode):", Some(11)),
            ("no heading", None),
        ];
        for (heading, release) in table {
            let text = format!("2026-11-27 21:30:00\n{heading}\n");
            assert_eq!(runtime_feature(&text), release, "{heading}");
        }
    }

    #[test]
    fn text_that_is_no_dump_has_no_threads() {
        assert!(parse_thread_dump("").is_empty());
        assert!(parse_thread_dump(
            "4242:\njava.lang.IllegalArgumentException: Unknown diagnostic command\n"
        )
        .is_empty());
        assert!(parse_thread_dump("\"unterminated").is_empty());
    }
}
