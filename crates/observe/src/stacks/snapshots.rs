//! What the snapshot tools (`py-spy dump`, a goroutine dump) share: when to take a snapshot in
//! a step ([`Schedule`]), running an outside tool with a time limit ([`run_bounded`]), and
//! turning the snapshots and failures of a step into its evidence and notes ([`step_result`]).
use super::{fold, ThreadStack};
use chokepoint_result::{ObservationNote, StackEvidence, StackSource};
use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// When a tool takes its snapshots in a step: the first `first` after the step's start (once
/// the load has settled), then every `every`, at most `most` in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// From the step's start to the first snapshot.
    pub first: Duration,
    /// Between two snapshots.
    pub every: Duration,
    /// Snapshots per step, at most.
    pub most: u32,
}

/// Takes snapshots on `schedule` until `stop` receives (or its sender is dropped), then returns
/// the snapshots taken and why the others failed; sets `looked` when the first is kept or
/// failed. A snapshot during which the step ended is left out (a failure is not); when that
/// leaves none, it is told as a failure, with how long it took.
pub fn take_until_stopped(
    stop: &mpsc::Receiver<()>,
    schedule: Schedule,
    looked: &AtomicBool,
    mut take: impl FnMut() -> Result<Vec<ThreadStack>, String>,
) -> (Vec<Vec<ThreadStack>>, Vec<String>) {
    let start = Instant::now();
    let mut snapshots = Vec::new();
    let mut failures = Vec::new();
    let mut left_out = None;
    for n in 0..schedule.most {
        let due = schedule.first + schedule.every * n;
        let wait = due.saturating_sub(start.elapsed());
        match stop.recv_timeout(wait) {
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            _ => break,
        }
        let began = Instant::now();
        let taken = take();
        // A snapshot still being taken when the step ended may show the target after the load
        // (jcmd starts a JVM of its own first): it is left out. A failure still counts.
        let ended = !matches!(stop.try_recv(), Err(mpsc::TryRecvError::Empty));
        match taken {
            Ok(snapshot) if !ended => snapshots.push(snapshot),
            Ok(_) => left_out = Some(began.elapsed()),
            Err(why) => failures.push(why),
        }
        looked.store(true, Ordering::Release);
        if ended {
            break;
        }
    }
    if let (true, Some(took)) = (snapshots.is_empty(), left_out) {
        failures.push(format!(
            "the step ended during its only snapshot, which took {:.1} s",
            took.as_secs_f64()
        ));
    }
    (snapshots, failures)
}

/// A step's evidence from its snapshots, and a note when some (or all) of them failed.
pub fn step_result(
    source: StackSource,
    tool: &str,
    snapshots: &[Vec<ThreadStack>],
    failures: &[String],
) -> (Option<StackEvidence>, Vec<ObservationNote>) {
    let evidence = (!snapshots.is_empty()).then(|| fold(source, snapshots));
    let notes = match failures.first() {
        None => Vec::new(),
        Some(why) if snapshots.is_empty() => vec![ObservationNote::ToolFailed {
            tool: tool.into(),
            why: why.clone(),
        }],
        Some(why) => vec![ObservationNote::ToolFailed {
            tool: tool.into(),
            why: format!(
                "{} of {} snapshots failed ({why})",
                failures.len(),
                failures.len() + snapshots.len()
            ),
        }],
    };
    (evidence, notes)
}

/// Runs `command` to its end, or kills it after `limit`; its output, or why there is none.
pub fn run_bounded(command: &mut Command, limit: Duration) -> Result<Output, String> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| format!("cannot start it: {err}"))?;
    // Read both pipes while it runs: a dump larger than a pipe's buffer would block it.
    let readers = [
        child.stdout.take().map(|out| drain(Box::new(out))),
        child.stderr.take().map(|err| drain(Box::new(err))),
    ];
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < limit => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no answer within {} s", limit.as_secs_f64()));
            }
            Err(err) => return Err(format!("cannot wait for it: {err}")),
        }
    };
    let [stdout, stderr] = readers.map(|reader| {
        reader
            .and_then(|thread| thread.join().ok())
            .unwrap_or_default()
    });
    Ok(Output {
        status,
        stdout,
        stderr,
    })
}

/// The first executable file called `tool` in the directories of `PATH`.
pub fn find_on_path(tool: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(tool))
        .find(|file| {
            file.metadata()
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}

fn drain(mut pipe: Box<dyn Read + Send>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chokepoint_result::WaitKind;

    fn one_thread() -> Vec<ThreadStack> {
        vec![ThreadStack {
            name: "worker_0".into(),
            tid: Some(7),
            state: "idle".into(),
            waiting: WaitKind::Downstream,
            frames: vec!["SocketIO.readinto (socket.py)".into()],
        }]
    }

    #[test]
    fn snapshots_follow_the_schedule_and_end_when_the_step_does() {
        let (stop, stopped) = mpsc::channel();
        let schedule = Schedule {
            first: Duration::ZERO,
            every: Duration::ZERO,
            most: 3,
        };
        let mut calls = 0;
        let stopper = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            stop.send(()).unwrap();
        });
        let (snapshots, failures) =
            take_until_stopped(&stopped, schedule, &AtomicBool::new(false), || {
                calls += 1;
                if calls == 2 {
                    Err("refused".into())
                } else {
                    Ok(one_thread())
                }
            });
        stopper.join().unwrap();
        assert_eq!(
            (snapshots.len(), failures),
            (2, vec!["refused".to_string()])
        );
    }

    #[test]
    fn a_snapshot_during_which_the_step_ended_is_left_out() {
        let (stop, stopped) = mpsc::channel();
        let schedule = Schedule {
            first: Duration::ZERO,
            every: Duration::ZERO,
            most: 3,
        };
        let mut calls = 0;
        let (snapshots, failures) =
            take_until_stopped(&stopped, schedule, &AtomicBool::new(false), || {
                calls += 1;
                if calls == 2 {
                    stop.send(()).unwrap(); // the step ends while the second is taken
                }
                Ok(one_thread())
            });
        assert_eq!((snapshots.len(), failures.len(), calls), (1, 0, 2));
        // A failure during which the step ended is still told.
        let (stop, stopped) = mpsc::channel();
        let (snapshots, failures) =
            take_until_stopped(&stopped, schedule, &AtomicBool::new(false), || {
                stop.send(()).unwrap();
                Err("no answer within 2 s".into())
            });
        assert_eq!((snapshots.len(), failures.len()), (0, 1));
        // The only snapshot, left out, is told: a step without stacks says why.
        let (stop, stopped) = mpsc::channel();
        let looked = AtomicBool::new(false);
        let (snapshots, failures) = take_until_stopped(&stopped, schedule, &looked, || {
            stop.send(()).unwrap();
            Ok(one_thread())
        });
        assert!(snapshots.is_empty());
        assert!(
            matches!(&failures[..], [why] if why.starts_with("the step ended during its only snapshot, which took 0.0 s")),
            "{failures:?}"
        );
        assert!(looked.load(Ordering::Acquire));
    }

    #[test]
    fn the_first_look_is_signalled_once_a_snapshot_is_kept_or_failed() {
        for first in [Ok(one_thread()), Err("refused".to_string())] {
            let (stop, stopped) = mpsc::channel::<()>();
            let looked = AtomicBool::new(false);
            let mut first = Some(first);
            let schedule = Schedule {
                first: Duration::ZERO,
                every: Duration::from_millis(20),
                most: 2,
            };
            take_until_stopped(&stopped, schedule, &looked, || match first.take() {
                Some(taken) => {
                    assert!(!looked.load(Ordering::Acquire), "not before the first");
                    taken
                }
                None => {
                    assert!(looked.load(Ordering::Acquire), "after the first");
                    Ok(one_thread())
                }
            });
            drop(stop);
        }
    }

    const SOON: Schedule = Schedule {
        first: Duration::from_millis(300),
        every: Duration::from_millis(250),
        most: 5,
    };

    #[test]
    fn a_step_that_ends_before_the_first_snapshot_takes_none() {
        let (stop, stopped) = mpsc::channel::<()>();
        drop(stop);
        let (snapshots, failures) =
            take_until_stopped(&stopped, SOON, &AtomicBool::new(false), || {
                panic!("not due yet")
            });
        assert!(snapshots.is_empty() && failures.is_empty());
    }

    #[test]
    fn failures_become_one_note_and_snapshots_the_evidence() {
        let failed = ["timed out".to_string()];
        let (evidence, notes) = step_result(StackSource::PySpy, "py-spy", &[], &failed);
        assert_eq!(evidence, None);
        assert_eq!(
            notes,
            vec![ObservationNote::ToolFailed {
                tool: "py-spy".into(),
                why: "timed out".into()
            }]
        );
        let (evidence, notes) = step_result(StackSource::PySpy, "py-spy", &[one_thread()], &failed);
        assert_eq!(evidence.expect("one snapshot").snapshots, 1);
        assert!(
            matches!(&notes[..], [ObservationNote::ToolFailed { why, .. }]
            if why == "1 of 2 snapshots failed (timed out)")
        );
        assert_eq!(
            step_result(StackSource::PySpy, "py-spy", &[one_thread()], &[]).1,
            vec![]
        );
    }

    #[test]
    fn a_command_past_its_limit_is_killed_and_said_so() {
        let result = run_bounded(Command::new("sleep").arg("5"), Duration::from_millis(100));
        assert_eq!(result.unwrap_err(), "no answer within 0.1 s");
        let missing = run_bounded(
            &mut Command::new("chokepoint-no-such-tool"),
            Duration::from_secs(1),
        );
        assert!(missing.unwrap_err().starts_with("cannot start it"));
        let output = run_bounded(
            Command::new("sh").args(["-c", "head -c 200000 /dev/zero; echo oops >&2"]),
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(
            (output.stdout.len(), output.stderr),
            (200_000, b"oops\n".to_vec())
        );
    }
}
