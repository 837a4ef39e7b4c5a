//! Flask's own server (`app.run`, Werkzeug's threaded development server), held out for two
//! rules written before it (session 28): the interpreter-lock reading (session 27), and the
//! pool grown in front of a limit (`pool-grew-in-front`, with `--pool 10`). Nothing in the
//! diagnosis was changed on it.

use crate::catalogue_pools::start_quiet;
use crate::common::*;
use chokepoint_result::{Fact, Kind, PlaceKind, SweepResult};
use std::process::Command;
use std::time::Duration;

/// The adaptive sweep of tests/targets/py-flask-dev with `flags`, behind a 50 ms mock, to 128
/// clients, the process observed with py-spy's stacks: as a user sweeps it.
fn sweep_flask(name: &str, flags: &[&str]) -> SweepResult {
    crate::frameworks::require_python_modules("flask, requests");
    crate::frameworks::require_tool("py-spy", "--version");
    let mock = mock_with_delay_of(Duration::from_millis(50));
    let (server, port) = start_quiet(name, |port| {
        let mut command = Command::new("python3");
        command
            .arg(targets_dir().join("py-flask-dev/app.py"))
            .args(["--port", &port.to_string()])
            .args(["--downstream", &format!("{}/", mock.url())])
            .args(flags);
        command
    });
    let config = chokepoint_experiment::SweepConfig::new(&format!("http://127.0.0.1:{port}/"))
        .expect("a valid URL")
        .with_target_pid(server.pid());
    let result = sweep_with(name, config, None, ADAPTIVE_STEP, 128, Some(&mock));
    drop(server);
    result
}

/// tests/targets/py-flask-dev behind a 50 ms mock, swept as a user sweeps it (adaptive, to 128
/// clients, the process observed, py-spy's stacks). Truth by hand (`chokepoint load -c N -d 4s`,
/// the process's CPU from `/proc/PID/stat`, the mock's counts; session 28): 10 clients, 0.50 of
/// a core, 9.0 calls in flight; 25, 1.00 core, 18.9; 50, 1.04, 20.3; 100, 1.04, 17.7; 200,
/// 1.05, 21.6. About 400 req/s at one core from 25 clients on, with 20 to 50 threads alive at
/// 50 to 200 clients, most idle in a socket wait. The server's main thread accepts one
/// connection at a time and waits in `Thread.start` until the new thread runs (py-spy), which
/// takes the interpreter lock; the other connections wait in the listen queue. Nothing bounds
/// the threads; the limit is one core of Python at a time. It must be `cpu-bound` 1 on that
/// lock.
#[test]
fn flasks_own_threaded_server_is_cpu_bound_on_the_gil() {
    let _one = one_at_a_time();
    let name = "py-flask-dev";
    let result = sweep_flask(name, &[]);
    // The truth, from the mock: fewer calls at once than clients at the largest step (29 to
    // 43 of 64 to 200 in the runs so far), the rest queued in the process.
    let most = most_downstream_in_flight(&result).expect("the mock's counts");
    let clients = result.steps.iter().map(|s| s.clients).max().unwrap_or(0);
    assert!(
        most < u64::from(clients),
        "{name}: {most} calls at once at {clients} clients"
    );
    assert_cpu_bound_on_the_interpreter_lock(name, &result);
}

/// tests/targets/py-flask-dev `--pool 10`: every request calls through one `requests.Session`
/// whose adapter keeps 10 connections and blocks for one (`pool_block=True`). Truth by hand
/// (session 28, 50 ms mock, `chokepoint load -c N -d 4s`): the mock's most in flight 1, 5, 10,
/// 10, 10, 10 at 1, 5, 10, 20, 40, 80 clients (mean 9.5, about 190 req/s), the process on half
/// a core, and its threads a client's each plus the main one (12 at 10 clients, 81 at 80): the
/// requests past 10 wait in Werkzeug's threads, in urllib3's `_get_conn`. It must be the pool of
/// 10, placed in urllib3's pool with its `pool_block` setting, and tell the threads grown in
/// front of it (the rule written before this target; its first sweep from the command line
/// told them: 2 → 3 → 9 → 14 → 35 threads at 1 → 2 → 8 → 12 → 32 clients).
#[test]
fn flask_calling_through_a_blocking_pool_of_10_is_that_pool_with_a_thread_per_request_in_front() {
    // Alone: the threads in front are Werkzeug's accept loop keeping up with the clients, which
    // takes the interpreter lock; a partner's CPU would slow it and so the count.
    let _one = one_at_a_time();
    let name = "py-flask-dev --pool 10";
    let result = sweep_flask(name, &["--pool", "10"]);
    assert_eq!(
        most_downstream_in_flight(&result),
        Some(10),
        "{name}: the truth"
    );
    assert_finding(name, &result, Kind::BlockingPool, 10.0);
    let place = the_place(name, &result);
    assert_eq!(
        place.kind,
        Some(PlaceKind::ConnectionPool),
        "{name}: {place:?}"
    );
    let setting = place.setting.as_ref().expect("urllib3's entry");
    assert!(setting.setting.contains("pool_block=True"), "{setting:?}");
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    let (clients, threads, named) = diagnosis
        .facts()
        .iter()
        .find_map(|fact| match fact {
            Fact::PoolGrewInFront {
                clients,
                threads,
                named_in_stacks,
                ..
            } => Some((clients.clone(), threads.clone(), named_in_stacks.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{name}: no pool grown in front: {:?}", diagnosis.evidence));
    println!("{name}: {threads:?} threads at {clients:?} clients, in front, as {named:?}");
    // `/proc` sees the process (`python3`); py-spy names Werkzeug's connection threads.
    assert!(
        named
            .as_deref()
            .is_some_and(|n| n.contains("process_request_thread")),
        "{name}: {named:?}"
    );
    let (Some(&largest), Some(&most)) = (clients.last(), threads.last()) else {
        panic!("{name}: no steps in the fact");
    };
    assert!(
        most >= f64::from(largest),
        "{name}: {most} threads at {largest} clients"
    );
}
