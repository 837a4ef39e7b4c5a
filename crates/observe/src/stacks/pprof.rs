//! Go's goroutines, from the goroutine dump of `net/http/pprof`
//! (`GET /debug/pprof/goroutine?debug=2`).
//!
//! Goroutines are not threads: `/proc` shows a Go service's few OS threads, not the thousands of
//! goroutines that wait in its handlers. Where the service serves `net/http/pprof`, its goroutine
//! dump says where each one waits. The dump's URL is `--pprof URL`, or found on a Go target
//! (an executable with a `.go.buildinfo` section) at one of the loopback ports it listens on. It
//! is read five times in each step, a quarter of a second apart ([`GOROUTINE_DUMPS`]), with short time limits, on loopback only.
//!
//! Each goroutine becomes a [`ThreadStack`]: its pool is the function that started it (`created
//! by net/http.(*Server).Serve`: the server's handlers), its state is the runtime's (`chan send`,
//! `select`, `IO wait`...), and what it waits on is read from its frames ([`classify`]): a
//! goroutine inside `net/http.(*Client).Get` waits on a downstream; a handler blocked on a
//! channel of its own (a channel semaphore) or a `sync.Mutex` waits on a lock.
use super::snapshots::{step_result, take_until_stopped, Schedule};
use super::{StackOptions, StackTool, ThreadStack};
use crate::sockets::{socket_inodes, socket_table, SocketState};
use crate::tree::process_tree;
use chokepoint_result::{ObservationNote, StackEvidence, StackSource, WaitKind};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::time::Duration;

/// The tool, as the notes name it.
const PPROF: &str = "pprof";
/// The dump's path under a `net/http/pprof` base.
const GOROUTINE_DUMP: &str = "goroutine?debug=2";
/// How long a connection to the endpoint may take (loopback: it answers at once or not at all).
const CONNECT_LIMIT: Duration = Duration::from_millis(250);
/// How long a whole dump may take (it stops the Go world while it copies every stack).
const DUMP_LIMIT: Duration = Duration::from_secs(2);
/// The largest dump read (about 2 KB per goroutine).
const MOST_BYTES: u64 = 64 << 20;
/// Ports of a Go target tried for `/debug/pprof/`, at most.
const MOST_PORTS: usize = 4;
/// When to dump in a step: more often than the other tools. A dump is one instant, and a
/// handler holds its slot from before its call to after it (reading the answer, writing its
/// own), so an instant under-counts the slots held by the handlers caught in between; on a busy
/// machine, where they wait for a CPU, by several (very likely why one dump of go-semaphore in
/// a full run did not read its 12 handlers held).
/// The mean of several dumps counts each for its share of the time, as `/proc`'s samples do. A
/// dump is cheap: 2-4 ms for go-semaphore's 110 goroutines at 48 clients (ten `curl`s of
/// `goroutine?debug=2` under `wrk -c48`). Five, in a step's first 1.3 s (an adaptive step of
/// 1.5 s takes them all), moved nothing `bench/pprof-overhead.sh 6` could see: go-cpu, CPU-bound
/// at 8 clients, 353.4 req/s with them and 354.0 without (ratio 0.998, rounds spread ±4 %);
/// go-semaphore 0.999. Eight a step, every 250 ms of 4 s, read 0.966 on go-cpu in 4 rounds.
const GOROUTINE_DUMPS: Schedule = Schedule {
    first: Duration::from_millis(300),
    every: Duration::from_millis(250),
    most: 5,
};
/// Service frames kept after the blocking call.
const SERVICE_FRAMES: usize = 2;

/// The `goroutine?debug=2` URL of `--pprof URL`: a `net/http/pprof` base on loopback
/// (`http://127.0.0.1:6060/debug/pprof`), or the dump's own URL. An error says what is wrong.
pub fn goroutine_url(text: &str) -> Result<String, String> {
    let url = text.trim();
    let rest = url.strip_prefix("http://").ok_or_else(|| {
        format!("'{text}' is not an http:// URL: give the service's net/http/pprof base, e.g. http://127.0.0.1:6060/debug/pprof")
    })?;
    let authority = rest.split('/').next().unwrap_or_default();
    let (host, port) = authority.rsplit_once(':').unwrap_or((authority, ""));
    if !["127.0.0.1", "localhost", "[::1]"].contains(&host) {
        return Err(format!(
            "'{text}' is not on this machine's loopback: chokepoint reads pprof at 127.0.0.1, localhost or [::1] only"
        ));
    }
    if port.parse::<u16>().is_err() {
        return Err(format!(
            "'{text}' has no port: give the one the service serves net/http/pprof on, e.g. http://127.0.0.1:6060/debug/pprof"
        ));
    }
    if url.contains("/goroutine") {
        return Ok(url.to_string());
    }
    Ok(format!("{}/{GOROUTINE_DUMP}", url.trim_end_matches('/')))
}

/// The pprof tool for `root`'s tree: with `--pprof URL`, whatever the runtime; else for a Go
/// process of the tree, at the loopback ports it listens on. `None` when neither applies.
pub(super) fn tool_for(
    root: i32,
    options: &StackOptions,
) -> Option<Result<Box<dyn StackTool>, ObservationNote>> {
    let candidates = match &options.pprof_url {
        Some(url) => vec![goroutine_url(url).unwrap_or_else(|_| url.clone())],
        None => {
            let go_processes: Vec<i32> = process_tree(root)
                .ok()?
                .into_iter()
                .filter(|&pid| is_go(pid))
                .collect();
            if go_processes.is_empty() {
                return None;
            }
            let ports = listening_ports(&go_processes);
            if ports.is_empty() {
                return Some(Err(ObservationNote::ToolFailed {
                    tool: PPROF.into(),
                    why: "the Go target listens on no TCP port: give --pprof URL".into(),
                }));
            }
            ports
                .into_iter()
                .take(MOST_PORTS)
                .map(|port| format!("http://127.0.0.1:{port}/debug/pprof/{GOROUTINE_DUMP}"))
                .collect()
        }
    };
    Some(Ok(Box::new(Pprof {
        candidates,
        found: None,
        absent: None,
    })))
}

/// Whether process `pid` is a Go program: its executable has the `.go.buildinfo` section every
/// Go linker since 1.13 writes. Only the headers are read.
pub fn is_go(pid: i32) -> bool {
    use object::{Object, ObjectSection};
    let Ok(file) = std::fs::File::open(format!("/proc/{pid}/exe")) else {
        return false;
    };
    let cache = object::ReadCache::new(file);
    object::File::parse(&cache).is_ok_and(|elf| {
        elf.sections()
            .any(|section| section.name() == Ok(".go.buildinfo"))
    })
}

/// The TCP ports `pids` listen on in this process's network namespace (where the dump is asked
/// from), lowest first.
fn listening_ports(pids: &[i32]) -> Vec<u16> {
    let held: std::collections::HashSet<u64> = pids
        .iter()
        .filter_map(|&pid| socket_inodes(pid).ok())
        .flatten()
        .collect();
    let mut ports: Vec<u16> = socket_table(&[std::process::id() as i32])
        .into_iter()
        .filter(|socket| socket.state == SocketState::Listen && held.contains(&socket.inode))
        .map(|socket| socket.local_port)
        .collect();
    ports.sort_unstable();
    ports.dedup();
    ports
}

struct Pprof {
    /// Where the dump may be.
    candidates: Vec<String>,
    /// Where it was.
    found: Option<String>,
    /// Why none of the candidates gave it (then the step stops asking).
    absent: Option<String>,
}

impl StackTool for Pprof {
    fn watch_step(
        &mut self,
        stop: &mpsc::Receiver<()>,
        looked: &AtomicBool,
    ) -> (Option<StackEvidence>, Vec<ObservationNote>) {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .proxy(None) // loopback only, whatever HTTP_PROXY says
            .max_redirects(0)
            .http_status_as_error(false)
            .timeout_connect(Some(CONNECT_LIMIT))
            .timeout_global(Some(DUMP_LIMIT))
            .build()
            .into();
        let (snapshots, failures) =
            take_until_stopped(stop, GOROUTINE_DUMPS, looked, || self.snapshot(&agent));
        step_result(StackSource::Pprof, PPROF, &snapshots, &failures)
    }
}

impl Pprof {
    fn snapshot(&mut self, agent: &ureq::Agent) -> Result<Vec<ThreadStack>, String> {
        if let Some(why) = &self.absent {
            return Err(why.clone());
        }
        if let Some(url) = &self.found {
            return fetch(agent, url).map(|dump| goroutine_stacks(&dump));
        }
        // Every candidate at once, the first dump wins: a port that takes the connection and
        // never answers (a listener capped by `netutil.LimitListener`, whose queue holds the
        // probe's connection unaccepted) would otherwise spend the whole limit before the
        // profiler's own port is tried. The others end by their limit; their answers are dropped.
        let (answered, answers) = mpsc::channel();
        for (order, url) in self.candidates.iter().cloned().enumerate() {
            let (agent, answered) = (agent.clone(), answered.clone());
            std::thread::spawn(move || {
                let answer = fetch(&agent, &url);
                let _ = answered.send((order, url, answer));
            });
        }
        drop(answered);
        let mut why_not = Vec::new();
        for (order, url, answer) in answers {
            match answer {
                Ok(dump) => {
                    self.found = Some(url);
                    return Ok(goroutine_stacks(&dump));
                }
                Err(why) => why_not.push((order, format!("{url}: {why}"))),
            }
        }
        // Told in the candidates' order, whichever answered first.
        why_not.sort();
        let why_not: Vec<String> = why_not.into_iter().map(|(_, why)| why).collect();
        let why = format!(
            "no net/http/pprof at {}: start the service with `import _ \"net/http/pprof\"` (or give --pprof URL)",
            why_not.join("; ")
        );
        self.absent = Some(why.clone());
        Err(why)
    }
}

/// The goroutine dump at `url`, or why there is none.
fn fetch(agent: &ureq::Agent, url: &str) -> Result<String, String> {
    let mut response = agent.get(url).call().map_err(|err| match err {
        ureq::Error::Timeout(_) => format!("no answer within {} s", DUMP_LIMIT.as_secs_f64()),
        other => other.to_string(),
    })?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("HTTP {}", status.as_u16()));
    }
    let body = response
        .body_mut()
        .with_config()
        .limit(MOST_BYTES)
        .read_to_string()
        .map_err(|err| err.to_string())?;
    if !body.starts_with("goroutine ") {
        return Err("it answered, but not with a goroutine dump".into());
    }
    Ok(body)
}

/// One goroutine of a `debug=2` dump.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Goroutine {
    /// Its number.
    pub id: u64,
    /// The runtime's state, without how long (`chan send`, `IO wait`, `select`).
    pub state: String,
    /// Innermost first.
    pub frames: Vec<GoFrame>,
    /// The function that started it (`net/http.(*Server).Serve`); `None` for the main one.
    pub created_by: Option<String>,
}

/// One frame of a [`Goroutine`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoFrame {
    /// The function, package-qualified (`net/http.(*Client).Get`, `main.main.func1`).
    pub function: String,
    /// Its source file.
    pub file: String,
    /// The line.
    pub line: u32,
}

/// The goroutines of a `goroutine?debug=2` dump: blocks of `goroutine N [state, M minutes]:`,
/// then a function line and a `\tfile:line +0x..` line per frame, then `created by F in
/// goroutine K` and its file line. Lines it does not know are skipped.
pub fn parse_dump(text: &str) -> Vec<Goroutine> {
    let mut goroutines = Vec::new();
    for block in text.split("\n\n") {
        let mut lines = block.lines().map(str::trim_end);
        let Some((id, state)) = lines.next().and_then(parse_header) else {
            continue;
        };
        let mut goroutine = Goroutine {
            id,
            state,
            frames: Vec::new(),
            created_by: None,
        };
        while let Some(line) = lines.next() {
            if line.starts_with('\t') || line.starts_with("...") {
                continue; // a stray location line, or "...additional frames elided..."
            }
            let location = lines.next().unwrap_or_default();
            if let Some(creator) = line.strip_prefix("created by ") {
                let creator = creator.split(" in goroutine ").next().unwrap_or(creator);
                goroutine.created_by = Some(creator.trim().to_string());
                continue;
            }
            let function = line.rfind('(').map_or(line, |args| &line[..args]);
            let (file, line) = parse_location(location);
            goroutine.frames.push(GoFrame {
                function: function.to_string(),
                file,
                line,
            });
        }
        goroutines.push(goroutine);
    }
    goroutines
}

/// `goroutine 50 [chan send, 2 minutes]:` → `(50, "chan send")`.
fn parse_header(line: &str) -> Option<(u64, String)> {
    let rest = line.strip_prefix("goroutine ")?;
    let (id, rest) = rest.split_once(' ')?;
    let state = rest.split_once('[')?.1.rsplit_once(']')?.0;
    let state = state.split(", ").next().unwrap_or(state);
    Some((id.parse().ok()?, state.to_string()))
}

/// `\t/usr/local/go/src/net/http/client.go:489 +0x5f` → the file and the line.
fn parse_location(location: &str) -> (String, u32) {
    let location = location.trim();
    let location = location.split(" +0x").next().unwrap_or(location);
    match location.rsplit_once(':') {
        Some((file, line)) => (file.to_string(), line.parse().unwrap_or(0)),
        None => (location.to_string(), 0),
    }
}

/// The dump's goroutines as stacks, less the one that wrote the dump.
pub fn goroutine_stacks(dump: &str) -> Vec<ThreadStack> {
    parse_dump(dump)
        .iter()
        .filter(|goroutine| {
            !goroutine
                .frames
                .iter()
                .any(|frame| frame.function.starts_with("runtime/pprof."))
        })
        .map(goroutine_stack)
        .collect()
}

/// A goroutine as a [`ThreadStack`]: named after the function that started it.
pub fn goroutine_stack(goroutine: &Goroutine) -> ThreadStack {
    let (waiting, frames) = classify(&goroutine.state, &goroutine.frames);
    ThreadStack {
        name: goroutine
            .created_by
            .clone()
            .unwrap_or_else(|| "main".into()),
        tid: None,
        state: goroutine.state.clone(),
        waiting,
        frames,
    }
}

/// Calls of a client of another service (HTTP, SQL, RPC, a cache).
const CLIENT_CALLS: &[&str] = &[
    "net/http.(*Client).",
    "net/http.(*Transport).",
    "net/http.(*persistConn).",
    "net/http.send",
    "net.(*Dialer).",
    "net.Dial",
    "database/sql.",
    "google.golang.org/grpc.",
    "github.com/redis/go-redis/",
    "github.com/go-redis/redis/",
    "github.com/lib/pq.",
    "github.com/jackc/pgx/",
    "github.com/go-sql-driver/mysql.",
];

/// Waits for a free connection of a client's pool.
const POOL_ACQUIRES: &[&str] = &[
    "database/sql.(*DB).conn",
    "net/http.(*Transport).getConn",
    // pgx's pool, on puddle (generic in v2: `(*Pool[...]).Acquire`); checked before the locks,
    // as puddle waits on a semaphore of its own inside.
    "github.com/jackc/pgx/v4/pgxpool.(*Pool).Acquire",
    "github.com/jackc/pgx/v5/pgxpool.(*Pool).Acquire",
    "github.com/jackc/puddle/v2.(*Pool[...]).Acquire",
    "github.com/jackc/puddle.(*Pool).Acquire",
];

/// Waits for a lock or a semaphore's permit.
const LOCKS: &[&str] = &[
    "sync.(*Mutex).Lock",
    "sync.(*RWMutex).Lock",
    "sync.(*RWMutex).RLock",
    "golang.org/x/sync/semaphore.(*Weighted).Acquire",
];

/// A server waiting for its clients (a connection, a request), or a client connection's own
/// goroutines. `net/http.(*Transport).dialConn` starts a reader and a writer for each
/// connection it opens, for the connection's whole life (`go pconn.readLoop()`,
/// `go pconn.writeLoop()` in Go 1.26's `net/http/transport.go`): the reader sits in a read whether a call is out on it or the
/// connection is idle (it peeks for the next answer), so it counts open connections, not calls.
/// The call is held by the goroutine that made it, waiting in `roundTrip`; counting the reader
/// too would show a second pool held at the limit beside the caller's (go-semaphore's 12
/// readers, named as a thread pool in a full run where one dump caught two of its handlers
/// between the call and the slot's release).
const IDLE_WAITS: &[&str] = &[
    "net.(*TCPListener).Accept",
    "net/http.(*conn).readRequest",
    "net/http.(*conn).serve",
    "net/http.(*connReader).backgroundRead",
    "net/http.(*persistConn).writeLoop",
    "net/http.(*persistConn).readLoop",
];

/// Frames of a server handling a request: a goroutine below one serves a client.
const HANDLING: &[&str] = &[
    "net/http.HandlerFunc.ServeHTTP",
    "net/http.(*conn).serve",
    "google.golang.org/grpc.(*Server).",
];

/// Channel and semaphore states: the runtime parks the goroutine, its frames are the caller's.
const CHANNEL_STATES: &[&str] = &["chan send", "chan receive", "select", "semacquire"];

fn calls_any(frames: &[GoFrame], calls: &[&str]) -> bool {
    frames
        .iter()
        .any(|frame| calls.iter().any(|call| frame.function.starts_with(call)))
}

/// The frame's package: `net/http.(*Client).Get` → `net/http`, `main.main.func1` → `main`.
fn package(function: &str) -> &str {
    let after_slash = function.rfind('/').map_or(0, |slash| slash + 1);
    match function[after_slash..].find('.') {
        Some(dot) => &function[..after_slash + dot],
        None => function,
    }
}

/// The runtime's own frames (parking, polling, system calls), which say nothing of the service.
fn is_runtime(frame: &GoFrame) -> bool {
    let package = package(&frame.function);
    package == "runtime"
        || package == "syscall"
        || package.starts_with("runtime/")
        || package.starts_with("internal/")
}

/// Whether `frame` is Go's standard library or a dependency, not the service's own code: a
/// standard package (no dot in its first element, not `main`) whose file is in a `src/` tree
/// (GOROOT's) or relative (a `-trimpath` build), or a file of the module cache or a vendor
/// tree. (`time.Sleep` is in `runtime/time.go`: the file's directory is not the package's.)
fn is_library(frame: &GoFrame) -> bool {
    let package = package(&frame.function);
    let standard = package != "main"
        && !package.split('/').next().unwrap_or_default().contains('.')
        && (!frame.file.starts_with('/') || frame.file.contains("/src/"));
    standard
        || frame.file.contains("/pkg/mod/")
        || frame.file.contains("/vendor/")
        || frame.file.contains('@')
}

/// A frame as a person reads it: `main.main.func1 (main.go:57)` for the service's code, the
/// function alone for the library's.
fn label(frame: &GoFrame) -> String {
    if is_library(frame) {
        return frame.function.clone();
    }
    let file = frame.file.rsplit('/').next().unwrap_or(&frame.file);
    format!("{} ({file}:{})", frame.function, frame.line)
}

/// What a goroutine in `state` with these frames (innermost first) waits on, and the frames
/// that say where: the blocking call (or the channel operation), the library call the service
/// made or the library loop it runs (when another), then the first frames of the service's own
/// code.
pub fn classify(state: &str, frames: &[GoFrame]) -> (WaitKind, Vec<String>) {
    let service_at = frames
        .iter()
        .position(|frame| !is_library(frame))
        .unwrap_or(frames.len());
    let (library, outer) = frames.split_at(service_at);
    let visible: Vec<&GoFrame> = library.iter().filter(|f| !is_runtime(f)).collect();
    let service: Vec<String> = outer
        .iter()
        .take_while(|frame| !is_library(frame))
        .take(SERVICE_FRAMES)
        .map(label)
        .collect();
    let running = matches!(state, "running" | "runnable");
    let mut place = Vec::new();
    match visible.first() {
        Some(innermost) => place.push(label(innermost)),
        None if !running => place.push(state.to_string()),
        None => {}
    }
    // The library call the service made (`net/http.(*Client).Get`), or the library's own
    // loop the goroutine runs (`net/http.(*persistConn).readLoop`).
    if let (Some(entry), true) = (visible.last(), visible.len() > 1) {
        place.push(label(entry));
    }
    let kind = if running {
        WaitKind::Running
    } else if calls_any(library, POOL_ACQUIRES) {
        WaitKind::PoolAcquire
    } else if calls_any(library, LOCKS)
        || state.starts_with("sync.Mutex")
        || state.starts_with("sync.RWMutex")
    {
        WaitKind::Lock
    } else if calls_any(library, IDLE_WAITS) {
        WaitKind::Idle
    } else if calls_any(library, CLIENT_CALLS) || (state == "IO wait" && !service.is_empty()) {
        WaitKind::Downstream // a client's call, or the service's own TCP client
    } else if CHANNEL_STATES.iter().any(|s| state.starts_with(s)) && visible.is_empty() {
        if calls_any(outer, HANDLING) {
            WaitKind::Lock // a request waits on the service's channel: a semaphore's slot
        } else if state.starts_with("chan receive") || state.starts_with("select") {
            WaitKind::Idle // a worker of the service's waiting for work
        } else {
            WaitKind::Other
        }
    } else if state == "sleep" {
        WaitKind::Sleep
    } else {
        WaitKind::Other
    };
    place.extend(service);
    (kind, place)
}

#[cfg(test)]
#[path = "pprof_tests.rs"]
mod tests;
