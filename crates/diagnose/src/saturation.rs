//! A saturated machine named as the limit. When the whole machine's CPU is ≥ 90% at the
//! plateau and either the target's CPU is unknown or the generator used as much of the machine
//! as the target, a plateau without downstream evidence of a pool says "the machine ran out of
//! cores", not "a pool of N": a one-worker nginx driven flat out, swept without `--pid`, looked
//! like a pool of 2 to 10 before this rule.
use crate::finding::Finding;
use chokepoint_result::{Fact, Kind, Step, SweepContext};

/// The machine's CPU at or above this share of all cores is saturated.
pub const SATURATED_MACHINE_PCT: f64 = 90.0;

/// Who used the machine's CPU at the plateau, percent of all cores (medians over the plateau).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MachineShares {
    /// The whole machine.
    pub machine_pct: f64,
    /// The target; `None` when it was not observed.
    pub target_pct: Option<f64>,
    /// The load generator, as a share of all cores.
    pub generator_pct: f64,
    /// Everything else.
    pub others_pct: f64,
}

fn median(mut values: Vec<f64>) -> Option<f64> {
    values.retain(|v| v.is_finite());
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    })
}

/// The shares at the plateau, when the machine was saturated there and the target's CPU
/// cannot tell the limit apart: unknown, or no more than the generator's.
/// `generator_cores / machine_cores` turns the generator's figure (percent of the cores it may
/// use) into a share of the machine.
pub fn saturated_machine(
    plateau: &[&Step],
    generator_cores: f64,
    machine_cores: f64,
) -> Option<MachineShares> {
    let machine_pct = median(plateau.iter().filter_map(|s| s.machine_cpu_pct).collect())?;
    if machine_pct < SATURATED_MACHINE_PCT || machine_cores <= 0.0 {
        return None;
    }
    let target_pct = median(plateau.iter().filter_map(|s| s.target_cpu_pct).collect());
    let generator_pct = median(plateau.iter().map(|s| s.generator_cpu_pct).collect())
        .unwrap_or(0.0)
        * generator_cores.min(machine_cores)
        / machine_cores;
    if target_pct.is_some_and(|target| target > generator_pct) {
        return None;
    }
    let others_pct = (machine_pct - target_pct.unwrap_or(0.0) - generator_pct).max(0.0);
    Some(MachineShares {
        machine_pct,
        target_pct,
        generator_pct,
        others_pct,
    })
}

/// Whether the mock saw the target's calls in flight at the plateau: then a pool is measured at
/// the downstream, whatever the machine did.
fn downstream_saw_calls(plateau: &[&Step]) -> bool {
    plateau
        .iter()
        .any(|s| s.downstream_inflight.is_some_and(|d| d.max > 0))
}

/// Turns a `blocking-pool` finding whose only evidence is the client side into
/// `machine-saturated` when the machine was saturated at its plateau (see [`saturated_machine`]),
/// with a [`Fact::MachineSaturated`] first among its facts.
pub fn name_a_saturated_machine(finding: &mut Finding, steps: &[Step], context: &SweepContext) {
    if finding.kind != Kind::BlockingPool {
        return;
    }
    let Some(knee) = finding.knee_clients else {
        return;
    };
    let plateau: Vec<&Step> = steps.iter().filter(|s| s.clients >= knee).collect();
    if downstream_saw_calls(&plateau) {
        return;
    }
    let machine_cores = context.cores.map_or(0.0, f64::from);
    let Some(shares) = saturated_machine(&plateau, machine_cores, machine_cores) else {
        return;
    };
    let mut clients: Vec<u32> = plateau.iter().map(|s| s.clients).collect();
    clients.sort_unstable();
    clients.dedup();
    finding.facts.insert(
        0,
        Fact::MachineSaturated {
            clients,
            machine_cpu_pct: shares.machine_pct,
            target_cpu_pct: shares.target_pct,
            generator_cpu_pct: shares.generator_pct,
            others_pct: shares.others_pct,
            pool_size: finding.limit,
        },
    );
    finding.kind = Kind::MachineSaturated;
    finding.limit = None;
}

#[cfg(test)]
mod tests {
    use super::*;
    use chokepoint_result::DownstreamInFlight;

    fn step(clients: u32, machine: f64, target: Option<f64>, generator: f64) -> Step {
        Step {
            clients,
            machine_cpu_pct: Some(machine),
            target_cpu_pct: target,
            generator_cpu_pct: generator,
            ..Step::default()
        }
    }

    #[test]
    fn a_machine_is_saturated_when_the_target_cannot_tell() {
        /// (machine %, target %, generator % of its cores, generator cores,
        ///  expected (generator %, others %) of the machine, or not saturated)
        type Row = (f64, Option<f64>, f64, f64, Option<(f64, f64)>);
        let table: [Row; 6] = [
            // Target unknown, machine full: saturated; the generator used half of 2 cores.
            (98.0, None, 50.0, 2.0, Some((50.0, 48.0))),
            // Target known and using less than the generator: saturated.
            (95.0, Some(30.0), 50.0, 2.0, Some((50.0, 15.0))),
            // Target known and using more than the generator: its CPU tells, not saturated.
            (99.0, Some(55.0), 40.0, 2.0, None),
            // The machine has room: not saturated.
            (80.0, None, 50.0, 2.0, None),
            // The generator pinned to 1 of 2 cores and saturating it: 50% of the machine.
            (96.0, None, 100.0, 1.0, Some((50.0, 46.0))),
            // At the threshold.
            (90.0, None, 10.0, 2.0, Some((10.0, 80.0))),
        ];
        for (machine, target, generator, generator_cores, expected) in table {
            let s = step(8, machine, target, generator);
            let got = saturated_machine(&[&s], generator_cores, 2.0)
                .map(|m| (m.generator_pct, m.others_pct));
            match (got, expected) {
                (Some((g, o)), Some((eg, eo))) => {
                    assert!((g - eg).abs() < 1e-9, "{machine} {target:?}: generator {g}");
                    assert!((o - eo).abs() < 1e-9, "{machine} {target:?}: others {o}");
                }
                (got, expected) => {
                    assert_eq!(got.is_some(), expected.is_some(), "{machine} {target:?}")
                }
            }
        }
    }

    fn pool_finding() -> Finding {
        let mut finding = Finding::bare(Kind::BlockingPool, Vec::new());
        finding.limit = Some(2.1);
        finding.knee_clients = Some(4);
        finding
    }

    #[test]
    fn a_pool_seen_only_from_the_client_side_on_a_full_machine_is_the_machine() {
        let context = SweepContext {
            cores: Some(2),
            ..SweepContext::default()
        };
        let steps = [
            step(1, 70.0, None, 40.0),
            step(4, 99.0, None, 45.0),
            step(16, 100.0, None, 45.0),
        ];
        let mut finding = pool_finding();
        name_a_saturated_machine(&mut finding, &steps, &context);
        assert_eq!(finding.kind, Kind::MachineSaturated);
        assert_eq!(finding.limit, None);
        assert_eq!(
            finding.facts[0],
            Fact::MachineSaturated {
                clients: vec![4, 16],
                machine_cpu_pct: 99.5,
                target_cpu_pct: None,
                generator_cpu_pct: 45.0,
                others_pct: 54.5,
                pool_size: Some(2.1),
            }
        );
        let text = crate::describe(&finding);
        assert!(text.summary.contains("machine"), "{}", text.summary);
        assert!(
            text.evidence.iter().any(|s| s.contains("--pid")),
            "{:?}",
            text.evidence
        );

        // The mock saw the calls in flight: the pool is measured there, it stays a pool.
        let mut with_mock = steps.clone();
        for s in &mut with_mock {
            s.downstream_inflight = Some(DownstreamInFlight { mean: 2.0, max: 2 });
        }
        let mut finding = pool_finding();
        name_a_saturated_machine(&mut finding, &with_mock, &context);
        assert_eq!(finding.kind, Kind::BlockingPool);

        // A machine with room: a pool.
        let quiet = [step(1, 40.0, None, 20.0), step(4, 60.0, None, 30.0)];
        let mut finding = pool_finding();
        name_a_saturated_machine(&mut finding, &quiet, &context);
        assert_eq!(finding.kind, Kind::BlockingPool);
    }
}
