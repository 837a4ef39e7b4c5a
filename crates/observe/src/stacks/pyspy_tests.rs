//! The py-spy reader on real dumps (`py-spy 0.4.3`, CPython 3.11.7), saved in
//! `crates/observe/tests/data/py-spy/` with the scripts that made the smaller ones.
use super::*;
use crate::stacks::fold;
use crate::stacks::test_support::{data, pool, stack_of, strings};
use crate::threads::parse_syscall;

/// The dump's threads as stacks, each OS thread's activity given by the thread's name.
fn stacks(name: &str, activity: impl Fn(&str) -> Option<Activity>) -> Vec<ThreadStack> {
    parse_dump(&data("py-spy", name))
        .expect("a real dump parses")
        .iter()
        .map(|thread| {
            thread_stack(
                thread,
                activity(thread.thread_name.as_deref().unwrap_or("")),
            )
        })
        .collect()
}

/// Each OS thread's activity from the `/proc` lines saved beside a dump (`TID STATE SYSCALL`).
fn proc_activities(name: &str) -> std::collections::HashMap<i32, Activity> {
    data("py-spy", name)
        .lines()
        .filter_map(|line| {
            let mut fields = line.splitn(3, ' ');
            let tid = fields.next()?.parse().ok()?;
            let state = fields.next()?.chars().next()?;
            let syscall = parse_syscall(fields.next().unwrap_or_default());
            Some((tid, classify_syscall(state, syscall, None, |_| true).0))
        })
        .collect()
}

fn stacks_with_proc(name: &str) -> Vec<ThreadStack> {
    let activities = proc_activities(&name.replace(".json", ".proc"));
    parse_dump(&data("py-spy", name))
        .expect("a real dump parses")
        .iter()
        .map(|thread| {
            let activity = thread
                .os_thread_id
                .and_then(|tid| activities.get(&tid).copied());
            thread_stack(thread, activity)
        })
        .collect()
}

#[test]
fn the_thread_pool_targets_workers_wait_in_its_downstream_call() {
    // tests/targets/py-threadpool at 24 clients: 6 workers in urlopen, 24 connection threads
    // waiting for their futures, the main thread in the server's select.
    let threads = stacks("threadpool-24-clients.json", |_| None);
    assert_eq!(threads.len(), 31);
    let worker = threads.iter().find(|t| t.name == "worker_3").unwrap();
    assert_eq!(worker.tid, Some(28084));
    assert_eq!(worker.state, "idle");
    let evidence = fold(StackSource::PySpy, &[threads]);
    let workers = pool(&evidence.pools, "worker");
    assert_eq!((workers.threads, workers.most_threads), (6.0, 6));
    assert_eq!(workers.threads_in(WaitKind::Downstream), 6.0);
    assert_eq!(
        workers.stacks[0].frames,
        strings(&[
            "SocketIO.readinto (socket.py)",
            "urlopen (urllib/request.py)",
            "call_downstream (server.py:28)",
        ])
    );
    let connections = pool(&evidence.pools, "Thread (process_request_thread)");
    assert_eq!(connections.threads, 24.0);
    assert_eq!(connections.threads_in(WaitKind::Other), 24.0);
    assert_eq!(
        connections.stacks[0].frames,
        strings(&[
            "Condition.wait (threading.py)",
            "Future.result (concurrent/futures/_base.py)",
            "Handler.do_GET (server.py:42)",
        ])
    );
    let main = pool(&evidence.pools, "MainThread");
    assert_eq!(main.threads_in(WaitKind::Idle), 1.0);
}

#[test]
fn threads_queued_for_a_requests_connection_pool_are_told_from_those_in_the_call() {
    // Six threads share a requests Session whose pool blocks at 2 connections.
    let threads = stacks("requests-pool-of-2-for-6-threads.json", |_| None);
    let evidence = fold(StackSource::PySpy, &[threads]);
    let fetchers = pool(&evidence.pools, "fetcher");
    assert_eq!(fetchers.threads_in(WaitKind::PoolAcquire), 4.0);
    assert_eq!(fetchers.threads_in(WaitKind::Downstream), 2.0);
    let queued = fetchers
        .stacks
        .iter()
        .find(|s| s.waiting == Some(WaitKind::PoolAcquire))
        .unwrap();
    assert_eq!(
        queued.frames,
        strings(&[
            "Condition.wait (threading.py)",
            "HTTPConnectionPool._get_conn (urllib3/connectionpool.py)",
            "Session.get (requests/sessions.py)",
            "fetch_forever (rq.py:11)",
        ])
    );
    let calling = fetchers
        .stacks
        .iter()
        .find(|s| s.waiting == Some(WaitKind::Downstream))
        .unwrap();
    assert_eq!(calling.frames[0], "SocketIO.readinto (socket.py)");
}

#[test]
fn c_calls_without_a_python_frame_are_read_from_the_os_threads_system_call() {
    // sleep-lock-semaphore-spin.py; each OS thread's /proc syscall as read beside the dump:
    // clock_nanosleep for the sleepers and the lock's holder, futex for the lock's waiter and
    // the semaphore's, running for the spinner.
    let activity = |name: &str| match name {
        "waiter" => Some(Activity::LockWait),
        "spin" => Some(Activity::Running),
        _ => Some(Activity::Sleeping),
    };
    let threads = stacks("sleep-lock-semaphore-spin.json", activity);
    let kind_of = |name: &str| -> Vec<(WaitKind, Vec<String>)> {
        threads
            .iter()
            .filter(|t| t.name == name)
            .map(|t| (t.waiting, t.frames.clone()))
            .collect()
    };
    assert_eq!(
        kind_of("sleeper"),
        vec![(
            WaitKind::Sleep,
            strings(&["time.sleep (a C sleep)", "sleeper (sl.py:5)"])
        )]
    );
    assert_eq!(
        kind_of("waiter"),
        vec![(
            WaitKind::Lock,
            strings(&["Lock.acquire or the GIL", "waiter (sl.py:11)"])
        )]
    );
    assert_eq!(kind_of("spin")[0].0, WaitKind::Running);
    let semaphore = kind_of("semw");
    assert!(
        semaphore.contains(&(
            WaitKind::Lock,
            strings(&[
                "Condition.wait (threading.py)",
                "Semaphore.acquire (threading.py)",
                "semw (sl.py:14)",
            ])
        )),
        "{semaphore:?}"
    );
    let spin = threads.iter().find(|t| t.name == "spin").unwrap();
    assert_eq!(spin.state, "active+gil");
}

#[test]
fn idle_workers_and_connections_waiting_for_their_client_are_idle() {
    let threads = stacks("idle-pool-and-keepalive.json", |name| {
        (name == "MainThread").then_some(Activity::Sleeping)
    });
    let by_name = |name: &str| threads.iter().find(|t| t.name == name).unwrap();
    for worker in ["ThreadPoolExecutor-0_0", "ThreadPoolExecutor-0_2"] {
        assert_eq!(by_name(worker).waiting, WaitKind::Idle);
        assert_eq!(
            by_name(worker).frames,
            strings(&["_worker (concurrent/futures/thread.py)"])
        );
    }
    assert_eq!(by_name("server").waiting, WaitKind::Idle);
    let connection = by_name("Thread-1 (process_request_thread)");
    assert_eq!(connection.waiting, WaitKind::Idle);
    assert_eq!(
        connection.frames,
        strings(&["SocketIO.readinto (socket.py)"])
    );
    assert_eq!(by_name("MainThread").waiting, WaitKind::Sleep);
}

#[test]
fn threads_of_a_cpu_bound_service_wait_for_the_gil_or_run() {
    // tests/targets/py-cpu-gil at 8 clients: every handler in its pure-Python loop, one holding
    // the interpreter lock (py-spy's `active`); /proc read right after the dump, where one more
    // was running already and one was between its state and its syscall line (`S`, `running`).
    let evidence = fold(
        StackSource::PySpy,
        &[stacks_with_proc("cpu-gil-8-clients.json")],
    );
    let handlers = pool(&evidence.pools, "Thread (process_request_thread)");
    assert_eq!(handlers.threads, 8.0);
    assert_eq!(handlers.threads_in(WaitKind::Running), 2.0);
    assert_eq!(handlers.threads_in(WaitKind::Other), 1.0);
    assert_eq!(
        stack_of(handlers, WaitKind::Lock),
        (
            5.0,
            strings(&[
                "Lock.acquire or the GIL",
                "spin (server.py:23)",
                "Handler.do_GET (server.py:54)",
            ])
        )
    );
}

#[test]
fn a_pre_fork_worker_blocked_in_accept_is_idle() {
    let threads = stacks_with_proc("prefork-worker-idle.json");
    assert_eq!(threads.len(), 1);
    assert_eq!(threads[0].waiting, WaitKind::Idle);
    assert_eq!(
        threads[0].frames,
        strings(&[
            "socket.accept (socket.py)",
            "serve (server.py:35)",
            "main (server.py:76)"
        ])
    );
}

/// A uWSGI worker (`processes = 4`, `threads = 2`; pid 548, forked by the master 542) with
/// both its cores in the mock's call: py-spy gives the main thread the master's pid.
#[test]
fn a_uwsgi_workers_cores_are_its_process_and_its_main_thread_is_the_leader_after_the_fork() {
    let activities = proc_activities("uwsgi-worker-2-cores.proc");
    let threads = parse_dump(&data("py-spy", "uwsgi-worker-2-cores.json")).expect("parses");
    let names: Vec<_> = threads.iter().map(|t| t.thread_name.clone()).collect();
    assert_eq!(
        names,
        [
            Some("uWSGIWorker1Core1".into()),
            Some("uWSGIWorker1Core0".into())
        ]
    );
    assert_eq!(
        threads[1].os_thread_id,
        Some(542),
        "the master's pid, as py-spy gives it"
    );
    let process = Process {
        pid: 548,
        name: "uwsgi".into(),
        pre_fork: true,
    };
    let stacks = process_stacks(
        threads,
        &process,
        &HostThreadIds::default(),
        |tid| activities.contains_key(&tid),
        |tid| activities.get(&tid).copied(),
    );
    let seen: Vec<_> = stacks
        .iter()
        .map(|stack| (stack.name.as_str(), stack.tid, stack.waiting))
        .collect();
    assert_eq!(
        seen,
        [
            ("uwsgi", Some(552), WaitKind::Downstream),
            ("uwsgi", Some(548), WaitKind::Downstream),
        ]
    );
}

#[test]
fn a_thread_id_from_before_a_fork_is_not_moved_when_the_leader_is_accounted_for() {
    let threads = parse_dump(&data("py-spy", "uwsgi-worker-2-cores.json")).expect("parses");
    let process = Process {
        pid: 552,
        name: "python3".into(),
        pre_fork: false,
    };
    // As if 552 were the leader: 542 is then a thread that ended since the dump.
    let stacks = process_stacks(
        threads,
        &process,
        &HostThreadIds::default(),
        |tid| tid == 552,
        |_| None,
    );
    let tids: Vec<_> = stacks.iter().map(|stack| stack.tid).collect();
    assert_eq!(tids, [Some(552), None]);
}

#[test]
fn only_uwsgis_own_core_names_are_uwsgi_cores() {
    for name in ["uWSGIWorker1Core0", "uWSGIWorker12Core31"] {
        assert!(is_uwsgi_core(name), "{name}");
    }
    for name in [
        "uWSGIWorkerCore0",
        "uWSGIWorker1Core",
        "uWSGIAutoReloader",
        "Thread-1",
        "uWSGIWorker1Core0x",
    ] {
        assert!(!is_uwsgi_core(name), "{name}");
    }
}

#[test]
fn a_thread_in_a_socket_call_parked_on_a_futex_waits_for_the_gil() {
    let frames = [
        frame("SocketIO.write", "/usr/lib/python3.11/socket.py", 737),
        frame(
            "StreamRequestHandler.finish",
            "/usr/lib/python3.11/socketserver.py",
            830,
        ),
    ];
    assert_eq!(
        classify(&frames, false, Some(Activity::SocketWait)).0,
        WaitKind::Idle
    );
    assert_eq!(
        classify(&frames, false, Some(Activity::LockWait)),
        (
            WaitKind::Lock,
            strings(&["the GIL", "SocketIO.write (/usr/lib/python3.11/socket.py)"])
        )
    );
}

fn frame(name: &str, filename: &str, line: i32) -> PyFrame {
    PyFrame {
        name: name.into(),
        filename: filename.into(),
        short_filename: None,
        line,
    }
}

#[test]
fn older_pythons_bare_function_names_match_too() {
    // CPython 3.10 and older: co_name only.
    let frames = [
        frame("wait", "/usr/lib/python3.9/threading.py", 312),
        frame("acquire", "/usr/lib/python3.9/threading.py", 433),
        frame("handle", "/srv/app/views.py", 20),
    ];
    let (kind, place) = classify(&frames, false, None);
    assert_eq!(kind, WaitKind::Lock);
    assert_eq!(
        place,
        strings(&[
            "wait (/usr/lib/python3.9/threading.py)",
            "acquire (/usr/lib/python3.9/threading.py)",
            "handle (/srv/app/views.py:20)",
        ])
    );
}

#[test]
fn a_socket_read_outside_any_known_client_or_server_is_not_guessed() {
    let frames = [
        frame("SocketIO.readinto", "/usr/lib/python3.11/socket.py", 706),
        frame("read_reply", "/srv/app/proto.py", 9),
    ];
    assert_eq!(classify(&frames, false, None).0, WaitKind::Other);
    // A site-packages client is a client whatever the interpreter's prefix.
    let frames = [
        frame(
            "SocketIO.readinto",
            "/opt/venv/lib/python3.12/socket.py",
            706,
        ),
        frame(
            "Redis.get",
            "/opt/venv/lib/python3.12/site-packages/redis/commands/core.py",
            1,
        ),
        frame("cached", "/srv/app/cache.py", 4),
    ];
    assert_eq!(classify(&frames, false, None).0, WaitKind::Downstream);
}

#[test]
fn py_spys_failures_are_said_in_one_line_with_what_to_do() {
    let table = [
        (
            "Permission Denied: Try running again with elevated permissions by going 'sudo env \"PATH=$PATH\" !!'\n",
            "Permission Denied: Try running again with elevated permissions by going 'sudo env \"PATH=$PATH\" !!' (py-spy needs ptrace rights on the target: run chokepoint as root or with CAP_SYS_PTRACE, or as the target's user with kernel.yama.ptrace_scope = 0)",
        ),
        (
            "Error: Failed to find python version from target process\n\nStack backtrace:\n   0: anyhow::error\n",
            "Error: Failed to find python version from target process",
        ),
        (
            "Error: Failed to get process executable name. Check that the process is running.\n\nCaused by:\n    0: No such file or directory (os error 2)\n    1: No such file or directory (os error 2)\n",
            "Error: Failed to get process executable name. Check that the process is running.: No such file or directory (os error 2)",
        ),
        ("", "it failed without saying why"),
    ];
    for (stderr, why) in table {
        assert_eq!(failure_reason(stderr), why);
    }
}

#[test]
fn a_read_that_raced_the_interpreter_is_tried_again_and_no_other_failure_is() {
    // py-spy 0.4.3's stderr when a --nonblocking read raced a thread (tests/sweeps/stacks_py_go.rs).
    let raced_stderr = "Error: Failed to get stack traces\n\nCaused by:\n    Failed to call get_stack_trace for thread 140013946218176\n";
    assert!(raced(&failure_reason(raced_stderr)));
    for other in [
        "Permission Denied: Try running again with elevated permissions\n",
        "Error: Failed to find python version from target process\n",
        "",
    ] {
        assert!(!raced(&failure_reason(other)), "{other}");
    }
}

#[test]
fn a_dump_that_is_not_py_spys_json_is_an_error() {
    assert!(parse_dump("Error: no python").is_err());
    assert_eq!(parse_dump("[]").unwrap(), vec![]);
}
