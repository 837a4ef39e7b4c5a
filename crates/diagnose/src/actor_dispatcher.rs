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
//! catalogue ([`crate::place`]). The size is the one the application's configuration gives the
//! dispatcher, as the sweep read it (`chokepoint_observe::actor_config`: a `-D` property, the
//! `application.conf` on the JVM's classpath or the file `-Dconfig.file` names), when it gives
//! one: a thread-pool-executor's `fixed-pool-size`, or a fork-join-executor's `parallelism-max`
//! when it is at most its `parallelism-min` (the pool is then that maximum whatever the cores;
//! otherwise it follows the cores times `parallelism-factor`, not read). The place stage checks
//! it against the threads held, as any size a process states: a dispatcher configured for 16
//! that held 5 at the limit is not what stops at 5.
//!
//! Sources (Pekko at c72b5aedaf9a70be7625e5c18b44450e64b9143f, v1.7.0): thread names
//! `actor/src/main/scala/org/apache/pekko/dispatch/ThreadPoolBuilder.scala#L123-L127` and
//! `ForkJoinExecutorConfigurator.scala#L204`; the system's thread factory named after the system
//! `actor/src/main/scala/org/apache/pekko/actor/ActorSystem.scala#L910`; a dispatcher's
//! configuration falls back to the default dispatcher's
//! `actor/src/main/scala/org/apache/pekko/dispatch/Dispatchers.scala#L220-L230`; the executors'
//! defaults `actor/src/main/resources/reference.conf#L470-L560`. Akka 2.6 (the code Pekko forked)
//! names its threads the same way.

use chokepoint_result::{Setting, Stated, StatedHere, Step};

/// A fork-join dispatcher's `parallelism-min` when its configuration sets none: the default
/// dispatcher's, which every dispatcher's block falls back to (Pekko's reference.conf, see
/// [`SOURCE`]).
const FORK_JOIN_MIN: u32 = 8;

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

/// The value of the configuration key `key`, as the sweep read it: a `-D` property wins over
/// the application's configuration, as Typesafe Config's `load()` merges them.
fn stated_value<'s>(stated: &'s [Stated], key: &str) -> Option<&'s Stated> {
    let property = format!("-D{key}");
    stated
        .iter()
        .find(|s| s.name == property)
        .or_else(|| stated.iter().find(|s| s.name == key))
}

/// The size the configuration `stated` gives the dispatcher `id` on `executor`, when it gives
/// one whatever the cores (see the module).
fn size_stated(id: &str, executor: Option<Executor>, stated: &[Stated]) -> Option<StatedHere> {
    match executor? {
        Executor::ThreadPool => {
            let fixed = stated_value(
                stated,
                &format!("{id}.thread-pool-executor.fixed-pool-size"),
            )?;
            Some(StatedHere {
                size: fixed.value,
                by: vec![fixed.clone()],
            })
        }
        Executor::ForkJoin => {
            let max = stated_value(stated, &format!("{id}.fork-join-executor.parallelism-max"))?;
            let min = stated_value(stated, &format!("{id}.fork-join-executor.parallelism-min"));
            if max.value > min.map_or(FORK_JOIN_MIN, |m| m.value) {
                return None;
            }
            Some(StatedHere {
                size: max.value,
                by: min.into_iter().chain([max]).cloned().collect(),
            })
        }
    }
}

/// Where the default of a dispatcher's size is read, and what it is unset.
const READ_FROM: &str = "none of its own: the application's configuration sets it, read from `-D` properties, the file `-Dconfig.file` names, or the `application.conf` on the JVM's classpath";

/// The setting of the dispatcher `id` of `system` on `executor`, with the size the
/// configuration `stated` gives it.
fn setting(system: &System, id: &str, executor: Option<Executor>, stated: &[Stated]) -> Setting {
    let (executor_words, setting, unset) = match executor {
        Some(Executor::ThreadPool) => (
            "thread-pool-executor",
            format!("{id}.thread-pool-executor.fixed-pool-size"),
            "; unset, ceil(cores × 3.0) threads, at least 8, at most 64 (core-pool-size-*)",
        ),
        Some(Executor::ForkJoin) => (
            "fork-join-executor",
            format!("{id}.fork-join-executor.parallelism-max (with parallelism-factor, parallelism-min)"),
            "; unset, ceil(cores × 1.0) threads, at least 8, at most 64",
        ),
        None => (
            "executor not seen",
            format!("{id}.thread-pool-executor.fixed-pool-size, or on a fork-join-executor {id}.fork-join-executor.parallelism-max"),
            "",
        ),
    };
    Setting {
        framework: format!(
            "{} dispatcher `{id}` of the actor system `{}` ({executor_words})",
            system.family, system.name
        ),
        setting,
        default: format!("{READ_FROM}{unset}"),
        source: SOURCE.to_string(),
        size_rule: None,
        default_here: None,
        stated_here: size_stated(id, executor, stated),
    }
}

/// The setting of every pool of `steps`' runtime stacks that is an actor system's own
/// dispatcher, by pool name, with the size the configuration `stated` gives it.
pub(crate) fn settings(steps: &[Step], stated: &[Stated]) -> Vec<(String, Setting)> {
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
                setting(system, &id, executor_of(pool, steps), stated),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chokepoint_result::{PoolStacks, SharedStack, StackEvidence, StatedIn, WaitKind};

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
            let found = settings(&[step_with(pools)], &[]);
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
        let (_, setting) = &settings(&steps, &[])[0];
        assert_eq!(
            setting.framework,
            "Apache Pekko dispatcher `my-blocking-dispatcher` of the actor system `svc` (thread-pool-executor)"
        );
        assert!(setting.default.contains("application.conf"));
        assert_eq!(setting.default_here, None);
        assert_eq!(setting.stated_here, None);
    }

    fn config(name: &str, value: u32) -> Stated {
        Stated {
            name: name.into(),
            value,
            from: StatedIn::Configuration,
            file: Some("/srv/app.jar!/application.conf".into()),
        }
    }

    #[test]
    fn the_size_is_the_configurations_when_it_holds_whatever_the_cores() {
        let fixed = "io.thread-pool-executor.fixed-pool-size";
        let (fj_min, fj_max) = (
            "io.fork-join-executor.parallelism-min",
            "io.fork-join-executor.parallelism-max",
        );
        let property = Stated {
            name: format!("-D{fixed}"),
            value: 6,
            from: StatedIn::CommandLine,
            file: None,
        };
        // (the executor its frames show, what the sweep read, the size stated)
        let table: [(Option<Executor>, Vec<Stated>, Option<u32>); 8] = [
            (
                Some(Executor::ThreadPool),
                vec![config(fixed, 16)],
                Some(16),
            ),
            // A -D property wins over the file, as Typesafe Config merges them.
            (
                Some(Executor::ThreadPool),
                vec![config(fixed, 16), property.clone()],
                Some(6),
            ),
            // Another dispatcher's size is not this one's.
            (
                Some(Executor::ThreadPool),
                vec![config("db.thread-pool-executor.fixed-pool-size", 16)],
                None,
            ),
            // A fork-join pool's maximum at or below its minimum (8 unset) is its size on any
            // machine; above it, the size follows the cores, which is not read here.
            (Some(Executor::ForkJoin), vec![config(fj_max, 4)], Some(4)),
            (
                Some(Executor::ForkJoin),
                vec![config(fj_min, 24), config(fj_max, 24)],
                Some(24),
            ),
            (Some(Executor::ForkJoin), vec![config(fj_max, 32)], None),
            // A fixed-pool-size on a fork-join dispatcher sizes nothing: Pekko ignores it.
            (Some(Executor::ForkJoin), vec![config(fixed, 16)], None),
            // The executor not seen: which key counts is not known.
            (None, vec![config(fixed, 16)], None),
        ];
        for (executor, stated, size) in table {
            let here = size_stated("io", executor, &stated);
            assert_eq!(
                here.as_ref().map(|h| h.size),
                size,
                "{executor:?} {stated:?}"
            );
            if let Some(here) = here {
                assert!(here.by.iter().all(|s| stated.contains(s)));
            }
        }
    }
}
