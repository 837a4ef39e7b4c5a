//! The models beside the finding: a Universal Scalability Law fit with ≥ 4 client counts, and
//! for a limit on a plateau the bounded-pool model; the better one is named by its RMS error of
//! throughput (not R²: on a flat plateau there is next to no variance for R² to explain, while
//! the error still says how far the model is). The USL has one more parameter, so it is named
//! only when clearly better — or, when throughput falls past its peak, whenever it is better.

use crate::fit::{pool_fit, usl_fit};
use crate::points::Point;
use chokepoint_result::{Fact, Model, PoolFit, UslFit};

/// The USL is named the better model only when its error is below this share of the pool
/// model's (it has one more parameter, so it always fits noise a little better)...
const USL_ERROR_SHARE: f64 = 0.75;
/// ...and when the pool model's error is above this share of the mean throughput (below it, the
/// pool model is already within the noise).
const NOISE_SHARE: f64 = 0.03;

/// The fits, the better model and their facts.
pub(crate) struct Fits {
    pub usl: Option<UslFit>,
    pub pool: Option<PoolFit>,
    pub better: Option<Model>,
    pub facts: Vec<Fact>,
}

/// Fits the models to the points' (clients, successful throughput). The pool model is fitted
/// when `service_ms` is given (a limit on a plateau), from the base latency `base_ms` and the
/// plateau's throughput. When throughput `falls` past its peak (a collapse), a USL that fits
/// better at all is named: the pool model cannot explain a fall.
pub(crate) fn models(
    pts: &[Point<'_>],
    base_ms: f64,
    service_ms: Option<f64>,
    plateau_x: f64,
    falls: bool,
) -> Fits {
    let xy: Vec<(f64, f64)> = pts.iter().map(|p| (p.clients as f64, p.ok_x)).collect();
    let usl = usl_fit(&xy);
    let pool =
        service_ms.and_then(|s_ms| pool_fit(&xy, base_ms, s_ms / 1000.0, plateau_x.max(1e-9)));
    let mut facts = Vec::new();
    let mut better = None;
    if let (Some(u), Some(p)) = (&usl, &pool) {
        let usl_error = rms_error(&xy, |n| u.throughput(n));
        let pool_error = rms_error(&xy, |n| p.throughput(n));
        let mean_x = xy.iter().map(|p| p.1).sum::<f64>() / xy.len().max(1) as f64;
        let clearly_better =
            usl_error < USL_ERROR_SHARE * pool_error && pool_error > NOISE_SHARE * mean_x;
        let model = if clearly_better || (falls && usl_error < pool_error) {
            Model::Usl
        } else {
            Model::BoundedPool
        };
        better = Some(model);
        facts.push(Fact::BetterModel {
            model,
            pool_rms_error_rps: pool_error,
            usl_rms_error_rps: usl_error,
        });
    }
    if let (Some(u), Some(Model::Usl)) = (&usl, better) {
        let last = &pts[pts.len() - 1];
        let peak = pts
            .iter()
            .max_by(|a, b| a.ok_x.total_cmp(&b.ok_x))
            .filter(|p| p.clients < last.clients);
        if let (Some(peak), Some(_)) = (peak, u.n_max) {
            if last.ok_x < 0.9 * peak.ok_x {
                facts.push(Fact::Retrograde {
                    peak_clients: peak.clients,
                    peak_rps: peak.ok_x,
                    last_clients: last.clients,
                    last_rps: last.ok_x,
                });
            }
        }
    }
    Fits {
        usl,
        pool,
        better,
        facts,
    }
}

/// Root-mean-square error of `model` over the points (clients, throughput).
fn rms_error(points: &[(f64, f64)], model: impl Fn(f64) -> f64) -> f64 {
    if points.is_empty() {
        return 0.0;
    }
    let sse: f64 = points.iter().map(|&(n, x)| (x - model(n)).powi(2)).sum();
    (sse / points.len() as f64).sqrt()
}
