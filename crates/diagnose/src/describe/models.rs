//! The models' sentences: the USL's fit, the bounded pool's beside it, which fits better, and a
//! retrograde peak. Each number comes from the finding's fits and facts. Their facts
//! ([`Fact::BetterModel`], [`Fact::Retrograde`]) are told here, after the other facts, not each
//! in its place.

use super::{find, Teller};
use crate::finding::Finding;
use chokepoint_result::format::{duration, rate};
use chokepoint_result::{Fact, Kind, Model};

/// The words of the models' facts: no sentence in the facts' order ([`model_sentences`] tells
/// them after), and no key line.
pub(super) const TELLER: Teller = Teller {
    sentences: |_, _| Vec::new(),
    short: |_, _| None,
    // A rank with no key line to place: the better model has no short form (yet).
    rank: |kind, fact| match (kind, fact) {
        (Kind::Contention, Fact::BetterModel { .. }) => Some(1),
        _ => None,
    },
};

/// The models' sentences: the USL's fit, the bounded pool's beside it with the better one, and
/// a retrograde peak when the USL is named for it.
pub(super) fn model_sentences(finding: &Finding) -> Vec<String> {
    let mut out = Vec::new();
    let better = find(finding, |f| match f {
        Fact::BetterModel {
            model,
            pool_rms_error_rps,
            usl_rms_error_rps,
        } => Some((*model, *pool_rms_error_rps, *usl_rms_error_rps)),
        _ => None,
    });
    if let Some(u) = &finding.usl {
        out.push(format!(
            "USL fit: σ = {:.3}, κ = {:.5}, λ = {} req/s, N_max = {}, R² = {:.3}.",
            u.sigma,
            u.kappa,
            rate(u.lambda),
            u.n_max
                .map_or("none (κ = 0)".to_string(), |n| format!("{n:.0}")),
            u.r_squared
        ));
    }
    if let Some(p) = &finding.pool {
        let error_note = better
            .map(|(_, pool_error, usl_error)| {
                format!(
                    " (RMS error {} req/s against the USL's {} req/s)",
                    rate(pool_error),
                    rate(usl_error)
                )
            })
            .unwrap_or_default();
        out.push(format!(
            "Bounded-pool model X(N) = min(N / {}, {} req/s): R² = {:.3}{error_note}{}.",
            duration(p.base_latency_ms),
            rate(p.plateau_rps),
            p.r_squared,
            better.map_or("", |(model, pool_error, usl_error)| comparison(
                model, pool_error, usl_error
            ))
        ));
    }
    if let Some(Fact::Retrograde {
        peak_clients,
        peak_rps,
        last_clients,
        last_rps,
    }) = finding
        .facts
        .iter()
        .find(|f| matches!(f, Fact::Retrograde { .. }))
    {
        out.push(format!(
            "Throughput peaks at {} req/s at {peak_clients} clients and falls to {} req/s at {last_clients} clients: \
             more clients cost throughput (contention σ and crosstalk κ), which a fixed pool alone does not do.",
            rate(*peak_rps),
            rate(*last_rps)
        ));
    }
    out
}

/// Which model was kept, in words that follow its errors: the model with the higher RMS error
/// is never said to fit better. The bounded pool is kept even when the USL's error is a little
/// lower (crate::models names the USL only when clearly better: it has one more parameter), and
/// the sentence then says that.
fn comparison(model: Model, pool_error: f64, usl_error: f64) -> &'static str {
    match model {
        Model::Usl => "; the USL fits better (throughput falls past its peak or keeps creeping)",
        Model::BoundedPool if pool_error <= usl_error => "; it fits better than the USL",
        Model::BoundedPool => {
            "; the USL's error is lower, but not by enough to prefer a model with one more \
             parameter: the bounded pool is kept"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chokepoint_result::{Kind, PoolFit};

    /// A plateau whose pool fit has the better R² while its RMS error is the higher one (the
    /// orders disagree): the words follow the RMS comparison that chose the model.
    #[test]
    fn the_sentence_follows_the_errors_not_the_model_kept() {
        let sentence = |pool_error: f64, usl_error: f64| {
            let mut finding = Finding::bare(
                Kind::BlockingPool,
                vec![Fact::BetterModel {
                    model: Model::BoundedPool,
                    pool_rms_error_rps: pool_error,
                    usl_rms_error_rps: usl_error,
                }],
            );
            finding.pool = Some(PoolFit {
                limit: 20.0,
                plateau_rps: 387.0,
                r_squared: 0.991,
                base_latency_ms: 51.0,
            });
            model_sentences(&finding)
                .pop()
                .expect("the pool's sentence")
        };
        let kept = sentence(7.11, 5.88);
        assert!(
            kept.contains("RMS error 7.11 req/s against the USL's 5.88 req/s"),
            "{kept}"
        );
        assert!(!kept.contains("it fits better"), "{kept}");
        assert!(kept.contains("the USL's error is lower"), "{kept}");
        let better = sentence(5.88, 7.11);
        assert!(better.contains("it fits better than the USL"), "{better}");
    }
}
