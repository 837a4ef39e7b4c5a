//! The harness of the sweeps of real targets (`tests/sweeps/targets.rs`, `tests/sweeps/process_trees.rs`):
//! launching a target of `tests/targets/` and reading its port, a mock, the sweeps' turns,
//! and the checks on a finding.
#![allow(dead_code)] // each test binary uses its own part of it

pub mod netns;
pub mod postgres;

use chokepoint_experiment::{sweep, SweepConfig, SweepEvent};
use chokepoint_mock::{MockConfig, RunningMock};
use chokepoint_observe::CpuScope;
use chokepoint_result::{Diagnosis, Kind, Place, PoolStacks, Step, SweepResult, WaitKind};
use chokepoint_testkit::Server;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Condvar, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Measured length of each step of the explicit sweeps.
pub const STEP: Duration = Duration::from_secs(2);
/// Measured length of each step of the adaptive sweep: it has fewer steps past the knee to
/// average out a noisy machine than the explicit lists.
pub const ADAPTIVE_STEP: Duration = Duration::from_secs(3);
/// How long a target may take to print its port (the JVM compiles the source first).
pub const STARTUP_LIMIT: Duration = Duration::from_secs(120);
/// The downstream delay of the mock that the Go and thread-pool targets call.
pub const DOWNSTREAM_DELAY: Duration = Duration::from_millis(50);

/// The sweeps' turns. A sweep that measures the machine (its CPU, its timing, a warm-up) runs
/// alone: [`one_at_a_time`]. A sweep whose figures come from a downstream's delay and the
/// target's connections and threads, and that leaves the machine mostly idle (the busy shares
/// of `SWEEP_TIMES`), may run beside one other such sweep: [`beside_one_other`]. A sweep that
/// also leaves it nearly idle over its turn (a quarter of the machine or less on average, beside
/// a partner, in session 28's clean-clone run), may run beside two: [`beside_two_others`].
/// `scripts/test.sh` allows pairs (`SWEEPS_MAY_PAIR`) while its other lane builds and lints at
/// nice 19, not while that lane's tests run at nice 0; then one sweep runs at a time, light or
/// not. A sweeps binary run by hand runs one at a time.
static TURNS: Turns = Turns {
    held: Mutex::new(TurnsHeld {
        beside: 0,
        alone: false,
        alone_waiting: 0,
    }),
    changed: Condvar::new(),
};

/// The file whose presence allows two [`beside_one_other`] turns at once.
pub const SWEEPS_MAY_PAIR: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/sweeps-may-pair");

struct Turns {
    held: Mutex<TurnsHeld>,
    changed: Condvar,
}

struct TurnsHeld {
    /// Turns held beside another (light ones among them).
    beside: u32,
    /// Whether a turn is held alone.
    alone: bool,
    /// Turns waiting to be alone: no new turn beside another starts before them.
    alone_waiting: u32,
}

/// How a turn shares the machine.
#[derive(Clone, Copy, PartialEq)]
enum Share {
    Alone,
    Beside,
    /// Beside up to two others: one more than a [`Share::Beside`] turn may start beside.
    Light,
}

impl Turns {
    fn take(&self, share: Share) {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if share == Share::Alone {
            held.alone_waiting += 1;
            while held.alone || held.beside > 0 {
                held = self.changed.wait(held).unwrap_or_else(|p| p.into_inner());
            }
            held.alone_waiting -= 1;
            held.alone = true;
        } else {
            loop {
                let pairs = Path::new(SWEEPS_MAY_PAIR).exists();
                // Not beside the other lane's tests at nice 0: one light sweep there made
                // one of them start a load shard 0.21 s late (session 28).
                let room = match (pairs, share) {
                    (true, Share::Light) => 3,
                    (true, _) => 2,
                    (false, _) => 1,
                };
                if !held.alone && held.alone_waiting == 0 && held.beside < room {
                    break;
                }
                // The file may appear while waiting: look again now and then.
                held = self
                    .changed
                    .wait_timeout(held, Duration::from_secs(1))
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
            held.beside += 1;
        }
    }

    fn give_back(&self, share: Share) {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if share == Share::Alone {
            held.alone = false;
        } else {
            held.beside -= 1;
        }
        self.changed.notify_all();
    }
}

/// A test's turn to sweep. When the turn ends, how long it was held is appended to
/// `SWEEP_TIMES` (test name, seconds, the machine's busy share over the turn and its busiest
/// half second, percent of all cores, `alone`, `beside` or `light`, and when the turn began,
/// seconds since the epoch: the lane's timeline): `scripts/test.sh` prints the
/// longest, where CI's time goes (issue 25), and the busy shares say which turns leave the
/// machine idle.
pub struct Turn {
    share: Share,
    since: std::time::Instant,
    started_at: std::time::SystemTime,
    busy: MachineBusy,
}

pub const SWEEP_TIMES: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/sweep-times.tsv");

/// A turn alone: no other sweep runs until it ends.
pub fn one_at_a_time() -> Turn {
    turn(Share::Alone)
}

/// A turn that may run beside one other turn of its kind (see [`TURNS`]).
pub fn beside_one_other() -> Turn {
    turn(Share::Beside)
}

/// A turn that leaves the machine nearly idle: it may run beside two others (see [`TURNS`]).
pub fn beside_two_others() -> Turn {
    turn(Share::Light)
}

/// The phase of `scripts/test.sh` this binary runs in: `shared` runs every sweep but those of
/// `tests/sweeps/alone.txt`, `alone` runs only those. Unset (a run by hand), any sweep may run.
pub const SWEEPS_PHASE: &str = "SWEEPS_PHASE";

fn turn(share: Share) -> Turn {
    check_phase(share);
    TURNS.take(share);
    Turn {
        share,
        since: std::time::Instant::now(),
        started_at: std::time::SystemTime::now(),
        busy: MachineBusy::start(),
    }
}

/// Keeps `tests/sweeps/alone.txt` true: `scripts/test.sh` orders the sweeps by it.
fn check_phase(share: Share) {
    let test = std::thread::current().name().unwrap_or("?").to_string();
    match (std::env::var(SWEEPS_PHASE).as_deref(), share) {
        (Ok("shared"), Share::Alone) => panic!(
            "{test} takes its turn alone but is not in tests/sweeps/alone.txt: add it there \
             (scripts/test.sh runs the sweeps listed there after every other)"
        ),
        (Ok("alone"), Share::Beside | Share::Light) => panic!(
            "{test} is in tests/sweeps/alone.txt but does not take its turn alone: take it out"
        ),
        _ => {}
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        use std::io::Write;
        let test = std::thread::current().name().unwrap_or("?").to_string();
        let held_s = self.since.elapsed().as_secs_f64();
        let (mean, peak) = self.busy.finish();
        TURNS.give_back(self.share);
        let started_s = self
            .started_at
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let line = format!(
            "{test}\t{held_s:.1}\t{mean:.0}\t{peak:.0}\t{}\t{started_s:.1}\n",
            match self.share {
                Share::Alone => "alone",
                Share::Beside => "beside",
                Share::Light => "light",
            }
        );
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(SWEEP_TIMES)
        {
            let _ = file.write_all(line.as_bytes());
        }
    }
}

/// The machine's contended share (`/proc/stat`, every core) over a turn, sampled every half second
/// by a thread of its own.
struct MachineBusy {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    sampler: Option<std::thread::JoinHandle<(f64, f64)>>,
}

impl MachineBusy {
    fn start() -> MachineBusy {
        use std::sync::atomic::Ordering::Relaxed;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let sampler = std::thread::spawn(move || {
            let first = cpu_ticks();
            let (mut last, mut peak) = (first, 0.0f64);
            while !flag.load(Relaxed) {
                std::thread::sleep(Duration::from_millis(500));
                let now = cpu_ticks();
                peak = peak.max(busy_pct(last, now));
                last = now;
            }
            (busy_pct(first, last), peak)
        });
        MachineBusy {
            stop,
            sampler: Some(sampler),
        }
    }

    /// The mean and the busiest half second, percent of all cores.
    fn finish(&mut self) -> (f64, f64) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.sampler
            .take()
            .and_then(|s| s.join().ok())
            .unwrap_or((f64::NAN, f64::NAN))
    }
}

/// Contended and total ticks of every core: busy less niced work, which leaves the sweeps its
/// cores (`Step::machine_contended_cpu_pct`; `scripts/test.sh` builds at nice 19 beside them).
fn cpu_ticks() -> (u64, u64) {
    chokepoint_observe::machine_ticks()
        .map(|t| (t.busy - t.niced, t.total))
        .unwrap_or_default()
}

fn busy_pct(from: (u64, u64), to: (u64, u64)) -> f64 {
    let total = to.1.saturating_sub(from.1);
    if total == 0 {
        return 0.0;
    }
    100.0 * to.0.saturating_sub(from.0) as f64 / total as f64
}

pub fn targets_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/targets")
}

/// Whether `tool` can be run at all; prints why the test is skipped when it cannot. In CI (`CI`
/// set, as `.ci/run` runs) a missing tool fails the test: `.ci/run` installs every one, so its
/// absence there is a broken set-up, never a reason to pass.
pub fn toolchain_present(tool: &str, version_arg: &str) -> bool {
    match Command::new(tool)
        .arg(version_arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(_) => true,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            assert!(
                std::env::var_os("CI").is_none(),
                "`{tool}` is not installed: .ci/run installs it; a CI run must not skip this test"
            );
            println!("SKIPPED: `{tool}` is not installed (.ci/run installs it)");
            false
        }
        Err(err) => panic!("cannot run `{tool} {version_arg}`: {err}"),
    }
}

/// A launched target; dropping it stops its whole process group.
pub struct Target {
    name: &'static str,
    server: Server,
    port: u16,
}

impl Target {
    /// Starts `command` and waits for its `listening on 127.0.0.1:PORT` line.
    pub fn launch(name: &'static str, mut command: Command) -> Target {
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut server = Server::spawn(name, &mut command);
        let stdout = server.child_mut().stdout.take().expect("stdout is piped");
        let mut target = Target {
            name,
            server,
            port: 0,
        };
        let (first_line, received) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = first_line.send(line);
            }
            // Keep reading so the target never blocks on a full pipe.
            for _ in lines {}
        });
        let line = received
            .recv_timeout(STARTUP_LIMIT)
            .unwrap_or_else(|_| panic!("{name}: no `listening on` line on stdout"));
        target.port = line
            .trim()
            .strip_prefix("listening on ")
            .map(|rest| rest.trim_start_matches("http://"))
            .and_then(|rest| rest.strip_prefix("127.0.0.1:"))
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("{name}: unexpected first line {line:?}"));
        target
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }

    /// The URL of `path` (which starts with `/`) on the target.
    pub fn url_of(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// `https://127.0.0.1:PORT/`, for a target serving TLS.
    pub fn https_url(&self) -> String {
        format!("https://127.0.0.1:{}/", self.port)
    }

    pub fn pid(&self) -> i32 {
        self.server.pid()
    }
}

pub fn mock_with_delay() -> RunningMock {
    mock_with_delay_of(DOWNSTREAM_DELAY)
}

pub fn mock_with_delay_of(delay: Duration) -> RunningMock {
    chokepoint_mock::start(
        "127.0.0.1:0".parse().expect("a socket address"),
        MockConfig {
            fixed_delay: Some(delay),
            ..Default::default()
        },
    )
    .expect("the mock starts on a free port")
}

/// Builds the Go target in `tests/targets/<dir>` with `go build` (not `go run`: killing the
/// `go` tool would leave the server it started running) and returns the binary.
pub fn build_go_target(dir: &str) -> PathBuf {
    // Once per test binary: a rebuild from Go's cache still links, a second or so inside a
    // test's turn at the sweep lock.
    static BUILT: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut built = BUILT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let binary = Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir);
    if built.iter().any(|done| done == dir) {
        return binary;
    }
    let output = Command::new("go")
        .args(["build", "-o"])
        .arg(&binary)
        .arg(".")
        .current_dir(targets_dir().join(dir))
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", "-mod=mod")
        .env("GOPROXY", "off")
        .output()
        .expect("go build runs");
    assert!(
        output.status.success(),
        "go build of tests/targets/{dir} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    built.push(dir.to_string());
    binary
}

/// The `java` arguments that run the single-file program `source`, whose class is named as the
/// file: `-cp DIR CLASS`, compiled once per test binary with `javac`. The source launcher
/// (`java File.java`) compiles in memory at every start: 3.0 s to the port for the JVM twin
/// against 0.7 s precompiled, on this 2-core machine, inside a test's turn at the sweep lock.
pub fn java_program(source: &Path) -> [std::ffi::OsString; 3] {
    java_program_on(source, None)
}

/// [`java_program`] on the jars in `jars` when given, which are also javac's annotation
/// processors: a framework that writes its beans at compile time (Micronaut) needs them run,
/// and the source launcher runs none. The class is in the file's `package`, if it has one.
pub fn java_program_on(source: &Path, jars: Option<&Path>) -> [std::ffi::OsString; 3] {
    static COMPILED: Mutex<Vec<(PathBuf, PathBuf)>> = Mutex::new(Vec::new());
    let stem = source
        .file_stem()
        .and_then(|stem| stem.to_str())
        .expect("a .java file");
    let text =
        std::fs::read_to_string(source).unwrap_or_else(|err| panic!("{}: {err}", source.display()));
    let package = text.lines().find_map(|line| {
        let name = line.strip_prefix("package ")?.trim().strip_suffix(';')?;
        Some(name.trim().to_string())
    });
    let class = match package {
        Some(package) => format!("{package}.{stem}"),
        None => stem.to_string(),
    };
    let mut compiled = COMPILED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let dir = match compiled.iter().find(|(from, _)| from == source) {
        Some((_, dir)) => dir.clone(),
        None => {
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
                .join("java")
                .join(&class);
            let _ = std::fs::remove_dir_all(&dir);
            let mut javac = Command::new("javac");
            if let Some(jars) = jars {
                // `-processorpath` takes no `*`, unlike `-cp`: each jar by name.
                let processors =
                    std::env::join_paths(jar_files(jars)).expect("jar paths hold no `:`");
                javac
                    .arg("-cp")
                    .arg(jars.join("*"))
                    .arg("-processorpath")
                    .arg(processors);
            }
            let status = javac
                .arg("-d")
                .arg(&dir)
                .arg(source)
                .status()
                .unwrap_or_else(|err| panic!("javac {}: {err}", source.display()));
            assert!(
                status.success(),
                "javac {} failed: {status}",
                source.display()
            );
            compiled.push((source.to_path_buf(), dir.clone()));
            dir
        }
    };
    let mut classpath = dir.into_os_string();
    if let Some(jars) = jars {
        classpath.push(":");
        classpath.push(jars.join("*"));
    }
    ["-cp".into(), classpath, class.into()]
}

/// The `.jar` files in `dir`, sorted.
fn jar_files(dir: &Path) -> Vec<PathBuf> {
    let mut jars: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jar"))
        .collect();
    jars.sort();
    jars
}

/// The single-file Java target `file` of `tests/targets/` (run by `java`'s source launcher) on
/// the jars in `jars`, on a free port, calling `mock`, with `extra` arguments.
pub fn launch_java_target(
    name: &'static str,
    jars: &Path,
    file: &str,
    mock: &RunningMock,
    extra: &[&str],
) -> Target {
    launch_java_target_with(name, &[], jars, file, mock, extra)
}

/// [`launch_java_target`] with `jvm_flags` (`-D…`) before the source file.
pub fn launch_java_target_with(
    name: &'static str,
    jvm_flags: &[&str],
    jars: &Path,
    file: &str,
    mock: &RunningMock,
    extra: &[&str],
) -> Target {
    let mut command = Command::new("java");
    command
        .args(jvm_flags)
        .arg("-cp")
        .arg(jars.join("*"))
        .arg(targets_dir().join(file))
        .args(["--port", "0", "--downstream", &format!("{}/", mock.url())])
        .args(extra);
    Target::launch(name, command)
}

/// The JVM twin (examples/jvm/BlockingDemo.java, 20 actors, a dispatcher of 16) calling `mock`.
pub fn launch_jvm(mock: &RunningMock) -> Target {
    let mut command = Command::new("java");
    command
        .args(java_program(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/jvm/BlockingDemo.java"),
        ))
        .args(["--port", "0", "--downstream", &mock.url()])
        .args(["--actors", "20", "--dispatcher", "16"]);
    Target::launch("jvm-twin", command)
}

/// tests/targets/py-threadpool (a `ThreadPoolExecutor` of 6) calling `mock`.
pub fn launch_py_threadpool(mock: &RunningMock) -> Target {
    let mut command = Command::new("python3");
    command
        .arg(targets_dir().join("py-threadpool/server.py"))
        .args(["--port", "0", "--downstream", &mock.url()]);
    Target::launch("py-threadpool", command)
}

/// tests/targets/java-pools (the JVM's common pool, a cached pool, ...) calling `mock`.
pub fn launch_java_pools(mock: &RunningMock) -> Target {
    let mut command = Command::new("java");
    command
        .args(java_program(
            &targets_dir().join("java-pools/PoolsServer.java"),
        ))
        .args(["--port", "0", "--downstream", &mock.url()])
        .current_dir(targets_dir().join("java-pools"));
    Target::launch("java-pools", command)
}

/// The Go target `tests/targets/<dir>` on a port of its own choosing, with `args`.
pub fn launch_go(dir: &'static str, args: &[&str]) -> Target {
    let mut command = Command::new(build_go_target(dir));
    command.args(["-port", "0"]).args(args);
    Target::launch(dir, command)
}

pub fn launch_go_semaphore(mock: &RunningMock) -> Target {
    launch_go("go-semaphore", &["-downstream", &mock.url()])
}

/// The sweep of `target`: `clients` as given (adaptive up to `max_clients` when `None`), with
/// the target's PID observed and the mock, if any, read per step. Prints each step as it ends.
pub fn sweep_target(
    target: &Target,
    clients: Option<Vec<u32>>,
    step: Duration,
    max_clients: u32,
    mock: Option<&RunningMock>,
) -> SweepResult {
    let config = SweepConfig::new(&target.url())
        .expect("a valid target URL")
        .with_target_pid(target.pid());
    sweep_with(target.name, config, clients, step, max_clients, mock)
}

/// The sweep of `config` (its URL and its observed processes as given) with the tests' step
/// settings, cold unless the target runs a JIT ([`runs_a_jit`]); prints each step as it ends.
pub fn sweep_with(
    name: &str,
    mut config: SweepConfig,
    clients: Option<Vec<u32>>,
    step: Duration,
    max_clients: u32,
    mock: Option<&RunningMock>,
) -> SweepResult {
    if !runs_a_jit(&config) {
        config.warmup_limit = Duration::ZERO;
    }
    sweep_as_configured(name, config, clients, step, max_clients, mock)
}

/// Whether an observed process of `config` is a JVM or Node. The product checks its first step
/// for a warm-up (DESIGN.md, "warm-up check"): a warm service pays nothing, but a check misled by
/// a noisy first step throws that step away and warms up (seconds of the sweep lock). A target
/// without a JIT answers its first requests as it answers the rest, so the tests sweep it without
/// the check. The check is tested where it matters: on every JVM and Node target, and on
/// py-warmup ([`sweep_as_configured`]), whose test is the warm-up's own.
pub fn runs_a_jit(config: &SweepConfig) -> bool {
    let roots = match &config.target_cpu {
        Some(CpuScope::Tree(roots)) => roots.clone(),
        Some(CpuScope::Process(pid)) | Some(CpuScope::Threads { pid, .. }) => vec![*pid],
        _ => return true,
    };
    roots.iter().any(|pid| {
        std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|comm| matches!(comm.trim(), "java" | "node"))
            .unwrap_or(true)
    })
}

/// [`sweep_with`] with the configuration's own warm-up, whatever the target.
pub fn sweep_as_configured(
    name: &str,
    config: SweepConfig,
    clients: Option<Vec<u32>>,
    step: Duration,
    max_clients: u32,
    mock: Option<&RunningMock>,
) -> SweepResult {
    sweep_watching(name, config, clients, step, max_clients, mock, &mut |_| {})
}

/// [`sweep_as_configured`], calling `on_step` with each step as it ends (a test that changes
/// the machine between steps).
pub fn sweep_watching(
    name: &str,
    mut config: SweepConfig,
    clients: Option<Vec<u32>>,
    step: Duration,
    max_clients: u32,
    mock: Option<&RunningMock>,
    on_step: &mut dyn FnMut(&Step),
) -> SweepResult {
    config.clients = clients;
    config.max_clients = max_clients;
    config.set_step(step);
    config.drain_timeout = Duration::from_secs(5);
    config.base.timeout = Duration::from_secs(10);
    config.mock = mock.map(RunningMock::url);
    let started = std::time::Instant::now();
    let result = sweep(&config, CancellationToken::new(), &mut |event| {
        if let SweepEvent::Step(step) = event {
            println!("{name}: step done: {}", step_line(step));
            on_step(step);
        }
    })
    .unwrap_or_else(|err| panic!("{name}: the sweep failed: {err:#}"));
    println!(
        "{name}: {} steps in {:.1} s",
        result.steps.len(),
        started.elapsed().as_secs_f64()
    );
    result
}

pub fn step_line(step: &Step) -> String {
    let downstream = step
        .downstream_inflight
        .map(|d| format!("{:.1}/{}", d.mean, d.max))
        .unwrap_or_else(|| "-".into());
    let errors = step
        .errors
        .iter()
        .map(|(kind, n)| format!("{kind}:{n}"))
        .collect::<Vec<_>>()
        .join(",");
    format!(
        "{:>4} clients {:>8.1} req/s {:>8.1} ok/s  mean {:>7.1} ms  p99 {:>7.1} ms  err {:>5.1}% [{}] err p50 {}  ds in flight {}  target cpu {}  gen cpu {:.0}%",
        step.clients,
        step.throughput_rps,
        step.ok_throughput_rps,
        step.latency_ms.mean,
        step.latency_ms.p99,
        step.error_rate * 100.0,
        errors,
        step.error_latency_ms
            .map(|l| format!("{:.1} ms", l.p50))
            .unwrap_or_else(|| "-".into()),
        downstream,
        step.target_cpu_pct
            .map(|c| format!("{c:.0}%"))
            .unwrap_or_else(|| "-".into()),
        step.generator_cpu_pct,
    )
}

/// What `/proc` saw at a step, as the rules read it: each of the 3 busiest pools' mean threads
/// running, on the network and parked (of all, and the most on the network at once), and the
/// connections to each downstream peer (most established, mean, most served). A failure whose
/// reading turned on these means can then be read from the log.
fn proc_line(step: &Step) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(threads) = &step.threads_by_pool {
        for pool in threads.pools.iter().take(3) {
            let mean = &pool.mean;
            parts.push(format!(
                "`{}` {:.2} running {:.2} network (most {}) {:.2} parked of {:.0}",
                pool.pool,
                mean.running,
                mean.socket_wait,
                pool.most.socket_wait,
                mean.lock_wait,
                mean.threads
            ));
        }
    }
    if let Some(connections) = &step.connections {
        for peer in &connections.downstream {
            parts.push(format!(
                "to :{} {} most {:.2} mean {} served",
                peer.peer_port,
                peer.counts.most.established,
                peer.counts.mean_established,
                peer.counts.most_served
            ));
        }
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The runtime's stacks of a step, a line per pool with threads not idle: what each group did
/// and where (its two innermost frames), as means per dump. A dump is one instant: when a
/// place comes out wrong, these say what the instants caught.
fn stacks_lines(step: &Step) -> Vec<String> {
    let Some(stacks) = &step.stacks else {
        return Vec::new();
    };
    stacks
        .pools
        .iter()
        .filter(|pool| pool.threads_in(WaitKind::Idle) < pool.threads)
        .take(6)
        .map(|pool| {
            let groups: Vec<String> = pool
                .stacks
                .iter()
                .take(4)
                .map(|s| {
                    let waiting = s.waiting.map_or("?".into(), |w| format!("{w:?}"));
                    let frames: Vec<&str> = s.frames.iter().take(2).map(String::as_str).collect();
                    format!("{:.1} {waiting} in {}", s.threads, frames.join(" ← "))
                })
                .collect();
            format!(
                "`{}` {:.1} ({} dumps): {}",
                pool.pool,
                pool.threads,
                stacks.snapshots,
                groups.join("; ")
            )
        })
        .collect()
}

/// The finding's place, printed as a user reads it (its attribution); a panic naming the
/// evidence when there is none.
pub fn the_place(name: &str, result: &SweepResult) -> Place {
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    println!(
        "{name}: {}",
        diagnosis.attribution.as_deref().unwrap_or("no place")
    );
    diagnosis
        .place
        .clone()
        .unwrap_or_else(|| panic!("{name}: no place: {:#?}", diagnosis.evidence))
}

/// Prints the step table and the finding, then checks that the sweep ended and found `kind`.
pub fn assert_kind<'r>(name: &str, result: &'r SweepResult, kind: Kind) -> &'r Diagnosis {
    let diagnosis = printed_diagnosis(name, result);
    assert_eq!(
        diagnosis.kind(),
        kind,
        "{name}: wrong kind (summary: {})",
        diagnosis.summary
    );
    diagnosis
}

/// The diagnosis of a whole sweep, once its step table and finding are printed.
pub fn printed_diagnosis<'r>(name: &str, result: &'r SweepResult) -> &'r Diagnosis {
    println!("{name}: steps");
    for step in &result.steps {
        println!("  {}", step_line(step));
        // What an observer could not see (a stack tool that failed, a process that went):
        // the first thing to read when a place is missing.
        for note in &step.observation_notes {
            println!("    note: {note:?}");
        }
        if let Some(seen) = proc_line(step) {
            println!("    /proc: {seen}");
        }
        for line in stacks_lines(step) {
            println!("    stacks: {line}");
        }
    }
    let diagnosis = result
        .diagnosis
        .as_ref()
        .unwrap_or_else(|| panic!("{name}: the sweep returned no diagnosis"));
    println!(
        "{name}: found {} limit {:?} knee {:?}\n  summary: {}",
        diagnosis.kind(),
        diagnosis.limit(),
        diagnosis.knee_clients(),
        diagnosis.summary
    );
    for sentence in &diagnosis.evidence {
        println!("  evidence: {sentence}");
    }
    assert!(!result.interrupted, "{name}: the sweep was interrupted");
    diagnosis
}

/// Asserts `cpu-bound` on one core, decided by CPython's interpreter lock (py-spy's threads
/// queued for it at every step from the knee on: [`chokepoint_result::Fact::InterpreterLock`]).
pub fn assert_cpu_bound_on_the_interpreter_lock(name: &str, result: &SweepResult) {
    assert_finding(name, result, Kind::CpuBound, 1.0);
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    assert!(
        diagnosis
            .facts()
            .iter()
            .any(|fact| matches!(fact, chokepoint_result::Fact::InterpreterLock { .. })),
        "{name}: the interpreter lock decided nothing: {}",
        diagnosis.summary
    );
}

/// Prints the step table and the finding, then checks kind and limit (± 10%).
pub fn assert_finding(name: &str, result: &SweepResult, kind: Kind, limit: f64) {
    let diagnosis = assert_kind(name, result, kind);
    let found = diagnosis
        .limit()
        .unwrap_or_else(|| panic!("{name}: no limit found (summary: {})", diagnosis.summary));
    assert!(
        (found - limit).abs() <= 0.1 * limit,
        "{name}: limit {found:.2} is not within 10% of the true {limit} (summary: {})",
        diagnosis.summary
    );
}

/// The most calls the mock saw in flight at once over the whole sweep.
pub fn most_downstream_in_flight(result: &SweepResult) -> Option<u64> {
    result
        .steps
        .iter()
        .filter_map(|s| s.downstream_inflight.map(|d| d.max))
        .max()
}

/// The pool `name` of a step's stacks (a panic naming the notes when there are no stacks).
pub fn pool<'s>(step: &'s Step, name: &str) -> &'s PoolStacks {
    let stacks = step.stacks.as_ref().unwrap_or_else(|| {
        panic!(
            "no stacks at {} clients: {:?}",
            step.clients, step.observation_notes
        )
    });
    stacks
        .pools
        .iter()
        .find(|pool| pool.pool == name)
        .unwrap_or_else(|| panic!("no pool {name:?} in {stacks:#?}"))
}

/// Prints each step's notes and stacks: its pools, their threads and where they wait.
pub fn print_stacks(name: &str, result: &SweepResult) {
    for step in &result.steps {
        println!(
            "{name}: {} clients, notes {:?}",
            step.clients, step.observation_notes
        );
        let Some(stacks) = &step.stacks else { continue };
        println!("  {:?}, {} snapshots", stacks.source, stacks.snapshots);
        for pool in &stacks.pools {
            println!(
                "  {} {:.1} threads (most {})",
                pool.pool, pool.threads, pool.most_threads
            );
            for stack in &pool.stacks {
                println!(
                    "    {:?} {:.1} {:?}",
                    stack.waiting, stack.threads, stack.frames
                );
            }
        }
    }
}
