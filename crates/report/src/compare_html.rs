//! `compare --out DIR`'s `compare.html`: one self-contained page (the report's style, inline
//! SVG, no script, no network) for two runs compared. First the count of verdicts and the
//! plateau before → after, then the findings side by side, both sweeps' curves on one chart
//! each (successful throughput, p50/p99 latency), the verdict table, and how the verdicts were
//! reached. It renders a finished [`Comparison`] and the two runs' steps; every verdict, change
//! and interval is the comparison's, and the words are `chokepoint_compare::text`'s, so the
//! page says what the terminal says.
use crate::html::{escape, figure, STYLE};
use crate::{charts, numbers};
use chokepoint_compare::{text, Comparison, Figure, Run, RunKind, Verdict};
use std::fmt::Write;

const COMPARE_STYLE: &str = "\
.tally{display:flex;gap:14px;margin:0 0 14px;flex-wrap:wrap}
.tally div{flex:1;min-width:150px;background:#fff;border-radius:6px;padding:10px 16px;box-shadow:0 1px 3px #0002}
.tally b{display:block;font-size:40px;line-height:1.1;font-weight:700;font-variant-numeric:tabular-nums}
.tally span{color:#5a6272;font-size:14px}
.tally .better b{color:#2ca02c}
.tally .worse b{color:#d62728}
.sides{display:flex;gap:14px;flex-wrap:wrap}
.sides section{flex:1;min-width:320px;background:#fff;border-radius:6px;padding:12px 18px;box-shadow:0 1px 3px #0002}
.sides h3{margin:0 0 6px;font-size:14px;text-transform:uppercase;letter-spacing:.06em;color:#5a6272}
.sides .found{font-size:17px;font-weight:600;margin:0 0 6px}
.sides p{margin:4px 0;line-height:1.4}
td.words{text-align:left}
tr.better td.words{color:#1e7b1e;font-weight:600}
tr.worse td{background:#fdecea}
tr.worse td.words{color:#b01c1c;font-weight:700}
tr.first td{border-top:2px solid #c9ced8}
.pair{display:flex;gap:14px}
.pair figure{flex:1;min-width:0;margin:8px 0}
";

/// The whole page.
pub fn render(c: &Comparison, before: &Run, after: &Run) -> String {
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>chokepoint compare: {}</title>\n<style>\n{STYLE}{COMPARE_STYLE}</style>\n</head>\n<body>\n<main>\n",
        escape(&c.target_before)
    );
    header(&mut page, c);
    tally(&mut page, c);
    findings(&mut page, c, before, after);
    if let (Run::Sweep(b), Run::Sweep(a)) = (before, after) {
        page.push_str("<h2>Before and after</h2>\n<div class=\"pair\">\n");
        figure(
            &mut page,
            "throughput",
            charts::compare::throughput(b, a),
            "Successful requests per second at each step: before dashed grey, after blue; the \
             thin dashes are each side's plateau as its diagnosis read it.",
        );
        figure(
            &mut page,
            "latency",
            charts::compare::latency(b, a),
            "Latency of every request at each step: after solid (p99 red, p50 blue), before \
             dashed grey.",
        );
        page.push_str("</div>\n");
    }
    table(&mut page, c);
    method(&mut page, c);
    page.push_str("</main>\n</body>\n</html>\n");
    page
}

fn header(page: &mut String, c: &Comparison) {
    let mut facts = vec![format!("two {}s", c.kind.as_str())];
    if c.target_after != c.target_before {
        facts.push(format!("after ran against {}", c.target_after));
    }
    if !c.only_before.is_empty() || !c.only_after.is_empty() {
        facts.push(format!(
            "not compared: clients only before {}, only after {}",
            text::list(&c.only_before),
            text::list(&c.only_after)
        ));
    }
    let _ = write!(
        page,
        "<header>\n<h1>chokepoint compare</h1>\n<p class=\"target\">{}</p>\n<p class=\"sweep\">{}</p>\n</header>\n",
        escape(&c.target_before),
        escape(&facts.join(" · "))
    );
}

/// The count of verdicts, and the plateau before → after as the large figure.
fn tally(page: &mut String, c: &Comparison) {
    let count = |v: Verdict| c.figures().filter(|f| f.verdict == v).count();
    page.push_str("<div class=\"tally\">\n");
    if let Some(p) = &c.plateau {
        let _ = writeln!(
            page,
            "<div class=\"{}\"><b>{} → {}</b><span>plateau, ok req/s: {}</span></div>",
            class(p),
            escape(&text::value(p, p.before)),
            escape(&text::value(p, p.after)),
            escape(&text::verdict(p, c.min_change))
        );
    }
    for (verdict, name, class) in [
        (Verdict::Better, "better", "better"),
        (Verdict::Worse, "worse", "worse"),
        (Verdict::NoDifference, "no difference", ""),
    ] {
        let _ = writeln!(
            page,
            "<div class=\"{class}\"><b>{}</b><span>figures {name}</span></div>",
            count(verdict)
        );
    }
    page.push_str("</div>\n");
}

/// What each sweep's diagnosis found, side by side.
fn findings(page: &mut String, c: &Comparison, before: &Run, after: &Run) {
    let Some(change) = &c.finding else {
        return;
    };
    page.push_str("<h2>The finding</h2>\n<div class=\"sides\">\n");
    for (side, read, run) in [
        ("before", &change.before, before),
        ("after", &change.after, after),
    ] {
        let summary = match run {
            Run::Sweep(s) => s.diagnosis.as_ref().map(|d| d.summary.clone()),
            Run::Load(_) => None,
        };
        let _ = write!(
            page,
            "<section>\n<h3>{side}</h3>\n<p class=\"found\">{}</p>\n",
            escape(&text::finding(read.as_ref()))
        );
        if let Some(plateau) = read.as_ref().and_then(|f| f.plateau_rps) {
            let _ = writeln!(
                page,
                "<p>plateau {} ok req/s</p>",
                escape(&numbers::rate(plateau))
            );
        }
        if let Some(summary) = summary.filter(|s| !s.is_empty()) {
            let _ = writeln!(page, "<p>{}</p>", escape(&summary));
        }
        page.push_str("</section>\n");
    }
    page.push_str("</div>\n");
}

/// One block of rows per client count: throughput, p50, p99.
fn table(page: &mut String, c: &Comparison) {
    page.push_str(
        "<h2>Figure by figure</h2>\n<table>\n<tr><th>clients</th><th>figure</th><th>before</th>\
         <th>after</th><th>change [95% interval]</th><th style=\"text-align:left\">verdict</th></tr>\n",
    );
    let mut row = |clients: &str, f: &Figure, first: bool| {
        let _ = writeln!(
            page,
            "<tr class=\"{}{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"words\">{}</td></tr>",
            class(f),
            if first { " first" } else { "" },
            escape(clients),
            escape(text::label(f.name)),
            escape(&text::value(f, f.before)),
            escape(&text::value(f, f.after)),
            escape(&text::change(f)),
            escape(&text::verdict(f, c.min_change)),
        );
    };
    if let Some(p) = &c.plateau {
        row("plateau", p, true);
    }
    for s in &c.steps {
        let clients = if s.clients == s.clients_after {
            s.clients.to_string()
        } else {
            format!("{}→{}", s.clients, s.clients_after)
        };
        row(&clients, &s.throughput, true);
        row("", &s.p50, false);
        row("", &s.p99, false);
    }
    page.push_str("</table>\n");
}

fn method(page: &mut String, c: &Comparison) {
    let _ = writeln!(
        page,
        "<p class=\"legend\">Throughput{}: Mann-Whitney U on the successful rate of each 100 ms \
         bucket, the change the Hodges-Lehmann shift with its 95% interval. p50 and p99: a \
         bootstrap of the exact histograms of successful requests. A figure is better or worse \
         only when the test shows it at the 5% level and it moved by at least {} of its value \
         before; else no difference.</p>",
        if c.kind == RunKind::Sweep {
            " and the plateau"
        } else {
            ""
        },
        text::percent(c.min_change)
    );
}

fn class(f: &Figure) -> &'static str {
    match f.verdict {
        Verdict::Better => "better",
        Verdict::Worse => "worse",
        Verdict::NoDifference => "same",
    }
}
