//! The target as the operating system sees it (issue 11): a process tree swept with its
//! parent's PID or found by its port (`--pid auto`), a saturated machine named as such, and a
//! JVM's pools read from `/proc` alone. Real processes: a pre-fork Python server of
//! `tests/targets/`, Debian's nginx-light with one worker, the JVM twin. A missing tool fails
//! the test (`.ci/run` installs them).
use crate::common;

use chokepoint_experiment::SweepConfig;
use chokepoint_mock::MockConfig;
use chokepoint_result::{Kind, PoolThreads, Step, SweepResult};
use chokepoint_testkit::Server;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Fails the test when `tool` cannot be run.
fn require(tool: &str, version_arg: &str) {
    assert!(
        toolchain_present(tool, version_arg),
        "`{tool}` is needed by this test: install it (.ci/run does)"
    );
}

/// The processes every step observed, as a set.
fn observed_everywhere(result: &SweepResult) -> Vec<i32> {
    let mut common: Option<Vec<i32>> = None;
    for step in &result.steps {
        common = Some(match common {
            None => step.observed_pids.clone(),
            Some(seen) => seen
                .into_iter()
                .filter(|pid| step.observed_pids.contains(pid))
                .collect(),
        });
    }
    common.unwrap_or_default()
}

/// CPU per request of the pre-fork server.
const CPU_MS: f64 = 5.0;

#[test]
fn a_prefork_server_swept_with_its_parents_pid_counts_its_workers_cpu_and_is_cpu_bound() {
    require("python3", "--version");
    let _one = one_at_a_time();
    let mut command = Command::new("python3");
    command
        .arg(targets_dir().join("py-prefork-cpu/server.py"))
        .args([
            "--port",
            "0",
            "--workers",
            "2",
            "--cpu-ms",
            &CPU_MS.to_string(),
        ]);
    let target = Target::launch("py-prefork-cpu", command);
    let result = sweep_target(&target, Some(vec![1, 2, 4, 8, 16]), STEP, 16, None);
    let parent = target.pid();
    drop(target);
    assert_kind("py-prefork-cpu", &result, Kind::CpuBound);
    // The parent only waits; its two workers did the work, and their CPU is the target's.
    let observed = observed_everywhere(&result);
    assert!(
        observed.contains(&parent) && observed.len() == 3,
        "the parent and its 2 workers were observed at every step: {observed:?}"
    );
    // Each request costs its worker 5 ms of CPU: the tree's CPU is at least what the requests
    // served needed (the parent's own is nil, so this is the workers', read through the tree).
    let cores = std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64);
    for step in &result.steps {
        let needed = step.ok_throughput_rps * CPU_MS / 1000.0 / cores * 100.0;
        let measured = step.target_cpu_pct.expect("the tree's CPU is measured");
        assert!(
            measured >= 0.8 * needed,
            "{} clients: {:.0} req/s × {CPU_MS} ms needs {needed:.0}% of the cores; the tree's CPU read {measured:.0}%",
            step.clients,
            step.ok_throughput_rps
        );
    }
}

/// A one-worker nginx serving a fixed 200 from memory: as fast as one core allows.
struct Nginx {
    master: Server,
    port: u16,
    _dir: PathBuf,
}

impl Nginx {
    fn start() -> Nginx {
        let dir =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("nginx-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("nginx's folder");
        let temp = |name: &str| dir.join(name).display().to_string();
        let (master, port) = Server::spawn_on_free_port("nginx", Duration::from_secs(10), |port| {
            let conf = format!(
                "daemon off;\nmaster_process on;\nworker_processes 1;\npid {pid};\nerror_log stderr warn;\n\
                 events {{ worker_connections 4096; }}\n\
                 http {{\n  access_log off;\n  client_body_temp_path {b};\n  proxy_temp_path {p};\n  fastcgi_temp_path {f};\n  \
                 uwsgi_temp_path {u};\n  scgi_temp_path {s};\n  \
                 server {{ listen 127.0.0.1:{port}; location / {{ return 200 \"ok\\n\"; }} }}\n}}\n",
                pid = temp("nginx.pid"),
                b = temp("body"),
                p = temp("proxy"),
                f = temp("fastcgi"),
                u = temp("uwsgi"),
                s = temp("scgi"),
            );
            let conf_path = dir.join("nginx.conf");
            std::fs::write(&conf_path, conf).expect("nginx.conf written");
            let mut command = Command::new("nginx");
            command
                .arg("-p")
                .arg(&dir)
                .arg("-c")
                .arg(&conf_path)
                .args(["-e", "stderr"])
                .stdin(Stdio::null())
                .stdout(Stdio::null());
            command
        });
        Nginx {
            master,
            port,
            _dir: dir,
        }
    }

    fn pid(&self) -> i32 {
        self.master.pid()
    }

    fn config(&self) -> SweepConfig {
        SweepConfig::new(&format!("http://127.0.0.1:{}/", self.port)).expect("a valid URL")
    }
}

const NGINX_CLIENTS: [u32; 6] = [1, 2, 4, 8, 16, 32];

fn sweep_nginx(name: &str, config: SweepConfig) -> SweepResult {
    sweep_with(name, config, Some(NGINX_CLIENTS.to_vec()), STEP, 32, None)
}

#[test]
fn a_flat_out_one_worker_nginx_is_cpu_bound_when_observed_and_the_machine_when_not() {
    require("nginx", "-v");
    let _one = one_at_a_time();
    let nginx = Nginx::start();

    let auto = nginx.config();
    let found = auto.listening_target();
    assert_eq!(
        found,
        vec![nginx.pid()],
        "--pid auto finds the master by its port"
    );
    // What --pid auto found is the master's PID alone (asserted above), so this one sweep is
    // also the sweep given the master's PID (`with_target_pid` is `with_target_pids` of one).
    let by_port = sweep_nginx("nginx (--pid auto)", auto.with_target_pids(found));
    let unobserved = sweep_nginx("nginx (not observed)", nginx.config());
    drop(nginx);

    let observed = observed_everywhere(&by_port);
    assert_eq!(
        observed.len(),
        2,
        "--pid auto: the master and its worker: {observed:?}"
    );
    assert!(
        by_port
            .steps
            .iter()
            .all(|s| s.target_cpu_pct.is_some_and(|c| c > 10.0)),
        "--pid auto: the worker's CPU is counted at every step"
    );
    assert_kind("--pid auto", &by_port, Kind::CpuBound);
    assert_kind("not observed", &unobserved, Kind::MachineSaturated);
}

/// The pool named `pool` (a prefix of the name /proc keeps) at the last step.
fn pool_at_last_step<'r>(result: &'r SweepResult, pool: &str) -> (&'r Step, &'r PoolThreads) {
    let step = result.steps.last().expect("a step");
    let threads = step
        .threads_by_pool
        .as_ref()
        .unwrap_or_else(|| panic!("{} clients: no threads observed", step.clients));
    for p in &threads.pools {
        println!(
            "  {:<20} threads {:>3.0}  socket wait {:>3.0} (mean {:>5.1})  running {:>4.1}  {:?}",
            p.pool,
            p.most.threads,
            p.most.socket_wait,
            p.mean.socket_wait,
            p.mean.running,
            p.waits_on
        );
    }
    let found = threads
        .pools
        .iter()
        .find(|p| p.pool.starts_with(pool))
        .unwrap_or_else(|| {
            panic!(
                "no pool {pool}* among {:?}",
                threads.pools.iter().map(|p| &p.pool).collect::<Vec<_>>()
            )
        });
    (step, found)
}

#[test]
fn the_jvm_twins_pools_are_seen_from_proc_with_every_thread_in_a_socket_wait() {
    require("java", "-version");
    // Beside one other: its pools wait on the network (12 % of the machine over its turn,
    // session 27), and what it reads is threads in a socket wait, not the CPU they get.
    let _turn = beside_one_other();
    let mock = chokepoint_mock::start(
        "127.0.0.1:0".parse().expect("an address"),
        MockConfig {
            fixed_delay: Some(Duration::from_millis(150)),
            ..Default::default()
        },
    )
    .expect("the mock starts");
    let jvm = launch_jvm(&mock);
    for (route, pool, size) in [
        ("/actors", "actor-pool", 20.0),
        ("/dispatcher", "blocking-dispat", 16.0),
    ] {
        let config = SweepConfig::new(&jvm.url_of(route))
            .expect("a valid URL")
            .with_target_pid(jvm.pid());
        let result = sweep_with(
            route,
            config,
            Some(vec![4, 2 * size as u32]),
            STEP,
            64,
            Some(&mock),
        );
        let (step, found) = pool_at_last_step(&result, pool);
        assert_eq!(
            found.most.threads, size,
            "{route}: the pool's threads at {} clients",
            step.clients
        );
        assert_eq!(
            found.most.socket_wait, size,
            "{route}: every thread of the pool in a socket wait at once at {} clients",
            step.clients
        );
    }
    drop(jvm);
}
