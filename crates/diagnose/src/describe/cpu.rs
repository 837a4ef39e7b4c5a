//! The words about CPU: the generator's, the target's, the machine's, and the target's
//! threads seen from /proc: each fact's sentence, key line and rank. Each number comes from the
//! fact; nothing here decides.

use super::Teller;
use crate::finding::Finding;
use chokepoint_result::format::{clients, count, ms, percent, rate};
use chokepoint_result::{Fact, Kind, Runtime, RuntimeCores, RuntimeCoresSource};

/// The words of the CPU's facts.
pub(super) const TELLER: Teller = Teller {
    sentences: |fact, finding| sentence(fact, finding).into_iter().collect(),
    short,
    rank,
};

/// The evidence sentence of one fact of this module's kind; `None` for any other fact.
fn sentence(fact: &Fact, finding: &Finding) -> Option<String> {
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
        Fact::CpuPerRequestRises {
            from_clients,
            from_throughput_rps,
            from_cpu_ms,
            from_cores,
            to_clients,
            to_throughput_rps,
            to_cpu_ms,
            to_cores,
            ..
        } => format!(
            "At {from_clients} clients each request cost {} of the target's CPU ({} cores busy at {} req/s); at {to_clients} clients it cost {} ({} cores at {} req/s): \
             {:.1}× the CPU per request for {:.2}× the throughput. The added clients cost CPU and brought next to no throughput, so the CPU is not what holds it. \
             Requests waiting for a pool's slot wait parked and burn none; requests that spend CPU on each other (a lock spun on, retries) do: contention.",
            ms(*from_cpu_ms),
            count(*from_cores),
            rate(*from_throughput_rps),
            ms(*to_cpu_ms),
            count(*to_cores),
            rate(*to_throughput_rps),
            to_cpu_ms / from_cpu_ms,
            to_throughput_rps / from_throughput_rps
        ),
        Fact::CpuNotLimit {
            target_cpu_pct,
            generator_cpu_pct,
            ..
        } => format!(
            "The CPU is not the limit: at the plateau the target used {target_cpu_pct:.0}% of all cores and the generator {generator_cpu_pct:.0}%."
        ),
        Fact::CpuQuota {
            quota_cores,
            cores_busy,
            machine_cores,
            throttled_share,
            throttled_per_s,
            group,
            version,
            runtime_cores,
            ..
        } => {
            let mut said = format!(
                "The target's CPU quota stops it: its control group `{group}` (cgroup v{version}) may use {} of a core's time, it kept {} busy, and the kernel throttled it in {} of the CFS periods ({:.2} s held back per second) while the machine's {machine_cores} cores had room. It is the container's `--cpus` or the pod's `resources.limits.cpu` (the group's `cpu.max` or `cpu.cfs_quota_us`).",
                count(*quota_cores),
                count(*cores_busy),
                percent(*throttled_share),
                throttled_per_s
            );
            if let Some(runtime) = runtime_cores {
                said.push(' ');
                said.push_str(&runtime_sized(runtime, *quota_cores));
            }
            said
        }
        Fact::CeilingOverCpu {
            clients: steps,
            in_flight,
            slower,
            faster,
        } => format!(
            "The mock's ceiling decides, not the CPU: it saw at most {} calls in flight at every step from {} on, and {} served {} req/s at {:.0}% of all cores, more than {} at {} req/s and {:.0}%: with CPU to spare the service did not go past {}.",
            count(*in_flight),
            clients(steps.first().copied().unwrap_or(0)),
            clients(faster.0),
            rate(faster.1),
            faster.2,
            clients(slower.0),
            rate(slower.1),
            slower.2,
            count(*in_flight)
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
        Fact::MachineBusyBeforeLoad {
            clients: steps,
            machine_cpu_pct,
            others_pct,
            suggested,
            suggested_limit,
        } => format!(
            "Below the knee (at {} clients) other processes than the target and the generator kept {others_pct:.0}% of all cores busy, \
             the machine {machine_cpu_pct:.0}%: less than half a core was left for the sweep before its load was heavy. \
             On such a machine the target runs on the CPU share it is given, and a starved target looks like a pool from the client side: \
             alone, this sweep would read as {}. For a clean answer sweep on a quieter machine, \
             or give the target and the generator cores of their own (taskset).",
            steps.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
            client_side_reading(*suggested, *suggested_limit)
        ),
        Fact::MachineTakenAtFall {
            clients: steps,
            others_pct,
            peak_clients,
            peak_others_pct,
            cpu_ms: (at_peak, at_last),
            suggested,
            suggested_limit,
        } => format!(
            "Past the peak ({}) throughput fell at {} clients while other processes than the target and the generator \
             held {others_pct:.0}% of all cores ({peak_others_pct:.0}% at the peak), and each request still cost the target \
             about the CPU it did at the peak ({at_peak:.2} ms, then {at_last:.2} ms): it served less because it was given less \
             CPU, not because its requests got in each other's way. Alone, the fall would read as {}. \
             For a clean answer sweep again on a quieter machine, or give the target and the generator cores of their own (taskset).",
            clients(*peak_clients),
            steps.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
            client_side_reading(*suggested, *suggested_limit)
        ),
        Fact::WholeCores { .. }
        | Fact::WholeThreadsRunning { .. }
        | Fact::InterpreterLock { .. } => whole_cores_sentence(fact)?,
        Fact::ThreadsRunning {
            running, threads, ..
        } => format!(
            "From /proc, the target's threads at the plateau: {running:.1} of its {threads:.0} on a CPU or waiting for one at once on average, \
             none waiting on the network: its own work is the limit, not a pool."
        ),
        Fact::ThreadsRunningBesideIdleCores {
            running,
            cores_busy,
            idle_cores,
            machine_cores,
            ..
        } => format!(
            "From /proc, {running:.1} of the target's threads were on a CPU or waiting for one at once at the plateau, \
             yet it got {} of the machine's {} while {} stood idle: a thread waits for a CPU only when no core is free, \
             so the two readings disagree, and neither decides what kind of limit this is.",
            count(*cores_busy),
            cores_words(*machine_cores),
            count(*idle_cores)
        ),
        _ => return None,
    };
    Some(s)
}

/// What the client side alone read, when a busy machine leaves it unnamed: `a pool of ~7.3`.
pub(crate) fn client_side_reading(kind: Kind, limit: Option<f64>) -> String {
    let size = limit.map_or("?".to_string(), count);
    match kind {
        Kind::BlockingPool => format!("a pool of ~{size}"),
        Kind::ConnectionLimit => format!("connections running out at ~{size}"),
        other => format!("{} {size}", other.as_str()),
    }
}

/// The sentence of the whole-cores rule: the evidence that decided, and the mock's ceiling as a
/// consequence.
fn whole_cores_sentence(fact: &Fact) -> Option<String> {
    let one_or_those = |cores: u32| {
        if cores == 1 {
            "that core"
        } else {
            "those cores"
        }
    };
    let (mut s, cores, ceiling) = match fact {
        Fact::WholeCores {
            clients: c,
            cores,
            cores_busy,
            machine_cores,
            mock_max_in_flight,
            ..
        } => (
            format!(
                "Its CPU decided: from {} on the target kept {} of the machine's {machine_cores} cores busy at every step, \
                 {}, so it is CPU-bound on {}{}.",
                clients(*c.first()?),
                count(*cores_busy),
                whole_cores_words(*cores),
                one_or_those(*cores),
                if *cores == 1 {
                    " (one core is what an event loop, a GIL or GOMAXPROCS=1 can use)"
                } else {
                    ""
                }
            ),
            *cores,
            mock_max_in_flight,
        ),
        Fact::WholeThreadsRunning {
            clients: c,
            cores,
            threads_running,
            cores_busy,
            machine_cores,
            machine_cpu_pct,
            mock_max_in_flight,
        } => (
            format!(
                "Its threads decided: from {} on {threads_running:.1} of the target's threads were on a CPU or waiting for one \
                 at once at every step (from /proc), none waiting on the network, so it is CPU-bound on {}{}{}.",
                clients(*c.first()?),
                cores_words(*cores),
                cores_busy
                    .map(|got| format!(
                        ", though it got only {} of the machine's {machine_cores}",
                        count(got)
                    ))
                    .unwrap_or_default(),
                machine_cpu_pct
                    .filter(|&m| m >= 90.0)
                    .map(|m| format!(" (the machine was {m:.0}% busy: other processes held the rest)"))
                    .unwrap_or_default()
            ),
            *cores,
            mock_max_in_flight,
        ),
        Fact::InterpreterLock {
            clients: c,
            waiting,
            cores_busy,
            machine_cores,
            ..
        } => (
            format!(
                "The interpreter lock decided: from {} on py-spy saw {} or more of the target's threads waiting for \
                 CPython's GIL at once at every step (back from a call, waiting to take it again){}, so it is \
                 CPU-bound on one core: one thread runs Python at a time, whatever the machine has.",
                clients(*c.first()?),
                count(*waiting),
                cores_busy
                    .map(|got| format!(
                        ", while the process kept {} of the machine's {machine_cores} cores busy",
                        count(got)
                    ))
                    .unwrap_or_default()
            ),
            1,
            // The mock's calls follow the lock's pace, but no ceiling of them is told: they
            // come in bursts as the lock hands off.
            &None,
        ),
        _ => return None,
    };
    if let Some(m) = ceiling {
        s.push_str(&format!(
            " The mock's ceiling of about {} calls in flight is a consequence, not a pool: it is as many calls as {} serves keep in flight.",
            count(*m),
            one_or_those(cores)
        ));
    }
    Some(s)
}

/// `a whole core` or `a whole 2 cores`.
fn whole_cores_words(cores: u32) -> String {
    if cores == 1 {
        "a whole core".to_string()
    } else {
        format!("a whole {cores} cores")
    }
}

/// `one core` or `N cores`.
pub(crate) fn cores_words(cores: u32) -> String {
    if cores == 1 {
        "one core".to_string()
    } else {
        format!("{cores} cores")
    }
}

/// A fact in one short line; `None` for any other fact.
fn short(fact: &Fact, _: &Finding) -> Option<String> {
    let line = match fact {
        Fact::CpuPerRequestRises {
            from_clients,
            from_cpu_ms,
            to_clients,
            to_cpu_ms,
            ..
        } => format!(
            "CPU per request {} → {} from {from_clients} to {to_clients} clients, throughput flat: contention.",
            ms(*from_cpu_ms),
            ms(*to_cpu_ms)
        ),
        Fact::GeneratorBound {
            clients: c,
            generator_cpu_pct,
            efficiency,
            ..
        } => format!(
            "Generator CPU {generator_cpu_pct:.0}% at {}, throughput {} of ideal.",
            clients(*c),
            percent(*efficiency)
        ),
        Fact::GeneratorBusy {
            clients: c,
            generator_cpu_pct,
            ..
        } => format!("Generator CPU {generator_cpu_pct:.0}% at {}.", clients(*c)),
        Fact::CpuSaturated {
            target_cpu_pct,
            generator_cpu_pct,
            ..
        } => format!(
            "Target CPU {target_cpu_pct:.0}% of all cores at the plateau (generator {generator_cpu_pct:.0}%)."
        ),
        Fact::CpuPerRequest {
            per_request_pct, ..
        } => format!(
            "Each request in service burns {per_request_pct:.0}% of all cores."
        ),
        Fact::CpuNotLimit {
            target_cpu_pct,
            generator_cpu_pct,
            ..
        } => format!(
            "CPU is not the limit: target {target_cpu_pct:.0}%, generator {generator_cpu_pct:.0}%."
        ),
        Fact::CpuQuota {
            quota_cores,
            throttled_share,
            ..
        } => format!(
            "CPU quota {} of a core, throttled in {} of periods.",
            count(*quota_cores),
            percent(*throttled_share)
        ),
        Fact::CeilingOverCpu {
            in_flight, faster, ..
        } => format!(
            "Mock ceiling {} at every step; faster at {} with less CPU.",
            count(*in_flight),
            clients(faster.0)
        ),
        Fact::MachineCpu {
            machine_cpu_pct,
            others_pct,
            ..
        } => format!(
            "The machine was {machine_cpu_pct:.0}% busy, {others_pct:.0}% by other processes."
        ),
        Fact::TargetNotObserved => "The target's CPU was not observed.".to_string(),
        Fact::MachineSaturated {
            machine_cpu_pct,
            target_cpu_pct,
            ..
        } => format!(
            "The machine's CPU was {machine_cpu_pct:.0}% busy at the plateau, the target's {}.",
            target_cpu_pct.map_or("not observed".to_string(), |t| format!("{t:.0}%"))
        ),
        Fact::MachineBusyBeforeLoad { others_pct, .. } => format!(
            "Other processes held {others_pct:.0}% of all cores before the load was heavy."
        ),
        Fact::MachineTakenAtFall { others_pct, .. } => format!(
            "Other processes held {others_pct:.0}% of all cores as throughput fell."
        ),
        Fact::ThreadsRunning {
            running, threads, ..
        } => format!("{running:.1} of the target's {threads:.0} threads running at once, none waiting on the network."),
        Fact::ThreadsRunningBesideIdleCores {
            running,
            cores_busy,
            idle_cores,
            ..
        } => format!(
            "{running:.1} threads running at once on {} cores got, {} idle: the readings disagree.",
            count(*cores_busy),
            count(*idle_cores)
        ),
        Fact::WholeCores {
            cores, cores_busy, ..
        } => format!(
            "{} of {} busy at every step from the knee on.",
            count(*cores_busy),
            cores_words(*cores)
        ),
        Fact::WholeThreadsRunning {
            threads_running,
            cores_busy,
            ..
        } => format!(
            "{threads_running:.1} threads on a CPU or waiting for one at once from the knee on{}.",
            cores_busy
                .map(|c| format!(", {} cores got", count(c)))
                .unwrap_or_default()
        ),
        Fact::InterpreterLock {
            waiting,
            cores_busy,
            ..
        } => format!(
            "{} threads waiting for the GIL at every step from the knee on{}.",
            count(*waiting),
            cores_busy
                .map(|c| format!(", {} cores busy", count(c)))
                .unwrap_or_default()
        ),
        _ => return None,
    };
    Some(line)
}

/// Where a fact's key line stands in a finding of `kind`; `None` leaves it out.
fn rank(kind: Kind, fact: &Fact) -> Option<u8> {
    match (kind, fact) {
        (Kind::GeneratorBound, Fact::GeneratorBound { .. }) => Some(0),
        (Kind::MachineSaturated, Fact::MachineSaturated { .. }) => Some(0),
        (Kind::MachineSaturated, Fact::MachineBusyBeforeLoad { .. }) => Some(0),
        (Kind::MachineSaturated, Fact::MachineTakenAtFall { .. }) => Some(0),
        (_, Fact::MachineTakenAtFall { .. }) => Some(3),
        (Kind::CpuBound, Fact::CpuQuota { .. }) => Some(0),
        (Kind::CpuBound, Fact::ThreadsRunning { .. }) => Some(1),
        (_, Fact::ThreadsRunningBesideIdleCores { .. }) => Some(3),
        (
            Kind::CpuBound,
            Fact::WholeCores { .. }
            | Fact::WholeThreadsRunning { .. }
            | Fact::InterpreterLock { .. },
        ) => Some(1),
        (Kind::CpuBound | Kind::GrowingPool, Fact::CpuSaturated { .. }) => Some(2),
        (Kind::CpuBound, Fact::CpuPerRequest { .. }) => Some(2),
        (Kind::BlockingPool, Fact::CeilingOverCpu { .. }) => Some(1),
        (Kind::BlockingPool, Fact::CpuNotLimit { .. }) => Some(4),
        (Kind::Contention, Fact::CpuNotLimit { .. }) => Some(3),
        (Kind::Contention, Fact::CpuPerRequestRises { .. }) => Some(0),
        (Kind::BlockingPool | Kind::CpuBound, Fact::TargetNotObserved) => Some(5),
        (
            _,
            Fact::MachineCpu {
                contended: true, ..
            },
        ) => Some(6),
        (_, Fact::GeneratorBusy { .. }) => Some(7),
        _ => None,
    }
}

/// What the runtime did with the core count it saw, beside a quota that gives less.
fn runtime_sized(runtime: &RuntimeCores, quota_cores: f64) -> String {
    let cores = match runtime.cores {
        1 => "1 core".to_string(),
        n => format!("{n} cores"),
    };
    let (sized, from) = match (&runtime.runtime, &runtime.source) {
        (_, RuntimeCoresSource::GomaxprocsEnv) => (
            format!("Go runs goroutines on {cores} at once (GOMAXPROCS)"),
            "its environment sets GOMAXPROCS".to_string(),
        ),
        (
            _,
            RuntimeCoresSource::GoDefault {
                version,
                follows_quota,
            },
        ) => (
            format!("Go runs goroutines on {cores} at once (GOMAXPROCS)"),
            if *follows_quota {
                format!("{version}'s default: the quota rounded up, 2 at least")
            } else {
                format!(
                    "{version}'s default for this build: the machine's CPUs, the quota not followed (Go before 1.25, or a go.mod older than 1.25)"
                )
            },
        ),
        (_, RuntimeCoresSource::JcmdVmInfo) => (
            format!("The JVM sized its GC, compiler and common-pool threads for {cores}"),
            "jcmd VM.info's initial active count".to_string(),
        ),
    };
    format!(
        "{sized} ({from}); the quota gives {}: its threads take turns at the quota, each period used up early and the rest waited out. Size it to the quota (`{}={}`) or raise the quota.",
        count(quota_cores),
        match runtime.runtime {
            Runtime::Jvm => "-XX:ActiveProcessorCount",
            Runtime::Go => "GOMAXPROCS",
        },
        quota_cores.ceil()
    )
}
