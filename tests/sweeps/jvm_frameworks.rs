//! JVM frameworks at their defaults whose handlers make a blocking call (an `HttpURLConnection`
//! GET of the mock), each built after its catalogue entry: the pool that runs the call is the
//! limit, and the sweep must find it, place it by jcmd's stacks (or `/proc`'s names) and name
//! the entry's setting.
//!
//! - `tests/targets/java-jetty`: Jetty 12's `new Server()`, a blocking `Handler.Abstract` run on
//!   its QueuedThreadPool of 200 (`qtp<hash>-N`), the connector's acceptor and selector among
//!   them;
//! - `tests/targets/java-undertow`: Undertow 2.4's builder, a `BlockingHandler` on the XNIO
//!   worker's task threads (`XNIO-1 task-N`), 8 per I/O thread;
//! - `tests/targets/java-pekko`: Apache Pekko 1.7's default dispatcher running the calls in
//!   Futures, 8 threads on up to 8 cores (`svc-pekko.actor.default-dispatcher-N`); with
//!   `--dispatcher`, on the dispatcher of its own Pekko's docs show, configured in a jar on
//!   the classpath (`fixed-pool-size = 12`), or on Pekko's built-in blocking-I/O dispatcher
//!   (16);
//! - `tests/targets/java-spring-async`: Spring Boot 3.5's `@Async` on its auto-configured
//!   `applicationTaskExecutor`, 8 threads (`task-N`);
//! - `tests/targets/java-reactor-netty/BoundedElasticServer.java`: a Reactor Netty server
//!   wrapping the call in `Schedulers.boundedElastic()`, 10 threads per core
//!   (`boundedElastic-N`); with `--on-event-loop`, the call on the server's event loops
//!   (`reactor-http-epoll-N`, max(cores, 4)), each holding its connections;
//! - `tests/targets/java-netty`: a plain Netty 4.1 server whose handler blocks its event loop,
//!   2 × cores loops (`nioEventLoopGroup-N-M`);
//! - `tests/targets/java-akka`: java-pekko's source on Akka 2.6.20 (its package renamed); held
//!   out;
//! - `tests/targets/java-rxjava --scheduler computation`: RxJava 3's computation scheduler
//!   given blocking calls, one thread per core (`RxComputationThreadPool-N`); held out;
//! - `tests/targets/java-scala-global`: Scala 2.13's global `ExecutionContext` given blocking
//!   calls, one thread per core (`scala-execution-context-global-N`); held out;
//! - `tests/targets/java-micronaut` `/loop`: a Micronaut 4 controller without `@ExecuteOn`, run
//!   on Micronaut's Netty event loops, one per core (`default-eventLoopGroup-N-M`); held out.
//!
//! Truths by hand are in `tests/targets/README.md`. The jars come from Maven Central
//! (`scripts/install-test-deps.sh`); a missing one, or java or jcmd, fails the test.

use crate::common;
use crate::frameworks::{assert_held, require_tool, sweep_framework};

use chokepoint_result::{Kind, Place, PlaceKind, PlaceSource, StackSource, SweepResult};
use common::*;
use std::path::Path;
use std::time::Duration;

/// The sweep of the JVM target `file` (under `tests/targets/`) on `jars`, with `extra`
/// arguments, over `clients`, the mock at `delay`.
fn sweep_jvm_target(
    name: &'static str,
    jars: &Path,
    file: &str,
    extra: &[&str],
    clients: Vec<u32>,
    delay: Duration,
) -> SweepResult {
    sweep_jvm_target_with(name, &[], jars, file, extra, clients, delay)
}

/// [`sweep_jvm_target`] with `jvm_flags` (`-D…`) before the source file.
fn sweep_jvm_target_with(
    name: &'static str,
    jvm_flags: &[&str],
    jars: &Path,
    file: &str,
    extra: &[&str],
    clients: Vec<u32>,
    delay: Duration,
) -> SweepResult {
    require_tool("java", "-version");
    require_tool("jcmd", "-h");
    let _turn = beside_one_other();
    let mock = mock_with_delay_of(delay);
    let target = launch_java_target_with(name, jvm_flags, jars, file, &mock, extra);
    let result = sweep_framework(name, &target.url(), target.pid(), clients, &mock);
    drop(target);
    result
}

/// The truth (the mock's most calls in flight is `size`), the finding (a pool of `size`), and a
/// thread pool placed by jcmd or `/proc` holding `size`, whose setting starts with `setting`.
fn assert_thread_pool(name: &str, result: &SweepResult, size: u32, setting: &str) -> Place {
    assert_eq!(
        most_downstream_in_flight(result),
        Some(u64::from(size)),
        "{name}: the truth"
    );
    assert_finding(name, result, Kind::BlockingPool, f64::from(size));
    let place = the_place(name, result);
    assert_eq!(place.kind, Some(PlaceKind::ThreadPool), "{name}");
    assert!(
        matches!(
            place.source,
            Some(PlaceSource::Stacks(StackSource::JcmdThreadPrint) | PlaceSource::Proc)
        ),
        "{name}: placed neither by jcmd nor by /proc: {:?}",
        place.source
    );
    assert_held(name, &place, f64::from(size));
    let named = place.setting.as_ref().map(|s| s.setting.as_str());
    assert!(
        named.is_some_and(|s| s.starts_with(setting)),
        "{name}: {named:?}, not `{setting}…`"
    );
    place
}

fn cores() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get()) as u32
}

/// Jetty 12 (`new Server()`, one connector): each call holds a thread of its QueuedThreadPool
/// of 200, whose acceptor and selector threads take some for good. Truth by hand at 1 s: the
/// mock's 198 in flight at 250 and 400 clients on 2 cores (1 acceptor, 1 selector).
#[test]
fn jettys_blocking_handlers_hold_its_queued_thread_pool_of_200_less_the_connectors() {
    let jars = crate::place::cached_jars("jetty", "jetty-server-12.1.14.jar", "Jetty");
    let name = "java-jetty";
    // ~200 calls held 1 s: 200 req/s, light for the JVM on a busy 2-core machine.
    let result = sweep_jvm_target(
        name,
        &jars,
        "java-jetty/JettyServer.java",
        &[],
        vec![1, 200, 400],
        Duration::from_secs(1),
    );
    let truth = most_downstream_in_flight(&result).expect("the mock's count");
    assert!(
        (180..=200).contains(&truth),
        "{name}: 200 threads less the connector's: {truth}"
    );
    let place = assert_thread_pool(name, &result, truth as u32, "QueuedThreadPool maxThreads");
    let pool = place.pool.as_deref().unwrap_or_default();
    assert!(pool.starts_with("qtp"), "{name}: {pool}");
}

/// Undertow 2.4 with a `BlockingHandler`: each call holds one of the XNIO worker's task
/// threads, 8 per I/O thread, the I/O threads max(cores, 2). Truth by hand at 200 ms: the
/// mock's 16 in flight and 75.8 req/s at 16 to 64 clients on 2 cores.
#[test]
fn undertows_blocking_handlers_hold_its_worker_threads_eight_per_io_thread() {
    let jars = crate::place::cached_jars("undertow", "undertow-core-2.4.4.Final.jar", "Undertow");
    let size = 8 * cores().max(2);
    let name = "java-undertow";
    let result = sweep_jvm_target(
        name,
        &jars,
        "java-undertow/UndertowServer.java",
        &[],
        vec![1, size, 2 * size],
        Duration::from_millis(200),
    );
    let place = assert_thread_pool(
        name,
        &result,
        size,
        "Undertow.builder().setWorkerThreads(N)",
    );
    assert_eq!(place.pool.as_deref(), Some("XNIO-1 task"), "{name}");
}

/// Apache Pekko's default dispatcher running blocking calls in Futures
/// (`CompletableFuture.supplyAsync(call, system.dispatcher())`), the blocking Pekko's docs warn
/// against: a fork-join pool of ceil(cores × 1.0) threads, at least 8. Truth by hand at 200 ms:
/// the mock's 8 in flight, 37.9 req/s at 16 and 32 clients on 2 cores. The JDK server's threads
/// that wait for the futures are not the place.
#[test]
fn pekkos_default_dispatcher_holds_blocking_futures_eight_at_a_time_on_few_cores() {
    let jars = pekko_jars();
    let file = targets_dir().join("java-pekko/PekkoServer.java");
    assert_default_dispatcher("java-pekko", &jars, &file, "pekko");
}

/// The default dispatcher of an actor system whose configuration keys start with `prefix`
/// (`pekko`, `akka`), running `file`'s blocking futures: a pool of ceil(cores × 1.0), at least
/// 8, placed by jcmd in `svc-<prefix>.actor.default-dispatcher` and named with its
/// `parallelism-factor`.
fn assert_default_dispatcher(name: &'static str, jars: &Path, file: &Path, prefix: &str) {
    let size = cores().clamp(8, 64);
    let result = sweep_jvm_target(
        name,
        jars,
        file.to_str().expect("a UTF-8 path"),
        &[],
        // Not 4 × the pool: a fork-join pool's queues are not first come, first served, and at 32
        // clients a few requests waited past the sweep's 10 s timeout (2.4 % errors in one run).
        vec![1, size, 2 * size],
        Duration::from_millis(200),
    );
    let place = assert_thread_pool(
        name,
        &result,
        size,
        &format!("{prefix}.actor.default-dispatcher.fork-join-executor.parallelism-factor"),
    );
    // /proc cuts the name to `svc-{prefix}.actor`, the internal dispatcher's too.
    assert_placed_by_jcmd(
        name,
        &place,
        &format!("svc-{prefix}.actor.default-dispatcher"),
    );
}

/// Where `scripts/install-test-deps.sh` puts Apache Pekko's jars (Maven Central).
fn pekko_jars() -> std::path::PathBuf {
    crate::place::cached_jars("pekko", "pekko-actor_2.13-1.7.0.jar", "Apache Pekko")
}

/// Asserts `place` is the pool `pool`, named whole by jcmd's dump.
fn assert_placed_by_jcmd(name: &str, place: &Place, pool: &str) {
    assert_eq!(
        place.source,
        Some(PlaceSource::Stacks(StackSource::JcmdThreadPrint)),
        "{name}"
    );
    assert_eq!(place.pool.as_deref(), Some(pool), "{name}");
}

/// The dispatcher of its own that Pekko's docs tell users to run blocking calls on
/// (`my-blocking-dispatcher`, a thread-pool-executor), configured where a packaged service
/// has it: an `application.conf` in a jar on the classpath
/// (`tests/targets/java-pekko/packaged/application.conf`, `fixed-pool-size = 12`, jarred by
/// the JDK's `jar`), which `ConfigFactory.load()` reads at the system's start. Looked up by id,
/// its threads are `svc-my-blocking-dispatcher-N`: no catalogue pattern knows the name, the
/// dispatcher's id in it does (crates/diagnose `actor_dispatcher.rs`, written before this
/// target), and the size is read from the jar the JVM's classpath names
/// (crates/observe `actor_config.rs`). Truth by hand at 200 ms with the docs' 16 in a file:
/// the mock's 16 in flight, 75.7 req/s at 32 and 64 clients on 2 cores.
#[test]
fn a_pekko_dispatcher_of_its_own_is_named_with_the_fixed_pool_size_its_jar_configures() {
    require_tool("jar", "--version");
    let jars = packaged_with_its_configuration(&pekko_jars());
    let name = "java-pekko --dispatcher my-blocking-dispatcher";
    let result = sweep_jvm_target(
        name,
        &jars,
        "java-pekko/PekkoServer.java",
        &["--dispatcher", "my-blocking-dispatcher"],
        vec![1, 16, 32],
        Duration::from_millis(200),
    );
    let setting = "my-blocking-dispatcher.thread-pool-executor.fixed-pool-size";
    let place = assert_thread_pool(name, &result, 12, setting);
    assert_eq!(
        place.pool.as_deref(),
        Some("svc-my-blocking-dispatcher"),
        "{name}"
    );
    let named = place.setting.as_ref().expect("a setting");
    assert!(
        named.framework.contains("actor system `svc`"),
        "{name}: {}",
        named.framework
    );
    let stated = named
        .stated_here
        .as_ref()
        .expect("the size its jar configures");
    assert_eq!(stated.size, 12, "{name}: {stated:?}");
    let by = &stated.by[0];
    assert_eq!(
        (by.name.as_str(), by.from),
        (setting, chokepoint_result::StatedIn::Configuration),
        "{name}"
    );
    let file = by.file.as_deref().unwrap_or_default();
    assert!(
        file.ends_with("service-config.jar!/application.conf"),
        "{name}: {file}"
    );
}

/// A classpath directory of `jars` (linked) and a jar holding the service's own
/// `application.conf`, made with the JDK's `jar` as a build would.
fn packaged_with_its_configuration(jars: &Path) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pekko-packaged");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the classpath directory");
    for entry in std::fs::read_dir(jars).expect("the cached jars") {
        let path = entry.expect("a jar").path();
        if path.extension().is_some_and(|x| x == "jar") {
            std::os::unix::fs::symlink(&path, dir.join(path.file_name().expect("a name")))
                .expect("a link to the jar");
        }
    }
    let status = std::process::Command::new("jar")
        .arg("cf")
        .arg(dir.join("service-config.jar"))
        .arg("-C")
        .arg(targets_dir().join("java-pekko/packaged"))
        .arg("application.conf")
        .status()
        .expect("jar runs");
    assert!(status.success(), "jar cf failed: {status}");
    dir
}

/// Pekko's built-in dispatcher for blocking I/O (`pekko.actor.default-blocking-io-dispatcher`,
/// a thread-pool-executor of `fixed-pool-size = 16` in Pekko's own reference.conf), looked up
/// by id as a user who reads of it there would: no configuration of the service's. Its threads
/// are `svc-pekko.actor.default-blocking-io-dispatcher-N`, which `/proc` cuts to the default
/// dispatcher's `svc-pekko.actor`: placed by jcmd, and named by the catalogue's entry, which
/// had no live target until this one (written after it).
#[test]
fn pekkos_built_in_blocking_io_dispatcher_is_sixteen_threads_named_with_its_fixed_pool_size() {
    let jars = pekko_jars();
    let id = "pekko.actor.default-blocking-io-dispatcher";
    let name = "java-pekko --dispatcher pekko.actor.default-blocking-io-dispatcher";
    let result = sweep_jvm_target(
        name,
        &jars,
        "java-pekko/PekkoServer.java",
        &["--dispatcher", id],
        vec![1, 16, 32],
        Duration::from_millis(200),
    );
    let place = assert_thread_pool(
        name,
        &result,
        16,
        "pekko.actor.default-blocking-io-dispatcher.thread-pool-executor.fixed-pool-size",
    );
    assert_placed_by_jcmd(name, &place, &format!("svc-{id}"));
}

/// The same dispatcher sized on the JVM's command line, as Typesafe Config lets any setting be
/// (`-Dpekko.actor.default-blocking-io-dispatcher.thread-pool-executor.fixed-pool-size=6`:
/// `ConfigFactory.load()` puts system properties over reference.conf): a pool of 6, and the
/// size read from the command line (the catalogue's `stated`, written before this test).
#[test]
fn pekkos_blocking_io_dispatcher_sized_by_a_system_property_is_6_read_from_the_command_line() {
    let jars = pekko_jars();
    let id = "pekko.actor.default-blocking-io-dispatcher";
    let name = "java-pekko --dispatcher pekko.actor.default-blocking-io-dispatcher, 6";
    let result = sweep_jvm_target_with(
        name,
        &["-Dpekko.actor.default-blocking-io-dispatcher.thread-pool-executor.fixed-pool-size=6"],
        &jars,
        "java-pekko/PekkoServer.java",
        &["--dispatcher", id],
        vec![1, 6, 12, 24],
        Duration::from_millis(200),
    );
    let place = assert_thread_pool(
        name,
        &result,
        6,
        "pekko.actor.default-blocking-io-dispatcher.thread-pool-executor.fixed-pool-size",
    );
    let stated = place
        .setting
        .as_ref()
        .and_then(|s| s.stated_here.as_ref())
        .unwrap_or_else(|| panic!("{name}: 6 read from the command line: {place:?}"));
    assert_eq!(stated.size, 6, "{name}: {stated:?}");
}

/// Spring Boot's `@Async` on the executor it auto-configures (`applicationTaskExecutor`): a
/// `ThreadPoolTaskExecutor` of `spring.task.execution.pool.core-size` = 8 threads named `task-N`,
/// its queue unbounded, so it never grows past them. The JDK server's threads wait for the
/// futures and are not the place.
#[test]
fn spring_boots_async_executor_holds_eight_blocking_calls() {
    let jars = crate::place::cached_jars(
        "spring-async",
        "spring-boot-autoconfigure-3.5.7.jar",
        "Spring Boot",
    );
    let name = "java-spring-async";
    let result = sweep_jvm_target(
        name,
        &jars,
        "java-spring-async/SpringAsyncServer.java",
        &[],
        vec![1, 8, 16],
        Duration::from_millis(200),
    );
    let place = assert_thread_pool(name, &result, 8, "spring.task.execution.pool.core-size");
    assert_eq!(place.pool.as_deref(), Some("task"), "{name}");
}

/// Reactor's `Schedulers.boundedElastic()`, wrapping a blocking call as Reactor's docs say
/// (`Mono.fromCallable(call).subscribeOn(Schedulers.boundedElastic())`): at most 10 threads per
/// core, the calls past them queued in the scheduler. Reactor Netty's jar is open in the JVM,
/// but its shared pool (500 per host) carries no call: its setting must not be named.
#[test]
fn reactors_bounded_elastic_holds_ten_blocking_calls_per_core_and_is_named_with_its_property() {
    let jars = crate::place::cached_jars("reactor-netty", "reactor-core-3.7.17.jar", "Reactor");
    let size = 10 * cores();
    let name = "java-bounded-elastic";
    // 10 calls per core held 200 ms: 50 req/s per core, light for the event loops.
    let result = sweep_jvm_target(
        name,
        &jars,
        "java-reactor-netty/BoundedElasticServer.java",
        &[],
        vec![1, size, 2 * size],
        Duration::from_millis(200),
    );
    let place = assert_thread_pool(
        name,
        &result,
        size,
        "-Dreactor.schedulers.defaultBoundedElasticSize=N",
    );
    assert_eq!(place.pool.as_deref(), Some("boundedElastic"), "{name}");
}

/// The same Reactor Netty server with the blocking call made without `subscribeOn`, as code
/// that forgot it does: on the event loop that read the request, max(cores, 4) loops, each
/// holding its connections. Truth by hand at 200 ms: the mock's 4 in flight, 19 req/s at 4 to
/// 16 clients on 2 cores. The loops are the place, named with their property and the better fix.
#[test]
fn a_blocking_call_on_reactor_nettys_event_loops_is_held_by_the_loops() {
    let jars = crate::place::cached_jars("reactor-netty", "reactor-core-3.7.17.jar", "Reactor");
    let size = cores().max(4);
    let name = "java-reactor-netty --on-event-loop";
    let result = sweep_jvm_target(
        name,
        &jars,
        "java-reactor-netty/BoundedElasticServer.java",
        &["--on-event-loop"],
        // Twice the loops: every loop holds connections (CI's time: 4 × took ~5 s more).
        vec![1, size, 2 * size],
        Duration::from_millis(200),
    );
    let place = assert_thread_pool(
        name,
        &result,
        size,
        "-Dreactor.netty.ioWorkerCount=N; better, move blocking calls off the loops: \
         Mono.fromCallable(call).subscribeOn(Schedulers.boundedElastic())",
    );
    let pool = match place.source {
        Some(PlaceSource::Stacks(_)) => "reactor-http-epoll",
        _ => "reactor-http-ep",
    };
    assert_eq!(place.pool.as_deref(), Some(pool), "{name}");
}

/// A plain Netty 4.1 server (`new NioEventLoopGroup()`, 2 × cores loops) whose handler makes
/// the blocking call on its event loop, as a handler added without an executor group does.
/// Truth by hand at 200 ms: the mock's 4 in flight, 19.0 req/s at 4 to 16 clients on 2 cores.
#[test]
fn a_blocking_call_in_a_netty_handler_is_held_by_its_event_loops() {
    let jars = crate::place::cached_jars(
        "reactor-netty",
        "netty-codec-http-4.1.131.Final.jar",
        "Netty (java-reactor-netty's jars)",
    );
    let size = 2 * cores();
    let name = "java-netty";
    let result = sweep_jvm_target(
        name,
        &jars,
        "java-netty/NettyServer.java",
        &[],
        // Twice the loops: every loop holds connections (CI's time: 4 × took ~5 s more).
        vec![1, size, 2 * size],
        Duration::from_millis(200),
    );
    let place = assert_thread_pool(name, &result, size, "-Dio.netty.eventLoopThreads=N");
    let setting = place
        .setting
        .as_ref()
        .map(|s| s.setting.as_str())
        .unwrap_or_default();
    assert!(
        setting.contains("better, move blocking calls off the loops"),
        "{name}: {setting}"
    );
    // jcmd: `nioEventLoopGroup-3` (the workers; the boss loop is `-2`); /proc: 15 bytes.
    let pool = place.pool.as_deref().unwrap_or_default();
    assert!(pool.starts_with("nioEventLoopGro"), "{name}: {pool}");
}

/// Held out (session 24): the same service on Akka 2.6.20, the Akka Pekko forked from, at its
/// defaults. The catalogue's Akka entry had no live target. Their Java APIs are one API under
/// two packages, so the service is java-pekko's source with Pekko's package renamed to Akka's
/// (`tests/targets/java-akka/pom.xml` brings Akka's jars), and its default dispatcher is
/// Pekko's code under another name (`svc-akka.actor.default-dispatcher-N`).
#[test]
fn akkas_default_dispatcher_holds_blocking_futures_eight_at_a_time_on_few_cores() {
    let jars = crate::place::cached_jars("akka", "akka-actor_2.13-2.6.20.jar", "Akka");
    let pekko = std::fs::read_to_string(targets_dir().join("java-pekko/PekkoServer.java"))
        .expect("java-pekko's source");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("java-akka");
    std::fs::create_dir_all(&dir).expect("a folder for the Akka source");
    // The source launcher runs the file's first class, whatever the file's name.
    let file = dir.join("PekkoServer.java");
    std::fs::write(&file, pekko.replace("org.apache.pekko", "akka")).expect("the Akka source");
    assert_default_dispatcher("java-akka", &jars, &file, "akka");
}

/// Where `scripts/install-test-deps.sh` puts RxJava 3's jars (Maven Central).
fn rxjava_jars() -> std::path::PathBuf {
    crate::place::cached_jars("rxjava", "rxjava-3.1.12.jar", "RxJava 3")
}

/// RxJava 3's `Schedulers.computation()` given blocking calls (`java-rxjava --scheduler
/// computation`; held out, session 24): one thread per core, each holding its call while the
/// other requests wait in the workers' queues, so the limit is the cores. Its threads wait on
/// the network, not on a CPU: the pool, not the CPU, however the count matches the cores.
#[test]
fn rxjavas_computation_scheduler_given_blocking_calls_holds_one_call_per_core() {
    let name = "java-rxjava computation";
    let size = cores();
    let result = sweep_jvm_target(
        name,
        &rxjava_jars(),
        "java-rxjava/RxServer.java",
        &["--scheduler", "computation"],
        vec![1, size, 2 * size, 4 * size],
        Duration::from_millis(200),
    );
    let place = assert_thread_pool(
        name,
        &result,
        size,
        "-Drx3.computation-threads=N, which only lowers it",
    );
    // jcmd's whole name, or /proc's 15 bytes of it.
    let pool = place.pool.as_deref().unwrap_or_default();
    assert!(pool.starts_with("RxComputationTh"), "{name}: {pool}");
}

/// The same with `-Drx3.computation-threads=1` on the JVM's command line: a pool of 1. The
/// property only lowers the count (`ComputationScheduler.cap`: 4 on this 2-core machine gave
/// 2, session 24's first run), so the catalogue claims no size from it.
#[test]
fn rxjavas_computation_threads_property_lowers_the_pool_to_1() {
    let name = "java-rxjava computation 1";
    let result = sweep_jvm_target_with(
        name,
        &["-Drx3.computation-threads=1"],
        &rxjava_jars(),
        "java-rxjava/RxServer.java",
        &["--scheduler", "computation"],
        vec![1, 2, 4, 8],
        Duration::from_millis(200),
    );
    let place = assert_thread_pool(
        name,
        &result,
        1,
        "-Drx3.computation-threads=N, which only lowers it",
    );
    assert_eq!(
        place.setting.as_ref().and_then(|s| s.stated_here.as_ref()),
        None,
        "{name}: no size is claimed from the property"
    );
}

/// Where `scripts/install-test-deps.sh` puts scala-library 2.13 (Maven Central).
fn scala_jars() -> std::path::PathBuf {
    crate::place::cached_jars("scala", "scala-library-2.13.18.jar", "Scala's library")
}

/// Asserts `result` is Scala's global context as a pool of `size` blocked calls, placed in
/// `scala-execution-context-global` (jcmd's whole name, or /proc's 15 bytes of it) and named
/// with its system properties.
fn assert_scala_global(name: &str, result: &SweepResult, size: u32) {
    let place = assert_thread_pool(
        name,
        result,
        size,
        "-Dscala.concurrent.context.maxThreads=N (and numThreads)",
    );
    let pool = place.pool.as_deref().unwrap_or_default();
    assert!(pool.starts_with("scala-execution"), "{name}: {pool}");
}

/// Scala's global `ExecutionContext` given blocking calls without `blocking { }`
/// (`java-scala-global`; held out, written after the catalogue's entry): a fork-join pool of
/// one thread per core, each holding its call. Its threads wait on the network, not on a CPU:
/// the pool, however the count matches the cores.
#[test]
fn scalas_global_execution_context_holds_one_blocking_call_per_core() {
    let name = "java-scala-global";
    let size = cores();
    let result = sweep_jvm_target(
        name,
        &scala_jars(),
        "java-scala-global/ScalaGlobalServer.java",
        &[],
        vec![1, size, 2 * size, 4 * size],
        Duration::from_millis(200),
    );
    assert_scala_global(name, &result, size);
}

/// The same with `-Dscala.concurrent.context.numThreads=6` and `maxThreads=6`, as the entry's
/// setting says (`maxThreads` caps `numThreads`): a pool of 6 on any machine.
#[test]
fn scalas_global_context_with_num_and_max_threads_of_6_is_a_pool_of_6() {
    let name = "java-scala-global 6";
    let result = sweep_jvm_target_with(
        name,
        &[
            "-Dscala.concurrent.context.numThreads=6",
            "-Dscala.concurrent.context.maxThreads=6",
        ],
        &scala_jars(),
        "java-scala-global/ScalaGlobalServer.java",
        &[],
        vec![1, 6, 12, 24],
        Duration::from_millis(200),
    );
    assert_scala_global(name, &result, 6);
}

/// Held out (session 26, the catalogue's entry written before this test's first run): the
/// Micronaut target's `/loop`, the blocking call in a controller without `@ExecuteOn`, the
/// commonest Micronaut mistake. Micronaut 4 runs it on the Netty event loop that read the request (thread-selection MANUAL), one loop per core
/// (thread-core-ratio 1.0), each holding its connections. Truth by hand at 100 ms: the mock's 2
/// in flight (mean 1.95) at 8, 16 and 32 clients on 2 cores, with the two
/// `default-eventLoopGroup-2-N` threads in `SocketDispatcher.read0`. The loops are the place,
/// named with Micronaut's property and the better fix.
#[test]
fn a_micronaut_controller_without_execute_on_is_held_by_its_event_loops() {
    let _turn = beside_one_other();
    let mock = mock_with_delay_of(Duration::from_millis(200));
    let name = "java-micronaut /loop";
    let target = launch_micronaut(name, &mock, &[]);
    let size = cores();
    // Twice the loops: every loop holds connections.
    let result = sweep_framework(
        name,
        &target.url_of("/loop"),
        target.pid(),
        vec![1, size, 2 * size],
        &mock,
    );
    drop(target);
    let place = assert_thread_pool(
        name,
        &result,
        size,
        "micronaut.netty.event-loops.default.num-threads=N; better, move the blocking call off \
         the loop: @ExecuteOn(TaskExecutors.BLOCKING)",
    );
    let pool = place.pool.as_deref().unwrap_or_default();
    assert!(pool.starts_with("default-eventLo"), "{name}: {pool}");
}

/// tests/targets/java-micronaut, compiled with Micronaut's annotation processor, on a free port
/// calling `mock`, with `extra` arguments; java, jcmd or Micronaut's jars missing fail the test.
pub(crate) fn launch_micronaut(
    name: &'static str,
    mock: &chokepoint_mock::RunningMock,
    extra: &[&str],
) -> Target {
    require_tool("java", "-version");
    require_tool("jcmd", "-h");
    let jars = crate::place::cached_jars(
        "micronaut",
        "micronaut-http-server-netty-4.10.15.jar",
        "Micronaut 4",
    );
    let mut command = std::process::Command::new("java");
    command
        .args(java_program_on(
            &targets_dir().join("java-micronaut/MicronautServer.java"),
            Some(&jars),
        ))
        .args(["--port", "0", "--downstream", &format!("{}/", mock.url())])
        .args(extra);
    Target::launch(name, command)
}
