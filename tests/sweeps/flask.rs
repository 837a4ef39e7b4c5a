//! Flask's own server (`app.run`, Werkzeug's threaded development server), held out for the
//! interpreter-lock reading: tests/targets/py-flask-dev was written after that reading (session
//! 27), and nothing in the diagnosis was changed on it.

use crate::catalogue_pools::start_quiet;
use crate::common::*;
use chokepoint_result::{Fact, Kind};
use std::process::Command;
use std::time::Duration;

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
    crate::frameworks::require_python_modules("flask, requests");
    crate::frameworks::require_tool("py-spy", "--version");
    let _one = one_at_a_time();
    let name = "py-flask-dev";
    let mock = mock_with_delay_of(Duration::from_millis(50));
    let (server, port) = start_quiet(name, |port| {
        let mut command = Command::new("python3");
        command
            .arg(targets_dir().join("py-flask-dev/app.py"))
            .args(["--port", &port.to_string()])
            .args(["--downstream", &format!("{}/", mock.url())]);
        command
    });
    let config = chokepoint_experiment::SweepConfig::new(&format!("http://127.0.0.1:{port}/"))
        .expect("a valid URL")
        .with_target_pid(server.pid());
    let result = sweep_with(name, config, None, ADAPTIVE_STEP, 128, Some(&mock));
    drop(server);
    // The truth, from the mock: no pool held the calls, never near one a client.
    let most = most_downstream_in_flight(&result).expect("the mock's counts");
    let clients = result.steps.iter().map(|s| s.clients).max().unwrap_or(0);
    assert!(
        most * 2 < u64::from(clients),
        "{name}: {most} calls at once at {clients} clients"
    );
    assert_finding(name, &result, Kind::CpuBound, 1.0);
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    assert!(
        diagnosis
            .facts()
            .iter()
            .any(|fact| matches!(fact, Fact::InterpreterLock { .. })),
        "{name}: the interpreter lock decided nothing: {}",
        diagnosis.summary
    );
}
