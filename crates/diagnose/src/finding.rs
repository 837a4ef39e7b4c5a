//! [`Finding`] (the record lives in `chokepoint_result`) told in words for its [`Diagnosis`],
//! and the first two decisions: an empty sweep and a sweep where nothing succeeded.
//!
//! [`Diagnosis`]: chokepoint_result::Diagnosis

use crate::describe::describe;
use crate::points::{error_counts, Point};
use chokepoint_result::{Fact, Kind, Tell, Words};

pub use chokepoint_result::Finding;

/// The teller of findings: [`describe`]'s sentences and the place's one-line attribution. With
/// it, [`Finding::into_diagnosis`] gives the JSON record with the words.
pub struct Prose;

impl Tell<Prose> for Finding {
    fn tell(&self) -> Words {
        let text = describe(self);
        Words {
            summary: text.summary,
            evidence: text.evidence,
            key_evidence: text.key_evidence,
            attribution: self.place().map(crate::describe::place::attribution),
        }
    }
}

/// The finding when no step with clients was measured.
pub(crate) fn nothing_measured() -> Finding {
    Finding::bare(Kind::NoLimitFound, vec![Fact::NothingMeasured])
}

/// The finding when no step had a single successful request: error-bound when requests failed,
/// else nothing to measure.
pub(crate) fn nothing_succeeded(pts: &[Point<'_>]) -> Finding {
    let facts: Vec<Fact> = pts
        .iter()
        .map(|p| Fact::NoSuccess {
            clients: p.clients,
            throughput_rps: p.x,
            errors: error_counts(p),
        })
        .collect();
    let failed = pts
        .iter()
        .any(|p| error_counts(p).values().sum::<u64>() > 0);
    let kind = if failed {
        Kind::ErrorBound
    } else {
        Kind::NoLimitFound
    };
    Finding::bare(kind, facts)
}
