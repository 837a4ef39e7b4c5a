//! The comparison on the terminal, one screen: the finding before → after, the plateau, then a
//! table with a block of rows per client count both runs measured (throughput, p50, p99: before,
//! after, change with its 95 % interval, verdict), and a line saying how the verdicts were
//! reached. Reads a finished [`Comparison`]; works nothing out.
use crate::{Comparison, Figure, FigureName, FindingRead, NoCall, RunKind, Verdict};
use chokepoint_result::format;
use std::fmt::Write as _;

/// The comparison as text, ending in a newline.
pub fn render(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "compare {}s of {}", c.kind.as_str(), c.target_before);
    if c.target_after != c.target_before {
        let _ = writeln!(out, "  after ran against {}", c.target_after);
    }
    if let Some(f) = &c.finding {
        let _ = writeln!(
            out,
            "finding: {} → {}",
            finding(f.before.as_ref()),
            finding(f.after.as_ref())
        );
    }
    if let Some(p) = &c.plateau {
        let _ = writeln!(
            out,
            "plateau: {} → {} ok req/s, change {} ({}; the buckets of {} clients → {})",
            value(p, p.before),
            value(p, p.after),
            change(p),
            verdict(p, c.min_change),
            list(&c.plateau_steps_before),
            list(&c.plateau_steps_after),
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:>9}  {:<8} {:>9} {:>9}  {:<31} verdict",
        "clients", "figure", "before", "after", "change [95% interval]"
    );
    for s in &c.steps {
        let clients = if s.clients == s.clients_after {
            s.clients.to_string()
        } else {
            format!("{}→{}", s.clients, s.clients_after)
        };
        for (i, f) in [&s.throughput, &s.p50, &s.p99].into_iter().enumerate() {
            let _ = writeln!(
                out,
                "{:>9}  {:<8} {:>9} {:>9}  {:<31} {}",
                if i == 0 { clients.as_str() } else { "" },
                label(f.name),
                value(f, f.before),
                value(f, f.after),
                change(f),
                verdict(f, c.min_change)
            );
        }
    }
    if c.steps.is_empty() {
        let _ = writeln!(out, "{:>9}  no client count measured by both", "-");
    }
    if !c.only_before.is_empty() || !c.only_after.is_empty() {
        let _ = writeln!(
            out,
            "not compared: clients only before {}, only after {}",
            list(&c.only_before),
            list(&c.only_after)
        );
    }
    let _ = writeln!(
        out,
        "\nthroughput{}: Mann-Whitney U on the ok rate of each 100 ms bucket, change the \
         Hodges-Lehmann shift;\np50/p99: bootstrap of the exact histograms of ok requests. A \
         verdict needs the 5% level and a change of at least {}.",
        if c.kind == RunKind::Sweep {
            " and plateau"
        } else {
            ""
        },
        percent(c.min_change),
    );
    let worse = c.figures().filter(|f| f.verdict == Verdict::Worse).count();
    let better = c.figures().filter(|f| f.verdict == Verdict::Better).count();
    let _ = writeln!(
        out,
        "{better} better, {worse} worse, {} no difference",
        c.figures().count() - better - worse
    );
    out
}

/// A finding in words: `blocking-pool, limit 20, pool actor-pool (--actors)`.
pub fn finding(f: Option<&FindingRead>) -> String {
    let Some(f) = f else {
        return "no diagnosis".into();
    };
    let mut words = f.kind.clone();
    if let Some(limit) = f.limit {
        let _ = write!(words, ", limit {}", format::concurrency(limit));
    }
    if let Some(pool) = &f.pool {
        let _ = write!(words, ", pool {pool}");
    }
    if let Some(setting) = &f.setting {
        let _ = write!(words, " ({setting})");
    }
    words
}

/// The figure's name in a table row or a gate: `ok req/s`, `p50`, `p99`.
pub fn label(name: FigureName) -> &'static str {
    match name {
        FigureName::Throughput | FigureName::Plateau => "ok req/s",
        FigureName::P50 => "p50",
        FigureName::P99 => "p99",
    }
}

/// A figure's value in its unit: `392` (req/s), `102 ms`; `-` when the run has none.
pub fn value(f: &Figure, v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if f.name.higher_is_better() => format::rate(v),
        Some(v) => format::ms(v),
    }
}

/// A signed change in the figure's unit: `+198`, `-0.4 ms`.
fn signed(f: &Figure, v: f64) -> String {
    let sign = if v < 0.0 { "-" } else { "+" };
    let magnitude = if f.name.higher_is_better() {
        format::rate(v.abs())
    } else {
        format::ms(v.abs())
    };
    format!("{sign}{magnitude}")
}

/// The change with its 95 % interval: `+198 [+190, +205]`; `-` when it could not be tested.
pub fn change(f: &Figure) -> String {
    match &f.change {
        Some(c) => format!(
            "{} [{}, {}]",
            signed(f, c.estimate),
            signed(f, c.low),
            signed(f, c.high)
        ),
        None => "-".into(),
    }
}

/// The verdict in words: `better`, `WORSE`, `no difference (under 5%)`.
pub fn verdict(f: &Figure, min_change: f64) -> String {
    match (f.verdict, f.no_call) {
        (Verdict::Better, _) => "better".into(),
        (Verdict::Worse, _) => "WORSE".into(),
        (Verdict::NoDifference, Some(NoCall::TooFewSamples)) => format!(
            "no difference (too few samples: {} vs {})",
            f.samples_before, f.samples_after
        ),
        (Verdict::NoDifference, Some(NoCall::Small)) => {
            format!("no difference (under {})", percent(min_change))
        }
        (Verdict::NoDifference, Some(NoCall::NoHistograms)) => {
            "no difference (no histograms)".into()
        }
        (Verdict::NoDifference, _) => "no difference".into(),
    }
}

/// One figure in words: `105 ms → 210 ms, change +105 ms [+98 ms, +112 ms]: WORSE`,
/// `196 → 392 ok req/s, change +200 [+200, +200]: better`.
pub fn figure_words(f: &Figure, min_change: f64) -> String {
    let tested = match f.change {
        Some(_) => format!(", change {}", change(f)),
        None => String::new(),
    };
    format!(
        "{} → {}{}{tested}: {}",
        value(f, f.before),
        value(f, f.after),
        if f.name.higher_is_better() {
            " ok req/s"
        } else {
            ""
        },
        verdict(f, min_change)
    )
}

/// A share as a percentage: `5%`, `2.5%`.
pub fn percent(share: f64) -> String {
    let text = format!("{:.2}", share * 100.0);
    format!("{}%", text.trim_end_matches('0').trim_end_matches('.'))
}

/// Client counts as `10,20,40`, or `none`.
pub fn list(clients: &[u32]) -> String {
    if clients.is_empty() {
        "none".into()
    } else {
        clients
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",")
    }
}
