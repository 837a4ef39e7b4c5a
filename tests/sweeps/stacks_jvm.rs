//! A JVM's stacks during a sweep (issue 12): the JVM twin found with `--pid auto`, its thread
//! dumps read into pools with the frames they wait in; and the bad inputs (`--jvm` on a process
//! that is no JVM, a JVM that refuses to be attached, no `jcmd` on the PATH) as notes, with the
//! sweep going on. Real processes; java and jcmd are needed (`.ci/run` installs a JDK).
use crate::common;

use chokepoint_experiment::SweepConfig;
use chokepoint_mock::{MockConfig, RunningMock};
use chokepoint_result::{ObservationNote, StackSource, SweepResult, WaitKind};
use common::*;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn require(tool: &str, version_arg: &str) {
    assert!(
        toolchain_present(tool, version_arg),
        "`{tool}` is needed by this test: install it (.ci/run does)"
    );
}

fn mock(delay_ms: u64) -> RunningMock {
    chokepoint_mock::start(
        "127.0.0.1:0".parse().expect("an address"),
        MockConfig {
            fixed_delay: Some(Duration::from_millis(delay_ms)),
            ..Default::default()
        },
    )
    .expect("the mock starts")
}

/// The JVM twin, with `java_options` before the source file.
fn launch_twin(mock: &RunningMock, java_options: &[&str]) -> Target {
    let mut command = Command::new("java");
    command
        .args(java_options)
        .args(crate::common::java_program(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/jvm/BlockingDemo.java"),
        ))
        .args(["--port", "0", "--downstream", &mock.url()])
        .args(["--actors", "20", "--dispatcher", "16"]);
    Target::launch("jvm-twin", command)
}

/// A sweep of `url` at `clients`, observing what listens on its port (`--pid auto`).
fn sweep_auto(name: &str, url: &str, clients: Vec<u32>, mock: &RunningMock) -> SweepResult {
    let config = SweepConfig::new(url).expect("a valid URL");
    let found = config.listening_target();
    assert_eq!(found.len(), 1, "{name}: --pid auto finds one process");
    let max = *clients.iter().max().expect("a step");
    // Whole steps: each takes its dumps (two in 2 s) instead of ending after the first.
    let mut config = config.with_target_pids(found);
    config.step_fixed = true;
    sweep_with(name, config, Some(clients), STEP, max, Some(mock))
}

/// The OS thread ids of process `pid`.
fn tids_of(pid: i32) -> Vec<i32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("the JVM's threads")
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// How many of a pool's `size` threads, all busy with calls to the mock, a dump must catch
/// waiting in the call. A dump is one instant: each thread is in the call with the chance
/// delay / (delay + the time it spends building the request and writing the answer), about 0.9
/// with a 150 ms delay on a busy two-core machine. At 0.9 a dump of 16 threads catches fewer
/// than 14 one time in five (binomial), which made 0.9 × size a flaky bound; fewer than two
/// thirds, 0.3 % of dumps. Two thirds still tells a pool that waits downstream from one that
/// does not (a pool waiting elsewhere would show none there).
fn most_of(size: u32) -> f64 {
    (2.0 * size as f64 / 3.0).floor().max(1.0)
}

#[test]
fn the_twins_pools_are_named_with_their_threads_and_the_call_they_wait_in() {
    require("java", "-version");
    require("jcmd", "-h");
    let _turn = beside_one_other();
    // Long calls beside what a thread does outside them: under a burnt core a dump of /global's
    // 2 threads at 150 ms caught both writing their answers (a flake-hunt round).
    let mock = mock(400);
    let twin = launch_twin(&mock, &[]);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    for (route, name, size) in [
        ("/actors", "actor-pool", 20),
        ("/dispatcher", "blocking-dispatcher", 16),
        ("/global", "cpu-pool", cores),
    ] {
        let result = sweep_auto(route, &twin.url_of(route), vec![2 * size], &mock);
        print_stacks(route, &result);
        let step = result.steps.last().expect("a step");
        let stacks = step.stacks.as_ref().expect("stacks at the plateau");
        assert_eq!(stacks.source, Some(StackSource::JcmdThreadPrint));
        assert!(
            (1..=3).contains(&stacks.snapshots),
            "{route}: {} dumps",
            stacks.snapshots
        );
        let found = pool(step, name);
        assert_eq!(found.most_threads, size, "{route}: the pool's threads");
        let downstream = found.threads_in(WaitKind::Downstream);
        assert!(
            downstream >= most_of(size),
            "{route}: {downstream} of {size} threads waiting downstream at {} clients: {:?}",
            step.clients,
            found.stacks
        );
        assert_eq!(
            found.stacks[0].frames,
            [
                "java.net.HttpURLConnection.getResponseCode",
                "BlockingDemo.blockingCall"
            ],
            "{route}: the frames the pool waits in"
        );
        // The dump's nids are the JVM's thread ids in /proc.
        let tids = tids_of(twin.pid());
        assert_eq!(found.tids.len(), size as usize, "{route}");
        assert!(
            found.tids.iter().all(|tid| tids.contains(tid)),
            "{route}: the pool's nids {:?} are threads of {}",
            found.tids,
            twin.pid()
        );
    }
}

#[test]
fn jvm_forced_on_a_process_that_is_no_jvm_is_a_note_and_the_process_lives_on() {
    require("python3", "--version");
    let _turn = beside_one_other();
    let mock = mock(20);
    let mut command = Command::new("python3");
    command
        .arg(targets_dir().join("py-threadpool/server.py"))
        .args(["--port", "0", "--downstream", &mock.url()]);
    let target = Target::launch("py-threadpool", command);
    let mut config = SweepConfig::new(&target.url())
        .expect("a valid URL")
        .with_target_pid(target.pid());
    config.stacks.force_jvm = true;
    let result = sweep_with(
        "--jvm on python",
        config,
        Some(vec![2]),
        STEP,
        2,
        Some(&mock),
    );
    print_stacks("--jvm on python", &result);
    let step = result.steps.last().expect("a step");
    assert_eq!(step.stacks, None);
    assert!(
        step.observation_notes.iter().any(|note| matches!(
            note,
            ObservationNote::ToolFailed { tool, why } if tool == "jcmd" && why.contains("not a Java VM")
        )),
        "{:?}",
        step.observation_notes
    );
    assert!(step.ok_throughput_rps > 0.0);
    assert!(
        Path::new(&format!("/proc/{}", target.pid())).exists(),
        "the target was left alone"
    );
}

#[test]
fn a_jvm_that_refuses_to_be_attached_is_a_note_and_the_sweep_goes_on() {
    require("java", "-version");
    require("jcmd", "-h");
    let _turn = beside_one_other();
    let mock = mock(50);
    let twin = launch_twin(&mock, &["-XX:+DisableAttachMechanism"]);
    let result = sweep_auto("no attach", &twin.url_of("/actors"), vec![4], &mock);
    print_stacks("no attach", &result);
    let step = result.steps.last().expect("a step");
    assert_eq!(step.stacks, None);
    let failed: Vec<&ObservationNote> = step
        .observation_notes
        .iter()
        .filter(|note| matches!(note, ObservationNote::ToolFailed { tool, .. } if tool == "jcmd"))
        .collect();
    assert_eq!(failed.len(), 1, "one note: {:?}", step.observation_notes);
    assert!(step.ok_throughput_rps > 0.0, "the step was measured");
}

#[test]
fn without_jcmd_on_the_path_the_sweep_says_how_to_get_it() {
    require("java", "-version");
    let _turn = beside_one_other();
    let mock = mock(50);
    let twin = launch_twin(&mock, &[]);
    let out =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("no-jcmd-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let output = Command::new(env!("CARGO_BIN_EXE_chokepoint"))
        .args([
            "sweep",
            &twin.url_of("/actors"),
            "--clients",
            "2",
            "--step",
            "1s",
        ])
        .args(["--mock", &mock.url(), "--pid", "auto", "--out"])
        .arg(&out)
        .env("PATH", "/nonexistent")
        .output()
        .expect("chokepoint runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result: SweepResult = serde_json::from_str(
        &std::fs::read_to_string(out.join("result.json")).expect("result.json"),
    )
    .expect("the results parse");
    let step = &result.steps[0];
    assert_eq!(step.stacks, None);
    assert!(
        step.observation_notes.iter().any(|note| matches!(
            note,
            ObservationNote::ToolMissing { tool, install } if tool == "jcmd" && install.contains("JDK")
        )),
        "{:?}",
        step.observation_notes
    );
}

#[test]
fn a_jvm_that_does_not_answer_is_a_note_within_the_time_limit_not_a_hang() {
    use chokepoint_observe::stacks::jvm::{ThreadDumps, JCMD_LIMIT};
    use chokepoint_observe::stacks::StackTool;
    require("java", "-version");
    require("jcmd", "-h");
    let _one = one_at_a_time();
    let mock = mock(50);
    let twin = launch_twin(&mock, &[]);
    // SAFETY: stopping (then resuming) our own child.
    unsafe { libc::kill(twin.pid(), libc::SIGSTOP) };
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let pid = twin.pid();
    let watch =
        std::thread::spawn(move || ThreadDumps::new(pid).watch_step(&stopped, &Default::default()));
    // The step lasts until its first dump has had its time, and a little more.
    std::thread::sleep(chokepoint_observe::stacks::jvm::FIRST_DUMP + JCMD_LIMIT * 2);
    let _ = stop.send(());
    let (evidence, notes) = watch.join().expect("the watch ends");
    // SAFETY: as above.
    unsafe { libc::kill(twin.pid(), libc::SIGCONT) };
    println!("{notes:?}");
    assert_eq!(evidence, None);
    assert!(
        matches!(&notes[..], [ObservationNote::ToolFailed { tool, why }] if tool == "jcmd" && why.contains("no answer")),
        "{notes:?}"
    );
    // The killed jcmd's trigger file is not left in the JVM's working folder.
    let trigger = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(".attach_pid{pid}"));
    assert!(!trigger.exists(), "{} was left", trigger.display());
}

#[test]
fn with_stacks_jfr_the_actor_pool_is_timed_in_its_downstream_call() {
    require("java", "-version");
    require("jcmd", "-h");
    require("jfr", "--version");
    let _turn = beside_one_other();
    let mock = mock(150);
    let twin = launch_twin(&mock, &[]);
    let mut config = SweepConfig::new(&twin.url_of("/actors"))
        .expect("a valid URL")
        .with_target_pid(twin.pid());
    config.stacks.jfr = true;
    // A fixed step, so the recording spans most of it.
    config.step_fixed = true;
    let result = sweep_with(
        "jfr",
        config,
        Some(vec![40]),
        ADAPTIVE_STEP,
        40,
        Some(&mock),
    );
    print_stacks("jfr", &result);
    let step = result.steps.last().expect("a step");
    let stacks = step.stacks.as_ref().expect("a recording");
    assert_eq!(stacks.source, Some(StackSource::Jfr));
    let recorded = stacks.recording_s.expect("its length");
    assert!(
        recorded > 1.0 && recorded <= step.measured_s,
        "recorded {recorded:.2} s of a {:.2} s step",
        step.measured_s
    );
    let found = pool(step, "actor-pool");
    assert_eq!(found.most_threads, 20);
    let place = &found.stacks[0];
    assert_eq!(place.waiting, Some(WaitKind::Downstream));
    assert_eq!(
        place.frames,
        [
            "java.net.HttpURLConnection.getResponseCode",
            "BlockingDemo.blockingCall"
        ]
    );
    // 20 threads in the call for the whole recording, less the reads still under way at its
    // end (JFR writes a wait when it ends).
    assert!(
        place.threads >= 16.0 && place.threads <= 20.5,
        "{:.1} threads on average in the call",
        place.threads
    );
    assert!(place
        .seconds
        .is_some_and(|s| (s / recorded - place.threads).abs() < 1e-6));
}

#[test]
fn a_service_not_written_for_it_waits_in_httpclient_send_while_parked() {
    // tests/targets/java-shed: 256 threads, 30 permits, each permit holder calling the mock with
    // java.net.http.HttpClient.send (its thread parks on a future; the reads happen on the
    // client's SelectorManager thread).
    require("java", "-version");
    require("jcmd", "-h");
    let _one = one_at_a_time();
    let mock = mock(100);
    let mut command = Command::new("java");
    command
        .args(crate::common::java_program(
            &targets_dir().join("java-shed/ShedServer.java"),
        ))
        .args(["--port", "0", "--downstream", &mock.url()]);
    let shed = Target::launch("java-shed", command);
    let result = sweep_auto("java-shed", &shed.url(), vec![24], &mock);
    print_stacks("java-shed", &result);
    let step = result.steps.last().expect("a step");
    // A fixed pool starts its threads one task at a time, up to 256.
    let found = pool(step, "pool-1-thread");
    assert!((24..=256).contains(&found.most_threads));
    let sending = found
        .stacks
        .iter()
        .find(|s| s.waiting == Some(WaitKind::Downstream))
        .expect("threads waiting downstream");
    assert_eq!(
        sending.frames,
        ["java.net.http.HttpClient.send", "ShedServer.work"]
    );
    assert!(
        sending.threads >= most_of(24) && sending.threads <= 24.0,
        "{:.1} of the 24 clients' requests in HttpClient.send",
        sending.threads
    );
    // The rest wait for tasks, but for the threads caught between a call and the next.
    let elsewhere = found.threads - sending.threads - found.threads_in(WaitKind::Idle);
    assert!(
        elsewhere <= 24.0 - most_of(24),
        "{elsewhere} threads neither idle nor sending"
    );
    assert_eq!(
        pool(step, "HttpClient-1-SelectorManager").stacks[0].waiting,
        Some(WaitKind::Downstream)
    );
}

/// Thread dumps over the JVM's attach socket, with no `jcmd` beside the target
/// (`chokepoint_observe::stacks::attach`, built after `ROUTE=cpu bench/observe-overhead.sh`
/// showed jcmd's own JVM costing a CPU-bound target 6.6%): the twin's dump is read, its pools
/// there, and no `.attach_pid` trigger is left in its folder. A JVM started with `-Xrs` does
/// not handle SIGQUIT, whose default action would end it: with no attach socket it is never
/// sent one (nor by jcmd, which would), and lives on.
#[test]
fn a_thread_dump_is_read_over_the_attach_socket_and_a_jvm_with_xrs_is_never_signalled() {
    use chokepoint_observe::stacks::attach::{jcmd_command, Failed};
    require("java", "-version");
    let _turn = beside_one_other();
    let mock = mock(50);
    let twin = launch_twin(&mock, &[]);
    let text = jcmd_command(twin.pid(), "Thread.print", Duration::from_secs(10))
        .unwrap_or_else(|why| panic!("no dump over the attach socket: {why}"));
    let threads = chokepoint_observe::stacks::jvm::parse_thread_dump(&text);
    // The twin's own server thread (its pools start with the load) and the JVM's.
    for name in ["HTTP-Dispatcher", "Reference Handler"] {
        assert!(
            threads.iter().any(|t| t.name == name),
            "{name} in the dump: {threads:?}"
        );
    }
    // A second dump reuses the listener the first started.
    assert!(jcmd_command(twin.pid(), "Thread.print", Duration::from_secs(10)).is_ok());
    let cwd = std::fs::read_link(format!("/proc/{}/cwd", twin.pid())).expect("its folder");
    let left: Vec<_> = std::fs::read_dir(&cwd)
        .expect("its folder lists")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".attach_pid"))
        .collect();
    assert!(left.is_empty(), "trigger files left: {left:?}");
    drop(twin);

    // -Xrs alone: the JVM starts its listener at once, and is attached without a signal.
    // With attach disabled too there is no socket, and a SIGQUIT would end it.
    let quiet = launch_twin(&mock, &["-Xrs", "-XX:+DisableAttachMechanism"]);
    let refused = jcmd_command(quiet.pid(), "Thread.print", Duration::from_secs(2));
    assert!(
        matches!(&refused, Err(Failed::NotSignalled(why)) if why.contains("-Xrs")),
        "{refused:?}"
    );
    let dumps = chokepoint_observe::stacks::jvm::ThreadDumps::new(quiet.pid());
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let watch = std::thread::spawn(move || {
        let mut dumps = dumps;
        chokepoint_observe::stacks::StackTool::watch_step(&mut dumps, &stopped, &Default::default())
    });
    std::thread::sleep(chokepoint_observe::stacks::jvm::FIRST_DUMP * 2);
    let _ = stop.send(());
    let (evidence, notes) = watch.join().expect("the watch ends");
    assert_eq!(
        evidence, None,
        "nor did the step's dumps fall back to jcmd: {notes:?}"
    );
    std::thread::sleep(Duration::from_millis(300));
    let state = std::fs::read_to_string(format!("/proc/{}/stat", quiet.pid()))
        .expect("the -Xrs JVM still runs");
    assert!(!state.contains(") Z "), "{state}");
}
