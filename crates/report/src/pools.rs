//! The report's "Where the limit sits" section: the place as the diagnosis told it (its
//! one-line `attribution`), then a table of the target's pools at the step the place was read
//! from, each with its threads, their states and where they were. The table reads the runtime's
//! stacks when the step has them (thread names in full, states and frames as the runtime names
//! them), else `/proc` (names cut to 15 bytes, states as the kernel sees them, the system calls
//! waited in). The place's pool is marked.
use crate::html::escape;
use crate::numbers;
use chokepoint_result::{
    Diagnosis, Fact, PoolStacks, PoolThreads, StackEvidence, Step, SweepResult, ThreadsByPool,
};
use std::fmt::Write;

/// Pools listed, the largest first (the place's pool is listed whatever its size).
const POOLS_LISTED: usize = 10;
/// Places a pool's threads were in, listed per pool.
const STACKS_LISTED: usize = 3;
/// Frames shown per place, innermost first.
const FRAMES_LISTED: usize = 3;

/// The section; empty when the diagnosis named no place and no step past the knee was observed.
pub fn section(result: &SweepResult) -> String {
    let Some(diagnosis) = &result.diagnosis else {
        return String::new();
    };
    let step = step_read(result, diagnosis);
    if step.is_none() && diagnosis.attribution.is_none() {
        return String::new();
    }
    let mut html = String::from("<section id=\"place\">\n<h2>Where the limit sits</h2>\n");
    match &diagnosis.attribution {
        Some(line) => {
            let _ = writeln!(html, "<p class=\"where\">{}</p>", escape(line));
        }
        None if unclear(diagnosis) => html.push_str(
            "<p class=\"where\">The evidence points at no one place: the finding's sentences say \
             what it saw and what it could not tell.</p>\n",
        ),
        None => {}
    }
    let place_pool = diagnosis.place.as_ref().and_then(|p| p.pool.as_deref());
    if let Some(step) = step {
        match (&step.stacks, &step.threads_by_pool) {
            (Some(stacks), _) if !stacks.pools.is_empty() => {
                stacks_table(&mut html, step.clients, stacks, place_pool)
            }
            (_, Some(threads)) => proc_table(&mut html, step.clients, threads, place_pool),
            _ => {}
        }
    }
    html.push_str(&crate::flame::graphs(result, diagnosis));
    html.push_str("</section>\n");
    html
}

fn unclear(diagnosis: &Diagnosis) -> bool {
    diagnosis
        .facts()
        .iter()
        .any(|f| matches!(f, Fact::PlaceUnclear { .. }))
}

/// The step the place was read from; without a place, the plateau's largest observed step.
fn step_read<'r>(result: &'r SweepResult, diagnosis: &Diagnosis) -> Option<&'r Step> {
    let observed = |s: &&Step| s.stacks.is_some() || s.threads_by_pool.is_some();
    let unclear_at = diagnosis.facts().iter().find_map(|f| match f {
        Fact::PlaceUnclear { clients, .. } => Some(*clients),
        _ => None,
    });
    let clients = diagnosis.place.as_ref().map(|p| p.clients).or(unclear_at);
    match clients {
        Some(c) => result
            .steps
            .iter()
            .filter(observed)
            .find(|s| s.clients == c),
        None => {
            let plateau = &diagnosis.plateau()?.clients;
            result
                .steps
                .iter()
                .filter(observed)
                .filter(|s| plateau.contains(&s.clients))
                .max_by_key(|s| s.clients)
        }
    }
}

/// The pools listed: the largest, and the place's pool.
fn listed<'p, T>(pools: &'p [T], name: impl Fn(&T) -> &str, place: Option<&str>) -> Vec<&'p T> {
    pools
        .iter()
        .enumerate()
        .filter(|(i, p)| *i < POOLS_LISTED || Some(name(p)) == place)
        .map(|(_, p)| p)
        .collect()
}

fn table_head(html: &mut String, last: &str) {
    let _ = write!(
        html,
        "<table class=\"pools\">\n<thead><tr><th>pool</th><th>threads</th><th>states</th><th>{last}</th></tr></thead>\n<tbody>\n"
    );
}

fn row(html: &mut String, marked: bool, cells: [String; 4]) {
    html.push_str(if marked {
        "<tr class=\"place\">"
    } else {
        "<tr>"
    });
    for cell in cells {
        let _ = write!(html, "<td>{cell}</td>");
    }
    html.push_str("</tr>\n");
}

/// `WAITING 19 · RUNNABLE 1`, the most threads first.
fn joined(mut parts: Vec<(String, f64)>) -> String {
    parts.retain(|(_, n)| *n > 0.0);
    parts.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    parts
        .iter()
        .map(|(what, n)| format!("{} {}", escape(what), numbers::concurrency(*n)))
        .collect::<Vec<_>>()
        .join(" · ")
}

fn stacks_table(html: &mut String, clients: u32, stacks: &StackEvidence, place: Option<&str>) {
    table_head(html, "where they were");
    for pool in listed(&stacks.pools, |p: &PoolStacks| &p.pool, place) {
        let states = joined(
            pool.states
                .iter()
                .map(|(state, n)| (state.clone(), *n))
                .collect(),
        );
        let places = pool
            .stacks
            .iter()
            .take(STACKS_LISTED)
            .map(|stack| {
                let frames = stack
                    .frames
                    .iter()
                    .take(FRAMES_LISTED)
                    .map(|f| format!("<code>{}</code>", escape(f)))
                    .collect::<Vec<_>>()
                    .join(" ← ");
                format!(
                    "{} {}{}",
                    numbers::concurrency(stack.threads),
                    stack.waiting.map_or("waiting", |w| w.as_words()),
                    if frames.is_empty() {
                        String::new()
                    } else {
                        format!(": {frames}")
                    }
                )
            })
            .collect::<Vec<_>>()
            .join("<br>");
        row(
            html,
            place == Some(pool.pool.as_str()),
            [
                format!("<code>{}</code>", escape(&pool.pool)),
                numbers::concurrency(pool.threads),
                states,
                places,
            ],
        );
    }
    html.push_str("</tbody>\n</table>\n");
    let taken = match (stacks.recording_s, stacks.snapshots) {
        (Some(seconds), _) => format!("a {seconds:.1} s recording"),
        (None, n) => format!("{n} dump{}", if n == 1 { "" } else { "s" }),
    };
    let _ = writeln!(
        html,
        "<p class=\"legend\">The target's pools at {}, as {} saw them ({taken}): threads are the mean per dump, \
         states as the runtime names them, and where the threads were, read from their frames (innermost first).{}</p>",
        numbers::clients(clients),
        stacks.source.map_or("the runtime", |s| s.as_str()),
        marked_legend(place)
    );
}

fn proc_table(html: &mut String, clients: u32, threads: &ThreadsByPool, place: Option<&str>) {
    table_head(html, "waiting in");
    for pool in listed(&threads.pools, |p: &PoolThreads| &p.pool, place) {
        let m = &pool.mean;
        let states = joined(vec![
            ("running".into(), m.running),
            ("network".into(), m.socket_wait),
            ("futex".into(), m.lock_wait),
            ("event loop".into(), m.event_wait),
            ("sleeping".into(), m.sleeping),
            ("disk".into(), m.disk_wait),
            ("other".into(), m.other),
        ]);
        let waits = joined(
            pool.waits_on
                .iter()
                .map(|w| (w.on.clone(), w.mean))
                .collect(),
        );
        row(
            html,
            place == Some(pool.pool.as_str()),
            [
                format!("<code>{}</code>", escape(&pool.pool)),
                numbers::concurrency(pool.most.threads),
                states,
                waits,
            ],
        );
    }
    html.push_str("</tbody>\n</table>\n");
    let _ = writeln!(
        html,
        "<p class=\"legend\">The target's pools at {}, as /proc saw them ({} samples, one every {} ms): the most threads \
         one sample saw, then the mean per sample in each state and in each system call. A name is a thread's name \
         without its counter, cut to 15 bytes as Linux keeps it; a runtime that does not name its threads shows its \
         process name.{}</p>",
        numbers::clients(clients),
        threads.samples,
        threads.interval_ms,
        marked_legend(place)
    );
}

fn marked_legend(place: Option<&str>) -> &'static str {
    if place.is_some() {
        " The marked row is the place."
    } else {
        ""
    }
}
