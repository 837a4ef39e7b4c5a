//! The report's flame graphs of where the target's threads were, drawn by `inferno` from the
//! stacks a sweep already keeps (jcmd, py-spy, pprof): one of the step at the knee, and one of
//! the same step against the step below it, coloured by what grew with the load (red) or
//! shrank (blue) — Brendan Gregg's differential flame graph, as `inferno-diff-folded` makes it.
//!
//! Each stack the runtime showed becomes a folded line, outermost first: the pool, what its
//! threads were doing (in [`WaitKind::as_words`]), then its frames from the outermost kept to the
//! blocking call. A line's count is its mean threads per snapshot in hundredths (inferno counts
//! in integers; `factor` turns them back into threads in the tooltips), so steps with different
//! numbers of dumps compare. Idle workers are left out: they wait for work, not in a request.
//! The place the diagnosis named (its pool and its blocking call) is marked with the class
//! `place`, which the page outlines. The graphs are inline SVG without inferno's script and style
//! (the page's `.flames` rules style them), so the page stays one self-contained file; each
//! frame's tooltip still gives its threads.
use crate::html::escape;
use chokepoint_result::{Diagnosis, StackEvidence, Step, SweepResult, WaitKind};
use inferno::flamegraph::{self, FuncFrameAttrsMap, Options};
use std::fmt::Write;

/// Hundredths of a thread per count.
const PER_THREAD: f64 = 100.0;

/// The flame graphs' part of the "Where the limit sits" section; empty when the knee's step has
/// no stacks.
pub(crate) fn graphs(result: &SweepResult, diagnosis: &Diagnosis) -> String {
    let Some((step, stacks)) = knee_stacks(result, diagnosis) else {
        return String::new();
    };
    let place = place_marks(diagnosis);
    let mut html = String::from("<div class=\"flames\">\n");
    let now = folded(stacks);
    let title = format!("Threads at {} clients, by where they were", step.clients);
    if let Some(svg) = render(&lines(&now), &title, &place) {
        let _ = writeln!(
            html,
            "<h3>{}</h3>\n<p class=\"note\">{}</p>\n{svg}",
            escape(&title),
            escape(&caption(step, stacks))
        );
    }
    if let Some((below, below_stacks)) = step_below(result, step.clients) {
        let diff = differential(&folded(below_stacks), &now);
        let title = format!(
            "What grew from {} to {} clients (red: more threads there, blue: fewer)",
            below.clients, step.clients
        );
        if let Some(svg) = render(&diff, &title, &place) {
            let _ = writeln!(html, "<h3>{}</h3>\n{svg}", escape(&title));
        }
    }
    html.push_str("</div>\n");
    html
}

/// The step at the knee with stacks (else the place's step, else the plateau's largest).
fn knee_stacks<'r>(
    result: &'r SweepResult,
    diagnosis: &Diagnosis,
) -> Option<(&'r Step, &'r StackEvidence)> {
    let with_stacks = |clients: u32| {
        result
            .steps
            .iter()
            .find(|s| s.clients == clients)
            .and_then(|s| Some((s, s.stacks.as_ref().filter(|e| !e.pools.is_empty())?)))
    };
    let plateau_last = diagnosis
        .plateau()
        .and_then(|p| p.clients.iter().copied().max());
    [
        diagnosis.knee_clients(),
        diagnosis.place.as_ref().map(|p| p.clients),
        plateau_last,
    ]
    .into_iter()
    .flatten()
    .find_map(with_stacks)
}

/// The largest step below `clients` with stacks.
fn step_below(result: &SweepResult, clients: u32) -> Option<(&Step, &StackEvidence)> {
    result
        .steps
        .iter()
        .filter(|s| s.clients < clients)
        .filter_map(|s| Some((s, s.stacks.as_ref().filter(|e| !e.pools.is_empty())?)))
        .max_by_key(|(s, _)| s.clients)
}

fn caption(step: &Step, stacks: &StackEvidence) -> String {
    let tool = stacks.source.map(|s| s.as_str()).unwrap_or("the runtime");
    match stacks.recording_s {
        Some(seconds) => format!(
            "From a {seconds:.1} s recording by {tool} at {} clients; width is threads, the place the finding names is outlined.",
            step.clients
        ),
        None => format!(
            "Mean of {} dumps by {tool} at {} clients; width is threads, the place the finding names is outlined.",
            stacks.snapshots, step.clients
        ),
    }
}

/// One folded stack: its frames, outermost first, and its hundredths of a thread.
pub(crate) type Folded = Vec<(String, u64)>;

/// The step's stacks as folded lines, idle workers left out.
pub(crate) fn folded(stacks: &StackEvidence) -> Folded {
    let mut lines: Folded = Vec::new();
    for pool in &stacks.pools {
        for stack in &pool.stacks {
            if stack.waiting == Some(WaitKind::Idle) {
                continue;
            }
            let count = (stack.threads * PER_THREAD).round() as u64;
            if count == 0 {
                continue;
            }
            let doing = stack.waiting.map(WaitKind::as_words).unwrap_or("unknown");
            let mut path = vec![frame_name(&pool.pool), doing.to_string()];
            path.extend(stack.frames.iter().rev().map(|f| frame_name(f)));
            let path = path.join(";");
            match lines.iter_mut().find(|(p, _)| *p == path) {
                Some((_, n)) => *n += count,
                None => lines.push((path, count)),
            }
        }
    }
    lines
}

/// A frame as a folded line holds it: no `;` (the separator) and no whitespace (the count's
/// separator; a Python frame's `fn (file.py:12)` keeps its look with a no-break space).
fn frame_name(frame: &str) -> String {
    frame
        .replace(';', ",")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("\u{a0}")
}

/// Lines with both counts (`stack before after`), as inferno draws a differential graph: the
/// widths are the second step's, the colours the change.
pub(crate) fn differential(before: &Folded, after: &Folded) -> Vec<String> {
    let count_in =
        |lines: &Folded, path: &str| lines.iter().find(|(p, _)| p == path).map_or(0, |(_, n)| *n);
    let mut paths: Vec<&str> = after.iter().map(|(p, _)| p.as_str()).collect();
    for (p, _) in before {
        if !paths.contains(&p.as_str()) {
            paths.push(p);
        }
    }
    paths
        .into_iter()
        .map(|p| format!("{p} {} {}", count_in(before, p), count_in(after, p)))
        .collect()
}

/// The place's pool and blocking call, as frame names, to outline.
fn place_marks(diagnosis: &Diagnosis) -> Vec<String> {
    let Some(place) = &diagnosis.place else {
        return Vec::new();
    };
    place
        .pool
        .iter()
        .chain(place.frames.first())
        .map(|f| frame_name(f))
        .collect()
}

/// The SVG of folded `text` lines, none when there is nothing to draw or inferno refused it.
fn render(text: &[String], title: &str, place: &[String]) -> Option<String> {
    if text.is_empty() {
        return None;
    }
    let marks: String = place
        .iter()
        .map(|f| format!("{f}\tclass=place\n"))
        .collect();
    let mut options = Options::default();
    options.title = title.to_string();
    options.count_name = "threads".to_string();
    options.factor = 1.0 / PER_THREAD;
    options.deterministic = true;
    options.no_javascript = true;
    options.hash = true;
    options.min_width = 0.5;
    options.func_frameattrs = FuncFrameAttrsMap::from_reader(marks.as_bytes()).ok()?;
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut options, text.iter().map(String::as_str), &mut svg).ok()?;
    let svg = String::from_utf8(svg).ok()?;
    // The page holds the SVG inline, from its root element on. Its style and script would be the
    // page's (an inline SVG's `<style>` applies to the whole document): the page's own `.flames`
    // rules replace them, and without the script nothing calls `init`.
    let start = svg.find("<svg")?;
    let svg = svg[start..].replacen(" onload=\"init(evt)\"", "", 1);
    Some(without(
        &without(&svg, "<style", "</style>"),
        "<script",
        "</script>",
    ))
}

/// `text` without its first element from `open` to `close`, both included.
fn without(text: &str, open: &str, close: &str) -> String {
    match (text.find(open), text.find(close)) {
        (Some(a), Some(b)) if a < b => format!("{}{}", &text[..a], &text[b + close.len()..]),
        _ => text.to_string(),
    }
}

/// Folded lines as inferno reads them: `stack count`.
fn lines(folded: &Folded) -> Vec<String> {
    folded.iter().map(|(p, n)| format!("{p} {n}")).collect()
}
