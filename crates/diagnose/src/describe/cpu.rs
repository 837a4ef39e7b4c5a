//! The sentences about CPU: the generator's, the target's, the machine's, and the target's
//! threads seen from /proc. Each number comes from the fact; nothing here decides.

use crate::finding::Finding;
use chokepoint_result::format::{clients, count, percent};
use chokepoint_result::{Fact, Kind};

/// The evidence sentence of one fact of this module's kind; `None` for any other fact.
pub(super) fn sentence(fact: &Fact, finding: &Finding) -> Option<String> {
    let s = match fact {
        Fact::GeneratorBound {
            clients: c,
            generator_cpu_pct,
            threshold_pct,
            efficiency,
        } => format!(
            "At {c} clients the generator used {generator_cpu_pct:.0}% of its CPU (over {threshold_pct:.0}%) while throughput was {} of ideal: \
             run the generator on another machine or with more cores to see the target's limit.",
            percent(*efficiency)
        ),
        Fact::GeneratorBusy {
            clients: c,
            generator_cpu_pct,
            past_limit: true,
        } => format!(
            "The generator used {generator_cpu_pct:.0}% of its CPU at {}, after the limit showed: the finding stands, but figures at that step may be the generator's.",
            clients(*c)
        ),
        Fact::GeneratorBusy {
            clients: c,
            generator_cpu_pct,
            past_limit: false,
        } => format!(
            "The generator used {generator_cpu_pct:.0}% of its CPU at {c} clients: larger steps may show the generator's limit."
        ),
        Fact::MachineCpu {
            machine_cpu_pct,
            target_cpu_pct,
            generator_cpu_pct,
            others_pct,
            contended,
            ..
        } => format!(
            "The machine's CPU was {machine_cpu_pct:.0}% busy at the plateau: the target {target_cpu_pct:.0}%, the generator {generator_cpu_pct:.0}%, everything else about {others_pct:.0}%{}.",
            if *contended {
                "; the target competed for cores, so on a quiet machine its limit may be higher"
            } else {
                ""
            }
        ),
        Fact::CpuSaturated {
            target_cpu_pct,
            generator_cpu_pct,
            ..
        } => format!(
            "At the plateau the target used {target_cpu_pct:.0}% of all cores and the generator {generator_cpu_pct:.0}% of its own."
        ),
        Fact::CpuPerRequest {
            clients: c,
            target_cpu_pct,
            in_service,
            plateau_cpu_pct,
            ..
        } => format!(
            "At {} the target used {target_cpu_pct:.0}% of all cores for {} request(s) in service; at the plateau {plateau_cpu_pct:.0}%, \
             no longer growing with clients: the work that limits it is CPU.",
            clients(*c),
            count(*in_service)
        ),
        Fact::CpuNotLimit {
            target_cpu_pct,
            generator_cpu_pct,
            ..
        } => format!(
            "The CPU is not the limit: at the plateau the target used {target_cpu_pct:.0}% of all cores and the generator {generator_cpu_pct:.0}%."
        ),
        Fact::TargetNotObserved if finding.kind == Kind::CpuBound => {
            "The target's CPU was not observed; per-request service time grows with clients while the downstream is idle, which points at the CPU."
                .to_string()
        }
        Fact::TargetNotObserved => {
            "The target process was not observed: its CPU evidence is missing.".to_string()
        }
        Fact::MachineSaturated { pool_size, .. } => format!(
            "Without the machine saturated this would read as a pool of ~{}; with every core busy it may be nothing but the CPU. \
             For a clean answer observe the target (--pid PID, or --pid auto on this machine) and run the generator on other cores \
             (taskset) or another machine.",
            pool_size.map_or("?".to_string(), count)
        ),
        Fact::ThreadsRunning {
            running, threads, ..
        } => format!(
            "From /proc, the target's threads at the plateau: {running:.1} of its {threads:.0} on a CPU or waiting for one at once on average, \
             none waiting on the network: its own work is the limit, not a pool."
        ),
        _ => return None,
    };
    Some(s)
}
