//! HotSpot's attach protocol, spoken directly (as `jattach` does), so that a thread dump costs
//! the target its safepoint and nothing else. `jcmd` speaks the same protocol from a JVM of its
//! own, and on a CPU-bound target that start is the cost: on the JVM twin's `/cpu` (2 cores,
//! 10 ms of CPU a request, 8 clients) three `jcmd Thread.print` a step took 6.6% of its
//! throughput (`ROUTE=cpu bench/observe-overhead.sh 5`), against about 1% for /proc alone.
//!
//! The protocol (HotSpot's `attachListener_linux.cpp` and the JDK's `VirtualMachineImpl`): the
//! JVM listens on the unix socket `.java_pid<PID>` in its `/tmp` once its attach listener runs;
//! it starts it when it receives `SIGQUIT` and finds the file `.attach_pid<PID>` in its working
//! folder (or its `/tmp`). PID is the JVM's own, in its PID namespace, and `/tmp` is its own
//! too, so both are reached through `/proc/PID/root` and `/proc/PID/cwd`. A request is protocol
//! version `1`, the command and three arguments, each NUL-terminated; the answer is the result
//! code on its first line, then the command's output, until the JVM closes the socket. The JVM
//! serves only a peer of its own effective user or root.
//!
//! A failure says whether `jcmd` may still succeed ([`Failed::Retry`]): not when the JVM was
//! asked and did not start its listener (attach disabled, or too slow), which `jcmd` would wait
//! for again.
use crate::namespace::own_pid;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Why a command did not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failed {
    /// `jcmd` may still run it (not a JVM this module asks, a socket it could not use).
    Retry(String),
    /// The JVM was asked to start its attach listener and did not within the limit.
    NoListener(String),
    /// A JVM with no attach socket that does not handle SIGQUIT (`-Xrs`): asking it would end
    /// it, so neither this module nor `jcmd` (which would signal it) asks.
    NotSignalled(String),
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failed::Retry(why) | Failed::NoListener(why) | Failed::NotSignalled(why) => {
                f.write_str(why)
            }
        }
    }
}

/// How often to look for the socket after asking the JVM to start its listener.
const LOOK_EVERY: Duration = Duration::from_millis(20);

/// Runs the `jcmd` command `command` (`Thread.print`) in JVM `pid` over its attach socket,
/// within `limit`: its output, or why not.
pub fn jcmd_command(pid: i32, command: &str, limit: Duration) -> Result<String, Failed> {
    let deadline = Instant::now() + limit;
    let own_pid = own_pid(pid).ok_or_else(|| Failed::Retry(format!("no process {pid}")))?;
    let socket = PathBuf::from(format!("/proc/{pid}/root/tmp/.java_pid{own_pid}"));
    if !socket.exists() {
        // SIGQUIT's default action ends the process: only a JVM that catches it (not one
        // started with -Xrs) is asked. A process that is no JVM is left to jcmd, as before.
        if !super::jvm::is_jvm(pid) {
            return Err(Failed::Retry(format!(
                "process {pid} is no JVM: not asked to attach"
            )));
        }
        if !catches_sigquit(pid) {
            return Err(Failed::NotSignalled(format!(
                "JVM {pid} has no attach socket and does not handle SIGQUIT (-Xrs): not signalled, which would end it"
            )));
        }
        start_listener(pid, own_pid, &socket, deadline)?;
    }
    run(&socket, pid, command, deadline).map_err(Failed::Retry)
}

/// Sends `command` to the JVM's listening `socket` and reads its answer until `deadline`.
fn run(
    socket: &std::path::Path,
    pid: i32,
    command: &str,
    deadline: Instant,
) -> Result<String, String> {
    let mut stream =
        UnixStream::connect(socket).map_err(|e| format!("{}: {e}", socket.display()))?;
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(LOOK_EVERY);
    stream
        .set_read_timeout(Some(left))
        .and_then(|()| stream.set_write_timeout(Some(left)))
        .map_err(|e| e.to_string())?;
    stream
        .write_all(&request(command))
        .map_err(|e| format!("writing to {}: {e}", socket.display()))?;
    let mut answer = Vec::new();
    stream
        .read_to_end(&mut answer)
        .map_err(|e| format!("reading from {}: {e}", socket.display()))?;
    let text = String::from_utf8_lossy(&answer);
    let (code, output) = text.split_once('\n').unwrap_or((&text, ""));
    match code.trim() {
        "0" => Ok(output.to_string()),
        code => Err(format!(
            "JVM {pid} answered {command} with code {code}: {}",
            output.lines().next().unwrap_or("")
        )),
    }
}

/// Whether process `pid` catches SIGQUIT (`SigCgt` in its status, a hex mask, bit 3 from 1).
fn catches_sigquit(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            let mask = status.lines().find_map(|l| l.strip_prefix("SigCgt:"))?;
            u64::from_str_radix(mask.trim(), 16).ok()
        })
        .is_some_and(|mask| mask & (1 << (libc::SIGQUIT - 1)) != 0)
}

/// The bytes of a `jcmd` request: version 1, the command `jcmd`, its command line, two empty
/// arguments.
fn request(command: &str) -> Vec<u8> {
    let mut bytes = Vec::new();
    for part in ["1", "jcmd", command, "", ""] {
        bytes.extend_from_slice(part.as_bytes());
        bytes.push(0);
    }
    bytes
}

/// Asks JVM `pid` (`own_pid` in its namespace) to start its attach listener and waits for
/// `socket` until `deadline`. The trigger file is removed whatever happens.
fn start_listener(
    pid: i32,
    own_pid: i32,
    socket: &std::path::Path,
    deadline: Instant,
) -> Result<(), Failed> {
    let trigger = PathBuf::from(format!("/proc/{pid}/cwd/.attach_pid{own_pid}"));
    std::fs::File::create(&trigger)
        .map_err(|e| Failed::Retry(format!("{}: {e}", trigger.display())))?;
    // SAFETY: kill(2) with a PID and a signal number has no memory effects.
    let sent = unsafe { libc::kill(pid, libc::SIGQUIT) } == 0;
    let mut listening = false;
    while sent && Instant::now() < deadline {
        if socket.exists() {
            listening = true;
            break;
        }
        std::thread::sleep(LOOK_EVERY);
    }
    let _ = std::fs::remove_file(&trigger);
    match (sent, listening) {
        (false, _) => Err(Failed::Retry(format!(
            "JVM {pid}: SIGQUIT: {}",
            std::io::Error::last_os_error()
        ))),
        (true, false) => Err(Failed::NoListener(format!(
            "JVM {pid} gave no answer: its attach listener did not start within the limit ({} did not appear)",
            socket.display()
        ))),
        (true, true) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_five_nul_terminated_parts() {
        assert_eq!(
            request("Thread.print"),
            b"1\0jcmd\0Thread.print\0\0\0".to_vec()
        );
    }

    #[test]
    fn a_process_that_is_not_a_jvm_is_never_sent_sigquit() {
        // This test process: no JVM, and SIGQUIT would end it. It is still running to assert.
        let me = std::process::id() as i32;
        let why =
            jcmd_command(me, "Thread.print", Duration::from_millis(100)).expect_err("not a JVM");
        assert!(why.to_string().contains("not asked to attach"), "{why}");
        let why = jcmd_command(i32::MAX, "Thread.print", Duration::from_millis(100))
            .expect_err("no such process");
        assert_eq!(why, Failed::Retry(format!("no process {}", i32::MAX)));
    }
}
