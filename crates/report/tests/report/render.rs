//! The terminal and HTML renderings of fixed sweep results: the numbers are there, the page has
//! one closed `<svg>` per chart with labelled axes and the knee, and nothing points off the page.
use crate::fixtures;

use chokepoint_report::html;
use chokepoint_report::sweep_text::{self, Detail};
use chokepoint_result::{LatencyMs, Overload, Peak, SweepResult};

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

/// The `<svg>…</svg>` blocks of a page, in order; panics if one does not close.
fn svgs(page: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = page;
    while let Some(start) = rest.find("<svg") {
        let end = rest[start..]
            .find("</svg>")
            .unwrap_or_else(|| panic!("an <svg> does not close"));
        let block = &rest[start..start + end + "</svg>".len()];
        assert!(
            !block[4..].contains("<svg"),
            "an <svg> opens inside another one"
        );
        blocks.push(block);
        rest = &rest[start + end + "</svg>".len()..];
    }
    blocks
}

/// The trimmed text of every `<text>` element of an SVG.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|rest| {
            let start = rest.find('>')? + 1;
            let end = rest.find("</text>")?;
            Some(rest[start..end].trim().to_string())
        })
        .collect()
}

fn assert_self_contained(page: &str, target: &str) {
    let without_target = page.replace(target, "");
    assert!(
        !without_target.contains("http"),
        "the page refers to something besides the target URL: {}",
        &without_target[without_target.find("http").unwrap_or(0)..][..80]
    );
    for tag in [
        "<script", "<link", "<img", "src=", "href=", "@import", "url(",
    ] {
        assert!(!page.contains(tag), "the page contains {tag}");
    }
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.trim_end().ends_with("</html>"));
    assert_eq!(count(page, "<figure"), count(page, "</figure>"));
    assert_eq!(count(page, "<section"), count(page, "</section>"));
    assert!(
        !page.contains("NaN") && !page.contains("inf<"),
        "a number did not render"
    );
}

#[test]
fn terminal_table_of_seed_000_has_the_seeds_numbers_and_the_finding() {
    let text = sweep_text::render(&fixtures::seed000());
    println!("{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "chokepoint sweep of http://127.0.0.1:8080/actors");
    assert_eq!(lines[1], "downstream: mock with a 1.00 s delay");
    let header = sweep_text::step_header();
    let header_at = lines.iter().position(|l| *l == header).expect("header");
    let rows = &lines[header_at + 1..header_at + 6];
    for row in rows {
        assert_eq!(row.len(), header.len(), "row {row:?} is out of line");
    }
    let fields: Vec<Vec<&str>> = rows
        .iter()
        .map(|r| r.split_whitespace().collect())
        .collect();
    // clients, req/s, ok req/s, avg (value unit), p99 (value unit), errors, in flight, CPUs
    // (target, generator, machine)
    assert_eq!(fields[2][..3], ["20", "19.7", "19.7"]);
    assert_eq!(
        fields[3][..7],
        ["40", "19.8", "19.8", "2.01", "s", "2.06", "s"]
    );
    assert_eq!(
        fields[4][..7],
        ["100", "19.6", "19.6", "5.02", "s", "5.12", "s"]
    );
    assert_eq!(fields[4][7..], ["0", "20.0/20", "-", "3%", "-"]);
    assert_eq!(fields[0][..2], ["1", "0.99"]);

    assert!(text.contains("Finding: blocking-pool, limit 19.8, knee at 40 clients"));
    assert!(text.contains("  Throughput stops at 19.7 req/s from 20 clients on"));
    assert!(text.contains("  - The mock never saw more than 20 calls in flight."));
    assert!(text.contains(
        "Models: bounded pool (limit 19.8, plateau 19.7 req/s, R² 0.999) vs USL (σ 0.040, \
         κ 9.00e-4, λ 0.99 req/s, N_max 32.7, R² 0.912); the bounded-pool model fits better."
    ));
    assert!(!text.contains("interrupted"));
}

#[test]
fn the_tables_machine_cpu_is_the_share_the_diagnosis_reads_and_the_niced_rest_is_told() {
    let mut result = fixtures::seed000();
    let quiet = sweep_text::render(&result);
    assert!(!quiet.contains("niced"), "no step had niced work:\n{quiet}");
    // A niced build beside the last step: 90 % busy, 80 of it niced.
    let last = result.steps.last_mut().expect("steps");
    last.machine_cpu_pct = Some(90.0);
    last.machine_niced_cpu_pct = Some(80.0);
    let text = sweep_text::render(&result);
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("100 "))
        .expect("the row at 100 clients");
    assert_eq!(row.split_whitespace().last(), Some("10%"), "{row}");
    assert!(
        text.contains(
            "machine CPU leaves out niced work beside the target, which yields it the cores: up to 80% of the machine."
        ),
        "{text}"
    );
}

#[test]
fn terminal_says_when_the_downstream_was_not_watched_and_lists_errors_by_kind() {
    let text = sweep_text::render(&fixtures::seed000_without_mock());
    assert!(text.contains("no mock given: the downstream evidence is missing"));
    let row_100 = text
        .lines()
        .find(|l| l.trim_start().starts_with("100 "))
        .expect("row");
    assert!(row_100.split_whitespace().any(|f| f == "-"));

    let text = sweep_text::render(&fixtures::connection_limit());
    assert!(text.contains("at most 10 connections, idle connections kept 2.00 s"));
    assert!(text.contains("errors at 32 clients: connect_timeout 12"));
    let row_32 = text
        .lines()
        .find(|l| l.trim_start().starts_with("32 "))
        .expect("row");
    assert!(row_32.contains("12 (19.4%)"), "{row_32}");
    assert!(text.contains("Finding: connection-limit, limit 10, knee at 4 clients"));
    assert!(!text.contains("Models:"));
}

#[test]
fn html_of_seed_000_has_four_labelled_charts_and_the_knee() {
    let result = fixtures::seed000();
    let page = html::render(&result);
    assert_self_contained(&page, &result.target);
    let charts = svgs(&page);
    assert_eq!(charts.len(), 4);
    let [throughput, latency, in_flight, timeline] = [charts[0], charts[1], charts[2], charts[3]];

    assert!(throughput.contains("Throughput vs clients"));
    assert!(throughput.contains("clients (log₂ scale)"));
    assert!(throughput.contains("throughput (requests/s)"));
    assert!(throughput.contains("knee: 40 clients"));
    assert!(throughput.contains("plateau 19.7 req/s"));
    assert!(throughput.contains("ideal: clients / 1.00 s"));
    assert!(throughput.contains("successful (2xx)"));
    // Tick labels fall on powers of two, from 1 to 128 around 1..100 clients; values read whole.
    let labels = texts(throughput);
    let ticks: Vec<&str> = ["1", "2", "4", "8", "16", "32", "64", "128"].to_vec();
    let x_ticks: Vec<&str> = labels
        .iter()
        .map(String::as_str)
        .filter(|t| ticks.contains(t))
        .collect();
    assert_eq!(x_ticks, ticks, "{labels:?}");
    for y_tick in ["0", "5", "10", "15", "20"] {
        assert!(
            labels.iter().any(|t| t == y_tick),
            "no y tick {y_tick}: {labels:?}"
        );
    }

    assert!(latency.contains("Latency vs clients"));
    assert!(latency.contains("latency (ms)"));
    let labels = texts(latency);
    for name in ["p50", "p90", "p99", "mean", "knee: 40 clients", "5000"] {
        assert!(
            labels.iter().any(|t| t == name),
            "latency chart lacks {name}: {labels:?}"
        );
    }

    assert!(in_flight.contains("calls in flight at the mock"));
    assert!(in_flight.contains("limit 19.8"));
    assert!(in_flight.contains("knee: 40 clients"));

    assert!(timeline.contains("Throughput over time within each step"));
    let labels = texts(timeline);
    for title in [
        "1 client",
        "5 clients",
        "20 clients",
        "40 clients",
        "100 clients",
    ] {
        let title = title.to_string();
        assert!(labels.contains(&title), "no panel {title}: {labels:?}");
    }
    assert!(timeline.contains("time in step (s)"));
    assert!(
        page.contains("The diagnosis named no periodic stalls."),
        "steady steps have no stalls"
    );
    assert!(!timeline.contains("#F6BEBE"));

    // The finding and the table carry the same numbers as the terminal.
    assert!(page.contains("blocking-pool, limit 19.8, knee at 40 clients"));
    assert!(page.contains("<li>The mock never saw more than 20 calls in flight.</li>"));
    // One row per step: clients, req/s, share of ideal (the diagnosis's), p50, p99, in flight,
    // CPUs; the knee's row marked.
    assert!(page.contains(
        "<tr class=\"plateau\"><td>100</td><td>19.6</td><td>20%</td><td>5.01 s</td>\
         <td>5.12 s</td><td>20.0/20</td><td>-</td><td>3%</td></tr>"
    ));
    assert!(page.contains("<tr class=\"knee\"><td>40</td>"));
    assert!(page.contains("<dt>mock delay</dt><dd>1.00 s</dd>"));
    assert!(page.contains("Little&#39;s law"), "text is escaped");
}

#[test]
fn html_marks_the_stalls_of_a_connection_limit() {
    let result = fixtures::connection_limit();
    let page = html::render(&result);
    assert_self_contained(&page, &result.target);
    let charts = svgs(&page);
    assert_eq!(charts.len(), 4);
    // The stalls the diagnosis named, and only those, are red bands in their step's panel.
    assert!(page.contains("Red bands mark the stalls the diagnosis named: 5 at 8 clients."));
    assert_eq!(count(charts[3], "fill=\"#F6BEBE\""), 5);
    assert!(charts[0].contains("knee: 4 clients"));
    assert!(page.contains("Errors by kind at 32 clients: connect_timeout 12."));
    assert!(page.contains("<dt>mock connection cap</dt><dd>10</dd>"));
}

#[test]
fn html_without_downstream_data_says_so_instead_of_a_chart() {
    let result = fixtures::seed000_without_mock();
    let page = html::render(&result);
    assert_self_contained(&page, &result.target);
    assert_eq!(svgs(&page).len(), 3);
    assert!(page.contains("No downstream data"));
    assert!(!page.contains("calls in flight at the mock"));
}

#[test]
fn empty_single_and_interrupted_results_still_render() {
    let mut empty = fixtures::seed000();
    empty.steps.clear();
    empty.diagnosis = None;
    empty.interrupted = true;
    let page = html::render(&empty);
    assert_self_contained(&page, &empty.target);
    assert_eq!(svgs(&page).len(), 0);
    assert!(page.contains("No steps were measured"));
    assert!(page.contains("<h2>No finding</h2>"));
    let text = sweep_text::render(&empty);
    assert!(text.contains("No steps were measured."));
    assert!(text.contains("The sweep was interrupted after 0 steps."));
    assert!(text.contains("No finding: the sweep stopped before the diagnosis."));

    let mut single = fixtures::seed000();
    single.steps.truncate(1);
    single.diagnosis = None;
    let page = html::render(&single);
    assert_self_contained(&page, &single.target);
    assert_eq!(svgs(&page).len(), 4);
    assert!(!page.contains("knee:"));
    assert!(page.contains("1 step at 1 client "));
    assert!(sweep_text::render(&single).contains("No finding yet"));
}

/// The throughput chart carries the three figures of what happens past the knee (issue 13):
/// the knee, the peak and the overload behaviour, each a mark with its words, read from the
/// diagnosis and drawn for each behaviour.
#[test]
fn the_throughput_chart_marks_the_knee_the_peak_and_the_overload() {
    let overloads = [
        (
            Overload::Queues {
                from_clients: 40,
                to_clients: 100,
                throughput_rps: 19.7,
                from_latency_ms: 2030.0,
                to_latency_ms: 5070.0,
            },
            "past the knee: it queues",
        ),
        (
            Overload::Sheds {
                from_clients: 40,
                at_clients: 100,
                error_rate: 0.93,
                error_latency_ms: 1.2,
                error_kind: "http_503".into(),
            },
            "past the knee: it sheds (errors in 1.2 ms)",
        ),
        (
            Overload::TimesOut {
                from_clients: 40,
                at_clients: 100,
                error_rate: 0.4,
                wait_ms: 250.0,
                error_kind: "http_503".into(),
            },
            "past the knee: it times out after 250 ms",
        ),
        (
            Overload::Collapses {
                peak: Peak {
                    clients: 40,
                    throughput_rps: 19.9,
                },
                at_clients: 100,
                throughput_rps: 9.95,
                fall: 0.5,
            },
            "past the knee: it collapses (−50%)",
        ),
    ];
    for (overload, words) in overloads {
        let mut result = fixtures::seed000();
        let diagnosis = result.diagnosis.as_mut().expect("a diagnosis");
        diagnosis.finding.peak = Some(Peak {
            clients: 40,
            throughput_rps: 19.9,
        });
        diagnosis.finding.overload = Some(overload);
        let page = html::render(&result);
        assert_self_contained(&page, &result.target);
        let throughput = svgs(&page)[0];
        let labels = texts(throughput);
        for mark in ["knee: 40 clients", "peak: 19.9 req/s at 40 clients", words] {
            // On the chart and in its legend.
            assert_eq!(
                labels.iter().filter(|t| *t == mark).count(),
                2,
                "{mark}: {labels:?}"
            );
        }
    }
    // An older result without the figures: no marks, and nothing else missing.
    let page = html::render(&fixtures::seed000());
    let labels = texts(svgs(&page)[0]);
    assert!(labels.iter().any(|t| t == "knee: 40 clients"));
    assert!(!labels
        .iter()
        .any(|t| t.starts_with("peak:") || t.starts_with("past the knee")));
}

#[test]
fn huge_and_zero_figures_render_without_breaking_the_charts() {
    let mut result: SweepResult = fixtures::seed000();
    let huge = LatencyMs {
        min: 1.0,
        mean: 4.0e8,
        p50: 3.0e8,
        p90: 9.0e8,
        p95: 1.0e9,
        p98: 1.0e9,
        p99: 1.2e9,
        p999: 1.3e9,
        max: 1.5e9,
        ..LatencyMs::default()
    };
    result.steps[4].latency_ms = huge;
    result.steps[0].throughput_rps = 0.0;
    result.steps[0].ok_throughput_rps = 0.0;
    result.steps[0].ok_latency_ms = None;
    result.steps[1].timeline.clear();
    result.steps[2].timeline_bucket_s = 0.0;
    let page = html::render(&result);
    assert_self_contained(&page, &result.target);
    let charts = svgs(&page);
    assert_eq!(charts.len(), 4);
    assert!(
        charts[1].contains("latency (s)"),
        "huge latencies switch to seconds"
    );
    assert!(charts[3].contains("no timeline recorded"));
    let text = sweep_text::render(&result);
    assert!(text.contains("1200000 s"), "{text}");
}

#[test]
fn the_same_result_renders_the_same_page() {
    let result = fixtures::connection_limit();
    assert_eq!(html::render(&result), html::render(&result));
}

#[test]
fn a_live_sweep_can_end_its_table_with_the_finding_alone() {
    let result = fixtures::connection_limit();
    let tail = sweep_text::after_table(&result, Detail::Full);
    assert!(!tail.contains(&sweep_text::step_header()));
    assert!(tail.starts_with("errors at 32 clients: connect_timeout 12\n"));
    assert!(tail.contains("Finding: connection-limit"));
    assert!(sweep_text::render(&result).ends_with(&tail));
}

#[test]
fn the_terminal_finding_is_one_screen_with_the_key_evidence_and_the_rest_behind_verbose() {
    // The fixture with a finding as long as a live one: eight sentences, four key lines.
    let mut result = fixtures::seed000();
    let d = result.diagnosis.as_mut().unwrap();
    for n in d.evidence.len()..8 {
        d.evidence
            .push(format!("Evidence sentence {n} with its numbers."));
    }
    d.key_evidence
        .extend(["A third key line.".into(), "A fourth key line.".into()]);
    let diagnosis = result.diagnosis.as_ref().unwrap();
    assert!(diagnosis.evidence.len() > sweep_text::SCREEN_KEY_LINES);
    let screen = sweep_text::after_table(&result, Detail::Screen);
    let full = sweep_text::after_table(&result, Detail::Full);
    assert!(screen.contains(&diagnosis.summary));
    for line in diagnosis
        .key_evidence
        .iter()
        .take(sweep_text::SCREEN_KEY_LINES)
    {
        assert!(screen.contains(&format!("  - {line}\n")), "{line}");
    }
    for sentence in &diagnosis.evidence {
        assert!(full.contains(sentence), "{sentence}");
        assert!(!screen.contains(&format!("  - {sentence}\n")), "{sentence}");
    }
    assert!(screen.contains("--verbose"));
    assert!(screen.lines().count() <= 12, "{screen}");
}

#[test]
fn the_first_screen_is_the_verdict_its_three_figures_and_the_key_evidence() {
    let result = fixtures::seed000();
    let page = html::render(&result);
    let verdict = page
        .find("<section class=\"verdict kind-blocking-pool\">")
        .unwrap();
    let figures = page.find("<div class=\"figures\">").unwrap();
    let key = page.find("<ul class=\"key\">").unwrap();
    let folded = page.find("<details>").unwrap();
    let table = page.find("<table>").unwrap();
    let first_chart = page.find("<svg").unwrap();
    assert!(verdict < figures && figures < key && key < folded);
    assert!(folded < table && table < first_chart);
    // The limit, knee and plateau as large figures.
    for figure in ["<b>19.8</b>", "<b>40</b>", "<b>19.7</b>"] {
        assert!(page[figures..key].contains(figure), "no {figure}");
    }
    // The key evidence is the diagnosis's own short lines, at most four.
    let key_block = &page[key..folded];
    let diagnosis = result.diagnosis.as_ref().unwrap();
    assert_eq!(count(key_block, "<li>"), diagnosis.key_evidence.len());
    assert!(diagnosis.key_evidence.len() <= 4);
    assert!(key_block.contains("The mock saw at most 20 calls in flight at the plateau."));
    // Every sentence of evidence is still there, folded.
    let folded_block = &page[folded..table];
    for sentence in &diagnosis.evidence {
        assert!(folded_block.contains(&format!("<li>{}</li>", sentence.replace('\'', "&#39;"))));
    }
}
