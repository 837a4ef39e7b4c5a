//! The analysis of a sweep with at least one success: the state the kind's stages share (the
//! points, the context, the ideal line, the confirmed knee and how overload looks past it) and
//! the facts they collect, in the order the evidence tells them.
//!
//! [`Analysis::new`] reads the ideal line and the knee ([`crate::ideal`]). The stages then run
//! in the order [`crate::diagnose_with`] lists them: the first-match rules
//! ([`Analysis::first_match`], [`crate::kinds`]), the plateau's kind
//! ([`Analysis::plateau_kind`], [`crate::plateau_kind`]), a falling plateau
//! ([`Analysis::collapse`]), and [`Analysis::finish`], which adds the facts told whatever the
//! kind, the models ([`crate::models`]) and contention's size, and hands over a [`Finding`].

use crate::finding::Finding;
use crate::models::models;
use crate::points::{shape_with, Point, Shape};
use crate::whole_cores::WholeCores;
use chokepoint_result::{Fact, Kind, Overload, Plateau, Service, SweepContext};

/// How a step whose every call the mock saw in flight at once counts against the ideal line
/// (see [`crate::points::shape_with`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AllInFlight {
    /// It follows the clients, whatever its throughput (a paused machine).
    Follows,
    /// It counts short of the ideal line like any other step (a pool that gives every call a
    /// thread: see [`crate::growing::reconsider`]).
    Short,
}

/// What the decisions share.
pub(crate) struct Analysis<'p, 'a> {
    pub pts: &'p [Point<'a>],
    pub ctx: &'p SweepContext,
    /// The known downstream delay, ms.
    pub delay: Option<f64>,
    pub sh: Shape,
    /// Downstream calls per target request at the fewest clients the mock saw.
    pub calls: Option<f64>,
    /// The confirmed knee (a point index): where throughput really stopped following clients.
    pub knee: Option<usize>,
    /// What the steps past the knee show the service doing under overload.
    pub overload: Option<Overload>,
    /// Throughput falls past its peak (a plateau that then falls is no pool: more clients cost
    /// throughput).
    pub collapses: bool,
    /// It falls while the target's CPU per request does not: thrashing, not the machine taking
    /// cores away.
    pub thrashes: bool,
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

/// What the first-match rules found ([`Analysis::first_match`]).
pub(crate) enum FirstMatch {
    /// A rule other than the plateau's decided the kind.
    Decided(Decision),
    /// Throughput stopped at the confirmed knee (a point index): the plateau's kind is the next
    /// stage's. `whole` when the target kept whole cores busy from the knee on, which made the
    /// plateau match before stalls and errors.
    Plateau {
        knee: usize,
        whole: Option<WholeCores>,
    },
}

impl<'p, 'a> Analysis<'p, 'a> {
    /// The analysis of `pts`, the steps the mock saw all in flight counted as `all_in_flight`
    /// says: the ideal line, its facts, and the knee when it is a real stop.
    pub fn new(pts: &'p [Point<'a>], ctx: &'p SweepContext, all_in_flight: AllInFlight) -> Self {
        let delay = ctx
            .downstream_delay_ms
            .filter(|d| d.is_finite() && *d > 0.0);
        let sh = shape_with(pts, delay, all_in_flight == AllInFlight::Follows);
        let calls = pts.iter().find_map(|p| p.calls_per_request());
        let mut analysis = Analysis {
            pts,
            ctx,
            delay,
            sh,
            calls,
            knee: None,
            overload: None,
            collapses: false,
            thrashes: false,
            facts: Vec::new(),
        };
        analysis.base_facts();
        analysis.knee = analysis.sh.knee.filter(|&k| analysis.knee_confirmed(k));
        analysis.overload = analysis
            .knee
            .and_then(|k| crate::overload::classify(pts, k, analysis.sh.base_ms));
        analysis.collapses = matches!(analysis.overload, Some(Overload::Collapses { .. }));
        // A fall whose CPU per request held is the machine taking cores away, not thrashing.
        analysis.thrashes = analysis.collapses && !crate::whole_cores::fall_follows_the_cpu(pts);
        analysis
    }

    /// Whether the target's CPU was measured at some step.
    pub fn observed(&self) -> bool {
        self.ctx.target_observed && self.pts.iter().any(|p| p.target_cpu.is_some())
    }

    /// One downstream call per target request (or the mock did not say).
    pub fn single_call(&self) -> bool {
        self.pts
            .iter()
            .find(|p| p.calls_per_request().is_some())
            .and_then(Point::one_call)
            .unwrap_or(true)
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

    /// A plateau that then falls is no pool: more clients cost throughput. A `blocking-pool`
    /// whose throughput collapses past its peak is `contention` (its size is the models', in
    /// [`Analysis::finish`]).
    pub fn collapse(&self, decision: Decision) -> Decision {
        if self.collapses && decision.kind == Kind::BlockingPool {
            Decision {
                kind: Kind::Contention,
                ..decision
            }
        } else {
            decision
        }
    }

    /// The finding of `decision`: with the facts told whatever the kind (errors, fan-out, what
    /// was not observed, overload), the models' fits, and contention's size.
    pub fn finish(mut self, decision: Decision) -> Finding {
        let pts = self.pts;
        let knee = self.knee;
        let collapses = self.collapses;
        let overload = self.overload.take();
        let kind = decision.kind;
        if kind != Kind::ErrorBound {
            self.error_facts();
        }
        let fan_out = self.fan_out();
        // The warm-up came before every step: its sentence first.
        if let Some(warmup) = self.ctx.warmup {
            self.facts.insert(0, Fact::WarmedUp { warmup });
        }
        if let Some(forwarder) = &self.ctx.forwarder {
            self.facts.push(Fact::BehindForwarder {
                forwarder: forwarder.clone(),
            });
        }
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
        let peak = crate::overload::peak_of(pts);
        let limit = if kind == Kind::Contention {
            crate::overload::contention_size(fits.usl, peak.as_ref())
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
            peak,
            facts: self.facts,
        }
    }
}
