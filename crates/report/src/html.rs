//! `report.html`: one self-contained page (inline CSS and SVG, no script, no network) with the
//! finding, four charts, the step table and the sweep's context. The page carries no date, so
//! the same result always renders the same bytes.
use crate::{charts, numbers, sweep_text};
use chokepoint_result::{Step, SweepResult};
use std::fmt::Write;

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
main{max-width:1000px;margin:0 auto;padding:24px}
h1{font-size:26px;margin:0 0 4px}
h2{font-size:20px;margin:28px 0 10px}
.target{font-family:ui-monospace,monospace;font-size:16px;margin:0 0 6px;word-break:break-all}
.facts{color:#5a6272;margin:0}
.finding{background:#fff;border-left:6px solid #d62728;padding:14px 18px;border-radius:4px;box-shadow:0 1px 3px #0002}
.finding.kind-no-limit-found{border-left-color:#2ca02c}
.finding.none{border-left-color:#999}
.finding h2{margin:0 0 8px}
.summary{font-size:17px;margin:0 0 8px}
.finding ul{margin:6px 0 8px;padding-left:22px}
.finding li{margin:3px 0}
.models,.fan-out,.where{color:#3c4454;margin:4px 0}
figure{background:#fff;margin:18px 0;padding:10px;border-radius:4px;box-shadow:0 1px 3px #0002}
figure svg{width:100%;height:auto;display:block}
figcaption{color:#5a6272;font-size:14px;margin:6px 4px 0}
.note{background:#fff8e1;border:1px solid #f0d58c;padding:10px 14px;border-radius:4px}
table{border-collapse:collapse;background:#fff;width:100%;font-size:14px;box-shadow:0 1px 3px #0002}
th,td{padding:6px 10px;text-align:right;border-bottom:1px solid #e3e6eb;white-space:nowrap}
th{background:#eef0f4}
dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 18px;background:#fff;padding:12px 16px;border-radius:4px;box-shadow:0 1px 3px #0002}
dt{color:#5a6272}
dd{margin:0}
";

/// The whole page.
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
    finding(&mut page, result);
    chart_section(&mut page, result);
    step_table(&mut page, &result.steps);
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
        "<header>\n<h1>chokepoint sweep</h1>\n<p class=\"target\">{}</p>\n<p class=\"facts\">{}</p>\n</header>\n",
        escape(&result.target),
        escape(&facts.join(" · "))
    );
}

fn finding(page: &mut String, result: &SweepResult) {
    let Some(diagnosis) = &result.diagnosis else {
        let why = if result.interrupted {
            "The sweep was interrupted before the diagnosis: the charts and the table show the steps it finished."
        } else {
            "This result has no diagnosis yet: the charts and the table show the steps measured so far."
        };
        let _ = write!(
            page,
            "<section class=\"finding none\">\n<h2>No finding</h2>\n<p class=\"summary\">{why}</p>\n</section>\n"
        );
        return;
    };
    let _ = write!(
        page,
        "<section class=\"finding kind-{}\">\n<h2>Finding: {}</h2>\n<p class=\"summary\">{}</p>\n",
        diagnosis.kind.as_str(),
        escape(&sweep_text::headline(diagnosis)),
        escape(&diagnosis.summary)
    );
    if !diagnosis.evidence.is_empty() {
        page.push_str("<ul class=\"evidence\">\n");
        for sentence in &diagnosis.evidence {
            let _ = writeln!(page, "<li>{}</li>", escape(sentence));
        }
        page.push_str("</ul>\n");
    }
    if let Some(models) = sweep_text::models_line(diagnosis) {
        let _ = writeln!(page, "<p class=\"models\">Models: {}</p>", escape(&models));
    }
    if let Some(fan_out) = sweep_text::fan_out_line(diagnosis) {
        let _ = writeln!(
            page,
            "<p class=\"fan-out\">Fan-out: {}</p>",
            escape(&fan_out)
        );
    }
    if let Some(place) = &diagnosis.attribution {
        let _ = writeln!(page, "<p class=\"where\">Where: {}</p>", escape(place));
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
    let base = numbers::base_latency_ms(result)
        .map(|ms| {
            format!(
                "The dashed grey line is what clients alone would give: clients / {} (the mean \
                 successful latency of the smallest step).",
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
    let stalls: usize = result.steps.iter().map(charts::stall_count).sum();
    let width = result
        .steps
        .iter()
        .map(|s| s.timeline_bucket_s)
        .find(|w| *w > 0.0)
        .map(|w| format!(" of {w} s"))
        .unwrap_or_default();
    figure(
        page,
        "timeline",
        charts::timelines(result),
        &format!(
            "Responses per second in each bucket{width} of each step. Red dots mark stalls: \
             buckets under {:.0}% of the step's mean throughput ({stalls} in this sweep).",
            charts::STALL_SHARE * 100.0
        ),
    );
}

fn figure(page: &mut String, id: &str, chart: Result<String, String>, caption: &str) {
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

fn step_table(page: &mut String, steps: &[Step]) {
    page.push_str("<h2>Steps</h2>\n");
    if steps.is_empty() {
        page.push_str("<p class=\"note\">No steps were measured.</p>\n");
        return;
    }
    page.push_str(
        "<table>\n<thead><tr><th>clients</th><th>req/s</th><th>ok req/s</th><th>avg</th>\
         <th>p50</th><th>p90</th><th>p99</th><th>errors (rate)</th><th>in flight mean/max</th>\
         <th>target CPU</th><th>gen CPU</th></tr></thead>\n<tbody>\n",
    );
    for step in steps {
        let cells = [
            step.clients.to_string(),
            numbers::rate(step.throughput_rps),
            numbers::rate(step.ok_throughput_rps),
            numbers::ms(step.latency_ms.mean),
            numbers::ms(step.latency_ms.p50),
            numbers::ms(step.latency_ms.p90),
            numbers::ms(step.latency_ms.p99),
            numbers::errors(numbers::error_count(step), step.error_rate),
            numbers::in_flight(step.downstream_inflight.as_ref()),
            numbers::cpu(step.target_cpu_pct),
            numbers::cpu(Some(step.generator_cpu_pct)),
        ];
        page.push_str("<tr>");
        for cell in cells {
            let _ = write!(page, "<td>{}</td>", escape(&cell));
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</tbody>\n</table>\n");
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
            if c.target_observed { "yes" } else { "no" }.to_string(),
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
fn escape(text: &str) -> String {
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
