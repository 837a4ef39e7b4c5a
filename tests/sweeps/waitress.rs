//! waitress (`tests/targets/py-waitress`), held out: a WSGI server none of the thread-pool rules
//! was written on, run as deployed (`waitress-serve`), at its default of 4 task threads and with
//! `--threads 6`. Its requests past the threads wait in the dispatcher's queue, holding no
//! thread; /proc calls every thread `python3`, and py-spy names the task threads `waitress-N`.
//! Written before the target's first sweep (session 24). With `--threads 200` (session 27) it
//! holds out the interpreter-lock reading: more threads than one core of Python serves.
use crate::catalogue_pools::start_quiet;
use crate::common;
use crate::frameworks::{assert_held, require_tool, sweep_framework};

use chokepoint_diagnose::catalogue::Catalogue;
use chokepoint_result::{Kind, PlaceKind, PlaceSource, StackSource, SweepResult};
use common::*;
use std::process::Command;
use std::time::Duration;

/// The sweep of `waitress-serve` with `flags`, at `clients`, the mock at 100 ms (a task thread
/// spends nearly all of a request in the call, so py-spy's instant sees it there).
fn sweep_waitress(name: &str, flags: &[&str], clients: Vec<u32>) -> SweepResult {
    sweep_waitress_behind(name, flags, clients, Duration::from_millis(100))
}

/// The sweep of `waitress-serve` with `flags`, at `clients`, the mock at `delay`.
fn sweep_waitress_behind(
    name: &str,
    flags: &[&str],
    clients: Vec<u32>,
    delay: Duration,
) -> SweepResult {
    require_tool("waitress-serve", "--help");
    require_tool("py-spy", "--version");
    let mock = mock_with_delay_of(delay);
    let (server, port) = start_quiet(name, |port| {
        let mut command = Command::new("waitress-serve");
        command
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(flags)
            .arg("app:application")
            .env("DOWNSTREAM", format!("{}/", mock.url()))
            .current_dir(targets_dir().join("py-waitress"));
        command
    });
    let result = sweep_framework(
        name,
        &format!("http://127.0.0.1:{port}/"),
        server.pid(),
        clients,
        &mock,
    );
    drop(server);
    result
}

/// The finding of a waitress of `threads` task threads: a pool of that size, placed in the
/// `waitress` threads by py-spy, its knob waitress's `threads`.
fn assert_waitress_pool(name: &str, result: &SweepResult, threads: u32) {
    // The truth, from the mock: never more calls in flight than task threads.
    assert_eq!(
        most_downstream_in_flight(result),
        Some(u64::from(threads)),
        "{name}"
    );
    assert_finding(name, result, Kind::BlockingPool, f64::from(threads));
    let place = the_place(name, result);
    assert_eq!(
        place.source,
        Some(PlaceSource::Stacks(StackSource::PySpy)),
        "{name}: {place:?}"
    );
    assert_eq!(place.kind, Some(PlaceKind::ThreadPool), "{name}: {place:?}");
    assert_eq!(place.pool.as_deref(), Some("waitress"), "{name}: {place:?}");
    assert_held(name, &place, f64::from(threads));
    assert!(
        place
            .frames
            .iter()
            .any(|f| f.starts_with("call_downstream (app.py:")),
        "{name}: {:?}",
        place.frames
    );
    let entry = Catalogue::built_in()
        .setting_for("waitress-0")
        .expect("the catalogue knows waitress");
    assert_eq!(entry.setting, "threads=N (waitress-serve --threads=N)");
    let setting = place.setting.as_ref().expect("a knob named");
    assert_eq!(setting.setting, entry.setting, "{name}");
}

#[test]
fn waitress_at_its_defaults_is_a_pool_of_4_task_threads_named_with_its_threads_setting() {
    let _turn = beside_one_other();
    let name = "py-waitress";
    let result = sweep_waitress(name, &[], vec![1, 2, 4, 8, 16]);
    assert_waitress_pool(name, &result, 4);
}

#[test]
fn waitress_with_6_threads_is_a_pool_of_6_and_the_size_is_read_from_its_command_line() {
    let _turn = beside_one_other();
    let name = "py-waitress-6";
    let result = sweep_waitress(name, &["--threads", "6"], vec![1, 3, 6, 12, 24]);
    assert_waitress_pool(name, &result, 6);
    let place = the_place(name, &result);
    let stated = place
        .setting
        .as_ref()
        .and_then(|s| s.stated_here.as_ref())
        .unwrap_or_else(|| panic!("{name}: --threads 6 read from the command line: {place:?}"));
    assert_eq!(stated.size, 6, "{name}: {stated:?}");
}

/// Held out (session 27, after the interpreter-lock reading was written on FastAPI's dumps):
/// waitress with 200 task threads (`--threads 200`, `--connection-limit 400` past its default
/// 100) behind a 50 ms mock: far more threads than one core of Python serves. By hand
/// (`chokepoint load -c N -d 4s`, the process's CPU from `/proc/PID/stat`, 100 threads): 25
/// clients 472 req/s on 0.42 of a core; 50, 868 on 0.87; 75, 1,086 on 1.02; 100, 1,110 on
/// 1.07. No pool holds the calls (about 70 in flight of 200 threads): the threads queue for
/// CPython's interpreter lock, and the limit is one core. It must be `cpu-bound` on that lock,
/// not a pool of the threads or of the calls it held.
#[test]
fn waitress_with_more_threads_than_one_core_of_python_serves_is_cpu_bound_on_the_gil() {
    let _one = one_at_a_time();
    let name = "py-waitress-200";
    let result = sweep_waitress_behind(
        name,
        &["--threads", "200", "--connection-limit", "400"],
        vec![1, 25, 50, 100, 150, 200, 250],
        Duration::from_millis(50),
    );
    assert_cpu_bound_on_the_interpreter_lock(name, &result);
}
