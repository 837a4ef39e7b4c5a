//! The models' sentences: the USL's fit, the bounded pool's beside it, which fits better, and a
//! retrograde peak. Each number comes from the finding's fits and facts.

use super::find;
use crate::finding::Finding;
use chokepoint_result::format::{duration, rate};
use chokepoint_result::{Fact, Model};

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
            match better.map(|b| b.0) {
                Some(Model::Usl) =>
                    "; the USL fits better (throughput falls past its peak or keeps creeping)",
                Some(Model::BoundedPool) => "; it fits better than the USL",
                None => "",
            }
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
