//! The ideal line and the knee: the base latency and each step against X(c) = c / L0 (the
//! numbers themselves are [`crate::points::shape`]'s), whether the knee is a real stop, and the
//! plateau past it.

use crate::analysis::Analysis;
use crate::points::{median, KNEE_EFFICIENCY};
use chokepoint_result::Fact;

impl Analysis<'_, '_> {
    /// The base latency, every step against the ideal line, the steps the mock saw all in
    /// flight, and whether only one step was measured.
    pub fn base_facts(&mut self) {
        let first = &self.pts[0];
        let l0 = self.sh.base_ms;
        if self.sh.base_from_delay || l0 > 0.0 {
            self.facts.push(Fact::BaseLatency {
                clients: first.clients,
                latency_ms: first.ok_mean_ms,
                base_ms: l0,
                from_delay: self.sh.base_from_delay,
            });
        }
        for (i, p) in self.pts.iter().enumerate() {
            self.facts.push(Fact::Step {
                clients: p.clients,
                ok_throughput_rps: p.ok_x,
                latency_ms: p.ok_mean_ms,
                in_service: crate::points::in_service(p.x, p.mean_ms),
                efficiency: self.sh.efficiency[i],
                downstream_busy: self.delay.map(|d| p.ok_x * d / 1000.0),
                downstream_delay_ms: self.delay,
                mock_in_flight_max: p.inflight_max,
                target_cpu_pct: p.target_cpu,
                runs: p.steps.len(),
            });
        }
        for &i in &self.sh.all_in_flight {
            let p = &self.pts[i];
            let ideal = if l0 > 0.0 {
                p.clients as f64 * 1000.0 / l0
            } else {
                0.0
            };
            self.facts.push(Fact::AllInFlight {
                clients: p.clients,
                efficiency: if ideal > 0.0 { p.ok_x / ideal } else { 0.0 },
            });
        }
        if self.pts.len() == 1 {
            self.facts.push(Fact::OneStep {
                clients: first.clients,
            });
        }
    }

    /// A knee is a limit only when throughput really stopped: efficiency fell below 80%
    /// somewhere past it, or the largest step (≥ 1.2× the clients of the last good one) gained
    /// at most 3% throughput over it. A slow drift to 85% while throughput still grows is
    /// contention, not a limit: a [`Fact::Contention`].
    pub fn knee_confirmed(&mut self, k: usize) -> bool {
        let pts = self.pts;
        if k == 0 {
            return true;
        }
        let deepest = self.sh.efficiency[k..]
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let (good, last) = (&pts[k - 1], &pts[pts.len() - 1]);
        let flat =
            last.ok_x <= 1.03 * good.ok_x && last.clients as f64 >= 1.2 * good.clients as f64;
        if deepest < 0.8 || flat {
            return true;
        }
        self.facts.push(Fact::Contention {
            from_clients: pts[k].clients,
            threshold: KNEE_EFFICIENCY,
            lowest_efficiency: deepest,
            good_clients: good.clients,
            good_throughput_rps: good.ok_x,
            last_clients: last.clients,
            last_throughput_rps: last.ok_x,
        });
        false
    }

    /// The plateau past the knee `k`: its throughput (the median successful throughput past
    /// the knee, then the median of the steps within 10% of it) and those steps' indices (every
    /// step past the knee when none is that close: too noisy for a flat plateau).
    pub fn plateau(&self, k: usize) -> (f64, Vec<usize>) {
        let pts = self.pts;
        let px = median(pts[k..].iter().map(|p| p.ok_x));
        let idx: Vec<usize> = (k.saturating_sub(1)..pts.len())
            .filter(|&i| (pts[i].ok_x - px).abs() <= 0.1 * px)
            .collect();
        if idx.is_empty() {
            (px, (k..pts.len()).collect())
        } else {
            (median(idx.iter().map(|&i| pts[i].ok_x)), idx)
        }
    }

    /// The knee, and the plateau when it spans more than one step.
    pub fn knee_facts(&mut self, k: usize, plateau_x: f64, idx: &[usize]) {
        let pts = self.pts;
        self.facts.push(Fact::Knee {
            clients: pts[k].clients,
            efficiency: self.sh.efficiency[k],
            threshold: KNEE_EFFICIENCY,
        });
        if let (Some(&a), Some(&b)) = (idx.first(), idx.last()) {
            if b > a {
                self.facts.push(Fact::Plateau {
                    from_clients: pts[a].clients,
                    to_clients: pts[b].clients,
                    throughput_rps: plateau_x,
                    from_latency_ms: pts[a].ok_mean_ms,
                    to_latency_ms: pts[b].ok_mean_ms,
                });
            }
        }
    }

    /// The client counts of the points at `idx`.
    pub fn clients_at(&self, idx: &[usize]) -> Vec<u32> {
        idx.iter().map(|&i| self.pts[i].clients).collect()
    }
}
