//! A machine busy with other work: other processes held its CPU from the sweep's first steps
//! ([`Fact::MachineBusyBeforeLoad`]), or took it as throughput fell past the peak
//! ([`Fact::MachineTakenAtFall`]).
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
//!
//! **Others taking the machine as throughput fell** ([`Fact::MachineTakenAtFall`], session 29).
//! A fall past the peak reads as contention: the target's requests getting in each other's way
//! cost throughput. The same fall comes when other processes take the cores in the middle of a
//! sweep (a build, a test, a backup starting on a shared runner): the target serves at the rate
//! of the CPU it is given. The two differ in what a request costs: contention burns CPU on
//! every request it slows (spinning, retries, wake-ups: the CPU per request rises with the
//! clients, [`crate::thrash`]), while a target starved of cores does the same work per request
//! on less CPU. The rule: a `contention` finding whose evidence is a fall past the peak
//! (`Overload::Collapses`), with the target observed, whose CPU per successful request at the
//! largest step is within a quarter of the peak's ([`crate::whole_cores::fall_follows_the_cpu`])
//! and whose falling steps show other processes holding the machine at or past the saturated
//! share (the median over the steps past the peak; [`saturated_machine_pct`], as below the knee)
//! is `machine-saturated`, and names no limit. Direct evidence wins: a rise of the CPU per
//! request ([`Fact::CpuPerRequestRises`]) is contention's own, and leaves the finding as it is.
//! Left as it was, and not yet right: a fall past a pool seen at its limit (the mock's ceiling
//! read as the limit), which the collapse rule already reads as contention; the plateau, the
//! fits and the words of that finding all come from the fall, and a pool restored beside them
//! would contradict them. Not read: a target not observed, whose CPU cannot be told from the
//! others'.
use crate::evidence::Evidence;
use crate::finding::Finding;
use crate::points::Point;
use crate::saturation::{others_pct, saturated_machine_pct, STARVED_CORES};
use crate::thrash::a_pool_is_seen;
use chokepoint_result::{median, Fact, Kind, Overload, Step};

/// What processes other than the target and the generator held of the machine at `step`,
/// percent of all cores; `None` without the machine's share. The generator's figure is a share
/// of the cores it may use: all of them here, as the saturation stage reads it.
fn others_at(step: &Step) -> Option<f64> {
    let machine = step.machine_contended_cpu_pct()?;
    Some(others_pct(
        machine,
        step.target_cpu_pct,
        step.generator_cpu_pct,
    ))
}

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
    let others_pct = median(below.iter().filter_map(|s| others_at(s)))?;
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

/// `finding` as `machine-saturated` when its fall came with others taking the machine (see the
/// module), else as it was.
pub(crate) fn reconsider_fall(
    mut finding: Finding,
    evidence: &Evidence<'_>,
    pts: &[Point<'_>],
) -> Finding {
    let contends_by_its_fall = finding.kind == Kind::Contention
        && matches!(finding.overload, Some(Overload::Collapses { .. }));
    let rose = finding
        .facts
        .iter()
        .any(|fact| matches!(fact, Fact::CpuPerRequestRises { .. }));
    if !contends_by_its_fall || rose || a_pool_is_seen(&finding) {
        return finding;
    }
    let Some(fact) = taken_at_fall(&finding, evidence, pts) else {
        return finding;
    };
    finding.kind = Kind::MachineSaturated;
    finding.limit = None;
    finding.facts.insert(0, fact);
    finding
}

/// The others' hold on the machine at the steps past the peak, when it left less than half a
/// core and the target's CPU per request held.
fn taken_at_fall(finding: &Finding, evidence: &Evidence<'_>, pts: &[Point<'_>]) -> Option<Fact> {
    let cores = f64::from(evidence.context.cores?);
    let peak = finding.peak.as_ref()?;
    if !evidence.context.target_observed || cores <= 0.0 {
        return None;
    }
    if !crate::whole_cores::fall_follows_the_cpu(pts) {
        return None;
    }
    let past: Vec<&Step> = evidence
        .steps
        .iter()
        .filter(|s| s.clients > peak.clients && s.target_cpu_pct.is_some())
        .filter(|s| others_at(s).is_some())
        .collect();
    let others_past = median(past.iter().filter_map(|s| others_at(s)))?;
    if others_past < saturated_machine_pct(cores) {
        return None;
    }
    let peak_others = median(
        evidence
            .steps
            .iter()
            .filter(|s| s.clients == peak.clients)
            .filter_map(others_at),
    )?;
    // Percent of all cores per request a second, as milliseconds of one core a request.
    let (at_peak, at_last) = crate::whole_cores::cpu_per_request_at_fall(pts)?;
    let ms = |pct_per_rps: f64| pct_per_rps / 100.0 * cores * 1000.0;
    let mut clients: Vec<u32> = past.iter().map(|s| s.clients).collect();
    clients.sort_unstable();
    clients.dedup();
    Some(Fact::MachineTakenAtFall {
        clients,
        others_pct: others_past,
        peak_clients: peak.clients,
        peak_others_pct: peak_others,
        cpu_ms: (ms(at_peak), ms(at_last)),
        suggested: finding.kind,
        suggested_limit: finding.limit,
    })
}
