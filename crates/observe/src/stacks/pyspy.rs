//! CPython's stacks, from `py-spy dump --json --pid PID`.
//!
//! A target whose process tree holds CPython interpreters (`/proc/PID/exe` named `python*`, or
//! a process that loaded `libpython`) is dumped a few times per step, each interpreter of the
//! tree in turn ([`super::snapshots`]). The dump pauses the interpreter while it reads it
//! (py-spy's default), so its threads are counted at one instant: `--nonblocking` reads them one
//! after another while they run, and on tests/targets/py-requests (a pool of 10 connections, 30
//! clients) read 8 to 12 threads in the call where paused dumps read 10 (9 once, at a
//! hand-off) in 20 dumps each; one in ten of its dumps failed outright. The pause costs little:
//! 4 dumps a second (this module takes at most 1) moved py-requests' throughput by 0.2–0.5% and
//! its p99 by 3–4 ms of 152.
//!
//! Each Python thread becomes a [`ThreadStack`]: its `threading` name, its OS thread id,
//! py-spy's status (`active+gil`, `active`, `idle`), what it waits on and where.
//!
//! What it waits on is read from its frames ([`classify`]): a socket read under an HTTP or
//! database client is a downstream call; the same read under `http.server` is a connection
//! waiting for its client's next request; a `concurrent.futures` worker with no work item is
//! idle. A C call (`time.sleep`, `Lock.acquire`, a C driver's read) has no Python frame, so a
//! thread whose innermost frame is the service's own code is told apart by the system call its
//! OS thread sits in (`/proc/PID/task/TID/syscall`, read right after the dump).
use super::snapshots::{find_on_path, run_bounded, step_result, take_until_stopped, Schedule};
use super::{StackTool, ThreadStack};
use crate::namespace::HostThreadIds;
use crate::threads::{classify as classify_syscall, syscall_now, Activity};
use crate::tree::process_tree;
use chokepoint_result::{ObservationNote, StackEvidence, StackSource, WaitKind};
use serde::Deserialize;
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::time::Duration;

/// The tool, as a person types it.
const PY_SPY: &str = "py-spy";
/// How to get it.
const INSTALL: &str = "pip install py-spy";
/// How long one dump may take (it takes ~0.1 s for 30 threads).
const DUMP_LIMIT: Duration = Duration::from_secs(2);
/// Five dumps in a step's first 1.3 s, as for goroutines (`super::pprof`): the place's held count
/// is their mean, which counts a worker between two tasks for its share of the time. With the
/// snapshots' default (0.5 s, then every 1 s) an adaptive step of 1.5 s took one or two, and a
/// full run saw py-threadpool's pool of 6 read 5 held (one worker caught between tasks), short
/// of the ± 15 % a place must match: `ThreadPoolExecutor(max_workers=N)` went unnamed.
const PY_SPY_DUMPS: Schedule = Schedule {
    first: Duration::from_millis(300),
    every: Duration::from_millis(250),
    most: 5,
};
/// Interpreters of one tree dumped per snapshot, at most (a pre-fork server's workers).
const MOST_PROCESSES: usize = 8;
/// Service frames kept after the blocking call.
const SERVICE_FRAMES: usize = 2;

/// The py-spy tool for the CPython interpreters of `root`'s tree; `None` when it has none.
pub(super) fn tool_for(root: i32) -> Option<Result<Box<dyn StackTool>, ObservationNote>> {
    let interpreters: Vec<i32> = process_tree(root)
        .ok()?
        .into_iter()
        .filter(|&pid| is_python(pid))
        .take(MOST_PROCESSES)
        .collect();
    if interpreters.is_empty() {
        return None;
    }
    if find_on_path(PY_SPY).is_none() {
        return Some(Err(ObservationNote::ToolMissing {
            tool: PY_SPY.into(),
            install: INSTALL.into(),
        }));
    }
    Some(Ok(Box::new(PySpy { interpreters })))
}

/// Whether process `pid` runs CPython: its executable is `python*`, or it loaded `libpython`
/// (uWSGI, an embedded interpreter).
pub fn is_python(pid: i32) -> bool {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
    let named_python = exe
        .as_ref()
        .and_then(|path| path.file_name())
        .is_some_and(|name| name.to_string_lossy().starts_with("python"));
    named_python
        || std::fs::read_to_string(format!("/proc/{pid}/maps"))
            .is_ok_and(|maps| maps.contains("/libpython"))
}

struct PySpy {
    interpreters: Vec<i32>,
}

impl StackTool for PySpy {
    fn watch_step(
        &mut self,
        stop: &mpsc::Receiver<()>,
        looked: &AtomicBool,
    ) -> (Option<StackEvidence>, Vec<ObservationNote>) {
        let (snapshots, failures) =
            take_until_stopped(stop, PY_SPY_DUMPS, looked, || self.snapshot());
        step_result(StackSource::PySpy, PY_SPY, &snapshots, &failures)
    }
}

impl PySpy {
    /// Every interpreter's threads now; an error when none could be dumped.
    fn snapshot(&self) -> Result<Vec<ThreadStack>, String> {
        let mut threads = Vec::new();
        let mut first_failure = None;
        let mut dumped = 0;
        for &pid in &self.interpreters {
            match dump(pid, self.interpreters.len() > 1) {
                Ok(found) => {
                    dumped += 1;
                    threads.extend(found);
                }
                // A worker that ended since the step began is not a failure of the tool.
                Err(_) if !std::path::Path::new(&format!("/proc/{pid}")).exists() => {}
                Err(why) => {
                    first_failure.get_or_insert(format!("process {pid}: {why}"));
                }
            }
        }
        match first_failure {
            Some(why) if dumped == 0 => Err(why),
            _ => Ok(threads),
        }
    }
}

/// One interpreter's threads, dumped now, as [`process_stacks`] names them.
fn dump(pid: i32, pre_fork: bool) -> Result<Vec<ThreadStack>, String> {
    let mut tries = 0;
    let output = loop {
        tries += 1;
        let output = run_bounded(
            Command::new(PY_SPY)
                .args(["dump", "--json", "--pid", &pid.to_string()])
                .env("RUST_BACKTRACE", "0"),
            DUMP_LIMIT,
        )?;
        if output.status.success() {
            break output;
        }
        let why = failure_reason(&String::from_utf8_lossy(&output.stderr));
        if !raced(&why) || tries == RACED_TRIES {
            return Err(why);
        }
    };
    let threads = parse_dump(&String::from_utf8_lossy(&output.stdout))?;
    let process = Process {
        pid,
        name: std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|comm| comm.trim_end().to_string())
            .unwrap_or_default(),
        pre_fork,
    };
    let ids = HostThreadIds::of(pid);
    let is_task = |tid: i32| std::path::Path::new(&format!("/proc/{pid}/task/{tid}")).exists();
    Ok(process_stacks(threads, &process, &ids, is_task, |tid| {
        os_activity(pid, tid)
    }))
}

/// The dumped process, as [`process_stacks`] needs it.
struct Process {
    pid: i32,
    /// Its `comm` (`gunicorn`, `uwsgi`).
    name: String,
    /// One of several interpreters of a tree (a pre-fork server's master and workers).
    pre_fork: bool,
}

/// A process's dumped threads as stacks: each with its host thread id, its OS thread's
/// activity (`activity`), and the pool name the catalogue knows.
///
/// - In a PID namespace of its own, py-spy gives the namespace's thread id and read "active"
///   from the host's thread of that id: the right thread's state replaces it (as it does for
///   the leader below).
/// - A thread id that is no task of the process (`is_task`) is one from before a fork. After
///   `fork()` only the calling thread lives on, as the child's leader, whose id is the
///   child's pid; CPython keeps the id its thread state was made with unless the forking code
///   calls `PyOS_AfterFork_Child` (uWSGI's workers, forked in C, report the master's pid for
///   their main thread). So, when no other thread has the pid, that thread is the leader.
/// - Of a tree with several interpreters, each main thread takes its process's name
///   (`gunicorn`, `uwsgi`): the workers are one pool of processes, as `/proc` pools them, and
///   that name is what the catalogue knows, where every `MainThread` would look alike.
/// - A uWSGI core ([`is_uwsgi_core`]) takes it too, in any tree: it is one of the process's
///   request threads, named after its worker, so that no two workers' cores would pool.
fn process_stacks(
    threads: Vec<PyThread>,
    process: &Process,
    ids: &HostThreadIds,
    is_task: impl Fn(i32) -> bool,
    activity: impl Fn(i32) -> Option<Activity>,
) -> Vec<ThreadStack> {
    let host_ids: Vec<Option<i32>> = threads
        .iter()
        .map(|thread| {
            thread
                .os_thread_id
                .and_then(|tid| ids.host(tid))
                .filter(|&tid| is_task(tid))
        })
        .collect();
    let from_before_fork: Vec<usize> = (0..threads.len())
        .filter(|&at| threads[at].os_thread_id.is_some() && host_ids[at].is_none())
        .collect();
    let leader_claimed = host_ids.contains(&Some(process.pid));
    threads
        .into_iter()
        .zip(host_ids)
        .enumerate()
        .map(|(at, (mut thread, host_id))| {
            let forked = host_id.is_none() && from_before_fork == [at] && !leader_claimed;
            thread.os_thread_id = if forked { Some(process.pid) } else { host_id };
            let activity = thread.os_thread_id.and_then(&activity);
            // py-spy read "active" from the thread of the id it gave, another thread or none.
            if let (true, Some(activity)) = (ids.namespaced() || forked, activity) {
                thread.active = activity == Activity::Running;
            }
            let main = is_main(&thread, process.pid) && process.pre_fork;
            let core = thread.thread_name.as_deref().is_some_and(is_uwsgi_core);
            let mut stack = thread_stack(&thread, activity);
            if (main || core) && !process.name.is_empty() {
                stack.name = process.name.clone();
            }
            stack
        })
        .collect()
}

/// Whether a thread named `name` is one of a uWSGI worker's request threads, which uWSGI's
/// Python plugin names `uWSGIWorker<worker>Core<core>` (`uwsgi_python_set_thread_name`,
/// unbit/uwsgi `plugins/python/python_plugin.c` at `dbeeaf81`).
fn is_uwsgi_core(name: &str) -> bool {
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    name.strip_prefix("uWSGIWorker")
        .and_then(|rest| rest.split_once("Core"))
        .is_some_and(|(worker, core)| digits(worker) && digits(core))
}

/// Dumps of one interpreter tried in a row when the read raced it ([`raced`]).
const RACED_TRIES: u32 = 3;

/// Whether py-spy failed because its read raced the interpreter: a thread whose frames changed
/// while they were copied cannot be unwound ("Failed to get stack traces: Failed to call
/// get_stack_trace for thread …"). `--nonblocking` reads did so often (at 24 clients on
/// py-threadpool two dumps of a step in a row); a paused read can still meet a thread that
/// starts or ends as it attaches. Another read moments later sees a consistent state.
fn raced(why: &str) -> bool {
    why.contains("Failed to get stack traces") || why.contains("Failed to call get_stack_trace")
}

/// Whether `thread` is the main thread of process `pid` (its OS thread is the process, or
/// `threading` names it so).
fn is_main(thread: &PyThread, pid: i32) -> bool {
    thread.os_thread_id == Some(pid) || thread.thread_name.as_deref() == Some("MainThread")
}

/// Why py-spy failed, from its stderr: its `Error:` line and first cause, and what to do
/// when it lacked the rights to read the target.
pub fn failure_reason(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .take_while(|line| !line.starts_with("Stack backtrace"))
        .filter(|line| !line.is_empty() && *line != "Caused by:")
        .collect();
    let mut why = lines
        .iter()
        .take(2)
        .map(|line| line.trim_start_matches("0: "))
        .collect::<Vec<_>>()
        .join(": ");
    if why.is_empty() {
        why = "it failed without saying why".into();
    }
    let lower = stderr.to_ascii_lowercase();
    if lower.contains("permission denied") || lower.contains("operation not permitted") {
        why.push_str(
            " (py-spy needs ptrace rights on the target: run chokepoint as root or with \
             CAP_SYS_PTRACE, or as the target's user with kernel.yama.ptrace_scope = 0)",
        );
    }
    why
}

/// One thread of `py-spy dump --json` (the fields used here; others are ignored).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PyThread {
    /// The `threading` name (`worker_3`, `Thread-7 (process_request_thread)`), when it has one.
    #[serde(default)]
    pub thread_name: Option<String>,
    /// The OS thread id (`/proc/PID/task/TID`).
    #[serde(default)]
    pub os_thread_id: Option<i32>,
    /// On a CPU (py-spy reads the OS thread's state).
    #[serde(default)]
    pub active: bool,
    /// Holding the interpreter lock.
    #[serde(default)]
    pub owns_gil: bool,
    /// Innermost first.
    #[serde(default)]
    pub frames: Vec<PyFrame>,
}

/// One frame of a [`PyThread`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PyFrame {
    /// The function's qualified name (`HTTPConnection.getresponse`,
    /// `make_handler.<locals>.call_downstream`).
    pub name: String,
    /// The source file's full path.
    #[serde(default)]
    pub filename: String,
    /// The path without the interpreter's prefix (`http/client.py`, `requests/sessions.py`).
    #[serde(default)]
    pub short_filename: Option<String>,
    /// The line being run (0 when unknown).
    #[serde(default)]
    pub line: i32,
}

/// The threads of one `py-spy dump --json`.
pub fn parse_dump(json: &str) -> Result<Vec<PyThread>, String> {
    serde_json::from_str(json).map_err(|err| format!("its JSON could not be read: {err}"))
}

/// What OS thread `tid` of `pid` is doing now, from `/proc`.
fn os_activity(pid: i32, tid: i32) -> Option<Activity> {
    let base = format!("/proc/{pid}/task/{tid}");
    let stat = std::fs::read_to_string(format!("{base}/stat")).ok()?;
    // The state follows the command name, which is in parentheses and may hold any byte.
    let state = stat.rsplit_once(") ")?.1.chars().next()?;
    let syscall = syscall_now(&base);
    let (activity, _) = classify_syscall(state, syscall, None, |fd| {
        std::fs::read_link(format!("/proc/{pid}/fd/{fd}"))
            .is_ok_and(|target| target.to_string_lossy().starts_with("socket:"))
    });
    Some(activity)
}

/// A dumped thread as a [`ThreadStack`]; `activity` is its OS thread's, when read.
pub fn thread_stack(thread: &PyThread, activity: Option<Activity>) -> ThreadStack {
    let state = match (thread.active, thread.owns_gil) {
        (false, _) => "idle",
        (true, true) => "active+gil",
        (true, false) => "active",
    };
    let (waiting, frames) = classify(&thread.frames, thread.active, activity);
    ThreadStack {
        name: thread
            .thread_name
            .clone()
            .unwrap_or_else(|| "unnamed".into()),
        tid: thread.os_thread_id,
        state: state.into(),
        waiting,
        frames,
    }
}

/// Frames of an HTTP, RPC or database client: a socket wait under one is a downstream call.
const CLIENT_FILES: &[&str] = &[
    "/http/client.py",
    "/urllib/request.py",
    "/xmlrpc/client.py",
    "/smtplib.py",
    "/ftplib.py",
    "/urllib3/",
    "/requests/",
    "/httpx/",
    "/httpcore/",
    "/aiohttp/",
    "/grpc/",
    "/redis/",
    "/pymysql/",
    "/psycopg/",
    "/pymongo/",
    "/elasticsearch/",
    "/botocore/",
];

/// Frames of a server or event loop waiting for its clients: a socket wait under one is idle.
const SERVER_FILES: &[&str] = &[
    "/http/server.py",
    "/socketserver.py",
    "/wsgiref/",
    "/asyncio/base_events.py",
    "/werkzeug/serving.py",
    "/gunicorn/",
    "/waitress/",
    "/uvicorn/",
    "/tornado/",
];

/// A thread in a socket call's frame but parked on a futex: the call has released the
/// interpreter lock and it waits to get it back.
const GIL: &str = "the GIL";
/// A thread whose innermost frame is the service's, parked on a futex: a `threading.Lock`
/// (a C call, no frame of its own) or the interpreter lock; `/proc` cannot tell them apart.
const LOCK_OR_GIL: &str = "Lock.acquire or the GIL";

/// `(file, function)` of a server waiting for a client to connect.
const ACCEPTS: &[(&str, &str)] = &[("/socket.py", "socket.accept")];

/// Files whose frames are a wait on a socket.
const SOCKET_FILES: &[&str] = &["/socket.py", "/ssl.py", "/selectors.py"];

/// `(file, function)` of a wait for a free connection of a client's pool.
const POOL_ACQUIRES: &[(&str, &str)] = &[
    ("/urllib3/connectionpool.py", "_get_conn"),
    ("/sqlalchemy/pool/", "_do_get"),
    ("/httpcore/_sync/connection_pool.py", "wait_for_connection"),
    ("/psycopg_pool/pool.py", "getconn"),
];

/// `(file, function)` of a wait for a semaphore's permit.
const SEMAPHORES: &[(&str, &str)] = &[("/threading.py", "Semaphore.acquire")];

/// `(file, function)` of a pool worker's loop waiting for its next task.
const IDLE_WORKERS: &[(&str, &str)] = &[
    ("/concurrent/futures/thread.py", "_worker"),
    ("/multiprocessing/pool.py", "worker"),
];

/// Whether `frame` is the interpreter's library or an installed package, not the service's
/// own code.
fn is_library(frame: &PyFrame) -> bool {
    let file = &frame.filename;
    file.is_empty()
        || file.starts_with('<')
        || file.contains("/lib/python")
        || file.contains("/site-packages/")
        || file.contains("/dist-packages/")
}

fn in_files(frame: &PyFrame, files: &[&str]) -> bool {
    files.iter().any(|file| frame.filename.contains(file))
}

/// Whether `frame` is one of `calls`. Python 3.11 on names a frame by its qualified name
/// (`HTTPConnectionPool._get_conn`); older ones by the function's alone (`_get_conn`).
fn is_call(frame: &PyFrame, calls: &[(&str, &str)]) -> bool {
    let last = |name: &'_ str| name.rsplit('.').next().unwrap_or_default().to_string();
    calls.iter().any(|(file, function)| {
        frame.filename.contains(file)
            && (frame.name == *function
                || (!frame.name.contains('.') || !function.contains('.'))
                    && last(&frame.name) == last(function))
    })
}

/// What a thread with these frames (innermost first) waits on, and the frames that say
/// where: the blocking call, the library call the service made (when another), then the
/// first frames of the service's own code. `active` is py-spy's; `activity` the OS thread's.
pub fn classify(
    frames: &[PyFrame],
    active: bool,
    activity: Option<Activity>,
) -> (WaitKind, Vec<String>) {
    let service_at = frames
        .iter()
        .position(|frame| !is_library(frame))
        .unwrap_or(frames.len());
    let (library, outer) = frames.split_at(service_at);
    let service: Vec<String> = outer
        .iter()
        .take_while(|frame| !is_library(frame))
        .take(SERVICE_FRAMES)
        .map(label)
        .collect();
    let mut place = Vec::new();
    if let Some(innermost) = library.first() {
        place.push(label(innermost));
    }
    // The pool's own acquire (`HTTPConnectionPool._get_conn`), when it sits between the wait and
    // the call the service made: the frame that names which pool the thread queues for, and
    // the one the catalogue knows a pool by.
    if let Some(acquire) = library
        .iter()
        .take(library.len().saturating_sub(1))
        .skip(1)
        .find(|frame| is_call(frame, POOL_ACQUIRES))
    {
        place.push(label(acquire));
    }
    // The library call the service made (`urlopen`), when it is not the blocking call itself.
    if !service.is_empty() && library.len() > 1 {
        place.push(label(&library[library.len() - 1]));
    }
    let kind = if active {
        WaitKind::Running
    } else if let Some(innermost) = library.first() {
        if in_files(innermost, SOCKET_FILES) && activity == Some(Activity::LockWait) {
            // Back from (or on its way into) the socket call, waiting to run Python again.
            place.insert(0, GIL.into());
            WaitKind::Lock
        } else {
            library_wait(innermost, library, frames)
        }
    } else {
        // The service's own line is innermost: it is in a C call (or waiting for the GIL).
        let (kind, call) = match activity {
            Some(Activity::Sleeping) => (WaitKind::Sleep, Some("time.sleep (a C sleep)")),
            Some(Activity::LockWait) => (WaitKind::Lock, Some(LOCK_OR_GIL)),
            Some(Activity::SocketWait) => (WaitKind::Other, Some("a C call on a socket")),
            Some(Activity::Running) => (WaitKind::Running, None),
            _ => (WaitKind::Other, None),
        };
        place.extend(call.map(String::from));
        kind
    };
    place.extend(service);
    if place.is_empty() {
        if let Some(outermost) = frames.last() {
            place.push(label(outermost));
        }
    }
    (kind, place)
}

/// What a thread waits on whose innermost frame, `innermost`, is library code; `library` are
/// the library frames inside the service's, `all` the whole stack.
fn library_wait(innermost: &PyFrame, library: &[PyFrame], all: &[PyFrame]) -> WaitKind {
    if library.iter().any(|frame| is_call(frame, POOL_ACQUIRES)) {
        WaitKind::PoolAcquire
    } else if library.iter().any(|frame| is_call(frame, SEMAPHORES)) {
        WaitKind::Lock
    } else if is_call(innermost, ACCEPTS) {
        WaitKind::Idle
    } else if in_files(innermost, SOCKET_FILES) || in_files(innermost, CLIENT_FILES) {
        if library.iter().any(|frame| in_files(frame, CLIENT_FILES)) {
            WaitKind::Downstream
        } else if all.iter().any(|frame| in_files(frame, SERVER_FILES)) {
            WaitKind::Idle
        } else {
            WaitKind::Other
        }
    } else if is_call(innermost, IDLE_WORKERS)
        || (library.len() == all.len() && all.iter().any(|frame| in_files(frame, SERVER_FILES)))
    {
        WaitKind::Idle
    } else {
        WaitKind::Other
    }
}

/// A frame as a person reads it: `call_downstream (server.py:28)` for the service's code,
/// `HTTPConnection.getresponse (http/client.py)` for the library's (whose lines say little).
fn label(frame: &PyFrame) -> String {
    // `make_handler.<locals>.call_downstream` → `call_downstream`
    let name = frame
        .name
        .rsplit_once("<locals>.")
        .map_or(frame.name.as_str(), |(_, inner)| inner);
    let file = frame.short_filename.as_deref().unwrap_or(&frame.filename);
    if is_library(frame) || frame.line <= 0 {
        format!("{name} ({file})")
    } else {
        format!("{name} ({file}:{})", frame.line)
    }
}

#[cfg(test)]
#[path = "pyspy_tests.rs"]
mod tests;
