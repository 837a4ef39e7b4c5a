//! A target in its own PID and mount namespace (issue 23), as a container runs it: started under
//! `unshare --pid --mount --fork --mount-proc` with a tmpfs of its own on `/tmp`, so the PIDs and
//! thread ids it knows are not the host's, and a JVM's attach socket (`/tmp/.java_pid<NSPID>`)
//! is in a `/tmp` the host cannot see by that name. Swept from the host with `--pid auto` and
//! stacks on, it must be placed as the same target on the host is (`place.rs`): the same kind,
//! pool, held threads and tool, and the pool's thread ids the host's. Needs root (CI runs as
//! root), `unshare` (util-linux), python3 with py-spy, a JDK, and Go (pprof).
use crate::common::*;
use crate::place::{assert_py_spy_place_of_py_threadpool, require, stacks_place, sweep_auto};

use chokepoint_experiment::SweepConfig;
use chokepoint_result::{PlaceKind, PlaceSource, StackSource, SweepResult};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// `program args...` in new PID and mount namespaces with a private `/tmp`. The shell stays the
/// namespace's PID 1 and the target is its child: an init process ignores the SIGTERM it has no
/// handler for, where the target's own default ends it when the test stops the group.
fn in_own_namespaces(program: &str, args: &[&str]) -> Command {
    let mut command = Command::new("unshare");
    command
        .args(["--pid", "--mount", "--fork", "--mount-proc", "sh", "-c"])
        .arg(r#"mount -t tmpfs chokepoint-tmp /tmp && "$@""#)
        .arg("sh")
        .arg(program)
        .args(args);
    command
}

/// The host's PID of what listens on `url`'s port, checked to be in a PID namespace of its own
/// (its `NSpid` has two levels).
fn namespaced_listener(url: &str) -> i32 {
    let found = SweepConfig::new(url).expect("a URL").listening_target();
    let &[pid] = found.as_slice() else {
        panic!("one process listens on {url}: {found:?}");
    };
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("its status");
    let levels = status
        .lines()
        .find_map(|line| line.strip_prefix("NSpid:"))
        .map_or(0, |ids| ids.split_whitespace().count());
    assert_eq!(levels, 2, "process {pid} is in a PID namespace of its own");
    pid
}

/// The pool's thread ids, which the runtime gave in its namespace, are the host's threads of
/// `pid` (checked while it runs).
fn assert_host_tids(name: &str, result: &SweepResult, pool_name: &str, pid: i32) {
    let step = result.steps.last().expect("a step");
    let tids = &pool(step, pool_name).tids;
    assert!(!tids.is_empty(), "{name}: the pool's thread ids");
    assert!(
        tids.iter()
            .all(|tid| Path::new(&format!("/proc/{pid}/task/{tid}")).exists()),
        "{name}: the pool's thread ids {tids:?} are threads of {pid} on the host"
    );
}

#[test]
fn a_namespaced_python_thread_pool_is_placed_by_py_spy_as_on_the_host() {
    require("unshare", "--version");
    require("python3", "--version");
    require("py-spy", "--version");
    let _turn = beside_two_others();
    // As place.rs's host test: 200 ms calls, so a dump catches the 6 workers in the read.
    let mock = mock_with_delay_of(Duration::from_millis(200));
    let server = targets_dir().join("py-threadpool/server.py");
    let command = in_own_namespaces(
        "python3",
        &[
            server.to_str().expect("a UTF-8 path"),
            "--port",
            "0",
            "--downstream",
            &mock.url(),
        ],
    );
    let target = Target::launch("py-threadpool in namespaces", command);
    let python = namespaced_listener(&target.url());
    let name = "namespaced py-threadpool";
    let result = sweep_auto(name, &target.url(), vec![1, 3, 12, 24], &mock, true);
    assert_host_tids(name, &result, "worker", python);
    drop(target);
    print_stacks(name, &result);
    assert_py_spy_place_of_py_threadpool(name, &result);
}

#[test]
fn a_namespaced_jvm_with_its_own_tmp_is_placed_by_its_thread_dumps_as_on_the_host() {
    require("unshare", "--version");
    require("java", "-version");
    require("jcmd", "-h");
    let _turn = beside_one_other();
    let mock = mock_with_delay_of(Duration::from_millis(150));
    let twin = crate::common::java_program(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/jvm/BlockingDemo.java"),
    );
    let twin: Vec<&str> = twin.iter().map(|a| a.to_str().expect("UTF-8")).collect();
    let command = in_own_namespaces(
        "java",
        &[
            twin[0],
            twin[1],
            twin[2],
            "--port",
            "0",
            "--downstream",
            &mock.url(),
            "--actors",
            "20",
            "--dispatcher",
            "16",
        ],
    );
    let target = Target::launch("jvm-twin in namespaces", command);
    let url = target.url_of("/actors");
    let jvm = namespaced_listener(&url);
    let name = "namespaced jvm /actors";
    let result = sweep_auto(name, &url, vec![1, 10, 40, 80], &mock, true);
    assert_host_tids(name, &result, "actor-pool", jvm);
    drop(target);
    let place = stacks_place(name, &result);
    assert_eq!(
        place.source,
        Some(PlaceSource::Stacks(StackSource::JcmdThreadPrint))
    );
    assert_eq!(place.kind, Some(PlaceKind::ThreadPool));
    assert_eq!(place.pool.as_deref(), Some("actor-pool"));
    let held = place.held.unwrap_or(0.0);
    assert!(
        (held - 20.0).abs() <= 0.15 * 20.0 + 0.5,
        "{held} of the pool's 20 held"
    );
    assert_eq!(
        place.frames,
        [
            "java.net.HttpURLConnection.getResponseCode",
            "BlockingDemo.blockingCall"
        ]
    );
}

/// Go in namespaces of its own: pprof answers over the shared network, and the process found
/// listening on the port is the namespaced server (its goroutines carry no thread ids to map).
/// Placed as `place.rs`'s host test places go-semaphore: 12 handlers in the downstream call
/// holding a slot of its channel, the others waiting to send into it.
#[test]
fn a_namespaced_go_semaphore_is_placed_by_pprof_as_on_the_host() {
    require("unshare", "--version");
    require("go", "version");
    let _turn = beside_one_other();
    let mock = mock_with_delay();
    let binary = build_go_target("go-semaphore");
    let command = in_own_namespaces(
        binary.to_str().expect("a UTF-8 path"),
        &["-port", "0", "-downstream", &mock.url(), "-pprof"],
    );
    let target = Target::launch("go-semaphore in namespaces", command);
    namespaced_listener(&target.url());
    let name = "namespaced go-semaphore";
    let result = sweep_auto(name, &target.url(), vec![3, 6, 24, 48], &mock, true);
    drop(target);
    let place = stacks_place(name, &result);
    assert_eq!(place.source, Some(PlaceSource::Stacks(StackSource::Pprof)));
    assert_eq!(place.kind, Some(PlaceKind::Semaphore));
    let held = place.held.unwrap_or(0.0);
    assert!((10.5..=13.5).contains(&held), "{held} of the 12 slots held");
    assert!(
        place.frames.iter().any(|f| f == "net/http.(*Client).Get"),
        "{:?}",
        place.frames
    );
}
