//! The first-match rules of the kind, first match wins: `generator-bound`; a plateau on whole
//! cores ([`crate::whole_cores`]); `connection-limit` (periodic stalls); `error-bound` (unless
//! the errors began only past a plateau that held without them: overload, not the limit); a
//! plateau; `no-limit-found` otherwise. A plateau's kind is the next stage's
//! ([`crate::plateau_kind`]): this one only says there is one ([`FirstMatch::Plateau`]). Also
//! the facts told whatever the kind: small error shares and fan-out.

use crate::analysis::{Analysis, Decision, FirstMatch};
use crate::points::{error_counts, median, Point, KNEE_EFFICIENCY};
use crate::stalls::{find_stalls, Stalls};
use chokepoint_result::{Fact, FanOutShape, Kind, Plateau};

/// Error rate above which errors decide the kind.
const ERROR_BOUND_RATE: f64 = 0.05;
/// Share of the best throughput the steps before the errors must hold for the errors to count
/// as overload of a plateau rather than the limit.
const PLATEAU_HELD: f64 = 0.8;
/// Generator CPU (percent) above which the numbers are the generator's.
pub(crate) const GENERATOR_SATURATED_PCT: f64 = 90.0;

impl Analysis<'_, '_> {
    /// Runs the first-match rules in order on the confirmed knee.
    pub fn first_match(&mut self) -> FirstMatch {
        let pts = self.pts;
        let (knee, thrashes) = (self.knee, self.thrashes);
        let knee_clients = knee.map(|k| pts[k].clients);
        // The generator explains the limit when it saturated where throughput stopped
        // following (the knee step or the next) and its total rate, errors included, stopped
        // too: a shedding target's fast errors can busy the generator past a knee it did not
        // cause.
        let base_s = self.sh.base_ms / 1000.0;
        let generator = knee.and_then(|k| {
            (k..pts.len().min(k + 2)).find(|&i| {
                let p = &pts[i];
                p.generator_cpu > GENERATOR_SATURATED_PCT
                    && p.x * base_s / (p.clients as f64) < KNEE_EFFICIENCY
            })
        });
        if generator.is_none() && knee.is_some() {
            self.generator_busy(true);
        }
        let stalls = self.stalls();
        let error_from = (0..pts.len())
            .find(|&i| {
                pts[i].error_rate > ERROR_BOUND_RATE
                    && median(pts[i..].iter().map(|p| p.error_rate)) > ERROR_BOUND_RATE
            })
            .filter(|&f| !errors_only_past_a_plateau(pts, knee, f));
        // A whole number of cores busy from the knee on decides before stalls and the mock's
        // ceiling, unless errors decide or the target thrashes (a spinning lock keeps its core
        // busy too).
        let whole = match (knee, self.ctx.cores) {
            (Some(k), Some(cores)) if error_from.is_none() && !thrashes && self.observed() => {
                crate::whole_cores::whole_cores(&pts[k..], cores)
            }
            _ => None,
        };
        if let Some(i) = generator {
            let p = &pts[i];
            self.facts.push(Fact::GeneratorBound {
                clients: p.clients,
                generator_cpu_pct: p.generator_cpu,
                threshold_pct: GENERATOR_SATURATED_PCT,
                efficiency: self.sh.efficiency[i],
            });
            FirstMatch::Decided(Decision {
                kind: Kind::GeneratorBound,
                limit: None,
                knee_clients,
                plateau: None,
            })
        } else if let (Some(k), Some(whole)) = (knee, whole) {
            FirstMatch::Plateau {
                knee: k,
                whole: Some(whole),
            }
        } else if let Some((i, st, cap)) = stalls {
            FirstMatch::Decided(self.connection_limit(i, st, cap, knee_clients))
        } else if let Some(f) = error_from {
            FirstMatch::Decided(self.error_bound(f, knee_clients))
        } else if let Some(k) = knee {
            FirstMatch::Plateau {
                knee: k,
                whole: None,
            }
        } else {
            self.generator_busy(false);
            let last = &pts[pts.len() - 1];
            if self.ctx.max_clients > 0 && last.clients >= self.ctx.max_clients {
                self.facts.push(Fact::MaxClientsReached {
                    max_clients: self.ctx.max_clients,
                });
            }
            FirstMatch::Decided(Decision {
                kind: Kind::NoLimitFound,
                limit: None,
                knee_clients,
                plateau: None,
            })
        }
    }

    /// The first step where the generator's CPU was saturated, when one was.
    fn generator_busy(&mut self, past_limit: bool) {
        if let Some(g) = self
            .pts
            .iter()
            .find(|p| p.generator_cpu > GENERATOR_SATURATED_PCT)
        {
            self.facts.push(Fact::GeneratorBusy {
                clients: g.clients,
                generator_cpu_pct: g.generator_cpu,
                past_limit,
            });
        }
    }

    /// Periodic stalls: connections run out and come back in batches.
    fn connection_limit(
        &mut self,
        i: usize,
        st: Stalls,
        cap: Option<f64>,
        knee_clients: Option<u32>,
    ) -> Decision {
        let p = &self.pts[i];
        let size = cap.unwrap_or(st.per_burst);
        self.facts.push(Fact::Stalls {
            clients: p.clients,
            count: st.count,
            stall_s: st.stall_s,
            period_s: st.period_s,
            per_burst: st.per_burst,
            spans: st.spans,
        });
        if let Some(c) = cap {
            self.facts.push(Fact::MockConnectionCap {
                clients: p.clients,
                max_open: p.ds_max_connections.unwrap_or(c),
                cap: c,
                keepalive_timeout_ms: self.ctx.mock_keepalive_timeout_ms,
            });
        } else if self.ctx.mock_present {
            self.facts.push(Fact::NoMockConnectionCap);
        }
        Decision {
            kind: Kind::ConnectionLimit,
            limit: Some(size),
            knee_clients: Some(knee_clients.map_or(p.clients, |k| k.min(p.clients))),
            plateau: None,
        }
    }

    /// More than 5% errors from step `f` on: the target sheds load; the limit is what it
    /// serves.
    fn error_bound(&mut self, f: usize, knee_clients: Option<u32>) -> Decision {
        let pts = self.pts;
        let p = &pts[f];
        let err_p50 = median(
            p.steps
                .iter()
                .filter_map(|s| s.error_latency_ms.map(|l| l.p50)),
        );
        let ok_plateau = median(pts[f..].iter().map(|p| p.ok_x));
        let idx: Vec<usize> = (f..pts.len()).collect();
        let size = self.size(ok_plateau, &idx);
        self.facts.push(Fact::ErrorsStart {
            clients: p.clients,
            error_rate: p.error_rate,
            errors: error_counts(p),
            error_p50_ms: (err_p50 > 0.0).then_some(err_p50),
            threshold: ERROR_BOUND_RATE,
        });
        let clients = self.clients_at(&idx);
        self.facts.push(Fact::Served {
            from_clients: p.clients,
            clients: clients.clone(),
            ok_throughput_rps: ok_plateau,
        });
        self.facts.extend(size.facts);
        let mut limit = size.limit;
        if let Some((low, high)) = self.batch_range(f) {
            limit = limit.clamp(low, high);
        }
        Decision {
            kind: Kind::ErrorBound,
            limit: Some(limit),
            knee_clients: Some(knee_clients.map_or(p.clients, |k| k.min(p.clients))),
            plateau: Some(Plateau {
                throughput_rps: ok_plateau,
                from_clients: p.clients,
                clients,
            }),
        }
    }

    /// Stalls with their point index and the connection cap when the mock was at it.
    fn stalls(&self) -> Option<(usize, Stalls, Option<f64>)> {
        let base_p50 = if self.pts[0].ok_p50_ms > 0.0 {
            self.pts[0].ok_p50_ms
        } else {
            self.sh.base_ms
        };
        let min_stall_s = 1.5 * base_p50 / 1000.0;
        let cap = self.ctx.mock_max_connections.map(|c| c as f64);
        self.pts.iter().enumerate().find_map(|(i, p)| {
            let st = p.steps.iter().find_map(|s| find_stalls(s, min_stall_s))?;
            // The mock's connections open at once; a result from before the mock counted them
            // (no `downstream`) has its calls in flight instead, a lower bound: over HTTP/1.1,
            // the only protocol the mock spoke then, each call holds a connection.
            let open = p.ds_max_connections.or(p
                .steps
                .iter()
                .all(|s| s.downstream.is_none())
                .then_some(p.inflight_max)
                .flatten());
            let at_cap = match (cap, open) {
                (Some(c), Some(m)) => m >= 0.9 * c,
                _ => false,
            };
            let accepted = if cap.is_some() && self.ctx.mock_present {
                at_cap
            } else {
                st.count >= 3
            };
            accepted.then_some((i, st, if at_cap { cap } else { None }))
        })
    }

    /// Every step with failed requests (when errors did not decide the kind).
    pub fn error_facts(&mut self) {
        for p in self.pts {
            if p.error_rate > 0.0 {
                self.facts.push(Fact::Errors {
                    clients: p.clients,
                    error_rate: p.error_rate,
                    errors: error_counts(p),
                });
            }
        }
    }

    /// With more than 1.8 downstream calls per request: parallel when the latency is nearer
    /// the slowest call than the sum of the calls.
    pub fn fan_out(&mut self) -> Option<FanOutShape> {
        if !self.ctx.mock_present {
            return None;
        }
        let p = self.pts.iter().find(|p| p.calls_per_request().is_some())?;
        let calls = p.calls_per_request()?;
        if calls < 1.8 {
            return None;
        }
        let (slowest, sum) = call_delays(p, calls, self.delay)?;
        let base = p.ok_mean_ms;
        if slowest <= 0.0 || base <= 0.0 {
            return None;
        }
        let shape = if base < (slowest + sum) / 2.0 {
            FanOutShape::Parallel
        } else {
            FanOutShape::Serial
        };
        self.facts.push(Fact::FanOut {
            clients: p.clients,
            calls_per_request: calls,
            latency_ms: base,
            slowest_ms: slowest,
            serial_ms: sum,
            shape,
        });
        Some(shape)
    }
}

/// Whether the errors from point `f` on came only after the knee's steps had held a plateau
/// without them: then the limit is what held the plateau and the errors are what overload does
/// to it (the overload probes' timeouts), not the limit.
fn errors_only_past_a_plateau(pts: &[Point<'_>], knee: Option<usize>, f: usize) -> bool {
    let best = pts.iter().map(|p| p.ok_x).fold(0.0, f64::max);
    knee.is_some_and(|k| {
        f > k
            && pts[k..f].iter().all(|p| p.error_rate <= ERROR_BOUND_RATE)
            // The plateau held the best throughput: a service that lost most of it before the
            // errors came (a leak) is not a pool at its limit.
            && median(pts[k..f].iter().map(|p| p.ok_x)) >= PLATEAU_HELD * best
    })
}

/// The slowest downstream call and the sum of a request's calls, ms: from the stubs' delays
/// weighted by their calls per request, else `calls` × the global delay.
fn call_delays(p: &Point<'_>, calls: f64, delay: Option<f64>) -> Option<(f64, f64)> {
    let step = p.steps.iter().find(|s| s.downstream.is_some())?;
    let ds = step.downstream.as_ref()?;
    let requests = step.requests.max(1) as f64;
    let delays: Vec<(f64, f64)> = ds
        .stubs
        .iter()
        .filter(|s| s.requests > 0)
        .filter_map(|s| s.delay_ms.map(|d| (d, s.requests as f64 / requests)))
        .collect();
    if !delays.is_empty() {
        Some((
            delays.iter().map(|d| d.0).fold(0.0, f64::max),
            delays.iter().map(|d| d.0 * d.1).sum::<f64>(),
        ))
    } else {
        let d = delay?;
        Some((d, d * calls))
    }
}
