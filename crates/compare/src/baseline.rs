//! `--baseline DIR` on `sweep` and `load`: whether a stored run can be the "before" of the run
//! about to start, decided before any load is sent. A baseline of another kind (a load run for a
//! sweep) or of another path (another route, another experiment) is refused with a
//! [`BaselineError`] the binary prints as its one line; the comparison at the end is then
//! [`crate::compare_with`] of the baseline and the finished run.
use crate::{path_of, Run, RunKind};

/// Why a stored run cannot be the baseline of this one (its message follows `--baseline PATH: `).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BaselineError {
    /// The baseline is a run of another kind.
    OtherKind {
        /// The baseline's kind.
        baseline: RunKind,
        /// The kind of run about to start.
        run: RunKind,
    },
    /// The baseline loaded another path.
    OtherTarget {
        /// The baseline's URL.
        baseline: String,
        /// The URL about to be loaded.
        run: String,
    },
}

impl std::fmt::Display for BaselineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BaselineError::OtherKind { baseline, run } => write!(
                f,
                "a {} run, and this is a {}: give {}",
                baseline.as_str(),
                run.as_str(),
                match run {
                    RunKind::Sweep => "a sweep's --out folder or its result.json",
                    RunKind::Load => "a load --json file",
                }
            ),
            BaselineError::OtherTarget { baseline, run } => write!(
                f,
                "it loaded {baseline} and this run loads {run}: another path is another \
                 experiment; give a baseline of the same path"
            ),
        }
    }
}

impl std::error::Error for BaselineError {}

/// Whether `baseline` can be compared with a run of `kind` against `url` (the same kind, the
/// same path; the host and port may differ, as for `compare`).
pub fn check(baseline: &Run, kind: RunKind, url: &str) -> Result<(), BaselineError> {
    if baseline.kind() != kind {
        return Err(BaselineError::OtherKind {
            baseline: baseline.kind(),
            run: kind,
        });
    }
    if path_of(baseline.target()) != path_of(url) {
        return Err(BaselineError::OtherTarget {
            baseline: baseline.target().to_string(),
            run: url.to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chokepoint_result::LoadReport;

    fn load(url: &str) -> Run {
        Run::Load(Box::new(LoadReport {
            target: url.into(),
            ..LoadReport::default()
        }))
    }

    #[test]
    fn a_baseline_of_the_same_kind_and_path_is_taken_whatever_the_port() {
        let baseline = load("http://127.0.0.1:8080/actors");
        assert_eq!(
            check(&baseline, RunKind::Load, "http://127.0.0.1:9090/actors"),
            Ok(())
        );
        assert!(matches!(
            check(&baseline, RunKind::Load, "http://127.0.0.1:8080/async"),
            Err(BaselineError::OtherTarget { .. })
        ));
        let err = check(&baseline, RunKind::Sweep, "http://127.0.0.1:8080/actors").unwrap_err();
        assert_eq!(
            err.to_string(),
            "a load run, and this is a sweep: give a sweep's --out folder or its result.json"
        );
    }
}
