//! waitress (`tests/targets/py-waitress`), held out: a WSGI server none of the thread-pool rules
//! was written on, run as deployed (`waitress-serve`), at its default of 4 task threads and with
//! `--threads 6`. Its requests past the threads wait in the dispatcher's queue, holding no
//! thread; /proc calls every thread `python3`, and py-spy names the task threads `waitress-N`.
//! Written before the target's first sweep (session 24).
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
    require_tool("waitress-serve", "--help");
    require_tool("py-spy", "--version");
    let mock = mock_with_delay_of(Duration::from_millis(100));
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
