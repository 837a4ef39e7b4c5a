//! Running a runtime's command-line tool (`jcmd`, `jfr`) with a time limit: its output when it
//! ends in time, or why not. A tool that does not answer is killed, never waited for.
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Why a tool gave no output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// Not on the PATH.
    Missing,
    /// It could not be started for another reason.
    CannotStart(String),
    /// Still running after the limit: it was killed.
    TimedOut(Duration),
    /// It ended with a failure; its first meaningful line of output.
    Failed(String),
}

impl RunError {
    /// Why, in a few words, after the tool's name.
    pub fn why(&self, tool: &str) -> String {
        match self {
            RunError::Missing => format!("{tool} is not on the PATH"),
            RunError::CannotStart(err) => format!("{tool} could not be started: {err}"),
            RunError::TimedOut(limit) => {
                format!(
                    "{tool} did not answer within {:.1} s (killed)",
                    limit.as_secs_f64()
                )
            }
            RunError::Failed(line) => format!("{tool} failed: {line}"),
        }
    }
}

/// Runs `command` (stdin closed, stdout and stderr read), killing it after `limit`. Its stdout
/// when it exits with success.
pub fn run_with_limit(mut command: Command, limit: Duration) -> Result<String, RunError> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => RunError::Missing,
        _ => RunError::CannotStart(err.to_string()),
    })?;
    // Both pipes are drained on their own threads: a dump larger than a pipe's buffer would
    // otherwise stop the tool before it exits.
    let drain = |mut pipe: Box<dyn Read + Send>| {
        let (sent, received) = mpsc::channel();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            let _ = sent.send(String::from_utf8_lossy(&bytes).into_owned());
        });
        received
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped")));
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(RunError::TimedOut(limit));
            }
        }
    };
    // The pipes close when the tool exits (unless it left a child holding them: bounded too).
    let out = stdout
        .recv_timeout(Duration::from_secs(1))
        .unwrap_or_default();
    if status.success() {
        return Ok(out);
    }
    let err = stderr
        .recv_timeout(Duration::from_secs(1))
        .unwrap_or_default();
    Err(RunError::Failed(first_meaningful_line(&err, &out, status)))
}

/// The line that says what went wrong: an exception's message, or any line but a bare `PID:`.
fn first_meaningful_line(err: &str, out: &str, status: std::process::ExitStatus) -> String {
    err.lines()
        .chain(out.lines())
        .map(str::trim)
        .find(|line| {
            !line.is_empty()
                && !line.starts_with("at ")
                && !line.trim_end_matches(':').parse::<u32>().is_ok()
        })
        .map(String::from)
        .unwrap_or_else(|| format!("it exited with {status}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        command
    }

    #[test]
    fn output_failure_silence_and_absence_are_told_apart() {
        let limit = Duration::from_secs(5);
        assert_eq!(
            run_with_limit(sh("echo hello"), limit),
            Ok("hello\n".into())
        );
        assert_eq!(
            run_with_limit(sh("echo 123:; echo 'no such thing' >&2; exit 1"), limit),
            Err(RunError::Failed("no such thing".into()))
        );
        assert_eq!(
            run_with_limit(sh("exec sleep 30"), Duration::from_millis(100)),
            Err(RunError::TimedOut(Duration::from_millis(100)))
        );
        assert_eq!(
            run_with_limit(Command::new("chokepoint-no-such-tool"), limit),
            Err(RunError::Missing)
        );
    }

    #[test]
    fn output_larger_than_a_pipe_is_read_whole() {
        let out = run_with_limit(
            sh("head -c 1000000 /dev/zero | tr '\\0' x"),
            Duration::from_secs(10),
        )
        .expect("it runs");
        assert_eq!(out.len(), 1_000_000);
    }
}
