//! What the live tests need to start real servers and leave none behind: nginx, PHP-FPM,
//! Apache, gunicorn, JVMs, Go services, the chokepoint binary itself.
//!
//! A test builds its `Command` as usual and hands it to [`Server::spawn`], which starts it in a
//! process group of its own and with the environment variable [`MARK`] set (every process it
//! forks inherits both). Dropping the [`Server`] stops the whole group, also while the test
//! unwinds from a panic: SIGTERM, up to [`GRACE`] for the group to go, then SIGKILL. It then
//! looks for any process still carrying its mark (a daemon that left the group with `setsid`)
//! and fails the test if it finds one: a leaked server holds ports and CPU on a machine that
//! is reused, and makes the next run's figures wrong. [`survivors`] lists every marked process
//! on the machine, for the check at the end of a run (`scripts/leftovers.sh` from the shell).
//!
//! Ports: a server that is handed a port number ([`free_port`]) gets one below the kernel's
//! ephemeral range. A port picked with `bind(0)` and closed is in that range, where any client
//! socket of a concurrent load test may take it before the server binds, and where a
//! connection to a port nobody listens on yet can be given that very port as its own and
//! connect to itself (TCP simultaneous open), so that a wait for the server "succeeds" before
//! the server is there. [`Server::wait_listening`] refuses such a self-connection and fails as
//! soon as the server exits; [`Server::spawn_on_free_port`] tries another port when the server
//! dies before it listens (another test took the port first). A port handed out is also
//! promised, for two minutes, to the test process that asked, so that the other test lane,
//! running beside it, is not handed the same one while its server starts.
#![deny(missing_docs)]

use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

mod procs;

pub use procs::{survivors, Survivor};

/// The environment variable set on every server a test starts, inherited by its children:
/// `name:test-process-pid:serial`, so one server's processes can be told from another's.
pub const MARK: &str = "CHOKEPOINT_TEST_SERVER";
/// How long a server's group has to leave after SIGTERM before it is killed.
pub const GRACE: Duration = Duration::from_secs(5);
/// How long the group has to be gone after SIGKILL (the kernel tears big JVMs down in ms).
const KILL_WAIT: Duration = Duration::from_secs(5);
/// How many ports [`Server::spawn_on_free_port`] tries.
const PORT_TRIES: u32 = 5;

static SERIAL: AtomicU32 = AtomicU32::new(0);

/// A server a test started: its own process group, stopped whole when dropped.
pub struct Server {
    name: String,
    mark: String,
    child: Child,
}

impl Server {
    /// Starts `command` as `name` in a process group of its own, marked.
    pub fn spawn(name: &str, command: &mut Command) -> Server {
        use std::os::unix::process::CommandExt;
        let mark = format!(
            "{name}:{}:{}",
            std::process::id(),
            SERIAL.fetch_add(1, Ordering::Relaxed)
        );
        let child = command
            .env(MARK, &mark)
            .process_group(0)
            .spawn()
            .unwrap_or_else(|err| panic!("{name}: cannot start {command:?}: {err}"));
        Server {
            name: name.to_string(),
            mark,
            child,
        }
    }

    /// Starts the command `build(port)` makes for a free port and waits until it listens
    /// there; a server that exits first (its port was taken) is tried again on another port.
    pub fn spawn_on_free_port(
        name: &str,
        limit: Duration,
        mut build: impl FnMut(u16) -> Command,
    ) -> (Server, u16) {
        let mut last_exit = String::new();
        for _ in 0..PORT_TRIES {
            let port = free_port();
            let mut server = Server::spawn(name, &mut build(port));
            match server.wait_listening(port, limit) {
                Ok(()) => return (server, port),
                Err(Exit(status)) => last_exit = status,
            }
        }
        panic!("{name} exited before listening on {PORT_TRIES} ports in turn; last: {last_exit}")
    }

    /// Waits until a process listens on 127.0.0.1:`port`; `Err` when the server exited first.
    /// Panics after `limit`.
    pub fn wait_listening(&mut self, port: u16, limit: Duration) -> Result<(), Exit> {
        self.wait_until(&format!("127.0.0.1:{port}"), limit, || {
            // A connection to itself (the port free, the kernel pairing the socket with
            // itself) is not a listener.
            TcpStream::connect(("127.0.0.1", port))
                .is_ok_and(|stream| stream.local_addr().ok() != stream.peer_addr().ok())
        })
    }

    /// Waits until a process accepts connections on the unix socket `path`; `Err` when the
    /// server exited first. Panics after `limit`.
    pub fn wait_unix_listening(&mut self, path: &Path, limit: Duration) -> Result<(), Exit> {
        self.wait_until(&path.display().to_string(), limit, || {
            std::os::unix::net::UnixStream::connect(path).is_ok()
        })
    }

    fn wait_until(
        &mut self,
        at: &str,
        limit: Duration,
        mut listening: impl FnMut() -> bool,
    ) -> Result<(), Exit> {
        let deadline = Instant::now() + limit;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(Exit(status.to_string()));
            }
            if listening() {
                return Ok(());
            }
            assert!(
                Instant::now() < deadline,
                "{}: nothing listened on {at} within {} s",
                self.name,
                limit.as_secs_f64()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The process the test started (the group's leader).
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// The started process, for its pipes.
    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Stops the group now, as dropping it would, and returns the processes that outlived it.
    fn stop(&mut self) -> Vec<Survivor> {
        let group = self.pid();
        signal_group(group, libc::SIGTERM);
        if !self.group_gone_within(group, GRACE) {
            signal_group(group, libc::SIGKILL);
            self.group_gone_within(group, KILL_WAIT);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let left = survivors(Some(&self.mark));
        for survivor in &left {
            // SAFETY: kill(2) on a PID read from /proc; at worst it is gone (ESRCH).
            unsafe { libc::kill(survivor.pid, libc::SIGKILL) };
        }
        left
    }

    /// Reaps the leader as it exits and waits for every live process of `group` to be gone.
    fn group_gone_within(&mut self, group: i32, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            let _ = self.child.try_wait();
            if procs::live_in_group(group).is_empty() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let left = self.stop();
        if !left.is_empty() {
            let message = format!(
                "{}: {} process(es) outlived the server's stop and were killed: {left:?}",
                self.name,
                left.len()
            );
            if std::thread::panicking() {
                eprintln!("{message}");
            } else {
                panic!("{message}");
            }
        }
    }
}

/// The server exited before it listened: its exit status.
#[derive(Debug)]
pub struct Exit(pub String);

fn signal_group(group: i32, signal: i32) {
    // SAFETY: kill(2) on the negated PID of a group this process made; ESRCH when it is gone.
    unsafe { libc::kill(-group, signal) };
}

/// Whether nothing listens on 127.0.0.1:`port`: a bind with `SO_REUSEADDR` that never listens.
/// A probe that listened (std's `TcpListener::bind`) would keep the port for as long as any
/// child forked meanwhile by another thread of this process had not yet reached its `exec`:
/// the child holds a copy of every descriptor until then, close-on-exec or not, and a listener
/// blocks every later bind of its port. A socket that was only bound blocks no bind that sets
/// `SO_REUSEADDR`, as std's listeners and the servers the tests start do. CI's stop 33 failed on
/// exactly that: `a_free_port_is_below_the_ephemeral_range_and_bindable`'s bind found the port
/// taken while its neighbour tests forked (20,000 probes beside a thread spawning `true` in a
/// loop: 77 ports held by a listening probe, none by this one).
fn nothing_listens(port: u16) -> bool {
    use socket2::{Domain, Socket, Type};
    let Ok(socket) = Socket::new(Domain::IPV4, Type::STREAM, None) else {
        return false;
    };
    socket.set_reuse_address(true).is_ok()
        && socket
            .bind(&std::net::SocketAddr::from(([127, 0, 0, 1], port)).into())
            .is_ok()
}

/// How long a port handed out by [`free_port`] stays promised to the test process that asked:
/// long enough for a JVM to start and bind it on a busy machine.
const PROMISED_FOR: Duration = Duration::from_secs(120);

/// Promises `port` to this process, across every test process of the machine: the test lanes
/// run side by side, and a port `free_port` found free in one lane is free too for the other
/// lane's until the server it was meant for binds it (seconds, for a JVM). The promise is a file
/// made with `O_EXCL`; one older than [`PROMISED_FOR`] is stale and taken over.
fn reserve(port: u16) -> bool {
    let dir = std::env::temp_dir().join("chokepoint-test-ports");
    if std::fs::create_dir_all(&dir).is_err() {
        return true;
    }
    let promise = dir.join(port.to_string());
    let make = || {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&promise)
            .is_ok()
    };
    if make() {
        return true;
    }
    let stale = std::fs::metadata(&promise)
        .and_then(|meta| meta.modified())
        .is_ok_and(|made| made.elapsed().is_ok_and(|age| age > PROMISED_FOR));
    stale && std::fs::remove_file(&promise).is_ok() && make()
}

/// A port on 127.0.0.1 that nothing listens on, below the ephemeral range (see the crate doc),
/// and that no other test process of the machine was handed in the last [`PROMISED_FOR`].
pub fn free_port() -> u16 {
    let (ephemeral_low, _) = procs::ephemeral_range();
    let low = 20_000.min(ephemeral_low.saturating_sub(4_000));
    let span = u32::from(ephemeral_low - low);
    let mut seed = std::process::id()
        ^ SERIAL
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(2_654_435_761)
        ^ Instant::now().elapsed().subsec_nanos()
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
    for _ in 0..1_000 {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let port = low + ((seed >> 8) % span) as u16;
        if nothing_listens(port) && reserve(port) {
            return port;
        }
    }
    panic!("no free port on 127.0.0.1 between {low} and {ephemeral_low}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_probed_port_stays_bindable_while_another_thread_forks() {
        // The race of the probe (see `nothing_listens`): a thread spawning processes in a loop
        // beside 20,000 probes of 12,000 ports, each probe followed by a listener on its port.
        // A listening probe left 77 ports held in one such run.
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let forking = stop.clone();
        let forker = std::thread::spawn(move || {
            while !forking.load(Ordering::Relaxed) {
                let _ = std::process::Command::new("true").status();
            }
        });
        let mut held = Vec::new();
        for i in 0..20_000u32 {
            let port = 20_000 + (i % 12_000) as u16;
            if super::nothing_listens(port)
                && std::net::TcpListener::bind(("127.0.0.1", port)).is_err()
            {
                held.push(port);
            }
        }
        stop.store(true, Ordering::Relaxed);
        forker.join().expect("the forking thread");
        assert!(held.is_empty(), "ports probed free, then held: {held:?}");
    }

    #[test]
    fn a_port_is_promised_to_one_test_process_only() {
        let port = super::free_port();
        assert!(
            !super::reserve(port),
            "{port} was handed out, so it is promised already"
        );
    }
}
