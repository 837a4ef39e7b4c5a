//! What `sweep` and `load` share for CI: `--baseline` (read and checked before any load, the
//! comparison printed after the report), `--fail-on worse`, `--min-change`, and the JUnit suites
//! of `--junit FILE`. Wiring only: `chokepoint_compare` decides whether the baseline fits and
//! what got worse; `chokepoint_diagnose` whether a gate held; `chokepoint_report` writes the XML.
use super::compare::{min_change, read_run, FailOn};
use anyhow::Context;
use chokepoint_compare::{baseline, checks, compare_with, text, Comparison, Options, Run, RunKind};
use chokepoint_report::junit::{Case, Suite};
use std::path::PathBuf;

/// `--baseline` and the flags that go with it.
#[derive(Debug, clap::Args)]
pub struct BaselineArgs {
    /// Compare this run at its end with a stored one of the same kind and path (for sweep, a
    /// sweep's --out folder or its result.json; for load, a load --json file)
    #[arg(long, value_name = "PATH")]
    pub baseline: Option<PathBuf>,
    /// With --baseline: exit 1 when any figure got worse than the baseline's (for CI)
    #[arg(long, value_name = "WHEN", requires = "baseline")]
    pub fail_on: Option<FailOn>,
    /// With --baseline: the smallest change called better or worse, in percent of the
    /// figure before; a smaller one is no difference however sure the test
    #[arg(long, value_name = "PCT", value_parser = min_change, requires = "baseline", allow_hyphen_values = true)]
    pub min_change: Option<f64>,
}

/// A stored run checked against the run about to start.
pub struct Baseline {
    run: Run,
    options: Options,
    fail_on_worse: bool,
}

impl BaselineArgs {
    /// Reads and checks `--baseline` for a run of `kind` against `url`: one line, exit 2, when
    /// it is missing, not a result, of another kind or another path. `None` without the flag.
    pub fn open(&self, kind: RunKind, url: &str) -> anyhow::Result<Option<Baseline>> {
        let Some(path) = &self.baseline else {
            return Ok(None);
        };
        let run = read_run(path, "--baseline")?;
        baseline::check(&run, kind, url)
            .map_err(|e| anyhow::anyhow!("--baseline {}: {e}", path.display()))?;
        Ok(Some(Baseline {
            run,
            options: Options {
                force: false,
                min_change: self
                    .min_change
                    .unwrap_or(chokepoint_compare::DEFAULT_MIN_CHANGE),
            },
            fail_on_worse: matches!(self.fail_on, Some(FailOn::Worse)),
        }))
    }
}

/// The comparison at the end of a run.
pub struct Compared {
    /// The baseline before, this run after.
    pub comparison: Comparison,
    /// Whether `--fail-on worse` fails the run.
    pub failed: bool,
    fail_on_worse: bool,
}

impl Baseline {
    /// Compares the finished run with the baseline and prints the comparison.
    pub fn compare(&self, finished: &Run) -> anyhow::Result<Compared> {
        let comparison = compare_with(&self.run, finished, &self.options)?;
        println!("\ncompared with the baseline:");
        print!("{}", text::render(&comparison));
        Ok(Compared {
            failed: self.fail_on_worse && comparison.any_worse(),
            comparison,
            fail_on_worse: self.fail_on_worse,
        })
    }
}

impl Compared {
    /// The comparison's figures as a JUnit suite.
    pub fn suite(&self) -> Suite {
        figure_suite(&self.comparison, self.fail_on_worse)
    }
}

/// Every figure of `comparison` as a test case; a worse one fails when `fail_on_worse`.
pub fn figure_suite(comparison: &Comparison, fail_on_worse: bool) -> Suite {
    Suite {
        name: format!("chokepoint compare {}", comparison.target_before),
        classname: "chokepoint.compare".into(),
        cases: checks::figure_checks(comparison, fail_on_worse)
            .into_iter()
            .map(|c| Case {
                name: c.name,
                failed: c.failed,
                words: c.words,
            })
            .collect(),
    }
}

/// Each `--expect` gate as a test case, failed with the gate's sentence.
pub fn gate_suite(
    target: &str,
    gates: &[chokepoint_diagnose::Gate],
    steps: &[chokepoint_result::Step],
    diagnosis: &chokepoint_result::Diagnosis,
) -> Suite {
    Suite {
        name: format!("chokepoint sweep --expect {target}"),
        classname: "chokepoint.expect".into(),
        cases: gates
            .iter()
            .map(|gate| {
                let failure =
                    chokepoint_diagnose::check_gates(std::slice::from_ref(gate), steps, diagnosis)
                        .into_iter()
                        .next();
                Case {
                    name: gate.to_string(),
                    failed: failure.is_some(),
                    words: failure.unwrap_or_else(|| format!("gate '{gate}' held")),
                }
            })
            .collect(),
    }
}

/// Writes `--junit FILE`.
pub fn write_junit(path: &std::path::Path, suites: &[Suite]) -> anyhow::Result<()> {
    chokepoint_report::files::write_junit(path, suites)
        .with_context(|| format!("--junit {}: cannot write it", path.display()))
}
