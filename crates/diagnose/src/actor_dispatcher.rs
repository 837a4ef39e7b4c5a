//! An actor system's own dispatchers, named by their threads. Akka and Apache Pekko name every
//! dispatcher thread `<system>-<dispatcher id>-N` (the system's `MonitorableThreadFactory`,
//! named after the system, `withName(name + "-" + id)`), so a pool called
//! `svc-my-blocking-dispatcher` in a JVM that also runs `svc-pekko.actor.default-dispatcher`
//! threads is the dispatcher `my-blocking-dispatcher` of the system `svc`, the one the Akka and
//! Pekko docs tell users to create for blocking calls. Its size is the `fixed-pool-size` of its
//! `thread-pool-executor` block (or a fork-join-executor's `parallelism-*`), set in the
//! application's configuration.
//!
//! The catalogue's patterns cannot say this: the setting's name holds the dispatcher's id, and
//! where the system's name ends in the thread's name is known only from the system's other
//! threads. Data flows one way: the pool names and frames of a sweep's runtime stacks in
//! ([`settings`]), one [`Setting`] per dispatcher pool out; the place stage asks them after the
//! catalogue ([`crate::place`]). The size stays unread: the configuration is a file in the
//! application's jar, not a value the process was started with; the place stage names the
//! setting only where the held threads match the limit, as for any pool.
//!
//! Sources (Pekko at c72b5aedaf9a70be7625e5c18b44450e64b9143f, v1.7.0): thread names
//! `actor/src/main/scala/org/apache/pekko/dispatch/ThreadPoolBuilder.scala#L123-L127` and
//! `ForkJoinExecutorConfigurator.scala#L204`; the system's thread factory named after the system
//! `actor/src/main/scala/org/apache/pekko/actor/ActorSystem.scala#L910`; a dispatcher's
//! configuration falls back to the default dispatcher's
//! `actor/src/main/scala/org/apache/pekko/dispatch/Dispatchers.scala#L220-L230`; the executors'
//! defaults `actor/src/main/resources/reference.conf#L470-L560`. Akka 2.6 (the code Pekko forked)
//! names its threads the same way.

use chokepoint_result::{Setting, Step};

/// The actor-system families whose built-in dispatchers live under a config path of their own:
/// `(its name in words, the path its built-in dispatcher ids start with)`.
const FAMILIES: [(&str, &str); 2] = [("Apache Pekko", "pekko."), ("Akka", "akka.")];

/// Where the docs say the defaults and the naming are (one place for both families: Pekko's
/// code, which Akka's 2.6 line it forked names and sizes alike).
const SOURCE: &str = "https://github.com/apache/pekko/blob/c72b5aedaf9a70be7625e5c18b44450e64b9143f/actor/src/main/resources/reference.conf#L470-L560 (a dispatcher's block falls back to the default dispatcher's: actor/src/main/scala/org/apache/pekko/dispatch/Dispatchers.scala#L220-L230; thread names <system>-<dispatcher id>-N: actor/src/main/scala/org/apache/pekko/dispatch/ThreadPoolBuilder.scala#L123-L127)";

/// An actor system seen in a JVM's threads.
#[derive(Debug, Clone, PartialEq)]
struct System {
    /// Its name: the thread names' prefix before the dispatcher id.
    name: String,
    family: &'static str,
    /// The path its built-in dispatchers' ids start with (`pekko.`).
    built_in: &'static str,
}

/// The executor behind a dispatcher, by the frames its threads stood in.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Executor {
    ThreadPool,
    ForkJoin,
}

/// The actor systems whose built-in dispatchers' threads are among `pools`: a pool named
/// `<system>-pekko.actor.…` (the default and internal dispatchers, which every system runs).
fn systems<'a>(pools: impl IntoIterator<Item = &'a str>) -> Vec<System> {
    let mut found: Vec<System> = Vec::new();
    for pool in pools {
        for (family, built_in) in FAMILIES {
            let marker = format!("-{built_in}actor.");
            let Some(at) = pool.find(&marker) else {
                continue;
            };
            let name = &pool[..at];
            if !name.is_empty() && !found.iter().any(|s| s.name == name) {
                found.push(System {
                    name: name.to_string(),
                    family,
                    built_in,
                });
            }
        }
    }
    found
}

/// The system and dispatcher id of `pool`, when it is a dispatcher of one of `systems` that is
/// not built in (the catalogue knows those) nor the system's scheduler thread.
fn dispatcher_of<'s>(pool: &str, systems: &'s [System]) -> Option<(&'s System, String)> {
    // The longest system name first: `svc` and `svc-eu` both prefix `svc-eu-io-dispatcher`.
    systems
        .iter()
        .filter_map(|system| {
            let id = pool.strip_prefix(&system.name)?.strip_prefix('-')?;
            Some((system, id))
        })
        .filter(|(system, id)| !id.is_empty() && !id.starts_with(system.built_in))
        .filter(|(_, id)| *id != "scheduler")
        .max_by_key(|(system, _)| system.name.len())
        .map(|(system, id)| (system, id.to_string()))
}

/// The executor the frames of `pool`'s threads show, over all `steps`: an idle worker waits for
/// its next task in its executor's own code (`ThreadPoolExecutor.getTask`,
/// `ForkJoinPool.awaitWork`), and a running one has it at the bottom of its stack.
fn executor_of(pool: &str, steps: &[Step]) -> Option<Executor> {
    let frames = steps
        .iter()
        .filter_map(|step| step.stacks.as_ref())
        .flat_map(|stacks| &stacks.pools)
        .filter(|p| p.pool == pool)
        .flat_map(|p| &p.stacks)
        .flat_map(|stack| &stack.frames);
    for frame in frames {
        if frame.starts_with("java.util.concurrent.ThreadPoolExecutor") {
            return Some(Executor::ThreadPool);
        }
        if frame.starts_with("java.util.concurrent.ForkJoin") {
            return Some(Executor::ForkJoin);
        }
    }
    None
}

/// The setting of the dispatcher `id` of `system` on `executor`.
fn setting(system: &System, id: &str, executor: Option<Executor>) -> Setting {
    let (executor_words, setting, default) = match executor {
        Some(Executor::ThreadPool) => (
            "thread-pool-executor",
            format!("{id}.thread-pool-executor.fixed-pool-size"),
            "none: the application's configuration sets it, and chokepoint does not read it; unset, ceil(cores × 3.0) threads, at least 8, at most 64 (core-pool-size-*)",
        ),
        Some(Executor::ForkJoin) => (
            "fork-join-executor",
            format!("{id}.fork-join-executor.parallelism-max (with parallelism-factor, parallelism-min)"),
            "none: the application's configuration sets it, and chokepoint does not read it; unset, ceil(cores × 1.0) threads, at least 8, at most 64",
        ),
        None => (
            "executor not seen",
            format!("{id}.thread-pool-executor.fixed-pool-size, or on a fork-join-executor {id}.fork-join-executor.parallelism-max"),
            "none: the application's configuration sets it, and chokepoint does not read it",
        ),
    };
    Setting {
        framework: format!(
            "{} dispatcher `{id}` of the actor system `{}` ({executor_words})",
            system.family, system.name
        ),
        setting,
        default: default.to_string(),
        source: SOURCE.to_string(),
        size_rule: None,
        default_here: None,
        stated_here: None,
    }
}

/// The setting of every pool of `steps`' runtime stacks that is an actor system's own
/// dispatcher, by pool name.
pub(crate) fn settings(steps: &[Step]) -> Vec<(String, Setting)> {
    let mut pools: Vec<&str> = steps
        .iter()
        .filter_map(|step| step.stacks.as_ref())
        .flat_map(|stacks| &stacks.pools)
        .map(|pool| pool.pool.as_str())
        .collect();
    pools.sort_unstable();
    pools.dedup();
    let systems = systems(pools.iter().copied());
    pools
        .iter()
        .filter_map(|&pool| {
            let (system, id) = dispatcher_of(pool, &systems)?;
            Some((
                pool.to_string(),
                setting(system, &id, executor_of(pool, steps)),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chokepoint_result::{PoolStacks, SharedStack, StackEvidence, WaitKind};

    fn pool(name: &str, idle_frame: Option<&str>) -> PoolStacks {
        PoolStacks {
            pool: name.into(),
            threads: 1.0,
            most_threads: 1,
            stacks: idle_frame
                .map(|frame| SharedStack {
                    waiting: Some(WaitKind::Idle),
                    frames: vec![frame.into()],
                    threads: 1.0,
                    seconds: None,
                })
                .into_iter()
                .collect(),
            ..Default::default()
        }
    }

    fn step_with(pools: Vec<PoolStacks>) -> Step {
        Step {
            stacks: Some(StackEvidence {
                pools,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    const TPE: Option<&str> = Some("java.util.concurrent.ThreadPoolExecutor.getTask");
    const FJ: Option<&str> = Some("java.util.concurrent.ForkJoinPool.awaitWork");

    #[test]
    fn a_dispatcher_is_the_pool_after_its_systems_name() {
        // (the JVM's pools, the pool asked, the setting named)
        let table: [(Vec<PoolStacks>, &str, Option<&str>); 8] = [
            (
                vec![pool("svc-pekko.actor.default-dispatcher", FJ), pool("svc-my-blocking-dispatcher", TPE)],
                "svc-my-blocking-dispatcher",
                Some("my-blocking-dispatcher.thread-pool-executor.fixed-pool-size"),
            ),
            // A system whose name has dashes, a dispatcher id with a path, on fork-join.
            (
                vec![pool("order-service-akka.actor.internal-dispatcher", FJ), pool("order-service-app.io-dispatcher", FJ)],
                "order-service-app.io-dispatcher",
                Some("app.io-dispatcher.fork-join-executor.parallelism-max (with parallelism-factor, parallelism-min)"),
            ),
            // All its threads held: the executor is not seen, both settings are told.
            (
                vec![pool("svc-pekko.actor.default-dispatcher", FJ), pool("svc-db", None)],
                "svc-db",
                Some("db.thread-pool-executor.fixed-pool-size, or on a fork-join-executor db.fork-join-executor.parallelism-max"),
            ),
            // Two systems whose names prefix one another: the longer one owns the pool.
            (
                vec![
                    pool("svc-pekko.actor.default-dispatcher", FJ),
                    pool("svc-eu-pekko.actor.default-dispatcher", FJ),
                    pool("svc-eu-io", TPE),
                ],
                "svc-eu-io",
                Some("io.thread-pool-executor.fixed-pool-size"),
            ),
            // The built-in dispatchers are the catalogue's, the scheduler no dispatcher.
            (
                vec![pool("svc-pekko.actor.default-dispatcher", FJ)],
                "svc-pekko.actor.default-dispatcher",
                None,
            ),
            (
                vec![pool("svc-pekko.actor.default-dispatcher", FJ), pool("svc-scheduler", None)],
                "svc-scheduler",
                None,
            ),
            // No actor system in the JVM: a pool named like one is not one.
            (
                vec![pool("svc-my-blocking-dispatcher", TPE), pool("http-nio-8080-exec", TPE)],
                "svc-my-blocking-dispatcher",
                None,
            ),
            // Another system's prefix does not make a pool its dispatcher.
            (
                vec![pool("svc-pekko.actor.default-dispatcher", FJ), pool("http-nio-8080-exec", TPE)],
                "http-nio-8080-exec",
                None,
            ),
        ];
        for (pools, asked, expected) in table {
            let names: Vec<String> = pools.iter().map(|p| p.pool.clone()).collect();
            let found = settings(&[step_with(pools)]);
            let setting = found
                .iter()
                .find(|(pool, _)| pool == asked)
                .map(|(_, s)| s.setting.as_str());
            assert_eq!(setting, expected, "{asked} among {names:?}");
        }
    }

    #[test]
    fn the_setting_says_whose_dispatcher_it_is() {
        let steps = [step_with(vec![
            pool("svc-pekko.actor.default-dispatcher", FJ),
            pool("svc-my-blocking-dispatcher", TPE),
        ])];
        let (_, setting) = &settings(&steps)[0];
        assert_eq!(
            setting.framework,
            "Apache Pekko dispatcher `my-blocking-dispatcher` of the actor system `svc` (thread-pool-executor)"
        );
        assert!(setting.default.contains("does not read it"));
        assert_eq!(setting.default_here, None);
    }
}
