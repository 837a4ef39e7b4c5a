//! The two scalability models fitted to (clients, throughput) points: the Universal Scalability
//! Law and the bounded pool.

use crate::points::median;
use chokepoint_result::{PoolFit, UslFit};

/// Fits the Universal Scalability Law X(N) = λN / (1 + σ(N−1) + κN(N−1)) to (clients,
/// throughput) points by least squares on throughput.
///
/// Method: λ starts as the throughput of one client (the smallest N's X/N when no 1-client
/// point exists); with λ fixed the law is linear in σ and κ after the change of variable
/// y = λN/X − 1 = σ(N−1) + κN(N−1), solved by non-negative least squares (each parameter
/// clamped at 0, the other refitted). Those starting values are then refined by
/// Levenberg–Marquardt on all three parameters against the measured throughputs (σ kept in
/// 0..=1, κ ≥ 0, λ > 0), keeping a step only when it lowers the squared error.
///
/// Returns `None` with fewer than 4 distinct client counts or no positive throughput. R² is
/// 1 − SSE/SST on throughput; N_max = √((1−σ)/κ) when κ > 0.
pub fn usl_fit(points: &[(f64, f64)]) -> Option<UslFit> {
    let pts: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(n, x)| n.is_finite() && x.is_finite() && *n > 0.0 && *x >= 0.0)
        .collect();
    let mut distinct: Vec<f64> = pts.iter().map(|p| p.0).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if distinct.len() < 4 || !pts.iter().any(|p| p.1 > 0.0) {
        return None;
    }
    let n_min = distinct[0];
    let lambda0 = median(pts.iter().filter(|p| p.0 == n_min).map(|p| p.1 / p.0));
    let lambda0 = if lambda0 > 0.0 {
        lambda0
    } else {
        pts.iter().map(|p| p.1 / p.0).fold(0.0, f64::max)
    };
    let (sigma0, kappa0) = linearised(&pts, lambda0);
    let mut params = [lambda0, sigma0, kappa0];
    let mut sse = sse_of(&pts, params);
    let mut mu = 1e-3;
    for _ in 0..200 {
        let mut jtj = [[0.0; 3]; 3];
        let mut jtr = [0.0; 3];
        for &(n, x) in &pts {
            let [l, s, k] = params;
            let d = 1.0 + s * (n - 1.0) + k * n * (n - 1.0);
            let f = l * n / d;
            let grad = [
                n / d,
                -l * n * (n - 1.0) / (d * d),
                -l * n * n * (n - 1.0) / (d * d),
            ];
            for i in 0..3 {
                jtr[i] += grad[i] * (x - f);
                for j in 0..3 {
                    jtj[i][j] += grad[i] * grad[j];
                }
            }
        }
        let mut a = jtj;
        for (i, row) in a.iter_mut().enumerate() {
            row[i] += mu * jtj[i][i].max(1e-300);
        }
        let Some(delta) = solve3(a, jtr) else { break };
        let candidate = [
            (params[0] + delta[0]).max(1e-12),
            (params[1] + delta[1]).clamp(0.0, 1.0),
            (params[2] + delta[2]).max(0.0),
        ];
        let candidate_sse = sse_of(&pts, candidate);
        if candidate_sse < sse {
            let improvement = (sse - candidate_sse) / sse.max(1e-300);
            params = candidate;
            sse = candidate_sse;
            mu = (mu / 3.0).max(1e-12);
            if improvement < 1e-12 {
                break;
            }
        } else {
            mu *= 4.0;
            if mu > 1e12 {
                break;
            }
        }
    }
    let [lambda, sigma, kappa] = params;
    let n_max = (kappa > 0.0 && sigma < 1.0).then(|| ((1.0 - sigma) / kappa).sqrt());
    Some(UslFit {
        sigma,
        kappa,
        lambda,
        n_max,
        r_squared: r_squared(&pts, sse),
    })
}

/// Non-negative least squares for y = σ(N−1) + κN(N−1) with λ fixed.
fn linearised(pts: &[(f64, f64)], lambda: f64) -> (f64, f64) {
    let rows: Vec<(f64, f64, f64)> = pts
        .iter()
        .filter(|p| p.1 > 0.0)
        .map(|&(n, x)| (n - 1.0, n * (n - 1.0), lambda * n / x - 1.0))
        .collect();
    let (mut saa, mut sab, mut sbb, mut say, mut sby) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(a, b, y) in &rows {
        saa += a * a;
        sab += a * b;
        sbb += b * b;
        say += a * y;
        sby += b * y;
    }
    let cost = |s: f64, k: f64| -> f64 {
        rows.iter()
            .map(|&(a, b, y)| (y - s * a - k * b).powi(2))
            .sum()
    };
    let mut candidates = vec![(0.0, 0.0)];
    if saa > 0.0 {
        candidates.push(((say / saa).max(0.0), 0.0));
    }
    if sbb > 0.0 {
        candidates.push((0.0, (sby / sbb).max(0.0)));
    }
    let det = saa * sbb - sab * sab;
    if det.abs() > 1e-12 * (saa * sbb).max(1e-300) {
        let s = (say * sbb - sby * sab) / det;
        let k = (saa * sby - sab * say) / det;
        if s >= 0.0 && k >= 0.0 {
            candidates.push((s, k));
        }
    }
    candidates
        .into_iter()
        .map(|(s, k)| (s.min(1.0), k))
        .min_by(|a, b| cost(a.0, a.1).total_cmp(&cost(b.0, b.1)))
        .unwrap_or((0.0, 0.0))
}

fn sse_of(pts: &[(f64, f64)], params: [f64; 3]) -> f64 {
    let [lambda, sigma, kappa] = params;
    let law = UslFit {
        lambda,
        sigma,
        kappa,
        ..UslFit::default()
    };
    pts.iter()
        .map(|&(n, x)| (x - law.throughput(n)).powi(2))
        .sum()
}

/// R² = 1 − SSE/SST on throughput (1 for a perfect fit of constant data).
pub(crate) fn r_squared(pts: &[(f64, f64)], sse: f64) -> f64 {
    let mean = pts.iter().map(|p| p.1).sum::<f64>() / pts.len().max(1) as f64;
    let sst: f64 = pts.iter().map(|p| (p.1 - mean).powi(2)).sum();
    if sst <= 1e-12 {
        if sse <= 1e-9 {
            1.0
        } else {
            0.0
        }
    } else {
        1.0 - sse / sst
    }
}

/// Solves a 3×3 linear system by Gaussian elimination with partial pivoting.
fn solve3(mut a: [[f64; 3]; 3], mut b: [f64; 3]) -> Option<[f64; 3]> {
    for col in 0..3 {
        let pivot = (col..3).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-300 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..3 {
            let factor = a[row][col] / a[col][col];
            let pivot_row = a[col];
            for (cell, pivot_cell) in a[row].iter_mut().zip(pivot_row).skip(col) {
                *cell -= factor * pivot_cell;
            }
            b[row] -= factor * b[col];
        }
    }
    let mut x = [0.0; 3];
    for row in (0..3).rev() {
        let rest: f64 = (row + 1..3).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - rest) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// Fits the bounded-pool model X(N) = min(N / L0, plateau) with the base latency `base_ms`
/// fixed: the plateau is the mean of the throughputs the model puts on it, iterated from
/// `plateau_guess` to a fixed point. `service_s` turns the plateau into a pool size
/// (limit = plateau × service time). `None` without points or base latency.
pub fn pool_fit(
    points: &[(f64, f64)],
    base_ms: f64,
    service_s: f64,
    plateau_guess: f64,
) -> Option<PoolFit> {
    if points.is_empty() || base_ms <= 0.0 || !base_ms.is_finite() {
        return None;
    }
    let mut model = PoolFit {
        base_latency_ms: base_ms,
        plateau_rps: plateau_guess.max(0.0),
        ..PoolFit::default()
    };
    for _ in 0..20 {
        // The points on the plateau: those whose ideal throughput reaches it.
        let on: Vec<f64> = points
            .iter()
            .filter(|p| model.ideal(p.0) >= model.plateau_rps)
            .map(|p| p.1)
            .collect();
        if on.is_empty() {
            break;
        }
        let next = on.iter().sum::<f64>() / on.len() as f64;
        let settled = (next - model.plateau_rps).abs() <= 1e-9 * model.plateau_rps.max(1.0);
        model.plateau_rps = next;
        if settled {
            break;
        }
    }
    let sse: f64 = points
        .iter()
        .map(|&(n, x)| (x - model.throughput(n)).powi(2))
        .sum();
    Some(PoolFit {
        limit: model.plateau_rps * service_s,
        r_squared: r_squared(points, sse),
        ..model
    })
}
