//! The load generator's own CPU figure (`generator_cpu_pct`) against what the kernel charged
//! the `chokepoint load` process (`wait4`'s rusage), over a busy run, pinned to one core with
//! `taskset` and unpinned (issue 11: it read 0% where the kernel said 98%).
use std::process::Command;

/// The mock with no delay: as fast a target as this machine has, so the generator is busy.
fn fast_target() -> chokepoint_mock::RunningMock {
    chokepoint_mock::start(
        "127.0.0.1:0".parse().expect("a socket address"),
        chokepoint_mock::MockConfig::default(),
    )
    .expect("the mock starts")
}

/// Runs `command` to its end; its exit status and the CPU seconds (user + system) the kernel
/// charged it and its children.
// wait4 reaps the child itself (std's wait has no rusage).
#[allow(clippy::zombie_processes)]
fn run_with_rusage(mut command: Command) -> (i32, f64) {
    let child = command.spawn().expect("the command starts");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4 failed");
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (
        libc::WEXITSTATUS(status),
        seconds(usage.ru_utime) + seconds(usage.ru_stime),
    )
}

/// One `load` run, pinned to `core` or not; returns (the generator's CPU seconds as it reports
/// them, the kernel's CPU seconds for the process).
fn generator_vs_kernel(url: &str, core: Option<usize>, name: &str) -> (f64, f64) {
    let json = std::env::temp_dir().join(format!("cp-gen-cpu-{}-{name}.json", std::process::id()));
    let mut command = match core {
        Some(core) => {
            let mut taskset = Command::new("taskset");
            taskset
                .args(["-c", &core.to_string()])
                .arg(env!("CARGO_BIN_EXE_chokepoint"));
            taskset
        }
        None => Command::new(env!("CARGO_BIN_EXE_chokepoint")),
    };
    command
        .args(["load", url, "-c", "50", "-d", "4s", "--json"])
        .arg(&json)
        .stdout(std::process::Stdio::null());
    let (status, kernel_s) = run_with_rusage(command);
    assert_eq!(status, 0, "{name}: chokepoint load failed");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("the JSON report")).unwrap();
    let _ = std::fs::remove_file(&json);
    let cores = match core {
        Some(_) => 1.0,
        None => std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64),
    };
    let pct = report["generator_cpu_pct"]
        .as_f64()
        .expect("generator_cpu_pct");
    let duration = report["duration_s"].as_f64().expect("duration_s");
    let generator_s = pct / 100.0 * cores * duration;
    println!(
        "{name}: generator_cpu_pct {pct:.1}% of {cores} core(s) over {duration:.2} s = {generator_s:.3} s; \
         the kernel charged {kernel_s:.3} s"
    );
    (generator_s, kernel_s)
}

/// The process's work outside the measured window, which the kernel charges and the
/// generator's figure leaves out: parsing its flags, the first connect, writing the JSON. Read
/// from the runs' own differences: 0.023 to 0.037 s on the 2-core machine.
const OUTSIDE_THE_WINDOW_S: f64 = 0.05;

/// Within 10 % of the kernel's figure, beside the work outside the window. A run on a machine
/// whose other lane keeps the pinned core busy gets little CPU (0.14 s in a full run, beside a
/// sweep): the fixed part then weighs more than 10 %, and still a figure of 0 % (issue 11's
/// bug) is far outside.
fn assert_within_10_percent(name: &str, (generator_s, kernel_s): (f64, f64)) {
    assert!(
        kernel_s > 2.0 * OUTSIDE_THE_WINDOW_S,
        "{name}: the run was not busy ({kernel_s:.3} s of CPU)"
    );
    assert!(
        generator_s <= kernel_s + 0.1 * kernel_s
            && generator_s >= kernel_s - 0.1 * kernel_s - OUTSIDE_THE_WINDOW_S,
        "{name}: the generator says {generator_s:.3} s of CPU, the kernel {kernel_s:.3} s"
    );
}

#[test]
fn the_generator_cpu_figure_is_what_the_kernel_charged_pinned_and_unpinned() {
    let target = fast_target();
    let url = format!("{}/", target.url());
    // Warm the target up (and let the machine settle) once.
    let _ = generator_vs_kernel(&url, None, "warm-up");
    let last_core = std::thread::available_parallelism().map_or(1, |n| n.get()) - 1;
    assert_within_10_percent(
        "pinned",
        generator_vs_kernel(&url, Some(last_core), "pinned"),
    );
    assert_within_10_percent("unpinned", generator_vs_kernel(&url, None, "unpinned"));
}
