//! The analysis of a sweep with at least one success: the state every decision reads (the
//! points, the context, the ideal line) and [`Analysis::finish`], which runs the decisions in
//! order — ideal line and knee ([`crate::ideal`]), the kind rules ([`crate::kinds`]), size
//! ([`crate::size`]), models ([`crate::models`]) — and collects their facts into a [`Finding`].

use crate::finding::Finding;
use crate::models::models;
use crate::points::{shape_with, Point, Shape};
use chokepoint_result::{Fact, Kind, Overload, Plateau, Service, SweepContext};

/// What the decisions share.
pub(crate) struct Analysis<'p, 'a> {
    pub pts: &'p [Point<'a>],
    pub ctx: &'p SweepContext,
    /// The known downstream delay, ms.
    pub delay: Option<f64>,
    pub sh: Shape,
    /// Downstream calls per target request at the fewest clients the mock saw.
    pub calls: Option<f64>,
    /// The facts read so far, in the order the evidence tells them.
    pub facts: Vec<Fact>,
}

/// The kind's decision: its kind, limit, knee and plateau.
pub(crate) struct Decision {
    pub kind: Kind,
    pub limit: Option<f64>,
    pub knee_clients: Option<u32>,
    pub plateau: Option<Plateau>,
}

impl<'p, 'a> Analysis<'p, 'a> {
    /// The analysis of `pts`; a step the mock saw all in flight counts as following clients
    /// only when `all_in_flight_follows` (see [`crate::points::shape_with`]).
    pub fn new(pts: &'p [Point<'a>], ctx: &'p SweepContext, all_in_flight_follows: bool) -> Self {
        let delay = ctx
            .downstream_delay_ms
            .filter(|d| d.is_finite() && *d > 0.0);
        let sh = shape_with(pts, delay, all_in_flight_follows);
        let calls = pts.iter().find_map(|p| p.calls_per_request());
        Analysis {
            pts,
            ctx,
            delay,
            sh,
            calls,
            facts: Vec::new(),
        }
    }

    /// Whether the target's CPU was measured at some step.
    pub fn observed(&self) -> bool {
        self.ctx.target_observed && self.pts.iter().any(|p| p.target_cpu.is_some())
    }

    /// One downstream call per target request (or the mock did not say).
    pub fn single_call(&self) -> bool {
        self.calls.is_none_or(|c| (0.8..=1.25).contains(&c))
    }

    /// The time a request holds its slot, ms, and what it is: the downstream delay when the
    /// target makes one call per request and the base latency is that call; else the base
    /// latency.
    pub fn service(&self) -> (f64, Service) {
        let l0 = self.sh.base_ms;
        match self.delay {
            Some(d) if self.single_call() && (self.sh.base_from_delay || l0 <= 1.5 * d) => {
                (d, Service::DownstreamCall)
            }
            _ => (l0, Service::Request),
        }
    }

    pub fn finish(mut self) -> Finding {
        let pts = self.pts;
        self.base_facts();
        let knee = self.sh.knee.filter(|&k| self.knee_confirmed(k));
        let overload = knee.and_then(|k| crate::overload::classify(pts, k, self.sh.base_ms));
        // A plateau that then falls is no pool: more clients cost throughput.
        let collapses = matches!(overload, Some(Overload::Collapses { .. }));
        // A fall whose CPU per request held is the machine taking cores away, not thrashing.
        let thrashes = collapses && !crate::whole_cores::fall_follows_the_cpu(pts);
        let decision = self.decide_kind(knee, thrashes);
        let kind = if collapses && decision.kind == Kind::BlockingPool {
            Kind::Contention
        } else {
            decision.kind
        };
        if kind != Kind::ErrorBound {
            self.error_facts();
        }
        let fan_out = self.fan_out();
        if matches!(kind, Kind::BlockingPool | Kind::CpuBound | Kind::Contention) {
            if !self.ctx.mock_present {
                self.facts.push(Fact::NoMock);
            }
            if !self.ctx.target_observed && kind != Kind::CpuBound {
                self.facts.push(Fact::TargetNotObserved);
            }
        } else if !self.ctx.mock_present && kind != Kind::GeneratorBound {
            self.facts.push(Fact::NoMock);
        }
        if let Some(o) = &overload {
            self.facts.push(Fact::Overload {
                overload: o.clone(),
            });
        }
        let plateau_x = knee.map_or(0.0, |k| self.plateau(k).0);
        let pooled = knee.is_some()
            && matches!(
                kind,
                Kind::BlockingPool | Kind::CpuBound | Kind::ErrorBound | Kind::Contention
            );
        let fits = models(
            pts,
            self.sh.base_ms,
            pooled.then(|| self.service().0),
            plateau_x,
            collapses,
        );
        self.facts.extend(fits.facts);
        // Contention's size is the concurrency of peak throughput: the USL's when it has one.
        let limit = if kind == Kind::Contention {
            let peak = crate::overload::peak_of(pts).map(|p| f64::from(p.clients));
            fits.usl.and_then(|u| u.n_max).or(peak)
        } else {
            decision.limit
        };
        Finding {
            kind,
            limit: limit.filter(|l| l.is_finite()),
            knee_clients: decision.knee_clients,
            base_latency_ms: (self.sh.base_ms > 0.0).then_some(self.sh.base_ms),
            plateau: decision.plateau,
            usl: fits.usl,
            pool: fits.pool,
            better_model: fits.better,
            fan_out,
            overload,
            peak: crate::overload::peak_of(pts),
            facts: self.facts,
        }
    }
}
