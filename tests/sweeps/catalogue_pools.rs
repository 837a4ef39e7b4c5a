//! The catalogue of known pools (`catalogue/pools.toml`) against real processes: each target
//! runs with its framework's defaults behind the chokepoint mock, is swept with its processes
//! observed, and the pool whose threads (or processes) wait on the network, as chokepoint's
//! `/proc` observer names it, must be the catalogue entry's, with the setting and the default
//! the entry states (the pool's size is checked against that default where the test controls
//! the machine's share of it); and the finding's place must name that setting, as a user reads
//! it (`diagnosis.place.setting`, the `Where:` line). Apache's prefork, far from its limit at
//! these clients, has no place: only its entry is checked.
//!
//! - Java: `tests/targets/java-pools` `/common`, `ForkJoinPool.commonPool()` (cores − 1);
//! - Python: `tests/targets/py-gunicorn`, gunicorn's default one sync worker;
//!   `tests/targets/py-threadpool --default-executor`, a `ThreadPoolExecutor()` (min(32,
//!   cores + 4) workers), whose threads only py-spy names (all are `python3` in /proc); and,
//!   not at their defaults but as deployed, `tests/targets/py-gunicorn-gthread` (2 gthread
//!   workers of 4 threads) and `tests/targets/py-uwsgi` (uWSGI, 4 processes of 2 threads), each
//!   a pool of 8 whose kind, size and place the finding must name;
//! - PHP: `tests/targets/php-fpm-nginx`, PHP-FPM with the www.conf PHP ships (5 children, a
//!   unix socket) behind nginx, found by `--pid auto` through nginx;
//! - Apache httpd: `tests/targets/apache-proxy`, prefork as a reverse proxy.
//!
//! Each needs its tool (java; gunicorn and py-spy from PyPI; Debian's php-fpm, nginx-light,
//! apache2, uwsgi with uwsgi-plugin-python3):
//! `.ci/run` installs them, and a missing one fails the test under CI.

use crate::common;

use chokepoint_diagnose::catalogue::Catalogue;
use chokepoint_experiment::SweepConfig;
use chokepoint_result::{Kind, Setting, SweepResult, WaitKind};
use chokepoint_testkit::Server;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The built-in catalogue's setting for `pool`, as a sweep without `--catalogue` reads it.
fn setting_for(pool: &str) -> Option<Setting> {
    Catalogue::built_in().setting_for(pool)
}

/// How long a server started here may take to listen.
const LISTEN_LIMIT: Duration = Duration::from_secs(30);

/// Starts the server `build(port)` makes on a free port, its output discarded (also for the
/// servers of `frameworks.rs` that print no port of their own).
pub(crate) fn start_quiet(name: &str, mut build: impl FnMut(u16) -> Command) -> (Server, u16) {
    Server::spawn_on_free_port(name, LISTEN_LIMIT, |port| {
        let mut command = build(port);
        command.stdout(Stdio::null()).stderr(Stdio::null());
        command
    })
}

/// The steps of these sweeps: a client, then more than any of these pools holds.
const CLIENTS: [u32; 2] = [1, 8];

/// A scratch folder, removed at the end.
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    pub(crate) fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("cp-catalogue-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        Scratch(dir)
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// `tests/targets/<from>` with `{KEY}` replaced by each value, written to `name`.
    pub(crate) fn fill(&self, from: &str, name: &str, values: &[(&str, String)]) -> PathBuf {
        let mut text = std::fs::read_to_string(targets_dir().join(from))
            .unwrap_or_else(|e| panic!("tests/targets/{from}: {e}"));
        for (key, value) in values {
            text = text.replace(&format!("{{{key}}}"), value);
        }
        let path = self.path(name);
        std::fs::write(&path, text).expect("a scratch file");
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The first of `candidates` that exists; `None` (the test is skipped) when none does, which
/// fails the test under CI: `.ci/run` installs it.
pub(crate) fn installed(candidates: &[&str], install: &str) -> Option<PathBuf> {
    let found = candidates.iter().map(Path::new).find(|p| p.exists());
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{candidates:?} missing ({install}): .ci/run installs it; a CI run must not skip this test"
        );
        println!("SKIPPED: {candidates:?} missing ({install})");
    }
    found.map(Path::to_path_buf)
}

/// The pool whose threads (or processes) waited on the network the most at once, over the
/// sweep's steps, as chokepoint's /proc observer named it, with its threads at that step.
fn waiting_pool(result: &SweepResult) -> (String, f64, f64) {
    result
        .steps
        .iter()
        .filter_map(|step| step.threads_by_pool.as_ref())
        .flat_map(|threads| threads.pools.iter())
        .max_by(|a, b| a.most.socket_wait.total_cmp(&b.most.socket_wait))
        .map(|pool| (pool.pool.clone(), pool.most.threads, pool.most.socket_wait))
        .expect("the target's threads were observed")
}

/// Sweeps `url` with `roots` observed, prints the pools, and returns the waiting pool and the
/// catalogue's setting for it.
fn sweep_and_look_up(
    name: &str,
    url: &str,
    roots: Vec<i32>,
    mock: &chokepoint_mock::RunningMock,
) -> (String, f64, f64, Option<Setting>, Option<String>) {
    let config = SweepConfig::new(url)
        .expect("a valid URL")
        .with_target_pids(roots);
    let result = sweep_with(name, config, Some(CLIENTS.to_vec()), STEP, 8, Some(mock));
    for step in &result.steps {
        if let Some(threads) = &step.threads_by_pool {
            let pools: Vec<String> = threads
                .pools
                .iter()
                .map(|p| format!("{} {}/{}", p.pool, p.most.socket_wait, p.most.threads))
                .collect();
            println!("{name}: {} clients: {}", step.clients, pools.join(", "));
        }
    }
    let (pool, threads, waiting) = waiting_pool(&result);
    let setting = setting_for(&pool);
    println!("{name}: pool `{pool}` ({waiting} of {threads} waiting): {setting:?}");
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    println!(
        "{name}: found {} {:?}; place {:?}; attribution {:?}",
        diagnosis.kind(),
        diagnosis.limit(),
        diagnosis.place,
        diagnosis.attribution
    );
    (pool, threads, waiting, setting, finding_setting(&result))
}

/// The setting the finding names (its place's), when it names one.
fn finding_setting(result: &SweepResult) -> Option<String> {
    let place = result.diagnosis.as_ref()?.place.as_ref()?;
    Some(place.setting.as_ref()?.setting.clone())
}

/// The JVM's common ForkJoinPool: `ForkJoinPool.commonPool-worker-N`, which /proc cuts to
/// `ForkJoinPool.co`; cores − 1 workers (at least 1).
#[test]
fn the_jvm_common_pool_says_its_parallelism_property() {
    if !toolchain_present("java", "-version") {
        return;
    }
    let _turn = beside_one_other();
    let mock = mock_with_delay();
    let target = launch_java_pools(&mock);
    let (pool, threads, waiting, setting, named) = sweep_and_look_up(
        "java-pools /common",
        &target.url_of("/common"),
        vec![target.pid()],
        &mock,
    );
    assert_eq!(pool, "ForkJoinPool.co");
    let setting = setting.expect("the catalogue knows the common pool");
    assert_eq!(
        setting.setting,
        "-Djava.util.concurrent.ForkJoinPool.common.parallelism=N"
    );
    assert_eq!(setting.default, "cores − 1 (at least 1)");
    println!("java-pools /common: the finding names {named:?}");
    assert_eq!(named.as_deref(), Some(setting.setting.as_str()));
    // The default, seen: this JVM's common pool has cores − 1 workers, all of them waiting.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let parallelism = cores.saturating_sub(1).max(1) as f64;
    assert_eq!((threads, waiting), (parallelism, parallelism));
}

/// gunicorn with its defaults: a master and one sync worker, both processes named `gunicorn`.
#[test]
fn gunicorn_says_its_workers_flag() {
    if !toolchain_present("gunicorn", "--version") {
        return;
    }
    let _turn = beside_one_other();
    // A sampled worker is caught in the call for the call's share of its time: longer calls
    // keep one sample, or one dump, from missing it on a busy machine (a flake-hunt round found
    // no place at 50 ms).
    let mock = mock_with_delay_of(Duration::from_millis(200));
    let (server, port) = start_quiet("gunicorn", |port| {
        let mut command = Command::new("gunicorn");
        command
            .args(["--bind", &format!("127.0.0.1:{port}"), "app:app"])
            .env("DOWNSTREAM", mock.url())
            .current_dir(targets_dir().join("py-gunicorn"));
        command
    });
    let (pool, threads, waiting, setting, named) = sweep_and_look_up(
        "py-gunicorn",
        &format!("http://127.0.0.1:{port}/"),
        vec![server.pid()],
        &mock,
    );
    assert_eq!(pool, "gunicorn");
    let setting = setting.expect("the catalogue knows gunicorn");
    assert!(setting.setting.starts_with("--workers N"), "{setting:?}");
    // The finding names it too: py-spy's main thread of each pre-fork worker takes its
    // process's name, the one the catalogue knows.
    println!("py-gunicorn: the finding names {named:?}");
    assert_eq!(named.as_deref(), Some(setting.setting.as_str()));
    // The default, seen: one sync worker, so one request waits on the downstream at a time
    // however many clients there are.
    println!("py-gunicorn: {threads} threads in the pool");
    assert_eq!(waiting, 1.0);
}

/// The clients of the sweeps of a pool of 8: from one to four times the pool.
const CLIENTS_PAST_8: [u32; 5] = [1, 4, 8, 16, 32];

/// Checks a sweep of a pool of 8 (2 × 4 or 4 × 2) that the mock saw: blocking-pool, 8 (± 10%),
/// never more than 8 calls at once.
fn assert_a_pool_of_8(name: &str, result: &SweepResult) {
    assert_eq!(most_downstream_in_flight(result), Some(8), "{name}");
    assert_finding(name, result, Kind::BlockingPool, 8.0);
}

/// gunicorn with 2 gthread workers of 4 threads (`tests/targets/py-gunicorn-gthread`, the app
/// of py-gunicorn) behind a 200 ms mock, swept with its master observed. Issue 22 saw such a
/// service come out `contention` in one sweep of three. By hand (tests/targets/README.md) a
/// gthread worker keeps every connection it accepts, and accepts whether or not a thread is
/// free: with kept-alive clients one worker held most of them as often as not, and the service
/// served 4 to 8 at once, a new draw each time the clients connect. So this sweep opens a
/// connection per request, as nginx in front of gunicorn passes them by default
/// (`proxy_http_version` 1.0, no upstream keep-alive).
fn sweep_gunicorn_gthread(name: &str) -> SweepResult {
    // 200 ms calls, as the sync worker's test: a sample catches a thread in the call.
    let mock = mock_with_delay_of(Duration::from_millis(200));
    let (server, port) = start_quiet("gunicorn-gthread", |port| {
        let mut command = Command::new("gunicorn");
        command
            .args(["--workers", "2", "--threads", "4"])
            .arg("--chdir")
            .arg(targets_dir().join("py-gunicorn"))
            .args(["--bind", &format!("127.0.0.1:{port}"), "app:app"])
            .env("DOWNSTREAM", mock.url())
            // The flag's 2 workers, whatever the environment says.
            .env_remove("WEB_CONCURRENCY");
        command
    });
    let mut config = SweepConfig::new(&format!("http://127.0.0.1:{port}/"))
        .expect("a valid URL")
        .with_target_pid(server.pid());
    config.base.keepalive = false;
    let result = sweep_with(
        name,
        config,
        Some(CLIENTS_PAST_8.to_vec()),
        STEP,
        32,
        Some(&mock),
    );
    drop(server);
    print_stacks(name, &result);
    result
}

/// gthread workers: a pool of workers × threads, 8, placed in those threads: /proc's
/// `gunicorn` (every thread of the workers) or, when py-spy's dump decides, the workers'
/// `ThreadPoolExecutor-0` (gunicorn's `ThreadPoolExecutor(max_workers=threads)`, unnamed, in
/// each worker: py-spy pools the two workers' threads under one name). Either way the knob is
/// gunicorn's, read from its command line: `--workers 2` and `--threads 4`, 8 at once. Before
/// the processes' stated size named it, every run named `ThreadPoolExecutor(max_workers=N)`.
#[test]
fn gunicorn_gthread_workers_are_a_pool_of_workers_times_threads_sized_by_their_flags() {
    if !toolchain_present("gunicorn", "--version") {
        return;
    }
    // Alone: each gthread worker serves only the connections it accepted, and a worker slow to
    // wake at a step's burst of connects leaves the other most of them. Beside another sweep and
    // a build (a clean-clone run, session 24), 16 clients kept 5.6 calls in flight of 8 (26
    // req/s at 200 ms) and the finding said a pool of 6.2, what the service did at that step;
    // 6 runs by hand, quiet or beside two niced spinners, kept 7.4-7.8.
    let _turn = one_at_a_time();
    let name = "py-gunicorn-gthread";
    let result = sweep_gunicorn_gthread(name);
    assert_a_pool_of_8(name, &result);
    let place = the_place(name, &result);
    println!("{name}: {place:?}");
    assert!(
        matches!(
            place.pool.as_deref(),
            Some("gunicorn" | "ThreadPoolExecutor-0")
        ),
        "{name}: {place:?}"
    );
    let held = place.held.unwrap_or(0.0);
    assert!((7.0..=8.0).contains(&held), "{name}: {held} held");
    let setting = place.setting.as_ref().expect("a knob named");
    assert_eq!(
        setting.setting,
        "--workers N (and --threads N for gthread workers)"
    );
    let stated = setting
        .stated_here
        .as_ref()
        .expect("read from the command line");
    assert_eq!(stated.size, 8, "{name}: {stated:?}");
}

/// uWSGI as its Python quickstart deploys it behind an HTTP proxy (`tests/targets/py-uwsgi`:
/// `--http-socket`, a master, 4 processes of 2 threads, the app of py-gunicorn): 8 requests at
/// once. Every process and thread is `uwsgi` in /proc; py-spy names each serving thread
/// `uWSGIWorkerNCoreM`, a pool of one.
#[test]
fn uwsgi_says_its_processes_and_threads() {
    let Some(uwsgi) = installed(
        &["/usr/bin/uwsgi"],
        "apt-get install uwsgi uwsgi-plugin-python3",
    ) else {
        return;
    };
    let Some(_plugin) = installed(
        &["/usr/lib/uwsgi/plugins/python3_plugin.so"],
        "apt-get install uwsgi-plugin-python3",
    ) else {
        return;
    };
    let _turn = beside_one_other();
    let mock = mock_with_delay_of(Duration::from_millis(200));
    let (server, port) = start_quiet("uwsgi", |port| {
        let mut command = Command::new(&uwsgi);
        command
            .arg("--ini")
            .arg(targets_dir().join("py-uwsgi/uwsgi.ini"))
            .args(["--http-socket", &format!("127.0.0.1:{port}")])
            .env("DOWNSTREAM", mock.url());
        command
    });
    let config = SweepConfig::new(&format!("http://127.0.0.1:{port}/"))
        .expect("a valid URL")
        .with_target_pid(server.pid());
    let name = "py-uwsgi";
    let result = sweep_with(
        name,
        config,
        Some(CLIENTS_PAST_8.to_vec()),
        STEP,
        32,
        Some(&mock),
    );
    drop(server);
    assert_a_pool_of_8(name, &result);
    let place = the_place(name, &result);
    println!("{name}: {place:?}");
    assert_eq!(place.pool.as_deref(), Some("uwsgi"), "{name}");
    let setting = setting_for("uwsgi").expect("the catalogue knows uWSGI");
    assert!(
        setting
            .setting
            .starts_with("--processes N (alias --workers) and --threads M"),
        "{setting:?}"
    );
    assert_eq!(
        setting.default,
        "1 process, 1 thread: one request at a time (--enable-threads lets the app start threads of its own, it adds none that serve requests)"
    );
    assert_eq!(place.setting.as_ref(), Some(&setting), "{name}");
}

/// PHP-FPM behind nginx on a unix socket, with the pool settings PHP ships: processes
/// `php-fpm8.2`, pooled as `php-fpm8` (the observer takes `.2` for a counter).
#[test]
fn php_fpm_says_its_max_children() {
    let Some(fpm) = installed(
        &[
            "/usr/sbin/php-fpm8.2",
            "/usr/sbin/php-fpm8.3",
            "/usr/sbin/php-fpm8.4",
            "/usr/sbin/php-fpm",
        ],
        "apt-get install php-fpm",
    ) else {
        return;
    };
    let Some(nginx) = installed(
        &["/usr/sbin/nginx", "/usr/bin/nginx"],
        "apt-get install nginx-light",
    ) else {
        return;
    };
    let _turn = beside_two_others();
    let mock = mock_with_delay();
    let scratch = Scratch::new("php-fpm");
    let dir = scratch.0.display().to_string();
    std::fs::copy(
        targets_dir().join("php-fpm-nginx/index.php"),
        scratch.path("index.php"),
    )
    .expect("index.php copied");
    std::fs::write(scratch.path("downstream.txt"), format!("{}/", mock.url()))
        .expect("downstream.txt");
    // On a unix socket, as Debian's www.conf has it (`listen = /run/php/php8.2-fpm.sock`).
    let fpm_socket = scratch.path("php-fpm.sock");
    let fpm_conf = scratch.fill(
        "php-fpm-nginx/php-fpm.conf",
        "php-fpm.conf",
        &[
            ("DIR", dir.clone()),
            ("LISTEN", fpm_socket.display().to_string()),
        ],
    );
    let mut fpm = Server::spawn(
        "php-fpm",
        Command::new(&fpm)
            .arg("-R")
            .arg("-F")
            .arg("-y")
            .arg(&fpm_conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    fpm.wait_unix_listening(&fpm_socket, LISTEN_LIMIT)
        .unwrap_or_else(|exit| panic!("php-fpm exited before it listened: {}", exit.0));
    let (nginx, port) = start_quiet("nginx", |port| {
        let nginx_conf = scratch.fill(
            "php-fpm-nginx/nginx.conf",
            "nginx.conf",
            &[
                ("DIR", dir.clone()),
                ("PORT", port.to_string()),
                ("UPSTREAM", format!("unix:{}", fpm_socket.display())),
                ("SCRIPT", scratch.path("index.php").display().to_string()),
            ],
        );
        let mut command = Command::new(&nginx);
        command
            .arg("-c")
            .arg(&nginx_conf)
            .arg("-p")
            .arg(format!("{dir}/"));
        command
    });
    // The roots as `--pid auto` finds them: nginx on the URL's port, a forwarder, followed over
    // the unix socket to PHP-FPM behind it (issue 23: before, `--pid auto` observed nginx alone
    // and placed nothing; the socket is found by the kernel's sock_diag, built after the rule).
    let url = format!("http://127.0.0.1:{port}/");
    let config = SweepConfig::new(&url).expect("a valid URL");
    let mut roots = config.listening_target();
    assert_eq!(roots, vec![nginx.pid()], "--pid auto finds nginx");
    let forwarder = config
        .follow_forwarder(&roots)
        .expect("nginx followed to PHP-FPM");
    assert_eq!(forwarder.name, "nginx");
    assert_eq!(
        (forwarder.to_port, forwarder.to_path.as_deref()),
        (None, fpm_socket.to_str())
    );
    assert_eq!(forwarder.served_pids, vec![fpm.pid()]);
    roots.extend(forwarder.served_pids);
    let (pool, threads, waiting, setting, named) =
        sweep_and_look_up("php-fpm-nginx", &url, roots, &mock);
    assert!(pool.starts_with("php-fpm"), "{pool}");
    let setting = setting.expect("the catalogue knows PHP-FPM");
    assert_eq!(
        setting.setting,
        "pm.max_children in the pool's config (www.conf)"
    );
    assert_eq!(setting.default, "5 (the www.conf PHP ships)");
    println!("php-fpm-nginx: the finding names {named:?}");
    assert_eq!(named.as_deref(), Some(setting.setting.as_str()));
    // The default, seen: at 8 clients the master and never more than 5 children (dynamic pm
    // starts them as the load comes), several of them waiting on the downstream at once.
    assert!(
        threads <= 6.0 && (2.0..=5.0).contains(&waiting),
        "{threads} threads, {waiting} waiting"
    );
}

/// Apache httpd's prefork children, named `apache2` by Debian (`httpd` elsewhere).
#[test]
fn apache_says_its_max_request_workers() {
    let Some(apache) = installed(
        &["/usr/sbin/apache2", "/usr/sbin/httpd"],
        "apt-get install apache2",
    ) else {
        return;
    };
    let _turn = beside_one_other();
    let mock = mock_with_delay();
    let scratch = Scratch::new("apache");
    let (server, port) = start_quiet("apache2", |port| {
        let conf = scratch.fill(
            "apache-proxy/httpd.conf",
            "httpd.conf",
            &[
                ("DIR", scratch.0.display().to_string()),
                ("PORT", port.to_string()),
                ("DOWNSTREAM", format!("{}/", mock.url())),
            ],
        );
        let mut command = Command::new(&apache);
        command.arg("-f").arg(&conf).arg("-DFOREGROUND");
        command
    });
    let (pool, _threads, waiting, setting, _named) = sweep_and_look_up(
        "apache-proxy",
        &format!("http://127.0.0.1:{port}/"),
        vec![server.pid()],
        &mock,
    );
    assert!(pool == "apache2" || pool == "httpd", "{pool}");
    let setting = setting.expect("the catalogue knows Apache httpd");
    assert_eq!(setting.setting, "MaxRequestWorkers (with ServerLimit)");
    // Far from its 256 children, prefork gives each of the 8 clients its own.
    assert!(waiting >= 7.0, "{waiting} waiting");
}

/// CPython's ThreadPoolExecutor with its defaults: /proc shows every thread as `python3`, so
/// the pool is the one py-spy names (`ThreadPoolExecutor-0_3` → `ThreadPoolExecutor-0`).
#[test]
fn a_python_thread_pool_executor_says_its_max_workers() {
    if !toolchain_present("python3", "--version") || !toolchain_present("py-spy", "--version") {
        return;
    }
    let _turn = beside_one_other();
    // One py-spy dump at the plateau step decides; at 50 ms a busy machine's dump caught 3 of
    // the 6 workers in the call (a run of this test), at 200 ms they are there nearly always
    // (see tests/sweeps/place.rs, the same pool).
    let mock = mock_with_delay_of(Duration::from_millis(200));
    let mut command = Command::new("python3");
    command
        .arg(targets_dir().join("py-threadpool/server.py"))
        .args([
            "--port",
            "0",
            "--downstream",
            &mock.url(),
            "--default-executor",
        ]);
    let target = Target::launch("py-threadpool", command);
    let config = SweepConfig::new(&target.url())
        .expect("a valid URL")
        .with_target_pid(target.pid());
    // The entry's default, min(32, cores + 4), with the cores as this Python counts them.
    let counted = Command::new("python3")
        .args(["-c", "import os; print(os.cpu_count() or 1)"])
        .output()
        .expect("python3 runs");
    let cores: usize = String::from_utf8_lossy(&counted.stdout)
        .trim()
        .parse()
        .expect("a CPU count");
    let workers = (cores + 4).min(32);
    let clients = vec![1, 2 * workers as u32];
    let result = sweep_with(
        "py-threadpool",
        config,
        Some(clients),
        STEP,
        64,
        Some(&mock),
    );
    let (pool, most_threads, downstream) = result
        .steps
        .iter()
        .filter_map(|step| step.stacks.as_ref())
        .flat_map(|stacks| stacks.pools.iter())
        .map(|p| {
            (
                p.pool.clone(),
                p.most_threads,
                p.threads_in(WaitKind::Downstream),
            )
        })
        .max_by(|a, b| a.2.total_cmp(&b.2))
        .expect("py-spy's stacks were read");
    let setting = setting_for(&pool);
    println!("py-threadpool: pool `{pool}` ({downstream} of {most_threads} in the downstream call): {setting:?}");
    assert_eq!(pool, "ThreadPoolExecutor-0");
    let setting = setting.expect("the catalogue knows ThreadPoolExecutor");
    assert_eq!(setting.setting, "ThreadPoolExecutor(max_workers=N)");
    assert_eq!(setting.default, "min(32, cores + 4)");
    let named = finding_setting(&result);
    println!("py-threadpool: the finding names {named:?}");
    assert_eq!(named.as_deref(), Some(setting.setting.as_str()));
    // The default, seen: min(32, cores + 4) workers at twice as many clients.
    assert_eq!(most_threads as usize, workers);
}
