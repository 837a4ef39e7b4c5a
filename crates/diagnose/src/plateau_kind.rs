//! A plateau's kind: `cpu-bound` when the target's CPU saturated, when one request in service
//! burns ≥ 30% of a core (15% of all cores when the cores are unknown) with the downstream idle
//! or absent — CPU work on fewer threads than cores —, when it kept a whole number of cores
//! busy from the knee on ([`crate::whole_cores`]: the mock's ceiling is then a consequence), or
//! when the CPU was not observed and the downstream stayed idle; `blocking-pool` otherwise. A
//! CPU limit is sized by the cores the target kept busy (by its threads running, when a busy
//! machine gave it less than they wanted).
//!
//! This stage runs after the first-match rules ([`crate::kinds`]) and decides only when they
//! found a plateau ([`FirstMatch::Plateau`]); a kind they decided passes through.

use crate::analysis::{Analysis, Decision, FirstMatch};
use crate::points::median;
use crate::whole_cores::{pool_ceiling, Evidence, WholeCores};
use chokepoint_result::{Fact, Kind, Plateau};

/// Share of one core a request in service must burn to count as CPU work (a request waiting on
/// a call burns next to nothing; one computing burns most of a core).
const CPU_HEAVY_CORE_SHARE: f64 = 0.3;
/// The same, in percent of all cores, when the number of cores is unknown.
const CPU_HEAVY_PCT: f64 = 15.0;
/// A CPU quota binds when the target keeps this share of it busy (CFS lets a group run its
/// quota per period, so a bound group reads at the quota less the periods' edges)...
const QUOTA_USED: f64 = 0.9;
/// ...and the kernel throttled it in this share of the periods or more (a group below its
/// quota is throttled in none; bursts may catch a few).
const QUOTA_THROTTLED: f64 = 0.2;
/// A later plateau step is faster by this factor or more (past the ±3% within which a settled
/// step's throughput is known)...
const FASTER: f64 = 1.03;
/// ...at this share of the earlier step's target CPU or less (past a sample's noise).
const LESS_CPU: f64 = 0.95;

impl Analysis<'_, '_> {
    /// The kind of the plateau the first-match rules found, or the kind they decided.
    pub fn plateau_kind(&mut self, first: FirstMatch) -> Decision {
        match first {
            FirstMatch::Decided(decision) => decision,
            FirstMatch::Plateau { knee, whole } => self.of_plateau(knee, whole),
        }
    }

    /// The kind of the plateau past the confirmed knee `k`; `whole` when the target kept whole
    /// cores busy from it on.
    fn of_plateau(&mut self, k: usize, whole: Option<WholeCores>) -> Decision {
        let pts = self.pts;
        let (plateau_x, idx) = self.plateau(k);
        let clients = self.clients_at(&idx);
        let from = clients.first().copied().unwrap_or(pts[k].clients);
        let size = self.size(plateau_x, &idx);
        let mut limit = size.limit;
        self.knee_facts(k, plateau_x, &idx);
        let target_cpu = median(idx.iter().filter_map(|&i| pts[i].target_cpu));
        let generator_cpu = median(idx.iter().map(|&i| pts[i].generator_cpu));
        let observed = self.ctx.target_observed && idx.iter().any(|&i| pts[i].target_cpu.is_some());
        let quota = self.quota_bound(&idx, target_cpu);
        let cpu_saturated = observed
            && (target_cpu >= 75.0
                || (target_cpu + generator_cpu >= 90.0 && target_cpu > generator_cpu)
                || quota.is_some());
        let idle = self.downstream_idle(&idx, size.little);
        // CPU per request in service at the fewest clients, in percent of all cores: a
        // request that waits on a call burns almost none; one doing CPU work burns a core.
        let first = &pts[0];
        let in_service = (first.x * first.mean_ms / 1000.0).max(first.clients as f64 * 0.5);
        let cpu_per_request = match (observed, first.target_cpu) {
            (true, Some(t)) if in_service > 0.0 => t / in_service,
            _ => 0.0,
        };
        let heavy_enough = match self.ctx.cores {
            Some(cores) if cores > 0 => {
                cpu_per_request * cores as f64 / 100.0 >= CPU_HEAVY_CORE_SHARE
            }
            _ => cpu_per_request >= CPU_HEAVY_PCT,
        };
        let cpu_heavy = heavy_enough && (idle.is_some() || !self.ctx.mock_present);
        // A CPU limit is sized by the cores the target kept busy at the plateau: Little's
        // law over the base latency counts the time a request waits for a core too, and a
        // loaded machine makes that wait large.
        let cores_busy = match self.ctx.cores {
            Some(cores) if observed && cores > 0 && target_cpu > 0.0 => {
                Some((cores, target_cpu * cores as f64 / 100.0))
            }
            _ => None,
        };
        let cpu_limit = cores_busy.map_or(size.limit, |c| c.1);
        // Direct evidence first: a flat ceiling of calls in flight with throughput that grew
        // while the CPU fell is a pool, whatever the CPU readings say (see ceiling_over_cpu).
        // It is told only when it overrides a CPU reading.
        let ceiling = (cpu_saturated || cpu_heavy || whole.is_some())
            .then(|| self.ceiling_over_cpu(k))
            .flatten();
        let (cpu_saturated, cpu_heavy) = match ceiling {
            Some(_) => (false, false),
            None => (cpu_saturated, cpu_heavy),
        };
        let whole = whole.filter(|_| !(cpu_saturated || cpu_heavy) && ceiling.is_none());
        self.facts.extend(ceiling);
        if let Some(whole) = whole {
            limit = match whole.evidence {
                Evidence::CoresBusy => whole.cores_busy.unwrap_or(cpu_limit),
                Evidence::ThreadsRunning => whole.threads_running.unwrap_or(cpu_limit),
                // One thread runs Python at a time: the lock's size is one core.
                Evidence::InterpreterLock => 1.0,
            };
            self.whole_cores_fact(k, whole);
        }
        if cpu_saturated || cpu_heavy {
            limit = cpu_limit;
            self.facts.extend(quota);
            if let Some((cores, busy)) = cores_busy {
                self.facts.push(Fact::CoresBusy {
                    clients: clients.clone(),
                    target_cpu_pct: target_cpu,
                    cores,
                    cores_busy: busy,
                    little: size.limit,
                });
            }
            if idx.iter().any(|&i| pts[i].machine_cpu.is_some()) {
                let machine_cpu = median(idx.iter().filter_map(|&i| pts[i].machine_cpu));
                let others = (machine_cpu - target_cpu - generator_cpu).max(0.0);
                self.facts.push(Fact::MachineCpu {
                    clients: clients.clone(),
                    machine_cpu_pct: machine_cpu,
                    target_cpu_pct: target_cpu,
                    generator_cpu_pct: generator_cpu,
                    others_pct: others,
                    contended: machine_cpu >= 90.0 && others >= 20.0,
                });
            }
        }
        let kind;
        if cpu_saturated {
            kind = Kind::CpuBound;
            self.facts.push(Fact::CpuSaturated {
                clients: clients.clone(),
                target_cpu_pct: target_cpu,
                generator_cpu_pct: generator_cpu,
                in_service: cpu_limit,
            });
        } else if cpu_heavy {
            kind = Kind::CpuBound;
            self.facts.push(Fact::CpuPerRequest {
                clients: first.clients,
                target_cpu_pct: first.target_cpu.unwrap_or(0.0),
                in_service,
                per_request_pct: cpu_per_request,
                plateau_cpu_pct: target_cpu,
                limit_in_service: cpu_limit,
            });
            self.facts.extend(idle);
        } else if whole.is_some() {
            kind = Kind::CpuBound;
        } else if let (false, Some(idle)) = (observed, idle.clone()) {
            kind = Kind::CpuBound;
            self.facts.push(idle);
            self.facts.push(Fact::TargetNotObserved);
        } else {
            kind = Kind::BlockingPool;
            if observed {
                self.facts.push(Fact::CpuNotLimit {
                    clients: clients.clone(),
                    target_cpu_pct: target_cpu,
                    generator_cpu_pct: generator_cpu,
                });
            }
            self.facts.extend(idle);
        }
        if whole.is_none() {
            // With whole cores the mock's ceiling is a consequence, told in their fact.
            self.facts.extend(size.facts);
            if let Some((low, high)) = self.batch_range(k) {
                limit = size.limit.clamp(low, high);
            }
        }
        Decision {
            kind,
            limit: Some(limit),
            knee_clients: Some(pts[k].clients),
            plateau: Some(Plateau {
                throughput_rps: plateau_x,
                from_clients: from,
                clients,
            }),
        }
    }

    /// The fact of the whole-cores rule over the points from the knee `k` on, with the machine's
    /// CPU and the mock's ceiling beside it.
    fn whole_cores_fact(&mut self, k: usize, whole: WholeCores) {
        let past = &self.pts[k..];
        let clients: Vec<u32> = past.iter().map(|p| p.clients).collect();
        let of = |pick: &dyn Fn(&crate::points::Point<'_>) -> Option<f64>| {
            let values: Vec<f64> = past.iter().filter_map(pick).collect();
            (!values.is_empty()).then(|| median(values))
        };
        let machine_cpu_pct = of(&|p| p.machine_cpu);
        let mock_max_in_flight = of(&|p| p.inflight_max).filter(|&m| m > 0.0);
        let machine_cores = self.ctx.cores.unwrap_or(0);
        self.facts.push(match whole.evidence {
            Evidence::CoresBusy => Fact::WholeCores {
                clients,
                cores: whole.cores,
                cores_busy: whole.cores_busy.unwrap_or(0.0),
                machine_cores,
                threads_running: whole.threads_running,
                machine_cpu_pct,
                mock_max_in_flight,
            },
            Evidence::ThreadsRunning => Fact::WholeThreadsRunning {
                clients,
                cores: whole.cores,
                threads_running: whole.threads_running.unwrap_or(0.0),
                cores_busy: whole.cores_busy,
                machine_cores,
                machine_cpu_pct,
                mock_max_in_flight,
            },
            Evidence::InterpreterLock => Fact::InterpreterLock {
                clients,
                waiting: whole.lock_waiting.unwrap_or(0.0),
                cores_busy: whole.cores_busy,
                machine_cores,
                mock_max_in_flight,
            },
        });
    }

    /// When the mock is present and stayed (nearly) idle at the plateau: a
    /// [`Fact::DownstreamIdle`].
    /// The mock's ceiling over the CPU: the very same most calls in flight at every step from
    /// the knee `k` on, every slot held ([`pool_ceiling`]), and a later step that served more
    /// at less target CPU. If the CPU held throughput, serving more would take more of it
    /// (throughput = usable CPU / CPU per request); a faster step at less CPU had CPU to spare,
    /// so the CPU was not the limit at the plateau, and the ceiling is. A flat ceiling alone is
    /// not enough: a CPU-bound service keeps as many calls in flight as its core's throughput
    /// allows, also flat (crate::whole_cores).
    fn ceiling_over_cpu(&self, k: usize) -> Option<Fact> {
        let past = &self.pts[k..];
        if past.len() < 2 || !pool_ceiling(past) {
            return None;
        }
        let reading = |p: &crate::points::Point<'_>| Some((p.clients, p.ok_x, p.target_cpu?));
        let readings: Vec<(u32, f64, f64)> = past.iter().filter_map(reading).collect();
        let (slower, faster) = readings.iter().enumerate().find_map(|(i, &slow)| {
            readings[i + 1..]
                .iter()
                .find(|fast| fast.1 >= FASTER * slow.1 && fast.2 <= LESS_CPU * slow.2)
                .map(|&fast| (slow, fast))
        })?;
        Some(Fact::CeilingOverCpu {
            clients: past.iter().map(|p| p.clients).collect(),
            in_flight: past[0].inflight_max.unwrap_or(0.0),
            slower,
            faster,
        })
    }

    /// The target's control group at its CPU quota over the plateau steps `idx`: its cores
    /// busy at [`QUOTA_USED`] of the quota or more, and the kernel throttling it in
    /// [`QUOTA_THROTTLED`] of the CFS periods or more (medians). Throttling is the kernel's own
    /// word that the group used up its quota before the period ended; the cores busy say that
    /// this, not a pool, is what the plateau stands on. The machine's other cores do not matter:
    /// a group at its quota waits with cores idle.
    fn quota_bound(&self, idx: &[usize], target_cpu: f64) -> Option<Fact> {
        let machine_cores = self.ctx.cores?;
        let quotas: Vec<&chokepoint_result::CpuQuota> = idx
            .iter()
            .flat_map(|&i| &self.pts[i].steps)
            .filter_map(|step| step.cpu_quota.as_ref())
            .collect();
        let first = quotas.first()?;
        let cores_busy = target_cpu * f64::from(machine_cores) / 100.0;
        let throttled_share = median(quotas.iter().map(|q| q.throttled_share()));
        let seconds =
            |q: &&chokepoint_result::CpuQuota| q.periods as f64 * q.period_us as f64 / 1e6;
        let throttled_per_s = median(
            quotas
                .iter()
                .filter(|q| seconds(q) > 0.0)
                .map(|q| q.throttled_s / seconds(q)),
        );
        (cores_busy >= QUOTA_USED * first.cores && throttled_share >= QUOTA_THROTTLED).then(|| {
            Fact::CpuQuota {
                clients: self.clients_at(idx),
                quota_cores: first.cores,
                cores_busy,
                machine_cores,
                throttled_share,
                throttled_per_s,
                group: first.group.clone(),
                version: first.version,
                runtime_cores: quotas
                    .iter()
                    .find_map(|q| q.runtime_cores.clone())
                    .filter(|runtime| runtime.exceeds(first.cores)),
            }
        })
    }

    fn downstream_idle(&self, idx: &[usize], little: f64) -> Option<Fact> {
        if !self.ctx.mock_present {
            return None;
        }
        let calls: Vec<f64> = idx
            .iter()
            .filter_map(|&i| self.pts[i].calls_per_request())
            .collect();
        let in_flight: Vec<f64> = idx
            .iter()
            .filter_map(|&i| self.pts[i].inflight_mean)
            .collect();
        if calls.is_empty() && in_flight.is_empty() {
            return None;
        }
        let calls = if calls.is_empty() { 1.0 } else { median(calls) };
        let in_flight = (!in_flight.is_empty()).then(|| median(in_flight));
        let l0 = self.sh.base_ms;
        let mut in_service = self.pts[idx[0]].ok_x * l0 / 1000.0;
        if little > 0.0 {
            in_service = in_service.max(little);
        }
        let idle =
            calls < 0.5 || (in_service > 0.0 && in_flight.is_some_and(|m| m < 0.5 * in_service));
        idle.then(|| Fact::DownstreamIdle {
            clients: self.clients_at(idx),
            calls_per_request: calls,
            in_flight,
            in_service,
        })
    }
}
