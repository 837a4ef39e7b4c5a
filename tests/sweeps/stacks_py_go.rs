//! Where the threads of a Python or Go service wait, from the runtime's own tools (issue 12):
//! `py-spy dump` on tests/targets/py-threadpool, `net/http/pprof` on tests/targets/go-semaphore,
//! both real processes swept with a chokepoint mock; and what a sweep says when the tool is
//! missing, hangs, or the endpoint is absent or silent. A missing py-spy, python3 or go fails
//! the test in CI (`.ci/run` installs them).
use crate::common;

use chokepoint_observe::stacks::{tool_for, StackOptions};
use chokepoint_result::{ObservationNote, PoolStacks, Step, SweepResult, WaitKind};
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn launch_go_semaphore_with(mock: &chokepoint_mock::RunningMock, flags: &[&str]) -> Target {
    let mut command = Command::new(build_go_target("go-semaphore"));
    command
        .args(["-port", "0", "-downstream", &mock.url()])
        .args(flags);
    Target::launch("go-semaphore", command)
}

fn step_at(result: &SweepResult, clients: u32) -> &Step {
    result
        .steps
        .iter()
        .find(|step| step.clients == clients)
        .unwrap_or_else(|| panic!("no step at {clients} clients"))
}

/// The stack in `pool` where its threads do `kind`, the most threads first.
fn stack_of(pool: &PoolStacks, kind: WaitKind) -> &chokepoint_result::SharedStack {
    pool.stacks
        .iter()
        .find(|stack| stack.waiting == Some(kind))
        .unwrap_or_else(|| panic!("no {kind:?} stack in {pool:#?}"))
}

#[test]
fn py_spy_finds_the_thread_pools_six_workers_in_the_services_downstream_call() {
    if !toolchain_present("python3", "--version") || !toolchain_present("py-spy", "--version") {
        return;
    }
    let _turn = beside_one_other();
    let mock = mock_with_delay();
    let target = launch_py_threadpool(&mock);
    let result = sweep_target(&target, Some(vec![1, 6, 24]), STEP, 24, Some(&mock));
    drop(target);
    print_stacks("py-threadpool", &result);
    for step in &result.steps {
        let stacks = step.stacks.as_ref().expect("py-spy's stacks at every step");
        assert_eq!(stacks.source, Some(chokepoint_result::StackSource::PySpy));
        assert!(stacks.snapshots >= 1, "{} clients", step.clients);
        assert!(
            step.observation_notes.is_empty(),
            "{} clients: {:?}",
            step.clients,
            step.observation_notes
        );
        assert!(
            step.threads_by_pool.is_some(),
            "the /proc pools are still read"
        );
    }
    // Past the pool's 6, the executor's 6 workers are all in the downstream call, in the
    // service's own function; the connection threads wait for them.
    let workers = pool(step_at(&result, 24), "worker");
    assert_eq!(workers.most_threads, 6);
    // In the call: waiting on its socket, or for the instant of the dump on a CPU reading the
    // answer (py-spy marks those active; one dump in a full-suite run caught 2 of the 6 so).
    let in_the_call: f64 = workers
        .stacks
        .iter()
        .filter(|s| s.frames.iter().any(|f| f.starts_with("call_downstream")))
        .map(|s| s.threads)
        .sum();
    assert!(in_the_call >= 5.0, "{workers:#?}");
    assert!(
        workers.threads_in(WaitKind::Downstream) >= 1.0,
        "{workers:#?}"
    );
    let call = stack_of(workers, WaitKind::Downstream);
    // The line of the service's own call, read from its source (the frame names where it is).
    let source = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/targets/py-threadpool/server.py"),
    )
    .unwrap();
    let line = 1 + source
        .lines()
        .position(|l| l.contains("urllib.request.urlopen(downstream"))
        .expect("server.py calls urlopen");
    assert_eq!(
        call.frames.last().unwrap(),
        &format!("call_downstream (server.py:{line})")
    );
    assert!(
        call.frames
            .contains(&"urlopen (urllib/request.py)".to_string()),
        "{:?}",
        call.frames
    );
    let connections = pool(step_at(&result, 24), "Thread (process_request_thread)");
    assert!(connections.threads >= 18.0, "{connections:#?}");
    // At 1 client, one call at a time. The executor may hold a second worker: it starts one
    // when a request comes before the last worker has marked itself idle (CPython's
    // `_adjust_thread_count` races the worker's `_idle_semaphore.release()`), more likely the
    // more requests it has seen (the warm-up's: a flake-hunt round found 2 workers).
    let alone = pool(step_at(&result, 1), "worker");
    assert!(alone.most_threads <= 2, "{alone:#?}");
    assert!(
        alone.threads_in(WaitKind::Downstream) <= 1.0,
        "one call at a time: {alone:#?}"
    );
}

/// `PATH` without any directory holding `tool`.
fn path_without(tool: &str) -> std::ffi::OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::env::split_paths(&path).filter(|dir| !dir.join(tool).exists()))
        .expect("a PATH")
}

/// `PATH` whose `py-spy` is a shell script of `body`, in a folder `name` of its own.
fn path_with_py_spy(name: &str, body: &str) -> std::ffi::OsString {
    use std::os::unix::fs::PermissionsExt;
    let fake = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&fake).unwrap();
    let script = fake.join("py-spy");
    std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut path = vec![fake];
    path.extend(std::env::split_paths(&path_without("py-spy")));
    std::env::join_paths(path).unwrap()
}

/// `chokepoint sweep` of `target` at 2 and 6 clients, steps of at most `step`, with `path` as
/// its PATH; its JSON.
fn cli_sweep(
    target: &Target,
    mock: &chokepoint_mock::RunningMock,
    path: &std::ffi::OsStr,
    step: &str,
) -> SweepResult {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("stacks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json: PathBuf = dir.join("sweep.json");
    let output = Command::new(env!("CARGO_BIN_EXE_chokepoint"))
        .args(["sweep", &target.url(), "--clients", "2,6", "--step", step])
        .args(["--mock", &mock.url(), "--pid", &target.pid().to_string()])
        .arg("--json")
        .arg(&json)
        .env("PATH", path)
        .output()
        .expect("chokepoint runs");
    assert!(
        output.status.success(),
        "the sweep ends well without the tool: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).expect("the sweep's JSON")
}

#[test]
fn without_py_spy_or_with_one_that_hangs_each_step_says_so_and_keeps_its_proc_pools() {
    if !toolchain_present("python3", "--version") {
        return;
    }
    let _turn = beside_one_other();
    let mock = mock_with_delay();
    let target = launch_py_threadpool(&mock);

    let missing = cli_sweep(&target, &mock, &path_without("py-spy"), "1s");
    for step in &missing.steps {
        assert_eq!(step.stacks, None);
        assert!(
            step.observation_notes
                .contains(&ObservationNote::ToolMissing {
                    tool: "py-spy".into(),
                    install: "pip install py-spy".into(),
                }),
            "{} clients: {:?}",
            step.clients,
            step.observation_notes
        );
        let pools = step.threads_by_pool.as_ref().expect("the /proc pools");
        assert!(!pools.pools.is_empty());
    }

    // A py-spy that never answers is killed after its time limit; the sweep goes on.
    let hanging = cli_sweep(
        &target,
        &mock,
        &path_with_py_spy("hanging-py-spy", "exec sleep 30"),
        "1s",
    );
    drop(target);
    for step in &hanging.steps {
        assert_eq!(step.stacks, None);
        assert!(
            step.observation_notes.iter().any(|note| matches!(note,
                ObservationNote::ToolFailed { tool, why }
                    if tool == "py-spy" && why.contains("no answer within 2 s"))),
            "{} clients: {:?}",
            step.clients,
            step.observation_notes
        );
    }
}

#[test]
fn a_step_that_has_settled_waits_for_a_slow_py_spys_first_dump() {
    if !toolchain_present("python3", "--version") || !toolchain_present("py-spy", "--version") {
        return;
    }
    let _one = one_at_a_time();
    let mock = mock_with_delay();
    let target = launch_py_threadpool(&mock);
    // A py-spy that takes 1.5 s to start: its first dump ends ~1.9 s into a step that has
    // settled at ~1.5 s (py-threadpool's throughput is steady from its first requests). Ended
    // then, the step would have no stacks.
    let real = std::process::Command::new("sh")
        .args(["-c", "command -v py-spy"])
        .output()
        .expect("sh runs");
    let real = String::from_utf8_lossy(&real.stdout).trim().to_string();
    let slow = cli_sweep(
        &target,
        &mock,
        &path_with_py_spy("slow-py-spy", &format!("sleep 1.5\nexec {real} \"$@\"")),
        "6s",
    );
    drop(target);
    for step in &slow.steps {
        let stacks = step.stacks.as_ref().unwrap_or_else(|| {
            panic!(
                "{} clients: no stacks, ended {:?} after {:.1} s: {:?}",
                step.clients, step.ended, step.measured_s, step.observation_notes
            )
        });
        assert!(stacks.snapshots >= 1, "{} clients", step.clients);
        assert!(
            step.measured_s >= 1.8,
            "{} clients: {:.1} s",
            step.clients,
            step.measured_s
        );
        // The first dump is the subject. A later dump of this py-spy (1.5 s of sleep, then
        // the dump, against the 2 s limit) may miss the limit on a busy machine: "1 of 2
        // snapshots failed" in a full run (session 23); a step whose every dump failed is
        // noted without "snapshots failed". Nothing else may be noted.
        assert!(
            step.observation_notes.iter().all(|note| matches!(note,
                ObservationNote::ToolFailed { tool, why }
                    if tool == "py-spy" && why.contains(" snapshots failed"))),
            "{} clients: {:?}",
            step.clients,
            step.observation_notes
        );
    }
}

#[test]
fn pprof_finds_go_semaphores_handlers_waiting_for_a_slot_or_in_the_downstream_call() {
    if !toolchain_present("go", "version") {
        return;
    }
    let _turn = beside_two_others();
    // Behind a 200 ms call a client spends a small share of its time between requests, even
    // when a busy machine slows the generator (at 50 ms a snapshot caught 6 of 24 clients
    // between requests and only 5 handlers queued for a slot).
    let mock = mock_with_delay_of(Duration::from_millis(200));
    let target = launch_go_semaphore_with(&mock, &["-pprof"]);
    let result = sweep_target(&target, Some(vec![6, 24]), STEP, 24, Some(&mock));
    drop(target);
    print_stacks("go-semaphore", &result);
    let step = step_at(&result, 24);
    assert!(
        step.observation_notes.is_empty(),
        "{:?}",
        step.observation_notes
    );
    assert_eq!(
        step.stacks.as_ref().unwrap().source,
        Some(chokepoint_result::StackSource::Pprof)
    );
    let handlers = pool(step, "net/http.(*Server).Serve");
    // 12 hold a slot and wait in the downstream call; the others wait to send into the channel.
    let waiting = stack_of(handlers, WaitKind::Lock);
    assert_eq!(waiting.frames[0], "chan send");
    assert!(
        waiting.frames[1].starts_with("main.main.func1 (main.go:"),
        "{:?}",
        waiting.frames
    );
    assert!(waiting.threads >= 8.0, "{handlers:#?}");
    let calling = stack_of(handlers, WaitKind::Downstream);
    assert!(
        calling
            .frames
            .contains(&"net/http.(*Client).Get".to_string()),
        "{:?}",
        calling.frames
    );
    assert!(calling
        .frames
        .last()
        .unwrap()
        .starts_with("main.main.func1 (main.go:"));
    assert!(
        (8.0..=12.0).contains(&handlers.threads_in(WaitKind::Downstream)),
        "the semaphore lets 12 in: {handlers:#?}"
    );
    // At 6 clients no handler waits for a slot.
    let below = pool(step_at(&result, 6), "net/http.(*Server).Serve");
    assert_eq!(below.threads_in(WaitKind::Lock), 0.0, "{below:#?}");
}

#[test]
fn a_go_target_without_pprof_or_a_silent_endpoint_is_a_note_not_a_hang() {
    if !toolchain_present("go", "version") {
        return;
    }
    let _turn = beside_two_others();
    let mock = mock_with_delay();
    let target = launch_go_semaphore_with(&mock, &[]);
    let result = sweep_target(&target, Some(vec![2]), STEP, 2, Some(&mock));
    drop(target);
    let step = &result.steps[0];
    assert_eq!(step.stacks, None);
    assert!(
        step.observation_notes.iter().any(|note| matches!(note,
            ObservationNote::ToolFailed { tool, why }
                if tool == "pprof"
                    && why.contains("no net/http/pprof at http://127.0.0.1:")
                    && why.contains("import _ \"net/http/pprof\""))),
        "{:?}",
        step.observation_notes
    );

    // An endpoint that accepts and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let options = StackOptions {
        pprof_url: Some(format!(
            "http://{}/debug/pprof",
            silent.local_addr().unwrap()
        )),
        ..StackOptions::default()
    };
    let mut tool = tool_for(std::process::id() as i32, &options)
        .expect("--pprof gives a tool")
        .expect("whatever the runtime");
    let (stop, stopped) = std::sync::mpsc::channel();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(3));
        let _ = stop.send(());
    });
    let (evidence, notes) = tool.watch_step(&stopped, &Default::default());
    stopper.join().unwrap();
    assert_eq!(evidence, None);
    assert!(
        matches!(&notes[..], [ObservationNote::ToolFailed { why, .. }]
            if why.contains("no answer within 2 s")),
        "{notes:?}"
    );
}

#[test]
fn a_pprof_url_off_loopback_is_refused_in_one_line() {
    for (url, says) in [
        ("http://192.0.2.1:6060/debug/pprof", "loopback"),
        ("https://127.0.0.1:6060/debug/pprof", "http://"),
        ("http://127.0.0.1/debug/pprof", "no port"),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_chokepoint"))
            .args(["sweep", "http://127.0.0.1:9/", "--pprof", url])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{url}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(says), "{url}: {stderr}");
    }
}
