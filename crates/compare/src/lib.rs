//! Compares two runs of the same experiment — a sweep before a change and one after, or two
//! `load` runs — and says, figure by figure, whether the change made it better, worse, or
//! whether the data cannot show a difference. A verdict is never called on two averages: each
//! rests on a test of the samples behind the figures.
//!
//! Data flows: two [`Run`]s (the caller reads the files) → [`compare`] → a [`Comparison`] (plain
//! serde data, the `compare --json` contract) → [`text::render`] for the terminal.
//! - [`finding`] reads what each diagnosis found (kind, limit, place, setting, plateau) through
//!   one small function, so a reshaped diagnosis changes one place;
//! - at each client count both runs measured ([`steps`]), throughput is the per-bucket
//!   successful rate of the step's timeline (100 ms buckets), tested with [`rank`] (Mann-Whitney
//!   U, Hodges-Lehmann shift and interval); the p50 and p99 of successful requests come from the
//!   step's exact HdrHistograms and are tested with [`bootstrap`];
//! - the plateau pools the buckets of the plateau's steps on each side (the best step where the
//!   diagnosis found no plateau) and takes the same rank test.
//!
//! - [`baseline`] says whether a stored run can be the "before" of a `sweep`/`load --baseline`
//!   run, before it starts; [`checks`] turns the figures into CI gates (`--junit`, `--fail-on`).
//! - [`Options::min_change`] (`--min-change`) is the floor under which no change is called.
//!
//! Pure: no files, no clock; the bootstrap's seed is fixed, so the same two runs always compare
//! the same way.
#![deny(missing_docs)]

pub mod baseline;
pub mod bootstrap;
pub mod checks;
pub mod finding;
mod normal;
pub mod rank;
pub mod steps;
pub mod text;

pub use finding::FindingRead;
pub use rank::Interval;

use chokepoint_result::{LoadReport, SweepResult};
use serde::{Deserialize, Serialize};

/// The significance level of every verdict: a difference is called when the test's two-sided
/// p-value (or the bootstrap's 95 % interval) rules out "no difference" at 5 %.
pub const ALPHA: f64 = 0.05;

/// The smallest change called better or worse unless told otherwise (`--min-change`), as a share
/// of the figure before: 5 %. The tests
/// see only the spread within each run; two runs of one build differ by more than that (the
/// machine, the JIT, the other processes), and requests of one closed loop are not independent,
/// so a test on thousands of requests finds "differences" of a tenth of a millisecond
/// (recorded: p50 102 ms → 102 ms, +0.06 ms, one HdrHistogram bucket). Below this, no call.
pub const DEFAULT_MIN_CHANGE: f64 = 0.05;

/// How two runs are compared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Compare runs that loaded different paths anyway.
    pub force: bool,
    /// The smallest change called better or worse, as a share of the figure before (0.05 is
    /// 5 %); a smaller one is [`NoCall::Small`], however sure the test.
    pub min_change: f64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            force: false,
            min_change: DEFAULT_MIN_CHANGE,
        }
    }
}

/// One run as read from its file.
#[derive(Debug, Clone)]
pub enum Run {
    /// A sweep's `result.json`.
    Sweep(Box<SweepResult>),
    /// A `load --json` file.
    Load(Box<LoadReport>),
}

impl Run {
    /// What kind of run it is.
    pub fn kind(&self) -> RunKind {
        match self {
            Run::Sweep(_) => RunKind::Sweep,
            Run::Load(_) => RunKind::Load,
        }
    }

    /// The URL it loaded.
    pub fn target(&self) -> &str {
        match self {
            Run::Sweep(s) => &s.target,
            Run::Load(l) => &l.target,
        }
    }
}

/// What kind of run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunKind {
    /// A sweep.
    Sweep,
    /// One load run.
    Load,
}

impl RunKind {
    /// The command that writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Sweep => "sweep",
            RunKind::Load => "load",
        }
    }
}

/// Whether a figure got better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// It moved the good way (more throughput, less latency), beyond chance.
    Better,
    /// It moved the bad way, beyond chance.
    Worse,
    /// The data cannot show a difference (see [`NoCall`] for why).
    NoDifference,
}

/// Why a figure has no verdict of better or worse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoCall {
    /// A side had too few samples to test (throughput: fewer than 5 buckets; a percentile: fewer
    /// than 5 requests beyond it).
    TooFewSamples,
    /// The test could not tell the two apart at the 5 % level.
    WithinChance,
    /// The test could, but the change is under the floor ([`Options::min_change`], by default
    /// [`DEFAULT_MIN_CHANGE`]) of the figure: within what two runs of one build differ by.
    Small,
    /// A side kept no latency histogram (a file written before steps kept them).
    NoHistograms,
}

/// How a figure was tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Mann-Whitney U on the per-bucket samples; the change is the Hodges-Lehmann shift.
    RankTest,
    /// Bootstrap of the percentile from the exact histograms; the change is the difference of
    /// the two percentiles.
    Bootstrap,
}

/// Which figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FigureName {
    /// Successful requests per second.
    Throughput,
    /// The median latency of successful requests, ms.
    P50,
    /// The 99th percentile latency of successful requests, ms.
    P99,
    /// The plateau's successful throughput, per second.
    Plateau,
}

impl FigureName {
    /// Whether a larger value is better.
    pub fn higher_is_better(self) -> bool {
        matches!(self, FigureName::Throughput | FigureName::Plateau)
    }
}

/// One figure before and after, the change and the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// Which figure.
    pub name: FigureName,
    /// Its value before (`None` when the run has none).
    pub before: Option<f64>,
    /// Its value after.
    pub after: Option<f64>,
    /// The change after − before with its 95 % interval; `None` when it could not be tested.
    pub change: Option<Interval>,
    /// The rank test's two-sided p-value (the bootstrap gives none).
    pub p_value: Option<f64>,
    /// Samples tested before (buckets for throughput, requests for a percentile).
    pub samples_before: u64,
    /// Samples tested after.
    pub samples_after: u64,
    /// How it was tested.
    pub method: Method,
    /// The verdict.
    pub verdict: Verdict,
    /// Why there is no verdict of better or worse; `None` when there is one.
    pub no_call: Option<NoCall>,
}

/// The figures of one client count both runs measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepComparison {
    /// Clients before.
    pub clients: u32,
    /// Clients after: the same in a sweep; two load runs are compared whatever their clients.
    pub clients_after: u32,
    /// Successful throughput.
    pub throughput: Figure,
    /// Median latency of successful requests.
    pub p50: Figure,
    /// 99th percentile latency of successful requests.
    pub p99: Figure,
}

/// What the diagnoses found, before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FindingChange {
    /// Before's finding; `None` when that sweep has no diagnosis (interrupted early).
    pub before: Option<FindingRead>,
    /// After's finding.
    pub after: Option<FindingRead>,
}

/// Two runs compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Both runs' kind.
    pub kind: RunKind,
    /// Before's target URL.
    pub target_before: String,
    /// After's target URL (the same path; the host or port may differ).
    pub target_after: String,
    /// Sweeps: the findings.
    pub finding: Option<FindingChange>,
    /// Sweeps: the plateau's throughput (or the best step's where a side found no plateau).
    pub plateau: Option<Figure>,
    /// The client counts of the steps before's plateau figure pooled.
    pub plateau_steps_before: Vec<u32>,
    /// The client counts of the steps after's plateau figure pooled.
    pub plateau_steps_after: Vec<u32>,
    /// The client counts both measured, in increasing order.
    pub steps: Vec<StepComparison>,
    /// Client counts only before measured.
    pub only_before: Vec<u32>,
    /// Client counts only after measured.
    pub only_after: Vec<u32>,
    /// The floor the verdicts used: the smallest change called better or worse, as a share of
    /// the figure before (0.05 is 5 %).
    #[serde(default = "default_min_change")]
    pub min_change: f64,
}

fn default_min_change() -> f64 {
    DEFAULT_MIN_CHANGE
}

impl Comparison {
    /// Every figure compared, the plateau first.
    pub fn figures(&self) -> impl Iterator<Item = &Figure> {
        self.plateau.iter().chain(
            self.steps
                .iter()
                .flat_map(|s| [&s.throughput, &s.p50, &s.p99]),
        )
    }

    /// Whether any figure got worse (`--fail-on worse`).
    pub fn any_worse(&self) -> bool {
        self.figures().any(|f| f.verdict == Verdict::Worse)
    }
}

/// Why two runs cannot be compared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompareError {
    /// A sweep and a load run.
    DifferentKinds {
        /// Before's kind.
        before: RunKind,
        /// After's kind.
        after: RunKind,
    },
    /// The runs loaded different paths (another route, another experiment).
    DifferentTargets {
        /// Before's URL.
        before: String,
        /// After's URL.
        after: String,
    },
}

impl std::fmt::Display for CompareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CompareError::DifferentKinds { before, after } => write!(
                f,
                "BEFORE is a {} run and AFTER a {} run: compare two sweeps or two load runs",
                before.as_str(),
                after.as_str()
            ),
            CompareError::DifferentTargets { before, after } => write!(
                f,
                "BEFORE loaded {before} and AFTER {after}: another path is another experiment \
                 (give --force to compare them anyway)"
            ),
        }
    }
}

impl std::error::Error for CompareError {}

/// The path and query of a URL (what it asks for, whatever host and port served it).
pub(crate) fn path_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.find('/').map_or("/", |i| &rest[i..])
}

/// Compares `after` with `before` with the default floor. Runs of different kinds are refused;
/// so are different paths, unless `force` (a different host or port alone is the same
/// experiment on another start).
pub fn compare(before: &Run, after: &Run, force: bool) -> Result<Comparison, CompareError> {
    compare_with(
        before,
        after,
        &Options {
            force,
            ..Options::default()
        },
    )
}

/// Compares `after` with `before` as `options` say (see [`compare`]).
pub fn compare_with(
    before: &Run,
    after: &Run,
    options: &Options,
) -> Result<Comparison, CompareError> {
    let min_change = options.min_change;
    let same_target = || {
        if options.force || path_of(before.target()) == path_of(after.target()) {
            Ok(())
        } else {
            Err(CompareError::DifferentTargets {
                before: before.target().to_string(),
                after: after.target().to_string(),
            })
        }
    };
    let mut comparison = Comparison {
        kind: before.kind(),
        target_before: before.target().to_string(),
        target_after: after.target().to_string(),
        finding: None,
        plateau: None,
        plateau_steps_before: Vec::new(),
        plateau_steps_after: Vec::new(),
        steps: Vec::new(),
        only_before: Vec::new(),
        only_after: Vec::new(),
        min_change,
    };
    match (before, after) {
        (Run::Sweep(b), Run::Sweep(a)) => {
            same_target()?;
            let matched = steps::match_steps(&b.steps, &a.steps);
            comparison.steps = matched
                .pairs
                .iter()
                .map(|(b, a)| steps::compare_reports(&b.load, &a.load, min_change))
                .collect();
            comparison.only_before = matched.only_before;
            comparison.only_after = matched.only_after;
            let (fb, fa) = (
                b.diagnosis.as_ref().map(finding::read),
                a.diagnosis.as_ref().map(finding::read),
            );
            let (plateau, from_before, from_after) =
                steps::compare_plateaus(b, fb.as_ref(), a, fa.as_ref(), min_change);
            comparison.plateau = Some(plateau);
            comparison.plateau_steps_before = from_before;
            comparison.plateau_steps_after = from_after;
            comparison.finding = Some(FindingChange {
                before: fb,
                after: fa,
            });
        }
        (Run::Load(b), Run::Load(a)) => {
            same_target()?;
            comparison.steps = vec![steps::compare_reports(b, a, min_change)];
        }
        _ => {
            return Err(CompareError::DifferentKinds {
                before: before.kind(),
                after: after.kind(),
            })
        }
    }
    Ok(comparison)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_is_what_follows_the_host() {
        for (url, path) in [
            ("http://127.0.0.1:8080/actors", "/actors"),
            ("https://example.com/a/b?c=1", "/a/b?c=1"),
            ("http://host:1", "/"),
        ] {
            assert_eq!(path_of(url), path, "{url}");
        }
    }
}
