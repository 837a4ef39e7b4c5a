//! The terminal view of a sweep: one line per step as it ends, and the finding in plain words.
use crate::numbers;
use chokepoint_result::{Diagnosis, Step, SweepResult};
use std::fmt::Write;

/// The header of the live table; [`step_line`] prints its rows under it.
pub fn step_header() -> String {
    format!(
        "{:>7} {:>9} {:>9} {:>9} {:>9}  {:<16} {:>11} {:>11} {:>8} {:>12}",
        "clients",
        "req/s",
        "ok req/s",
        "avg",
        "p99",
        "errors (rate)",
        "in flight",
        "target CPU",
        "gen CPU",
        "machine CPU"
    )
}

/// One row of the live table: clients, req/s, ok req/s, mean and p99 latency, errors with their
/// rate, the downstream's mean/max calls in flight (`-` without a mock), target, generator and
/// whole-machine CPU (the contended share the diagnosis reads: [`niced_line`] tells the rest).
pub fn step_line(step: &Step) -> String {
    format!(
        "{:>7} {:>9} {:>9} {:>9} {:>9}  {:<16} {:>11} {:>11} {:>8} {:>12}",
        step.clients,
        numbers::rate(step.throughput_rps),
        numbers::rate(step.ok_throughput_rps),
        numbers::ms(step.latency_ms.mean),
        numbers::ms(step.latency_ms.p99),
        numbers::errors(numbers::error_count(step), step.error_rate),
        numbers::in_flight(step.downstream_inflight.as_ref()),
        numbers::cpu(step.target_cpu_pct),
        numbers::cpu(Some(step.generator_cpu_pct)),
        numbers::cpu(step.machine_contended_cpu_pct()),
    )
}

/// The line before the what-if's emulated steps: the pool found, the one emulated, the delay.
pub fn emulation_line(from_pool: u32, pool: u32, delay_ms: f64, emulated_delay_ms: f64) -> String {
    format!(
        "what-if: the pool of {from_pool} as one of {pool}: the mock's delay {} → {} (put back after)",
        numbers::ms(delay_ms),
        numbers::ms(emulated_delay_ms)
    )
}

/// How much of the finding the terminal shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// One screen: the headline, the summary, `Where:` with its setting, and the evidence that
    /// decides it (the report's key lines, at most [`SCREEN_KEY_LINES`]).
    Screen,
    /// Everything: every evidence sentence, the models, the fan-out (`--verbose`, report.txt).
    Full,
}

/// The key lines of evidence on the terminal's one screen.
pub const SCREEN_KEY_LINES: usize = 3;

/// The whole report: what was swept, the step table, then [`after_table`] in full.
pub fn render(result: &SweepResult) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "chokepoint sweep of {}", result.target);
    let _ = writeln!(
        out,
        "downstream: {}",
        numbers::downstream_context(&result.context)
    );
    out.push('\n');
    if result.steps.is_empty() {
        out.push_str("No steps were measured.\n");
    } else {
        let _ = writeln!(out, "{}", step_header());
        for step in &result.steps {
            let _ = writeln!(out, "{}", step_line(step));
        }
    }
    out.push_str(&after_table(result, Detail::Full));
    out
}

/// What follows the step table: errors by kind, whether the sweep was interrupted, and the
/// finding in plain words. A live sweep that already printed [`step_line`]s ends with this.
pub fn after_table(result: &SweepResult, detail: Detail) -> String {
    let mut out = String::new();
    for step in result.steps.iter().filter(|s| !s.errors.is_empty()) {
        let kinds: Vec<String> = step
            .errors
            .iter()
            .map(|(kind, count)| format!("{kind} {count}"))
            .collect();
        let _ = writeln!(
            out,
            "errors at {} clients: {}",
            step.clients,
            kinds.join(", ")
        );
    }
    if result.interrupted {
        let _ = writeln!(
            out,
            "The sweep was interrupted after {} step{}.",
            result.steps.len(),
            if result.steps.len() == 1 { "" } else { "s" }
        );
    }
    if let Some(line) = niced_line(&result.steps) {
        out.push_str(&line);
    }
    out.push('\n');
    match &result.diagnosis {
        Some(diagnosis) => out.push_str(&render_finding(diagnosis, detail)),
        None if result.interrupted => {
            out.push_str("No finding: the sweep stopped before the diagnosis.\n")
        }
        None => out.push_str("No finding yet: the result has no diagnosis.\n"),
    }
    if let Some(observer) = &result.context.observer {
        let _ = writeln!(
            out,
            "The target was observed through the observer at {observer} (chokepoint observe beside it), not this machine's /proc."
        );
    }
    if let Some(line) = time_line(result) {
        out.push_str(&line);
    }
    out
}

/// What the table's machine CPU leaves out: niced work in the target's own scheduling group,
/// which yields its cores to the target (`Step::machine_contended_cpu_pct`). None when no step
/// had a whole percent of it.
fn niced_line(steps: &[Step]) -> Option<String> {
    let most = steps
        .iter()
        .filter_map(|s| s.machine_niced_cpu_pct)
        .fold(0.0_f64, f64::max);
    (most >= 1.0).then(|| {
        format!(
            "machine CPU leaves out niced work beside the target, which yields it the cores: up to {} of the machine.\n",
            numbers::cpu(Some(most))
        )
    })
}

/// How long the finding took: wall time, load time, and how many steps ended early (results
/// written before these were recorded have no line).
fn time_line(result: &SweepResult) -> Option<String> {
    if result.duration_s <= 0.0 {
        return None;
    }
    let early = result
        .steps
        .iter()
        .filter(|s| s.ended == Some(chokepoint_result::StepEnd::Settled))
        .count();
    Some(format!(
        "Found in {:.1} s: {:.1} s of load over {} step{}, {} ended early when known within ±3%.\n",
        result.duration_s,
        result.load_s,
        result.steps.len(),
        if result.steps.len() == 1 { "" } else { "s" },
        early
    ))
}

/// The finding in plain words: kind, limit and knee, the summary, where; then the key evidence
/// (one screen) or every sentence and the models (in full).
fn render_finding(diagnosis: &Diagnosis, detail: Detail) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Finding: {}", headline(diagnosis));
    let _ = writeln!(out, "  {}", diagnosis.summary);
    if let Some(place) = &diagnosis.attribution {
        let _ = writeln!(out, "  Where: {place}");
    }
    if let Some(what_if) = &diagnosis.what_if {
        let _ = writeln!(out, "  What if: {}", what_if.summary);
    }
    // Findings recorded before the key lines existed show their evidence in full.
    if detail == Detail::Screen && !diagnosis.key_evidence.is_empty() {
        for line in diagnosis.key_evidence.iter().take(SCREEN_KEY_LINES) {
            let _ = writeln!(out, "  - {line}");
        }
        let _ = writeln!(
            out,
            "  ({} sentences of evidence and the models: --verbose, or the report)",
            diagnosis.evidence.len()
        );
        return out;
    }
    for sentence in &diagnosis.evidence {
        let _ = writeln!(out, "  - {sentence}");
    }
    if let Some(models) = models_line(diagnosis) {
        let _ = writeln!(out, "  Models: {models}");
    }
    if let Some(fan_out) = fan_out_line(diagnosis) {
        let _ = writeln!(out, "  Fan-out: {fan_out}");
    }
    out
}

/// `blocking-pool, limit 20, knee at 40 clients`.
pub(crate) fn headline(diagnosis: &Diagnosis) -> String {
    let mut parts = vec![diagnosis.kind().as_str().to_string()];
    if let Some(limit) = diagnosis.limit() {
        parts.push(format!("limit {}", numbers::concurrency(limit)));
    }
    if let Some(knee) = diagnosis.knee_clients() {
        parts.push(format!("knee at {}", numbers::clients(knee)));
    }
    parts.join(", ")
}

/// The bounded-pool fit beside the USL fit, and which fits better; `None` without either.
pub(crate) fn models_line(diagnosis: &Diagnosis) -> Option<String> {
    let pool = diagnosis.pool().map(|p| {
        format!(
            "bounded pool (limit {}, plateau {} req/s, R² {:.3})",
            numbers::concurrency(p.limit),
            numbers::rate(p.plateau_rps),
            p.r_squared
        )
    });
    let usl = diagnosis.usl().map(|u| {
        let n_max = u
            .n_max
            .map(|n| format!(", N_max {}", numbers::concurrency(n)))
            .unwrap_or_default();
        format!(
            "USL (σ {}, κ {}, λ {} req/s{n_max}, R² {:.3})",
            numbers::parameter(u.sigma),
            numbers::parameter(u.kappa),
            numbers::rate(u.lambda),
            u.r_squared
        )
    });
    let fits: Vec<String> = [pool, usl].into_iter().flatten().collect();
    if fits.is_empty() {
        return None;
    }
    let mut line = fits.join(" vs ");
    if let Some(better) = diagnosis.better_model() {
        let _ = write!(line, "; the {} model fits better", better.as_str());
    }
    line.push('.');
    Some(line)
}

/// `downstream calls appear parallel` / `serial`, when the diagnosis could tell.
pub(crate) fn fan_out_line(diagnosis: &Diagnosis) -> Option<String> {
    diagnosis
        .fan_out()
        .map(|how| format!("downstream calls appear {}", how.as_str()))
}
