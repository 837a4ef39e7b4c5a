//! A JVM's waits from a Flight Recorder recording of the step (`--stacks jfr`): the *time* each
//! pool's threads spent waiting in each place, rather than counts of a few dumps.
//!
//! At the step's start `jcmd PID JFR.start` records three events with their stacks, each wait
//! of [`THRESHOLD`] or more: `jdk.ThreadPark` (`LockSupport.park`: a lock, a queue, a future),
//! `jdk.JavaMonitorEnter` (a `synchronized` monitor) and `jdk.SocketRead`. At its end
//! `JFR.stop` writes the recording, which the JDK's `jfr print --json` reads. Each event is one
//! wait of one thread, read as a dump's thread is ([`super::java_frames`]); its time inside the
//! recording is added to its pool's place. A place's `threads` is its seconds over the
//! recording's (the mean number of the pool's threads waiting there); a pool's `threads` is
//! the threads seen in it.
//!
//! What it costs (measured on the JVM twin, 2 cores, JDK 17): `JFR.start` and `JFR.stop` took
//! ~0.3 s and ~0.5 s each with `jcmd` (now sent over the attach socket, `super::attach`, with
//! `jcmd` only as the fallback), then `jfr print --json` takes 0.8 s for 400 waits and
//! 3.5-6 s (2.5 s of CPU, 158 MB of JSON) for the 6,750 waits of 3 s at 1,700 req/s: the step's end
//! waits for it. Thread dumps cost ~0.25 s (0.15 s of CPU) each, during the step. Dumps are
//! the default; a recording is asked for with `--stacks jfr`, and when it cannot be made (no
//! `jfr` on the PATH, a JDK 8 without Flight Recorder, `JFR.start` refused) the step falls back
//! to dumps with a note.
//!
//! A recording sees a wait only when it ends inside the recording, and sees no running thread;
//! waits that began before it count from its start.
use super::java_frames::read_stack;
use super::jvm::{attach_or_jcmd, run_tool, ThreadDumps, JCMD_LIMIT};
use super::snapshots::find_on_path;
use super::StackTool;
use crate::namespace::HostThreadIds;
use crate::threads::pool_name;
use chokepoint_result::{
    ObservationNote, PoolStacks, SharedStack, StackEvidence, StackSource, WaitKind,
};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

/// The shortest wait recorded.
pub const THRESHOLD: &str = "10 ms";
/// The events recorded.
pub const EVENTS: &[&str] = &["jdk.ThreadPark", "jdk.JavaMonitorEnter", "jdk.SocketRead"];
/// Frames kept per event: enough to reach the service's code under a driver and a framework.
const STACK_DEPTH: &str = "32";
/// How long `jfr print` may take.
const PRINT_LIMIT: Duration = Duration::from_secs(20);

/// How to get `jfr`.
pub const JFR_INSTALL: &str =
    "it comes with a JDK 11 or later: e.g. apt-get install openjdk-17-jdk-headless";

/// A recording of one step of the JVM `pid`.
#[derive(Debug)]
pub struct JfrRecording {
    pid: i32,
}

impl JfrRecording {
    /// Recordings of the JVM `pid`.
    pub fn new(pid: i32) -> JfrRecording {
        JfrRecording { pid }
    }
}

/// The recording's settings (a `.jfc` file; JDK 11 has no `+event#setting=` syntax).
fn settings() -> String {
    let events: String = EVENTS
        .iter()
        .map(|event| {
            format!(
                "  <event name=\"{event}\"><setting name=\"enabled\">true</setting>\
                 <setting name=\"stackTrace\">true</setting>\
                 <setting name=\"threshold\">{THRESHOLD}</setting></event>\n"
            )
        })
        .collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<configuration version=\"2.0\" \
         label=\"chokepoint\" description=\"waits with their stacks\">\n{events}</configuration>\n"
    )
}

/// A folder of ours for the recording's files, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(pid: i32) -> std::io::Result<Scratch> {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("chokepoint-jfr-{}-{pid}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl JfrRecording {
    /// Records until `stop`; the recording's text (`jfr print --json`) and its window.
    fn record(
        &self,
        stop: &mpsc::Receiver<()>,
        looked: &AtomicBool,
    ) -> Result<(String, SystemTime, SystemTime), String> {
        let scratch = Scratch::new(self.pid).map_err(|err| format!("no scratch folder: {err}"))?;
        let jfc = scratch.0.join("waits.jfc");
        std::fs::write(&jfc, settings()).map_err(|err| format!("{}: {err}", jfc.display()))?;
        let name = scratch
            .0
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("chokepoint")
            .to_string();
        // `duration`: should chokepoint die mid-step, the target stops recording by itself.
        let start = [
            "JFR.start".to_string(),
            format!("name={name}"),
            "duration=15m".to_string(),
            format!("settings={}", jfc.display()),
        ];
        let start: Vec<&str> = start.iter().map(String::as_str).collect();
        let said = attach_or_jcmd(self.pid, &start, JCMD_LIMIT * 2)?;
        if !said.contains("Started recording") {
            return Err(format!(
                "JFR.start: {}",
                said.lines().last().unwrap_or("").trim()
            ));
        }
        let from = SystemTime::now();
        // The recording's events come at the step's end: started is its first look.
        looked.store(true, Ordering::Release);
        let _ = stop.recv();
        let to = SystemTime::now();
        let file = scratch.0.join("step.jfr");
        let stop_args = [
            "JFR.stop".to_string(),
            format!("name={name}"),
            format!("filename={}", file.display()),
        ];
        let stop_args: Vec<&str> = stop_args.iter().map(String::as_str).collect();
        attach_or_jcmd(self.pid, &stop_args, JCMD_LIMIT * 2)?;
        let mut print = Command::new("jfr");
        print
            .args(["print", "--json", "--stack-depth", STACK_DEPTH, "--events"])
            .arg(EVENTS.join(","))
            .arg(&file);
        let json = run_tool(&mut print, "jfr print", PRINT_LIMIT)?;
        Ok((json, from, to))
    }
}

impl StackTool for JfrRecording {
    fn watch_step(
        &mut self,
        stop: &mpsc::Receiver<()>,
        looked: &AtomicBool,
    ) -> (Option<StackEvidence>, Vec<ObservationNote>) {
        if !jfr_on_path() {
            let note = ObservationNote::ToolMissing {
                tool: "jfr".into(),
                install: JFR_INSTALL.into(),
            };
            let (evidence, mut notes) = ThreadDumps::new(self.pid).watch_step(stop, looked);
            notes.insert(0, note);
            return (evidence, notes);
        }
        match self.record(stop, looked) {
            Ok((json, from, to)) => match parse_recording(&json, from, to) {
                Ok(mut evidence) => {
                    HostThreadIds::of(self.pid).to_host(&mut evidence);
                    (Some(evidence), Vec::new())
                }
                Err(why) => (None, vec![failed(why)]),
            },
            Err(why) => {
                // Not started, or lost: dumps for what is left of the step.
                let (evidence, mut notes) = ThreadDumps::new(self.pid).watch_step(stop, looked);
                notes.insert(
                    0,
                    failed(format!("{why} (JVM {}): thread dumps instead", self.pid)),
                );
                (evidence, notes)
            }
        }
    }
}

fn failed(why: String) -> ObservationNote {
    ObservationNote::ToolFailed {
        tool: "JFR".into(),
        why,
    }
}

/// Whether `jfr` is on the PATH.
pub fn jfr_on_path() -> bool {
    find_on_path("jfr").is_some()
}

#[derive(Deserialize)]
struct Printed {
    recording: Events,
}

#[derive(Deserialize)]
struct Events {
    events: Vec<Event>,
}

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    values: Values,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Values {
    start_time: String,
    duration: String,
    event_thread: Option<EventThread>,
    stack_trace: Option<Stack>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EventThread {
    java_name: Option<String>,
    os_thread_id: Option<i32>,
}

#[derive(Deserialize)]
struct Stack {
    frames: Vec<Frame>,
}

#[derive(Deserialize)]
struct Frame {
    method: Method,
}

#[derive(Deserialize)]
struct Method {
    #[serde(rename = "type")]
    class: Class,
    name: String,
}

#[derive(Deserialize)]
struct Class {
    name: String,
}

/// The state a thread is in during each event's wait.
fn state_of(event: &str) -> &'static str {
    match event {
        "jdk.JavaMonitorEnter" => "BLOCKED",
        "jdk.SocketRead" => "RUNNABLE",
        _ => "WAITING",
    }
}

/// Seconds of an ISO 8601 duration as `jfr print --json` writes them (`PT0.150100414S`,
/// `PT1M2.5S`, `PT1H`).
pub fn iso_seconds(text: &str) -> Option<f64> {
    let mut rest = text.strip_prefix("PT")?;
    let mut seconds = 0.0;
    while !rest.is_empty() {
        let end = rest.find(|c: char| c.is_ascii_alphabetic())?;
        let number: f64 = rest[..end].parse().ok()?;
        seconds += number
            * match &rest[end..end + 1] {
                "H" => 3600.0,
                "M" => 60.0,
                "S" => 1.0,
                _ => return None,
            };
        rest = &rest[end + 1..];
    }
    Some(seconds)
}

/// The evidence of a recording (`jfr print --json` of [`EVENTS`]) made from `from` to `to`.
pub fn parse_recording(
    json: &str,
    from: SystemTime,
    to: SystemTime,
) -> Result<StackEvidence, String> {
    let printed: Printed =
        serde_json::from_str(json).map_err(|err| format!("jfr print --json unreadable: {err}"))?;
    let window = to.duration_since(from).unwrap_or_default().as_secs_f64();
    #[derive(Default)]
    struct Pool {
        threads: BTreeSet<String>,
        tids: BTreeSet<i32>,
        states: BTreeMap<String, f64>,
        places: BTreeMap<(WaitKind, Vec<String>), f64>,
    }
    let mut pools: BTreeMap<String, Pool> = BTreeMap::new();
    for event in printed.recording.events {
        let Some(thread) = event.values.event_thread else {
            continue;
        };
        let Some(name) = thread.java_name.filter(|n| !n.starts_with("JFR ")) else {
            continue;
        };
        let (Ok(start), Some(length)) = (
            humantime::parse_rfc3339(&event.values.start_time),
            iso_seconds(&event.values.duration),
        ) else {
            continue;
        };
        // The part of the wait inside the recording.
        let end = start + Duration::from_secs_f64(length);
        let inside = end
            .min(to)
            .duration_since(start.max(from))
            .unwrap_or_default();
        let frames: Vec<String> = event
            .values
            .stack_trace
            .map(|stack| {
                stack
                    .frames
                    .into_iter()
                    .map(|f| {
                        format!(
                            "{}.{}",
                            f.method.class.name.replace('/', "."),
                            f.method.name
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let state = state_of(&event.kind);
        let (waiting, frames) = read_stack(state, &frames);
        let pool = pools.entry(pool_name(&name)).or_default();
        let seconds = inside.as_secs_f64();
        *pool.states.entry(state.to_string()).or_default() += seconds;
        *pool.places.entry((waiting, frames)).or_default() += seconds;
        pool.tids.extend(thread.os_thread_id);
        pool.threads.insert(name);
    }
    let per_window = |seconds: f64| if window > 0.0 { seconds / window } else { 0.0 };
    let mut pools: Vec<PoolStacks> = pools
        .into_iter()
        .map(|(name, pool)| {
            let mut stacks: Vec<SharedStack> = pool
                .places
                .into_iter()
                .map(|((waiting, frames), seconds)| SharedStack {
                    waiting: Some(waiting),
                    frames,
                    threads: per_window(seconds),
                    seconds: Some(seconds),
                })
                .collect();
            stacks.sort_by(|a, b| b.threads.total_cmp(&a.threads));
            PoolStacks {
                pool: name,
                threads: pool.threads.len() as f64,
                most_threads: pool.threads.len() as u32,
                states: pool
                    .states
                    .into_iter()
                    .map(|(state, seconds)| (state, per_window(seconds)))
                    .collect(),
                stacks,
                tids: pool.tids.into_iter().collect(),
            }
        })
        .collect();
    pools.sort_by(|a, b| b.threads.total_cmp(&a.threads).then(a.pool.cmp(&b.pool)));
    Ok(StackEvidence {
        source: Some(StackSource::Jfr),
        snapshots: 0,
        recording_s: Some(window),
        pools,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stacks::test_support::data;

    fn at(text: &str) -> SystemTime {
        humantime::parse_rfc3339(text).expect("a time")
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn a_recording_of_the_twins_actor_pool_gives_seconds_in_the_downstream_call() {
        // `jfr print --json --stack-depth 32` of 1 s of the JVM twin's /actors at 10 clients
        // (JDK 17), 6 of its socket reads and 3 idle parks kept; the window as chokepoint
        // measured it around JFR.start and JFR.stop.
        let (from, to) = (
            at("2026-11-23T07:06:27.551219642Z"),
            at("2026-11-23T07:06:28.554157594Z"),
        );
        let evidence = parse_recording(&data("jvm", "jdk17-jfr-twin.json"), from, to).unwrap();
        assert_eq!(evidence.source, Some(StackSource::Jfr));
        assert_eq!(evidence.snapshots, 0);
        assert!(close(evidence.recording_s.unwrap(), 1.002937952));
        let pool = &evidence.pools[0];
        assert_eq!((pool.pool.as_str(), pool.most_threads), ("actor-pool", 9));
        assert_eq!(pool.tids.len(), 9);
        let downstream = &pool.stacks[0];
        assert_eq!(downstream.waiting, Some(WaitKind::Downstream));
        assert_eq!(
            downstream.frames,
            [
                "java.net.HttpURLConnection.getResponseCode",
                "BlockingDemo.blockingCall"
            ]
        );
        // Each read's time inside the window (the first began 10 ms before it), summed.
        assert!(close(downstream.seconds.unwrap(), 0.859448540));
        assert!(close(downstream.threads, 0.859448540 / 1.002937952));
        let idle = &pool.stacks[1];
        assert_eq!(idle.waiting, Some(WaitKind::Idle));
        assert!(close(idle.seconds.unwrap(), 0.432497001));
        assert!(close(pool.states["RUNNABLE"], 0.859448540 / 1.002937952));
        assert!(close(pool.states["WAITING"], 0.432497001 / 1.002937952));
    }

    #[test]
    fn a_recording_of_httpclient_send_parks_reads_as_a_downstream_wait() {
        // 1 s of tests/targets/java-shed with --downstream (HttpClient.send), JDK 17.
        let (from, to) = (
            at("2026-11-23T07:06:34.720416104Z"),
            at("2026-11-23T07:06:35.722486989Z"),
        );
        let evidence = parse_recording(&data("jvm", "jdk17-jfr-shed.json"), from, to).unwrap();
        let pool = evidence
            .pools
            .iter()
            .find(|p| p.pool == "pool-1-thread")
            .expect("the server's pool");
        assert_eq!(pool.stacks.len(), 1);
        assert_eq!(pool.stacks[0].waiting, Some(WaitKind::Downstream));
        assert_eq!(
            pool.stacks[0].frames,
            ["java.net.http.HttpClient.send", "ShedServer.work"]
        );
        assert!(close(pool.stacks[0].seconds.unwrap(), 0.949818794));
        let workers = evidence
            .pools
            .iter()
            .find(|p| p.pool == "HttpClient-1-Worker")
            .expect("the client's workers");
        assert_eq!(workers.stacks[0].waiting, Some(WaitKind::Idle));
    }

    #[test]
    fn text_that_is_no_recording_is_an_error() {
        let now = SystemTime::now();
        assert!(parse_recording("", now, now).is_err());
        assert!(parse_recording("{\"recording\": {}}", now, now).is_err());
        let empty = parse_recording("{\"recording\": {\"events\": []}}", now, now).unwrap();
        assert!(empty.pools.is_empty());
    }

    #[test]
    fn iso_durations_as_jfr_writes_them() {
        let table: &[(&str, Option<f64>)] = &[
            ("PT0.150100414S", Some(0.150100414)),
            ("PT1M2.5S", Some(62.5)),
            ("PT1H", Some(3600.0)),
            ("PT0S", Some(0.0)),
            ("P1D", None),
            ("PT5X", None),
            ("", None),
        ];
        for (text, seconds) in table {
            assert_eq!(iso_seconds(text), *seconds, "{text}");
        }
    }

    #[test]
    fn the_settings_name_each_event_with_its_stack_and_threshold() {
        let jfc = settings();
        for event in EVENTS {
            assert!(jfc.contains(&format!("<event name=\"{event}\">")));
        }
        assert_eq!(
            jfc.matches("<setting name=\"threshold\">10 ms</setting>")
                .count(),
            3
        );
    }
}
