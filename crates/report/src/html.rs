//! `report.html`: one self-contained page (inline CSS and SVG, no script, no network, no web
//! font). Its first screen is the verdict: the kind and summary, the limit, knee and plateau as
//! large figures, and the diagnosis's key evidence in a few lines, with every sentence folded
//! in a `<details>`; then the step table, four charts and the sweep's context. Every figure is
//! read from the result (the diagnosis's facts for the share of ideal and the stalls). The
//! page carries no date, so the same result always renders the same bytes.
use crate::{charts, numbers, sweep_text};
use chokepoint_result::{Fact, Step, SweepResult};
use std::fmt::Write;

pub(crate) const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
main{max-width:1100px;margin:0 auto;padding:20px 24px}
h1{font-size:15px;font-weight:600;color:#5a6272;margin:0;text-transform:uppercase;letter-spacing:.06em}
h2{font-size:20px;margin:28px 0 10px}
.target{font-family:ui-monospace,monospace;font-size:18px;margin:2px 0 4px;word-break:break-all}
.sweep{color:#5a6272;margin:0 0 14px;font-size:14px}
.verdict{background:#fff;border-left:8px solid #d62728;padding:16px 22px;border-radius:6px;box-shadow:0 1px 3px #0002}
.verdict.kind-no-limit-found{border-left-color:#2ca02c}
.verdict.kind-generator-bound{border-left-color:#e6a100}
.verdict.none{border-left-color:#999}
.kind{display:inline-block;font-size:13px;font-weight:700;letter-spacing:.08em;text-transform:uppercase;color:#fff;background:#d62728;border-radius:4px;padding:3px 8px;margin:0 0 8px}
.kind-no-limit-found .kind{background:#2ca02c}
.kind-generator-bound .kind{background:#e6a100}
.none .kind{background:#999}
.summary{font-size:19px;line-height:1.4;margin:0 0 14px;font-weight:500}
.figures{display:flex;gap:14px;margin:0 0 14px;flex-wrap:wrap}
.figures div{flex:1;min-width:180px;background:#f6f7f9;border-radius:6px;padding:10px 16px}
.figures b{display:block;font-size:40px;line-height:1.1;font-weight:700;font-variant-numeric:tabular-nums}
.figures span{color:#5a6272;font-size:14px}
.key{margin:0;padding-left:20px;font-size:16px;line-height:1.5}
details{margin:12px 0 0;color:#3c4454}
details summary{cursor:pointer;color:#5a6272;font-size:14px}
details ul{padding-left:22px}
details li{margin:3px 0}
figure{background:#fff;margin:18px 0;padding:10px;border-radius:4px;box-shadow:0 1px 3px #0002}
figure svg{width:100%;height:auto;display:block}
figcaption{color:#5a6272;font-size:14px;margin:6px 4px 0}
.note{background:#fff8e1;border:1px solid #f0d58c;padding:10px 14px;border-radius:4px}
table{border-collapse:collapse;background:#fff;width:100%;font-size:14px;box-shadow:0 1px 3px #0002;font-variant-numeric:tabular-nums}
th,td{padding:5px 10px;text-align:right;border-bottom:1px solid #e3e6eb;white-space:nowrap}
th{background:#eef0f4;font-weight:600}
tr.knee td{background:#fdecea}
tr.plateau td:first-child{box-shadow:inset 4px 0 #ff7f0e}
.legend{color:#5a6272;font-size:13px;margin:6px 2px}
.knee-mark{background:#fdecea;padding:0 4px}
.plateau-mark{box-shadow:inset 4px 0 #ff7f0e;padding:0 4px 0 8px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 18px;background:#fff;padding:12px 16px;border-radius:4px;box-shadow:0 1px 3px #0002}
dt{color:#5a6272}
dd{margin:0}
.where{font-size:16px;background:#fff;padding:10px 16px;border-radius:4px;box-shadow:0 1px 3px #0002}
table.pools td,table.pools th{text-align:left;white-space:normal}
table.pools td:nth-child(2),table.pools th:nth-child(2){text-align:right}
tr.place td{background:#fdecea}
.flames svg{width:100%;height:auto;background:#fff}
.flames svg text{font-family:ui-monospace,monospace;font-size:12px}
.flames svg #title{text-anchor:middle;font-size:15px}
.flames svg .hide,.flames svg #search,.flames svg #matched{display:none}
.flames g.place rect{stroke:#1d2330;stroke-width:2}
";

/// The whole page: the verdict with its three figures and key evidence, the step table, the
/// charts, the context.
pub fn render(result: &SweepResult) -> String {
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>chokepoint report: {}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<main>\n",
        escape(&result.target)
    );
    header(&mut page, result);
    verdict(&mut page, result);
    page.push_str(&crate::pools::section(result));
    step_table(&mut page, result);
    chart_section(&mut page, result);
    page.push_str(&crate::observed::section(result));
    context(&mut page, result);
    page.push_str("</main>\n</body>\n</html>\n");
    page
}

fn header(page: &mut String, result: &SweepResult) {
    let steps = &result.steps;
    let mut facts = vec![match steps.len() {
        0 => "no steps measured".to_string(),
        1 => format!("1 step at {}", numbers::clients(steps[0].clients)),
        n => {
            let min = steps.iter().map(|s| s.clients).min().unwrap_or(0);
            let max = steps.iter().map(|s| s.clients).max().unwrap_or(0);
            format!("{n} steps from {min} to {max} clients")
        }
    }];
    if let Some(first) = steps.first() {
        facts.push(format!("{:.0} s measured per step", first.duration_s));
    }
    facts.push(numbers::downstream_context(&result.context));
    if result.interrupted {
        facts.push("interrupted".into());
    }
    let _ = write!(
        page,
        "<header>\n<h1>chokepoint sweep</h1>\n<p class=\"target\">{}</p>\n<p class=\"sweep\">{}</p>\n</header>\n",
        escape(&result.target),
        escape(&facts.join(" · "))
    );
}

/// The first screen: the kind, the summary, the limit, knee and plateau as large figures, the
/// key evidence, and every sentence folded away.
fn verdict(page: &mut String, result: &SweepResult) {
    let Some(diagnosis) = &result.diagnosis else {
        let why = if result.interrupted {
            "The sweep was interrupted before the diagnosis: the table and the charts show the steps it finished."
        } else {
            "This result has no diagnosis yet: the table and the charts show the steps measured so far."
        };
        let _ = write!(
            page,
            "<section class=\"verdict none\">\n<h2>No finding</h2>\n<p class=\"summary\">{why}</p>\n</section>\n"
        );
        return;
    };
    let _ = write!(
        page,
        "<section class=\"verdict kind-{kind}\">\n<p class=\"kind\">{kind}</p>\n<p class=\"summary\">{}</p>\n",
        escape(&diagnosis.summary),
        kind = diagnosis.kind().as_str(),
    );
    let plateau = diagnosis
        .plateau()
        .map(|p| p.throughput_rps)
        .or(diagnosis.pool().map(|p| p.plateau_rps));
    let figures = [
        (
            diagnosis.limit().map(numbers::concurrency),
            "limit: requests served at once",
        ),
        (
            diagnosis.knee_clients().map(|k| k.to_string()),
            "knee: clients where throughput stops following",
        ),
        (plateau.map(numbers::rate), "plateau: requests per second"),
    ];
    page.push_str("<div class=\"figures\">\n");
    for (value, label) in figures {
        let _ = writeln!(
            page,
            "<div><b>{}</b><span>{label}</span></div>",
            escape(value.as_deref().unwrap_or("none"))
        );
    }
    page.push_str("</div>\n");
    if let Some(what_if) = &diagnosis.what_if {
        let _ = writeln!(
            page,
            "<p class=\"what-if\"><b>What if:</b> {}</p>",
            escape(&what_if.summary)
        );
    }
    if !diagnosis.key_evidence.is_empty() {
        page.push_str("<ul class=\"key\">\n");
        for line in &diagnosis.key_evidence {
            let _ = writeln!(page, "<li>{}</li>", escape(line));
        }
        page.push_str("</ul>\n");
    }
    let mut more: Vec<String> = diagnosis.evidence.clone();
    if let Some(models) = sweep_text::models_line(diagnosis) {
        more.push(format!("Models: {models}"));
    }
    if let Some(fan_out) = sweep_text::fan_out_line(diagnosis) {
        more.push(format!("Fan-out: {fan_out}"));
    }
    if !more.is_empty() {
        let _ = writeln!(
            page,
            "<details>\n<summary>The whole finding, step by step ({} sentences) — {}</summary>\n<ul class=\"evidence\">",
            more.len(),
            escape(&sweep_text::headline(diagnosis))
        );
        for sentence in &more {
            let _ = writeln!(page, "<li>{}</li>", escape(sentence));
        }
        page.push_str("</ul>\n</details>\n");
    }
    page.push_str("</section>\n");
}

fn chart_section(page: &mut String, result: &SweepResult) {
    page.push_str("<h2>Charts</h2>\n");
    if result.steps.is_empty() {
        page.push_str(
            "<p class=\"note\">No steps were measured, so there is nothing to chart.</p>\n",
        );
        return;
    }
    let base = result
        .diagnosis
        .as_ref()
        .and_then(|d| d.base_latency_ms())
        .map(|ms| {
            format!(
                "The dashed grey line is what clients alone would give: clients / {} (the \
                 base latency the diagnosis read).",
                numbers::ms(ms)
            )
        })
        .unwrap_or_default();
    figure(
        page,
        "throughput",
        charts::throughput(result),
        &format!("Requests per second at each step, all responses and successful ones. {base}"),
    );
    figure(
        page,
        "latency",
        charts::latency(result),
        "Latency percentiles and mean of all requests at each step.",
    );
    match charts::in_flight(result) {
        Some(chart) => figure(
            page,
            "in-flight",
            chart,
            "Calls in flight at the mock during each step: the most at once and the \
             time-weighted mean. A limit shows as in-flight that stops following clients.",
        ),
        None => page.push_str(
            "<p class=\"note\">No downstream data: the sweep ran without <code>--mock</code>, \
             so the calls in flight at the downstream were not counted and the finding rests \
             on the client side alone.</p>\n",
        ),
    }
    let width = result
        .steps
        .iter()
        .map(|s| s.timeline_bucket_s)
        .find(|w| *w > 0.0)
        .map(|w| format!(" of {w} s"))
        .unwrap_or_default();
    let stalls: Vec<String> = charts::named_stalls(result)
        .iter()
        .map(|(clients, spans)| format!("{} at {}", spans.len(), numbers::clients(*clients)))
        .collect();
    let stalls = if stalls.is_empty() {
        "The diagnosis named no periodic stalls.".to_string()
    } else {
        format!(
            "Red bands mark the stalls the diagnosis named: {}.",
            stalls.join(", ")
        )
    };
    figure(
        page,
        "timeline",
        charts::timelines(result),
        &format!("Responses per second in each bucket{width} of each step. {stalls}"),
    );
}

pub(crate) fn figure(page: &mut String, id: &str, chart: Result<String, String>, caption: &str) {
    match chart {
        Ok(svg) => {
            let _ = write!(
                page,
                "<figure id=\"{id}\">\n{}\n<figcaption>{}</figcaption>\n</figure>\n",
                svg.trim(),
                escape(caption)
            );
        }
        Err(err) => {
            let _ = writeln!(
                page,
                "<p class=\"note\">The {id} chart could not be drawn: {}</p>",
                escape(&err)
            );
        }
    }
}

/// One row per step, by clients: throughput, its share of the ideal line (as the diagnosis read
/// it), latency, the mock's calls in flight and the CPUs. The knee's row and the plateau's are
/// marked.
fn step_table(page: &mut String, result: &SweepResult) {
    let mut steps: Vec<&Step> = result.steps.iter().collect();
    steps.sort_by_key(|s| s.clients);
    page.push_str("<h2>Steps</h2>\n");
    if steps.is_empty() {
        page.push_str("<p class=\"note\">No steps were measured.</p>\n");
        return;
    }
    let diagnosis = result.diagnosis.as_ref();
    let share_of_ideal = |clients: u32| {
        diagnosis?.facts().iter().find_map(|f| match f {
            Fact::Step {
                clients: c,
                efficiency,
                ..
            } if *c == clients => Some(*efficiency),
            _ => None,
        })
    };
    let knee = diagnosis.and_then(|d| d.knee_clients());
    let plateau: &[u32] = diagnosis
        .and_then(|d| d.plateau())
        .map_or(&[], |p| &p.clients);
    let with_errors = steps.iter().any(|s| numbers::error_count(s) > 0);
    page.push_str(
        "<table>\n<thead><tr><th>clients</th><th>req/s</th><th>of ideal</th>\
         <th>p50</th><th>p99</th>",
    );
    if with_errors {
        page.push_str("<th>errors (rate)</th>");
    }
    page.push_str(
        "<th>mock in flight mean/max</th><th>target CPU</th><th>generator CPU</th></tr></thead>\n<tbody>\n",
    );
    for step in steps.iter().copied() {
        let mut cells = vec![
            step.clients.to_string(),
            numbers::rate(step.throughput_rps),
            share_of_ideal(step.clients).map_or("-".into(), numbers::percent),
            numbers::ms(step.latency_ms.p50),
            numbers::ms(step.latency_ms.p99),
        ];
        if with_errors {
            cells.push(numbers::errors(numbers::error_count(step), step.error_rate));
        }
        cells.extend([
            numbers::in_flight(step.downstream_inflight.as_ref()),
            numbers::cpu(step.target_cpu_pct),
            numbers::cpu(Some(step.generator_cpu_pct)),
        ]);
        let class = if knee == Some(step.clients) {
            " class=\"knee\""
        } else if plateau.contains(&step.clients) {
            " class=\"plateau\""
        } else {
            ""
        };
        let _ = write!(page, "<tr{class}>");
        for cell in cells {
            let _ = write!(page, "<td>{}</td>", escape(&cell));
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</tbody>\n</table>\n");
    let mut legend = Vec::new();
    if knee.is_some() {
        legend.push("<span class=\"knee-mark\">red row</span>: the knee");
    }
    if !plateau.is_empty() {
        legend.push("<span class=\"plateau-mark\">orange edge</span>: the plateau's steps");
    }
    legend.push("of ideal: throughput over clients / base latency, as the diagnosis read it");
    let _ = writeln!(page, "<p class=\"legend\">{}</p>", legend.join(" · "));
    let with_errors: Vec<String> = steps
        .iter()
        .filter(|s| !s.errors.is_empty())
        .map(|s| {
            let kinds: Vec<String> = s.errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
            format!("at {} clients: {}", s.clients, kinds.join(", "))
        })
        .collect();
    if !with_errors.is_empty() {
        let _ = writeln!(
            page,
            "<p>Errors by kind {}.</p>",
            escape(&with_errors.join("; "))
        );
    }
}

fn context(page: &mut String, result: &SweepResult) {
    let c = &result.context;
    let rows = [
        ("target", result.target.clone()),
        (
            "mock",
            if c.mock_present { "given" } else { "not given" }.to_string(),
        ),
        (
            "mock delay",
            c.downstream_delay_ms
                .map(numbers::ms)
                .unwrap_or_else(|| "-".into()),
        ),
        (
            "mock connection cap",
            c.mock_max_connections
                .map(|n| n.to_string())
                .unwrap_or_else(|| "-".into()),
        ),
        (
            "mock keep-alive timeout",
            c.mock_keepalive_timeout_ms
                .map(|ms| numbers::ms(ms as f64))
                .unwrap_or_else(|| "-".into()),
        ),
        (
            "target CPU observed",
            match (&c.observer, c.target_observed) {
                (Some(observer), _) => format!("yes, through the observer at {observer}"),
                (None, true) => "yes".to_string(),
                (None, false) => "no".to_string(),
            },
        ),
        ("most clients allowed", c.max_clients.to_string()),
        (
            "interrupted",
            if result.interrupted { "yes" } else { "no" }.to_string(),
        ),
        ("chokepoint", result.chokepoint_version.clone()),
    ];
    page.push_str("<h2>Context</h2>\n<dl>\n");
    for (name, value) in rows {
        let _ = writeln!(page, "<dt>{name}</dt><dd>{}</dd>", escape(&value));
    }
    page.push_str("</dl>\n");
}

/// Escapes text for HTML element content and double-quoted attributes.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}
