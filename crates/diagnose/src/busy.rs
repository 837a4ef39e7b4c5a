//! A machine busy before the load: other processes held its CPU from the sweep's first steps
//! ([`Fact::MachineBusyBeforeLoad`]).
//!
//! Why, from first principles. Below the knee the target serves every client at once and the
//! load is light, so what keeps the machine busy there is other work: a build, another test,
//! a noisy neighbour. When that work leaves less than half a core idle
//! ([`crate::saturation::saturated_machine_pct`]: 75% busy on 2 cores, 90% from 5 cores up),
//! the target runs on whatever share of the CPU the scheduler hands it, and that share, not a
//! pool of its own, can cap its throughput. A CPU-starved event loop then looks from the client
//! side exactly like a pool: throughput flat past some clients, the mock's in-flight count
//! wandering below its maximum, or bursts of completions between the loop's turns on the CPU
//! (periodic stalls). Node's one-loop target (tests/targets/node-cpu-downstream), recorded on
//! a machine others kept 100% busy, read as a pool of ~7.3, a pool of ~4.4 and stalls every
//! 0.3 s in three sweeps; its truth is one core it was not given whole.
//!
//! Only a target that used CPU at the plateau can have been held back by its share of it. Under
//! Linux's fair scheduler every runnable thread of equal weight gets an equal share of a core,
//! so a target that got less than [`STARVED_CORES`] (a tenth of a core) would have had to wait
//! behind ten runnable threads on every core; one that burnt so little was waiting on something
//! else. py-pool-timeout's pool of 8 (a sleep in each slot, 0.2 ms of CPU a request), recorded
//! on the same busy machine, used 0.017 of a core at its plateau and is a pool.
//!
//! The rule: a `blocking-pool` or `connection-limit` whose steps below the knee show other
//! processes holding the machine at or past the saturated share (median over those steps, the
//! target observed so that its own CPU is not counted as theirs), and whose target used at
//! least [`STARVED_CORES`] at the plateau (median), is `machine-saturated`, and names no
//! limit: the finding says what it saw and what the client side alone would have read. It runs
//! after every other stage and never overrides direct evidence of a pool: the mock's ceiling
//! agreeing with the limit, connections or threads held at the limit, a stream cap
//! ([`crate::thrash::a_pool_is_seen`]). A `cpu-bound` finding is no reading of a pool, so this
//! rule leaves it to the others.
use crate::evidence::Evidence;
use crate::finding::Finding;
use crate::saturation::{others_pct, saturated_machine_pct, STARVED_CORES};
use crate::thrash::a_pool_is_seen;
use chokepoint_result::{median, Fact, Kind, Step};

/// `finding` as `machine-saturated` when others held the machine from its first steps (see the
/// module), else as it was.
pub(crate) fn reconsider(mut finding: Finding, evidence: &Evidence<'_>) -> Finding {
    if !matches!(finding.kind, Kind::BlockingPool | Kind::ConnectionLimit)
        || a_pool_is_seen(&finding)
    {
        return finding;
    }
    let Some(fact) = busy_before_load(&finding, evidence) else {
        return finding;
    };
    finding.kind = Kind::MachineSaturated;
    finding.limit = None;
    finding.facts.insert(0, fact);
    finding
}

/// The other processes' hold on the machine below the knee, when it left less than half a core.
fn busy_before_load(finding: &Finding, evidence: &Evidence<'_>) -> Option<Fact> {
    let cores = f64::from(evidence.context.cores?);
    let knee = finding.knee_clients?;
    if !evidence.context.target_observed || cores <= 0.0 {
        return None;
    }
    let below: Vec<&Step> = evidence
        .steps
        .iter()
        .filter(|s| s.clients > 0 && s.clients < knee)
        .filter(|s| s.machine_contended_cpu_pct().is_some() && s.target_cpu_pct.is_some())
        .collect();
    // The generator's figure is a share of the cores it may use: all of them here, as the
    // saturation stage reads it.
    let others = |s: &&Step| {
        others_pct(
            s.machine_contended_cpu_pct().unwrap_or(0.0),
            s.target_cpu_pct,
            s.generator_cpu_pct,
        )
    };
    let others_pct = median(below.iter().map(others))?;
    if others_pct < saturated_machine_pct(cores) {
        return None;
    }
    let plateau_cores = median(
        evidence
            .steps
            .iter()
            .filter(|s| s.clients >= knee)
            .filter_map(|s| s.target_cpu_pct)
            .map(|pct| pct * cores / 100.0),
    )?;
    if plateau_cores < STARVED_CORES {
        return None;
    }
    let mut clients: Vec<u32> = below.iter().map(|s| s.clients).collect();
    clients.sort_unstable();
    clients.dedup();
    Some(Fact::MachineBusyBeforeLoad {
        clients,
        machine_cpu_pct: median(below.iter().filter_map(|s| s.machine_contended_cpu_pct()))?,
        others_pct,
        suggested: finding.kind,
        suggested_limit: finding.limit,
    })
}
