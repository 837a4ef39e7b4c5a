//! A pool that grows instead of queueing, swept live: `tests/targets/java-pools` `/cached`, a
//! `newCachedThreadPool` whose thread per request makes a blocking call to the mock (50 ms)
//! and burns 2 ms of CPU. Swept as a user sweeps it (adaptive, the target's PID observed), the
//! finding must be `growing-pool`, naming the pool with its threads per step, not a plain
//! `cpu-bound` (what the diagnosis said of such a service before).
//!
//! Needs java (`.ci/run` installs it; its absence fails the test under CI).

use crate::common;

use chokepoint_result::{Diagnosis, Fact, Kind, PlaceKind};
use common::*;

/// The growing pool's fact: its pool, clients and threads per step, and the kind it replaced.
fn growing_fact(diagnosis: &Diagnosis) -> (&String, &Vec<u32>, &Vec<f64>, &Kind) {
    diagnosis
        .facts()
        .iter()
        .find_map(|fact| match fact {
            Fact::GrowingPool {
                pool,
                clients,
                threads,
                instead_of,
                ..
            } => Some((pool, clients, threads, instead_of)),
            _ => None,
        })
        .expect("the finding carries the growing pool's fact")
}

#[test]
fn a_cached_thread_pool_is_named_a_growing_pool_with_its_threads_per_step() {
    require_java();
    let _one = one_at_a_time();
    let mock = mock_with_delay();
    let target = launch_java_pools(&mock);
    let config = chokepoint_experiment::SweepConfig::new(&target.url_of("/cached"))
        .expect("a valid target URL")
        .with_target_pid(target.pid());
    let result = sweep_with(
        "java-pools /cached",
        config,
        None,
        ADAPTIVE_STEP,
        256,
        Some(&mock),
    );
    let diagnosis = assert_kind("java-pools /cached", &result, Kind::GrowingPool);
    let (pool, clients, threads, instead_of) = growing_fact(diagnosis);
    println!("{pool}: {threads:?} threads at {clients:?} clients, instead of {instead_of}");
    // Executors.newCachedThreadPool's default factory names its threads pool-N-thread-M.
    assert_eq!(pool, "pool-1-thread");
    // A thread per client in flight at every step (and idle ones kept 60 s after larger ones).
    for (c, t) in clients.iter().zip(threads) {
        assert!(*t >= f64::from(*c) * 0.8, "{c} clients: {t} threads");
    }
    let largest = *clients.last().expect("steps");
    assert!(largest >= 128, "the sweep went on growing: {clients:?}");
    assert!(
        diagnosis.summary.contains("grows a thread per client"),
        "{}",
        diagnosis.summary
    );
    assert!(
        diagnosis
            .key_evidence
            .iter()
            .any(|line| line.starts_with("Pool `pool-1-thread`")),
        "{:?}",
        diagnosis.key_evidence
    );
    // The place is the pool that grew, at the largest step.
    let place = diagnosis
        .place
        .as_ref()
        .expect("the growing pool is the place");
    assert_eq!(place.kind, Some(PlaceKind::GrowingPool));
    assert_eq!(place.pool.as_deref(), Some("pool-1-thread"));
    assert_eq!(place.clients, largest);
    let attribution = diagnosis.attribution.as_deref().unwrap_or_default();
    assert!(
        attribution.starts_with("pool `pool-1-thread`, grown to"),
        "{attribution}"
    );
}

/// Held out (session 24, written before the target's first sweep): RxJava 3's `Schedulers.io()`
/// at its defaults (`tests/targets/java-rxjava`), the library of seed 004's Micronaut service,
/// behind an event-loop server as there. Its cached workers grow a thread per request in flight;
/// the finding is `growing-pool`, placed in `RxCachedThreadScheduler` with the catalogue's word
/// that the pool has no bound to raise.
#[test]
fn rxjavas_io_scheduler_is_named_a_growing_pool_with_the_catalogues_word() {
    require_java();
    let jars = crate::place::cached_jars("rxjava", "rxjava-3.1.12.jar", "RxJava 3");
    let _one = one_at_a_time();
    let mock = mock_with_delay();
    let target = launch_java_target(
        "java-rxjava",
        &jars,
        "java-rxjava/RxServer.java",
        &mock,
        &[],
    );
    let result = sweep_to_256("java-rxjava", &target, &mock);
    drop(target);
    assert_named_growing_pool("java-rxjava", &result, "RxCachedThreadScheduler");
}

/// The finding of `name`'s sweep is `growing-pool`, placed in the catalogue's pool `threads`
/// (its threads' name in a dump, without the counter) with its setting: the pool `/proc` saw
/// (the name's first 15 bytes) had a thread per client or more at every step.
fn assert_named_growing_pool(name: &str, result: &chokepoint_result::SweepResult, threads: &str) {
    let diagnosis = assert_kind(name, result, Kind::GrowingPool);
    let (pool, clients, counts, _) = growing_fact(diagnosis);
    println!("{name}: {pool}: {counts:?} threads at {clients:?} clients");
    // /proc keeps 15 bytes of a thread's name; the place takes the dump's name.
    assert_eq!(pool, &threads[..15], "{name}");
    for (c, t) in clients.iter().zip(counts) {
        assert!(
            *t >= f64::from(*c) * 0.8,
            "{name}: {c} clients: {t} threads"
        );
    }
    let place = diagnosis
        .place
        .as_ref()
        .expect("the growing pool is the place");
    assert_eq!(place.kind, Some(PlaceKind::GrowingPool), "{name}");
    assert_eq!(place.pool.as_deref(), Some(threads), "{name}");
    let entry = chokepoint_diagnose::catalogue::Catalogue::built_in()
        .setting_for(&format!("{threads}-1"))
        .unwrap_or_else(|| panic!("{name}: the catalogue knows `{threads}`"));
    assert_eq!(place.setting.as_ref(), Some(&entry), "{name}");
}

/// Held out (session 26, the catalogue's entry written from Micronaut's source before the
/// target's first run): seed 004's framework, Micronaut 4 at its defaults
/// (`tests/targets/java-micronaut`), a controller whose blocking call to the mock runs where
/// Micronaut's guide puts blocking work, `@ExecuteOn(TaskExecutors.BLOCKING)`, then 2 ms of CPU
/// (`--work-us 2000`, as java-rxjava burns). On Java 17 that is the io executor, a cached pool:
/// the finding is `growing-pool`, placed in `io-executor-thread` with the catalogue's word that
/// it has no bound to raise. Swept against the 50 ms mock; by hand against a 100 ms one
/// (`chokepoint load` after a warm-up): 64 clients, the mock's mean 51 in flight, 65
/// io-executor threads; 256 clients, mean 96 (about 950 req/s: 2 ms each fills the 2 cores),
/// 267 threads. Passed its first two runs (774 and 772 req/s from 32 clients, 1.9 cores, 245
/// and 257 threads at 256 clients).
#[test]
fn micronauts_blocking_executor_on_java_17_is_named_a_growing_pool_with_the_catalogues_word() {
    let _one = one_at_a_time();
    let mock = mock_with_delay();
    let target =
        crate::jvm_frameworks::launch_micronaut("java-micronaut", &mock, &["--work-us", "2000"]);
    let result = sweep_to_256("java-micronaut", &target, &mock);
    drop(target);
    assert_named_growing_pool("java-micronaut", &result, "io-executor-thread");
}

/// `java` and `jcmd`, which the JVM tests need (`.ci/run` installs them): missing, the test fails.
fn require_java() {
    crate::frameworks::require_tool("java", "-version");
    crate::frameworks::require_tool("jcmd", "-h");
}

/// Held out (session 27, built after the growing-pool rule read what the pool works on from
/// half the largest step on): FastAPI's `def` endpoint (`tests/targets/py-fastapi-sync`) with
/// AnyIO's thread limiter raised from 40 to 1000 (`--thread-limit 1000`), as a user does once
/// they find the 40. AnyIO then starts a worker thread per request in the call, and CPython's
/// interpreter lock stops them: by hand against a 100 ms mock (`chokepoint load`, 4 s a step):
/// 16 → 256 clients, 17 → 257 threads of the process, the mock's mean 11 → 117 in flight and
/// its most 16 → 236 (about 110 → 1,170 req/s, 0.44 of ideal at 256), the process near one
/// core; py-spy at 256 clients: 205 of 256 workers idle, 45 waiting for the GIL.
///
/// The truth is the GIL, whichever way the run tells it: the interpreter-lock rule (written
/// after the first runs of this test, on the dumps above) must decide the CPU of one core. When
/// the pool kept a thread per client the finding is `growing-pool` stopped by the lock, placed
/// in py-spy's `AnyIO worker thread` (Python names no thread for `/proc`: all `python3`) with
/// the words that AnyIO's default of 40 was raised; when requests queued at the event loop
/// before the pool (192 threads at 256 clients in one run), `cpu-bound` on that lock.
#[test]
fn fastapi_with_its_thread_limiter_raised_is_stopped_by_the_gil_its_pool_grown_with_it() {
    crate::frameworks::require_python_modules("fastapi, uvicorn, anyio");
    crate::frameworks::require_tool("py-spy", "--version");
    let _one = one_at_a_time();
    let mock = mock_with_delay();
    let mut command = std::process::Command::new("python3");
    command
        .arg(targets_dir().join("py-fastapi-sync/server.py"))
        .args(["--port", "0", "--downstream", &format!("{}/", mock.url())])
        .args(["--thread-limit", "1000"]);
    let target = Target::launch("py-fastapi-sync", command);
    let result = sweep_to_256("py-fastapi-raised", &target, &mock);
    drop(target);
    let name = "py-fastapi-raised";
    let diagnosis = printed_diagnosis(name, &result);
    let summary = &diagnosis.summary;
    assert!(
        diagnosis
            .facts()
            .iter()
            .any(|fact| matches!(fact, Fact::InterpreterLock { .. })),
        "{name}: the interpreter lock decided nothing: {summary}"
    );
    assert_eq!(diagnosis.limit(), Some(1.0), "{name}: one core: {summary}");
    match diagnosis.kind() {
        Kind::GrowingPool => {
            let (pool, clients, threads, instead_of) = growing_fact(diagnosis);
            println!("{name}: {pool}: {threads:?} threads at {clients:?} clients");
            assert_eq!(*instead_of, Kind::CpuBound, "{name}");
            assert!(
                summary.contains("what stops it is CPython's interpreter lock")
                    && summary.contains("pool `AnyIO worker thread` grows"),
                "{summary}"
            );
            let place = diagnosis
                .place
                .as_ref()
                .expect("the growing pool is the place");
            assert_eq!(place.kind, Some(PlaceKind::GrowingPool));
            // `/proc` sees one pool, the process; py-spy names the threads that grew.
            assert_eq!(
                place.pool.as_deref(),
                Some("AnyIO worker thread"),
                "{place:?}"
            );
            // Its size is py-spy's count of those threads, not the process's with its own.
            assert_eq!(
                place.source,
                Some(chokepoint_result::PlaceSource::Stacks(
                    chokepoint_result::StackSource::PySpy
                )),
                "{place:?}"
            );
            let setting = place
                .setting
                .as_ref()
                .expect("the catalogue knows AnyIO's limiter");
            assert!(setting
                .framework
                .starts_with("AnyIO's default thread limiter"));
            // Its default is 40 and the pool grew to about 256: the finding says it was
            // raised, not that it is 40.
            let evidence = diagnosis.evidence.join(" ");
            assert!(
                evidence.contains("the default is fewer, so the service raised it itself"),
                "{evidence}"
            );
        }
        Kind::CpuBound => println!("{name}: cpu-bound on the lock: {summary}"),
        other => panic!("{name}: {other:?}: {summary}"),
    }
}

/// The adaptive sweep to 256 clients of `target`, observed, calling `mock`, as a user sweeps a
/// service whose pool may grow.
fn sweep_to_256(
    name: &str,
    target: &Target,
    mock: &chokepoint_mock::RunningMock,
) -> chokepoint_result::SweepResult {
    let config = chokepoint_experiment::SweepConfig::new(&target.url())
        .expect("a valid target URL")
        .with_target_pid(target.pid());
    sweep_with(name, config, None, ADAPTIVE_STEP, 256, Some(mock))
}
