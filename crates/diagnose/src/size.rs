//! The size of a limit: Little's law over the plateau (throughput × the time a request holds
//! its slot), the mock's most calls in flight when they agree, the target's connections to a
//! downstream held at one count when no mock counts the calls (`connection_ceiling`), and the
//! bounds a single batch puts on a pool.

use crate::analysis::Analysis;
use crate::points::median;
use chokepoint_result::{CeilingReading, Fact};

/// How close the mock's most calls in flight must be to Little's estimate to be preferred.
const INFLIGHT_AGREEMENT: f64 = 0.15;
/// How far above Little's law a ceiling the mock hit at every plateau step may sit and still be
/// taken as the pool (slots left idle by a starved machine lower Little's figure, not the pool).
const STARVED_SLOTS_RATIO: f64 = 1.5;

/// Size of a plateau: the limit, Little's estimate, and the facts that tell how it was read
/// (pushed by the caller where the evidence tells them).
pub(crate) struct Size {
    pub limit: f64,
    pub little: f64,
    pub facts: Vec<Fact>,
}

impl Analysis<'_, '_> {
    /// The size of the plateau of throughput `plateau_x` over the points at `idx`.
    pub fn size(&self, plateau_x: f64, idx: &[usize]) -> Size {
        let (s_ms, service) = self.service();
        let little = plateau_x * s_ms / 1000.0;
        let clients = self.clients_at(idx);
        let mut facts = vec![Fact::Little {
            clients: clients.clone(),
            throughput_rps: plateau_x,
            service_ms: s_ms,
            service,
            in_service: little,
        }];
        let mut limit = little;
        let direct = self.ctx.mock_present && self.calls.is_some() && self.single_call();
        let maxes: Vec<f64> = idx
            .iter()
            .filter_map(|&i| self.pts[i].inflight_max)
            .collect();
        // The mock's own time-weighted mean in flight is Little's law measured at the
        // downstream; on a busy machine it is steadier than the client's throughput.
        let mock_mean = median(idx.iter().filter_map(|&i| self.pts[i].inflight_mean));
        let reference = little.max(mock_mean);
        if direct && !maxes.is_empty() {
            let m = median(maxes.iter().copied());
            let reading =
                if reference > 0.0 && (m - reference).abs() <= INFLIGHT_AGREEMENT * reference {
                    CeilingReading::Agrees
                } else if maxes.len() >= 2
                    && maxes.iter().all(|&x| x == m)
                    && m >= reference
                    && m <= STARVED_SLOTS_RATIO * reference
                {
                    // Every plateau step hit the very same ceiling: that is the pool. Little's
                    // law comes out lower when the slots are not kept busy all the time (a
                    // machine short of CPU adds time between calls), never higher than the pool.
                    CeilingReading::SameAtEveryStep
                } else if maxes.len() >= 2
                    && maxes.iter().all(|&x| x == m)
                    && mock_mean * STARVED_SLOTS_RATIO >= m
                    && m < reference
                {
                    // Direct evidence outweighs the law: the very same ceiling at every plateau
                    // step while the clients grow is a cap of m calls (calls that are not
                    // capped reach a different most from step to step), and the mock's own
                    // mean says its slots were busy most of the time. Little's law over the
                    // whole request comes out higher when each request also spends time
                    // outside its slot (work before or after the pooled call), so it cannot
                    // overrule the ceiling (a warming-up service's 20 ms before a pool of 12
                    // around a 50 ms call read as a pool of 17). The slots need not be busy
                    // all the time: a starved machine leaves gaps between one call and the
                    // next waiter's (bench/flake-hunt.sh, one core burnt: 10.3 of 12 on
                    // average), the same gaps, bounded the same way, as `SameAtEveryStep`.
                    CeilingReading::FullAtEveryStep
                } else {
                    CeilingReading::Disagrees
                };
            if reading != CeilingReading::Disagrees {
                limit = m;
            }
            facts.push(Fact::MockCeiling {
                clients,
                max_in_flight: m,
                mean_in_flight: mock_mean,
                steps: maxes.len(),
                reading,
            });
        }
        if !direct {
            let plateau: Vec<&crate::points::Point<'_>> =
                idx.iter().map(|&i| &self.pts[i]).collect();
            if let Some(fact) =
                crate::connection_ceiling::connection_ceiling(self.pts, &plateau, little, plateau_x)
            {
                if let Fact::ConnectionCeiling { connections, .. } = &fact {
                    limit = f64::from(*connections);
                }
                facts.push(fact);
            }
        }
        Size {
            limit,
            little,
            facts,
        }
    }

    /// A single step of a batch (each client sent about one request, as `ab -n N -c N`): the
    /// requests went through in waves of the delay, which bounds the pool from both sides.
    pub fn batch_range(&mut self, from: usize) -> Option<(f64, f64)> {
        let d = self.delay?;
        if self.pts.len() != 1 {
            return None;
        }
        let p = &self.pts[from];
        let step = p.steps.first()?;
        let served = step.ok as f64;
        let waves = (step.duration_s * 1000.0 / d).round();
        if step.requests as f64 > 1.5 * p.clients as f64 || waves < 2.0 || served < 1.0 {
            return None;
        }
        let low = (served / waves).ceil();
        let high = ((served / (waves - 1.0)).ceil() - 1.0).max(low);
        self.facts.push(Fact::Batch {
            clients: p.clients,
            requests: step.requests,
            ok: step.ok,
            duration_s: step.duration_s,
            waves,
            delay_ms: d,
            low,
            high,
        });
        Some((low, high))
    }
}
