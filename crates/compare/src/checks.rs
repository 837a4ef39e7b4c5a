//! The comparison as CI gates: one [`Check`] per figure, named as a person would ("p99 at 40
//! clients"), failed when it got worse and `--fail-on worse` was given, with the figure's words
//! (before → after, the change, the verdict) as what a CI system shows. The JUnit writer turns
//! these into test cases; deciding what failed stays here.
use crate::{text, Comparison, Figure, FigureName, Verdict};

/// One figure as a gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// What was compared, e.g. `p99 at 40 clients`, `throughput at 40 clients`, `plateau`.
    pub name: String,
    /// Whether the gate failed: the figure got worse and the run fails on worse.
    pub failed: bool,
    /// The figure in words: `p99 at 40 clients: 105 ms → 210 ms, change +105 ms [+98 ms,
    /// +112 ms]: WORSE`.
    pub words: String,
}

/// Every figure of `c` as a gate, the plateau first; a worse figure fails when `fail_on_worse`.
pub fn figure_checks(c: &Comparison, fail_on_worse: bool) -> Vec<Check> {
    let check = |name: String, f: &Figure| Check {
        failed: fail_on_worse && f.verdict == Verdict::Worse,
        words: format!("{name}: {}", text::figure_words(f, c.min_change)),
        name,
    };
    let mut checks: Vec<Check> = c
        .plateau
        .iter()
        .map(|p| check("plateau".to_string(), p))
        .collect();
    for s in &c.steps {
        let clients = if s.clients == s.clients_after {
            format!("{} {}", s.clients, clients_word(s.clients))
        } else {
            format!("{}→{} clients", s.clients, s.clients_after)
        };
        for f in [&s.throughput, &s.p50, &s.p99] {
            checks.push(check(format!("{} at {clients}", name(f.name)), f));
        }
    }
    checks
}

fn clients_word(clients: u32) -> &'static str {
    if clients == 1 {
        "client"
    } else {
        "clients"
    }
}

fn name(figure: FigureName) -> &'static str {
    match figure {
        FigureName::Throughput => "throughput",
        FigureName::P50 => "p50",
        FigureName::P99 => "p99",
        FigureName::Plateau => "plateau",
    }
}
