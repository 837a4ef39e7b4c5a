//! The target's threads as the kernel sees them: each thread's pool (its name without the
//! counter), whether it runs, and what it waits on (`/proc/PID/task/TID/syscall`, else
//! `wchan`): a thread parked in `futex` waits for a lock or a queue; one in `recvfrom`, `read`
//! on a socket, or `poll` waits on the network.
use crate::polled::polled_descriptor;
use procfs::process::Process;

/// What a thread was doing when sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Activity {
    /// On a CPU or ready to run.
    Running,
    /// Reading or receiving on a socket, or in `poll`/`select`.
    SocketWait,
    /// In `futex`: a lock, a condition, a queue.
    LockWait,
    /// An event loop waiting for events (`epoll_wait`, `io_uring_enter`).
    EventWait,
    /// Sleeping on a timer, in `accept`, or reading a client's connection to the target
    /// ([`ThreadSample::idle_on_a_client`]).
    Sleeping,
    /// Uninterruptible (disk) wait.
    DiskWait,
    /// Waiting in something else.
    Other,
}

/// One thread, sampled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadSample {
    /// The thread's name (`comm`: its first 15 bytes).
    pub name: String,
    /// The thread's pool (see [`pool_name`]).
    pub pool: String,
    /// What it was doing.
    pub activity: Activity,
    /// What it waited on: a system call's name, or `wchan:NAME`; `None` when running or unknown.
    pub waits_on: Option<String>,
    /// The inode of the socket it waits on, when its system call reads one descriptor (`read`,
    /// `recvfrom`, ...) or polls one whose memory could be read ([`crate::polled`]).
    pub socket: Option<u64>,
    /// Whether it is its process's main thread (its thread id is the process id): each process
    /// of a pre-fork server is one, a thread pool's workers never are.
    pub main_thread: bool,
}

impl ThreadSample {
    /// A thread waiting on one of `client_side` (the target's listening sockets and accepted
    /// connections) waits for a client: for its next request on a kept-alive connection, or for
    /// a new one (CPython's `socketserver` polls its listener between accepts). It is idle, as a
    /// thread in `accept` is, and holds nothing downstream. A thread-per-connection server
    /// (Python's ThreadingHTTPServer, a pre-fork worker) has one such thread per idle client;
    /// counted as network waits they would outnumber the calls in flight to the downstream.
    pub fn idle_on_a_client(&mut self, client_side: &std::collections::HashSet<u64>) {
        if self.activity == Activity::SocketWait
            && self.socket.is_some_and(|i| client_side.contains(&i))
        {
            self.activity = Activity::Sleeping;
            self.waits_on = self.waits_on.take().map(|on| format!("{on} (a client)"));
        }
    }
}

/// The pool a thread belongs to: its name without the counter a pool adds (`actor-pool-7` →
/// `actor-pool`, `GC Thread#1` → `GC Thread`, `ForkJoinPool-1-worker-3` →
/// `ForkJoinPool-1-worker`). A number is a counter only after a separator, so `python3` stays.
/// A name that ends in what the thread runs keeps it: CPython's
/// `Thread-7 (process_request_thread)` → `Thread (process_request_thread)`.
pub fn pool_name(thread: &str) -> String {
    const SEPARATORS: &[char] = &['-', '_', '#', ' ', '.', ':', '/'];
    let name = thread.trim();
    if let Some((counted, runs)) = name.strip_suffix(')').and_then(|n| n.rsplit_once(" (")) {
        if !counted.is_empty() {
            return format!("{} ({runs})", pool_name(counted));
        }
    }
    let without_digits = name.trim_end_matches(|c: char| c.is_ascii_digit());
    let counter_follows_separator =
        without_digits.len() < name.len() && without_digits.ends_with(SEPARATORS);
    let base = if counter_follows_separator {
        without_digits
    } else {
        name
    };
    let base = base.trim_end_matches(SEPARATORS);
    if base.is_empty() {
        name.to_string()
    } else {
        base.to_string()
    }
}

/// A thread's `/proc/.../syscall` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyscallLine {
    /// On a CPU.
    Running,
    /// Blocked outside any system call (`-1 ...`).
    NotInSyscall,
    /// Blocked in system call `number` with first arguments `arg0` and `arg1`.
    In {
        /// The system call number.
        number: i64,
        /// Its first argument (a file descriptor for `read`, `recvfrom`, ...; the address of
        /// the descriptors for `poll`).
        arg0: u64,
        /// Its second (how many descriptors, for `poll`).
        arg1: u64,
    },
}

/// Parses `/proc/PID/task/TID/syscall`: `running`, `-1 SP PC`, or `NR ARG0 ... SP PC`.
pub fn parse_syscall(text: &str) -> Option<SyscallLine> {
    let mut fields = text.split_whitespace();
    let first = fields.next()?;
    if first == "running" {
        return Some(SyscallLine::Running);
    }
    let number: i64 = first.parse().ok()?;
    if number < 0 {
        return Some(SyscallLine::NotInSyscall);
    }
    let mut arg = || {
        fields
            .next()
            .and_then(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok())
            .unwrap_or(0)
    };
    let arg0 = arg();
    Some(SyscallLine::In {
        number,
        arg0,
        arg1: arg(),
    })
}

/// The system calls a waiting thread is told apart by, by name and kind.
fn syscall_kind(number: i64) -> Option<(&'static str, SyscallKind)> {
    use SyscallKind::*;
    let known: &[(i64, &str, SyscallKind)] = &[
        (libc::SYS_read, "read", ReadFd),
        (libc::SYS_readv, "readv", ReadFd),
        (libc::SYS_recvfrom, "recvfrom", Socket),
        (libc::SYS_recvmsg, "recvmsg", Socket),
        (libc::SYS_recvmmsg, "recvmmsg", Socket),
        (libc::SYS_ppoll, "ppoll", Socket),
        (libc::SYS_pselect6, "pselect6", Socket),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_poll, "poll", Socket),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_select, "select", Socket),
        (libc::SYS_connect, "connect", Socket),
        (libc::SYS_futex, "futex", Lock),
        (libc::SYS_futex_waitv, "futex_waitv", Lock),
        (libc::SYS_epoll_pwait, "epoll_pwait", Event),
        (libc::SYS_epoll_pwait2, "epoll_pwait2", Event),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_epoll_wait, "epoll_wait", Event),
        (libc::SYS_io_uring_enter, "io_uring_enter", Event),
        (libc::SYS_nanosleep, "nanosleep", Sleep),
        (libc::SYS_clock_nanosleep, "clock_nanosleep", Sleep),
        (libc::SYS_accept, "accept", Sleep),
        (libc::SYS_accept4, "accept4", Sleep),
        (libc::SYS_wait4, "wait4", Sleep),
        (libc::SYS_rt_sigtimedwait, "rt_sigtimedwait", Sleep),
        (libc::SYS_rt_sigsuspend, "rt_sigsuspend", Sleep),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_pause, "pause", Sleep),
    ];
    known
        .iter()
        .find(|(n, _, _)| *n == number)
        .map(|(_, name, kind)| (*name, *kind))
}

/// Whether system call `number` reads the one descriptor its first argument names.
fn reads_one_descriptor(number: i64) -> bool {
    [
        libc::SYS_read,
        libc::SYS_readv,
        libc::SYS_recvfrom,
        libc::SYS_recvmsg,
        libc::SYS_recvmmsg,
    ]
    .contains(&number)
}

/// Whether system call `number` waits on an array of `struct pollfd` (its first argument,
/// as many as its second).
fn polls_descriptors(number: i64) -> bool {
    #[cfg(target_arch = "x86_64")]
    if number == libc::SYS_poll {
        return true;
    }
    number == libc::SYS_ppoll
}

/// The system call the thread of `task` (`/proc/PID/task/TID`) is in now, the one it resumes
/// when that is `restart_syscall` ([`resumed`]).
pub fn syscall_now(task: &str) -> Option<SyscallLine> {
    let line = std::fs::read_to_string(format!("{task}/syscall"))
        .ok()
        .and_then(|text| parse_syscall(&text));
    match line {
        Some(SyscallLine::In { number, .. }) if number == libc::SYS_restart_syscall => {
            let wchan = std::fs::read_to_string(format!("{task}/wchan")).ok();
            resumed(line, wchan.as_deref())
        }
        other => other,
    }
}

/// The call a thread in `restart_syscall` resumes, told by `wchan` (the kernel function it
/// sleeps in); the line as it is otherwise.
///
/// A wait a signal or a tracer's stop interrupts is resumed through `restart_syscall` when it
/// had a timeout: `poll` (`do_restart_poll`), `futex` (`futex_wait_restart`) and the
/// nanosleeps (`hrtimer_nanosleep_restart`), as Linux's `restart_block` keeps them. Every
/// py-spy dump stops the interpreter's threads, and a thread in `poll` with a timeout (a Python
/// socket read with one) or in a timed `futex` shows `restart_syscall` until its wait ends.
/// With five dumps a step, /proc read a pool of 6 in the downstream call as 5.0 where it read
/// 5.8 before. The registers are the interrupted call's, so its arguments still name the
/// descriptors it polls.
pub fn resumed(line: Option<SyscallLine>, wchan: Option<&str>) -> Option<SyscallLine> {
    let Some(SyscallLine::In { number, arg0, arg1 }) = line else {
        return line;
    };
    let Some(wchan) = wchan.filter(|_| number == libc::SYS_restart_syscall) else {
        return line;
    };
    #[cfg(target_arch = "x86_64")]
    let poll = libc::SYS_poll;
    #[cfg(not(target_arch = "x86_64"))]
    let poll = libc::SYS_ppoll;
    let number = if wchan.contains("poll") {
        poll
    } else if wchan.contains("futex") {
        libc::SYS_futex
    } else if wchan.contains("nanosleep") {
        libc::SYS_clock_nanosleep
    } else {
        number
    };
    Some(SyscallLine::In { number, arg0, arg1 })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SyscallKind {
    /// A read on a descriptor: a socket wait if the descriptor is a socket.
    ReadFd,
    Socket,
    Lock,
    Event,
    Sleep,
}

/// What a thread in state `state` (from its `stat`) with this `syscall` line is doing, and
/// what it waits on; `fd_is_socket` says whether a descriptor of its process is a socket, and
/// `wchan` is the kernel function it sleeps in (used when the system call is unknown).
pub fn classify(
    state: char,
    syscall: Option<SyscallLine>,
    wchan: Option<&str>,
    fd_is_socket: impl Fn(u64) -> bool,
) -> (Activity, Option<String>) {
    let wchan = wchan
        .filter(|w| !w.is_empty() && *w != "0")
        .map(|w| format!("wchan:{w}"));
    match state {
        'R' => return (Activity::Running, None),
        'D' => return (Activity::DiskWait, wchan),
        _ => {}
    }
    let Some(SyscallLine::In { number, arg0, .. }) = syscall else {
        return (Activity::Other, wchan);
    };
    let Some((name, kind)) = syscall_kind(number) else {
        return (Activity::Other, Some(format!("syscall {number}")));
    };
    let activity = match kind {
        SyscallKind::ReadFd if fd_is_socket(arg0) => Activity::SocketWait,
        SyscallKind::ReadFd => Activity::Other,
        SyscallKind::Socket => Activity::SocketWait,
        SyscallKind::Lock => Activity::LockWait,
        SyscallKind::Event => Activity::EventWait,
        SyscallKind::Sleep => Activity::Sleeping,
    };
    (activity, Some(name.to_string()))
}

/// Every thread of process `pid`, sampled now; an error when the process is gone or its
/// threads cannot be listed. A thread that ends while being read is left out.
pub fn sample_threads(pid: i32) -> Result<Vec<ThreadSample>, procfs::ProcError> {
    let process = Process::new(pid)?;
    let tasks = process.tasks()?;
    let mut threads = Vec::new();
    for task in tasks.flatten() {
        let Ok(stat) = task.stat() else { continue };
        let base = format!("/proc/{pid}/task/{}", task.tid);
        let syscall = syscall_now(&base);
        let wchan = std::fs::read_to_string(format!("{base}/wchan")).ok();
        let socket_of = |fd: u64| {
            let target = std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).ok()?;
            let target = target.to_string_lossy();
            target
                .strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse::<u64>()
                .ok()
        };
        // One read of the descriptor's link: `classify` asks only of a `read`'s own descriptor.
        let socket = match syscall {
            Some(SyscallLine::In { number, arg0, .. }) if reads_one_descriptor(number) => {
                socket_of(arg0)
            }
            // A poll of one descriptor waits on that socket, if the thread was still in the same
            // call after its memory was read.
            Some(SyscallLine::In {
                number,
                arg0,
                arg1: 1,
            }) if polls_descriptors(number) => polled_descriptor(task.tid, arg0)
                .filter(|_| syscall_now(&base) == syscall)
                .and_then(|fd| socket_of(fd as u64)),
            _ => None,
        };
        let (activity, waits_on) =
            classify(stat.state, syscall, wchan.as_deref(), |_| socket.is_some());
        threads.push(ThreadSample {
            pool: pool_name(&stat.comm),
            name: stat.comm,
            activity,
            waits_on,
            socket,
            main_thread: task.tid == pid,
        });
    }
    Ok(threads)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_are_thread_names_without_their_counters() {
        // Real names: /proc/TID/comm (15 bytes at most) and thread dumps, from the runtimes.
        let table = [
            // The JVM (OpenJDK 17), comm as Linux keeps it.
            ("actor-pool-7", "actor-pool"),
            ("actor-pool-20", "actor-pool"),
            ("blocking-dispat", "blocking-dispat"), // blocking-dispatcher-12, cut at 15 bytes
            ("pool-1-thread-1", "pool-1-thread"),
            ("ForkJoinPool-1-", "ForkJoinPool-1"), // ForkJoinPool-1-worker-3, cut
            ("ForkJoinPool.co", "ForkJoinPool.co"), // ForkJoinPool.commonPool-worker-1, cut
            ("GC Thread#0", "GC Thread"),
            ("GC Thread#1", "GC Thread"),
            ("G1 Conc#0", "G1 Conc"),
            ("C2 CompilerThre", "C2 CompilerThre"),
            ("VM Thread", "VM Thread"),
            ("http-nio-8080-e", "http-nio-8080-e"), // Tomcat's http-nio-8080-exec-10, cut
            // The JVM, full names from a thread dump.
            ("ForkJoinPool-1-worker-3", "ForkJoinPool-1-worker"),
            ("http-nio-8080-exec-10", "http-nio-8080-exec"),
            // CPython 3.11: every thread is named after the process; threading's own names.
            ("python3", "python3"),
            ("ThreadPoolExecutor-0_2", "ThreadPoolExecutor-0"),
            ("Thread-12", "Thread"),
            // CPython 3.10+ names a thread after its target (full name, from py-spy).
            (
                "Thread-26 (process_request_thread)",
                "Thread (process_request_thread)",
            ),
            ("Thread-26 (proc", "Thread-26 (proc"), // the same, cut at 15 bytes by Linux
            // Go: every thread is named after the binary.
            ("go-semaphore", "go-semaphore"),
            // Node 18: all threads "node"; newer libuv names its pool.
            ("node", "node"),
            ("libuv-worker", "libuv-worker"),
            // Tokio and chokepoint's own.
            ("tokio-runtime-w", "tokio-runtime-w"),
            ("cp-load", "cp-load"),
            ("cp-demo-actors-3", "cp-demo-actors"),
            // nginx, Apache.
            ("nginx", "nginx"),
            ("apache2", "apache2"),
        ];
        for (thread, pool) in table {
            assert_eq!(pool_name(thread), pool, "thread {thread:?}");
        }
    }

    #[test]
    fn syscall_lines_parse() {
        assert_eq!(parse_syscall("running\n"), Some(SyscallLine::Running));
        assert_eq!(
            parse_syscall("-1 0x7ffd 0x7f12\n"),
            Some(SyscallLine::NotInSyscall)
        );
        assert_eq!(
            parse_syscall("45 0x1b 0x7f0 0x2000 0x0 0x0 0x0 0x7ffd 0x7f12\n"),
            Some(SyscallLine::In {
                number: 45,
                arg0: 27,
                arg1: 0x7f0
            })
        );
        assert_eq!(parse_syscall(""), None);
    }

    #[test]
    fn a_wait_resumed_after_a_stop_is_the_wait_it_was() {
        // /proc/PID/task/TID/{syscall,wchan} of CPython 3.11 threads (Linux 6.18) right after a
        // py-spy dump stopped them: a socket read with a timeout, a Lock.acquire(timeout=6).
        let poll = parse_syscall("219 0x7f91960554f8 0x1 0x7530 0x0 0x0 0x0 0x7ffd 0x7f12");
        let futex = parse_syscall("219 0x55cc6324b670 0x89 0x0 0x0 0x0 0x0 0x7ffd 0x7f12");
        let table = [
            (poll, "poll_schedule_timeout.constprop.0", libc::SYS_poll),
            (futex, "futex_do_wait", libc::SYS_futex),
            (poll, "hrtimer_nanosleep", libc::SYS_clock_nanosleep),
            (poll, "0", libc::SYS_restart_syscall),
        ];
        for (line, wchan, number) in table {
            let Some(SyscallLine::In { arg0, arg1, .. }) = line else {
                panic!("{line:?}")
            };
            assert_eq!(
                resumed(line, Some(wchan)),
                Some(SyscallLine::In { number, arg0, arg1 }),
                "{wchan}"
            );
        }
        // Any other call is left as it is, whatever it sleeps in.
        let read = parse_syscall("45 0x3 0x7f78bc00d2b0 0x2000 0x0 0x0 0x0 0x7ffd 0x7f12");
        assert_eq!(resumed(read, Some("poll_schedule_timeout")), read);
        assert_eq!(resumed(poll, None), poll);
    }

    #[test]
    fn waiting_threads_are_told_apart_by_their_system_call() {
        let on = |number: i64, arg0: u64| {
            Some(SyscallLine::In {
                number,
                arg0,
                arg1: 1,
            })
        };
        let socket_fd_7 = |fd: u64| fd == 7;
        let table = [
            ('R', Some(SyscallLine::Running), Activity::Running, None),
            (
                'S',
                on(libc::SYS_futex, 0x7f00),
                Activity::LockWait,
                Some("futex"),
            ),
            (
                'S',
                on(libc::SYS_recvfrom, 9),
                Activity::SocketWait,
                Some("recvfrom"),
            ),
            (
                'S',
                on(libc::SYS_read, 7),
                Activity::SocketWait,
                Some("read"),
            ),
            ('S', on(libc::SYS_read, 0), Activity::Other, Some("read")), // a pipe, a tty
            (
                'S',
                on(libc::SYS_ppoll, 0x7f00),
                Activity::SocketWait,
                Some("ppoll"),
            ),
            (
                'S',
                on(libc::SYS_epoll_pwait, 4),
                Activity::EventWait,
                Some("epoll_pwait"),
            ),
            (
                'S',
                on(libc::SYS_accept4, 3),
                Activity::Sleeping,
                Some("accept4"),
            ),
            (
                'S',
                on(libc::SYS_clock_nanosleep, 1),
                Activity::Sleeping,
                Some("clock_nanosleep"),
            ),
            (
                'D',
                on(libc::SYS_read, 3),
                Activity::DiskWait,
                Some("wchan:folio_wait_bit"),
            ),
        ];
        for (state, syscall, activity, waits_on) in table {
            let got = classify(state, syscall, Some("folio_wait_bit"), socket_fd_7);
            assert_eq!(
                got,
                (activity, waits_on.map(str::to_string)),
                "{state} {syscall:?}"
            );
        }
        // Without the system call (not permitted), the kernel function is what is known.
        assert_eq!(
            classify('S', None, Some("futex_wait_queue"), socket_fd_7),
            (Activity::Other, Some("wchan:futex_wait_queue".to_string()))
        );
    }

    #[test]
    fn a_thread_of_this_process_blocked_in_a_socket_read_is_seen_as_such() {
        use std::io::Read;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let reader = std::thread::Builder::new()
            .name("cp-test-recv-1".into())
            .spawn(move || {
                let mut stream = std::net::TcpStream::connect(addr).unwrap();
                let mut byte = [0u8; 1];
                let _ = stream.read(&mut byte);
            })
            .unwrap();
        let (accepted, _) = listener.accept().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let seen = loop {
            let threads = sample_threads(std::process::id() as i32).unwrap();
            let reading = threads
                .into_iter()
                .find(|t| t.pool == "cp-test-recv" && t.activity == Activity::SocketWait);
            if reading.is_some() || std::time::Instant::now() > deadline {
                break reading;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        drop(accepted);
        reader.join().unwrap();
        let seen = seen.expect("the reading thread was seen in a socket wait");
        assert!(
            matches!(seen.waits_on.as_deref(), Some("read" | "recvfrom")),
            "{seen:?}"
        );
    }

    /// A server thread reading its accepted connection (a client that sent nothing yet) is idle;
    /// a thread reading a connection it opened to a peer (a downstream's answer) waits on the
    /// network. Both in this process, on real sockets.
    #[test]
    fn a_thread_reading_its_clients_connection_is_idle_and_one_reading_a_peer_is_not() {
        use crate::sockets::{client_side_inodes, socket_inodes, socket_table};
        use std::io::Read;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut outbound = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        let spawn_reader = |name: &str, mut stream: std::net::TcpStream| {
            std::thread::Builder::new()
                .name(name.into())
                .spawn(move || {
                    let _ = stream.read(&mut [0u8; 1]);
                })
                .unwrap()
        };
        let serving = spawn_reader("cp-test-srv-1", accepted.try_clone().unwrap());
        let calling = spawn_reader("cp-test-call-1", outbound.try_clone().unwrap());
        let pid = std::process::id() as i32;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let activity_of = |threads: &[ThreadSample], pool: &str| {
            threads.iter().find(|t| t.pool == pool).map(|t| t.activity)
        };
        let seen = loop {
            let mut threads = sample_threads(pid).unwrap();
            let owned = socket_inodes(pid).unwrap();
            let client_side = client_side_inodes(&socket_table(&[pid]), &owned, None);
            for thread in &mut threads {
                thread.idle_on_a_client(&client_side);
            }
            let both = (
                activity_of(&threads, "cp-test-srv"),
                activity_of(&threads, "cp-test-call"),
            );
            let settled =
                both.0 == Some(Activity::Sleeping) && both.1 == Some(Activity::SocketWait);
            if settled || std::time::Instant::now() > deadline {
                break both;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        // Wake both readers: a byte each way.
        use std::io::Write;
        outbound.write_all(b"x").unwrap();
        (&accepted).write_all(b"x").unwrap();
        serving.join().unwrap();
        calling.join().unwrap();
        assert_eq!(seen, (Some(Activity::Sleeping), Some(Activity::SocketWait)));
    }

    /// The same told apart in `poll`, whose descriptor is in the thread's memory: a thread
    /// polling its listener between accepts (CPython's `socketserver`) is idle; one polling its
    /// connection to a peer (a CPython socket with a timeout, libpq) waits on the network, on
    /// that connection.
    #[test]
    fn a_thread_polling_its_listener_is_idle_and_one_polling_a_peer_waits_on_that_connection() {
        use crate::sockets::{client_side_inodes, socket_inodes, socket_table};
        use std::os::fd::AsRawFd;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let outbound = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        let spawn_poller = |name: &str, fd: i32| {
            std::thread::Builder::new()
                .name(name.into())
                .spawn(move || {
                    let mut one = libc::pollfd {
                        fd,
                        events: libc::POLLIN,
                        revents: 0,
                    };
                    // SAFETY: one valid pollfd; the descriptor outlives the poll (closed after
                    // the join below); 10 s bounds it if no byte ever comes.
                    unsafe { libc::poll(&mut one, 1, 10_000) };
                })
                .unwrap()
        };
        let listening = spawn_poller("cp-test-plis-1", listener.as_raw_fd());
        let calling = spawn_poller("cp-test-pcal-1", outbound.as_raw_fd());
        let pid = std::process::id() as i32;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let seen = loop {
            let mut threads = sample_threads(pid).unwrap();
            let owned = socket_inodes(pid).unwrap();
            let client_side = client_side_inodes(&socket_table(&[pid]), &owned, None);
            for thread in &mut threads {
                thread.idle_on_a_client(&client_side);
            }
            let of = |pool: &str| {
                threads
                    .iter()
                    .find(|t| t.pool == pool)
                    .map(|t| (t.activity, t.socket.is_some()))
            };
            let both = (of("cp-test-plis"), of("cp-test-pcal"));
            let settled = both
                == (
                    Some((Activity::Sleeping, true)),
                    Some((Activity::SocketWait, true)),
                );
            if settled || std::time::Instant::now() > deadline {
                break both;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        // Wake both pollers: a client connects, the peer answers.
        let _client = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        use std::io::Write;
        (&accepted).write_all(b"x").unwrap();
        listening.join().unwrap();
        calling.join().unwrap();
        assert_eq!(
            seen,
            (
                Some((Activity::Sleeping, true)),
                Some((Activity::SocketWait, true))
            )
        );
    }
}
