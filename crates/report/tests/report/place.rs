//! Where the limit sits, as the report tells it: the place in the first lines of the finding,
//! and the table of the target's pools at the step it was read from (the runtime's stacks when
//! the step has them, `/proc` otherwise).
use crate::fixtures;

use chokepoint_report::{html, sweep_text};
use chokepoint_result::*;

/// `/proc`'s view of seed 000's router at a step: 20 actors on the network, idle JVM threads.
fn proc_pools(busy: f64) -> ThreadsByPool {
    let pool = |name: &str, threads: f64, socket: f64, futex: f64| {
        let counts = ThreadCounts {
            threads,
            socket_wait: socket,
            lock_wait: futex,
            ..ThreadCounts::default()
        };
        PoolThreads {
            pool: name.into(),
            most: counts,
            mean: counts,
            waits_on: [("poll", socket), ("futex", futex)]
                .into_iter()
                .filter(|(_, n)| *n > 0.0)
                .map(|(on, mean)| WaitReason {
                    on: on.into(),
                    mean,
                })
                .collect(),
            main_threads: None,
        }
    };
    ThreadsByPool {
        interval_ms: 250,
        samples: 40,
        pools: vec![
            pool("actor-pool", 20.0, busy, 20.0 - busy),
            pool("GC Thread", 2.0, 0.0, 2.0),
        ],
    }
}

/// jcmd's view of the same step.
fn jcmd(busy: f64) -> StackEvidence {
    let shared = |waiting, threads, frames: &[&str]| SharedStack {
        waiting: Some(waiting),
        frames: frames.iter().map(|f| f.to_string()).collect(),
        threads,
        seconds: None,
    };
    StackEvidence {
        source: Some(StackSource::JcmdThreadPrint),
        snapshots: 3,
        recording_s: None,
        pools: vec![
            PoolStacks {
                pool: "actor-pool".into(),
                threads: 20.0,
                most_threads: 20,
                states: [
                    ("WAITING".to_string(), busy),
                    ("TIMED_WAITING".into(), 20.0 - busy),
                ]
                .into_iter()
                .collect(),
                stacks: vec![shared(
                    WaitKind::Downstream,
                    busy,
                    &["java.net.http.HttpClient.send", "BlockingDemo.blockingCall"],
                )],
                tids: Vec::new(),
            },
            PoolStacks {
                pool: "HttpClient-1-SelectorManager".into(),
                threads: 1.0,
                most_threads: 1,
                states: [("RUNNABLE".to_string(), 1.0)].into_iter().collect(),
                stacks: vec![shared(WaitKind::Idle, 1.0, &["sun.nio.ch.EPoll.wait"])],
                tids: Vec::new(),
            },
        ],
    }
}

/// Seed 000 observed at each step, with the place the diagnosis read at 40 clients.
pub(crate) fn observed(with_stacks: bool) -> SweepResult {
    let mut result = fixtures::seed000();
    for step in &mut result.steps {
        let busy = f64::from(step.clients.min(20));
        step.threads_by_pool = Some(proc_pools(busy));
        step.stacks = with_stacks.then(|| jcmd(busy));
    }
    let place = if with_stacks {
        Place {
            kind: Some(PlaceKind::ThreadPool),
            pool: Some("actor-pool".into()),
            size: Some(20.0),
            held: Some(20.0),
            waiting: Some(WaitKind::Downstream),
            frames: vec![
                "java.net.http.HttpClient.send".into(),
                "BlockingDemo.blockingCall".into(),
            ],
            clients: 40,
            source: Some(PlaceSource::Stacks(StackSource::JcmdThreadPrint)),
            snapshots: Some(3),
            ..Place::default()
        }
    } else {
        Place {
            kind: Some(PlaceKind::ThreadPool),
            pool: Some("actor-pool".into()),
            size: Some(20.0),
            held: Some(20.0),
            waiting: Some(WaitKind::Downstream),
            clients: 40,
            source: Some(PlaceSource::Proc),
            syscall: Some("poll".into()),
            ..Place::default()
        }
    };
    let diagnosis = result.diagnosis.as_mut().expect("seed 000 has its finding");
    diagnosis.attribution = Some(if with_stacks {
        "pool `actor-pool`: 20 threads, 20 waiting on a downstream call in \
         `java.net.http.HttpClient.send` ← `BlockingDemo.blockingCall` (jcmd Thread.print, 3 dumps)"
            .into()
    } else {
        "20 of 20 threads of `actor-pool` blocked on the network, in `poll` (/proc)".into()
    });
    diagnosis.place = Some(place);
    result
}

/// The text between `from` and the next `to` after it.
fn between<'p>(page: &'p str, from: &str, to: &str) -> &'p str {
    let start = page
        .find(from)
        .unwrap_or_else(|| panic!("no {from} in the page"));
    let end = page[start..].find(to).expect("closed") + start;
    &page[start..end]
}

#[test]
fn the_place_comes_right_after_the_verdict_with_the_pools_from_the_thread_dumps() {
    let page = html::render(&observed(true));
    let verdict = page.find("<section class=\"verdict").expect("a verdict");
    let place = page
        .find("<section id=\"place\">")
        .expect("a place section");
    let steps = page.find("<h2>Steps</h2>").expect("the step table");
    assert!(
        verdict < place && place < steps,
        "the place follows the verdict"
    );
    let section = between(&page, "<section id=\"place\">", "</section>");
    println!("{section}");
    assert!(section.contains(
        "<p class=\"where\">pool `actor-pool`: 20 threads, 20 waiting on a downstream call in \
         `java.net.http.HttpClient.send` ← `BlockingDemo.blockingCall` (jcmd Thread.print, 3 dumps)</p>"
    ));
    // One row per pool, the place's marked, with its states and frames as jcmd gave them.
    let rows: Vec<&str> = section.split("<tr").skip(2).collect();
    assert_eq!(rows.len(), 2, "{section}");
    assert!(rows[0].starts_with(" class=\"place\"><td><code>actor-pool</code></td><td>20</td>"));
    assert!(rows[0].contains("<td>WAITING 20</td>"), "{}", rows[0]);
    assert!(rows[0].contains(
        "20 waiting on a downstream call: <code>java.net.http.HttpClient.send</code> ← \
         <code>BlockingDemo.blockingCall</code>"
    ));
    assert!(rows[1].starts_with(
        "><td><code>HttpClient-1-SelectorManager</code></td><td>1</td><td>RUNNABLE 1</td>"
    ));
    assert!(section.contains("at 40 clients, as jcmd Thread.print saw them (3 dumps)"));
}

#[test]
fn without_stacks_the_pools_are_read_from_proc() {
    let page = html::render(&observed(false));
    let section = between(&page, "<section id=\"place\">", "</section>");
    assert!(section.contains(
        "<p class=\"where\">20 of 20 threads of `actor-pool` blocked on the network, in `poll` (/proc)</p>"
    ));
    assert!(section.contains(
        "<tr class=\"place\"><td><code>actor-pool</code></td><td>20</td><td>network 20</td><td>poll 20</td></tr>"
    ), "{section}");
    assert!(section.contains(
        "<tr><td><code>GC Thread</code></td><td>2</td><td>futex 2</td><td>futex 2</td></tr>"
    ));
    assert!(section.contains("as /proc saw them (40 samples, one every 250 ms)"));
}

#[test]
fn the_terminal_says_where_right_under_the_summary() {
    let result = observed(false);
    let text = sweep_text::render(&result);
    let lines: Vec<&str> = text.lines().collect();
    let summary = lines
        .iter()
        .position(|l| l.trim() == result.diagnosis.as_ref().unwrap().summary)
        .expect("the summary line");
    assert_eq!(
        lines[summary + 1],
        "  Where: 20 of 20 threads of `actor-pool` blocked on the network, in `poll` (/proc)"
    );
}

#[test]
fn a_finding_without_a_place_or_observed_steps_has_no_place_section() {
    let page = html::render(&fixtures::seed000());
    assert!(!page.contains("id=\"place\""));
}
