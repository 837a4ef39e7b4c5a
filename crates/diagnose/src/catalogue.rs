//! The catalogue of known pools: which framework default sizes a pool chokepoint observed, and
//! the setting that changes it (`ForkJoinPool.commonPool-worker-*` → cores − 1,
//! `-Djava.util.concurrent.ForkJoinPool.common.parallelism`).
//!
//! The entries are data, `catalogue/pools.toml` at the repository's root, built into the
//! binary; each one names its pool by thread names, process names or frames
//! ([`crate::pool_pattern`] says how a pattern meets a name the observer cut or stripped of its
//! counter) and cites where the project's own code or documentation sets the default. A user's
//! file in the same form ([`Catalogue::parse`], `chokepoint sweep --catalogue FILE`) goes in
//! front of it ([`Catalogue::with_built_in`]); the binary builds that catalogue and passes it to
//! [`crate::diagnose_with`], whose place stage asks it ([`Catalogue::setting_for`],
//! [`Catalogue::setting_for_frames`]). Nothing here is process-wide but the parsed built-in
//! entries. Parsing refuses an entry without a source, a setting or a pattern, so the finding
//! says nothing it cannot back.
//!
//! A connection pool's default cap is one fixed number (`size = 10`) or a rule of the cores
//! (`size_rule = "max(4, cpus)"`, [`crate::size_rule`]), evaluated with what the target counts
//! ([`Entry::default_here`]) before it is compared with the connections seen.
use crate::pool_pattern::Pattern;
use crate::size_rule::{SizeRule, UsableCores};
use crate::stated_size::Factor;
use chokepoint_result::{DefaultHere, Setting, Stated};
use serde::Deserialize;
use std::sync::OnceLock;

/// The catalogue built into chokepoint.
pub const BUILT_IN: &str = include_str!("../../../catalogue/pools.toml");

/// One entry as the file writes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryText {
    framework: String,
    #[serde(default)]
    threads: Vec<String>,
    #[serde(default)]
    processes: Vec<String>,
    #[serde(default)]
    frames: Vec<String>,
    #[serde(default)]
    libraries: Vec<String>,
    #[serde(default)]
    kind: EntryKind,
    #[serde(default)]
    size: Option<f64>,
    #[serde(default)]
    size_rule: Option<String>,
    #[serde(default)]
    stated: Vec<Factor>,
    setting: String,
    default: String,
    source: String,
}

/// What an entry's pool holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntryKind {
    /// Threads or processes (the default).
    #[default]
    ThreadPool,
    /// Connections to a downstream: an HTTP client's or a database driver's pool.
    ConnectionPool,
    /// A proxy's configured cap on one upstream server (HAProxy's `maxconn`, nginx's
    /// `max_conns=`): named only from the cap its configuration sets for the server its
    /// connections went to, never by the proxy's name alone (a CPU-bound proxy's knob is
    /// another).
    UpstreamCap,
    /// A cap on the client connections a server accepts (HAProxy's frontend `maxconn`, Go's
    /// `netutil.LimitListener`): named only when the clients it answered stopped there, from the
    /// cap its configuration sets on the swept port or from the frames its accepting waits in,
    /// never by the process's name alone.
    FrontCap,
}

/// The file: `[[pool]]` tables.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileText {
    #[serde(default)]
    pool: Vec<EntryText>,
}

/// One known pool.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The framework default and the setting that changes it.
    pub setting: Setting,
    /// Thread and process name patterns.
    names: Vec<Pattern>,
    /// Frame patterns.
    frames: Vec<Pattern>,
    /// Patterns of the library files that show the pool's code in a process (`/proc/PID/maps`,
    /// `/proc/PID/fd`): a jar, a C extension.
    libraries: Vec<Pattern>,
    /// What the pool holds.
    pub kind: EntryKind,
    /// Its default cap on connections to one peer, when it has one.
    pub size: Option<DefaultSize>,
    /// The values a process states that set its size ([`crate::stated_size`]).
    stated: Vec<Factor>,
}

/// A connection pool's default cap.
#[derive(Debug, Clone, PartialEq)]
pub enum DefaultSize {
    /// One number, whatever the machine.
    Fixed(u32),
    /// A rule of the cores the target counts.
    Rule(SizeRule),
}

impl Entry {
    /// Whether `pool` (a thread or process name as observed) is this entry's.
    pub fn matches_pool(&self, pool: &str) -> bool {
        self.names.iter().any(|p| p.matches_pool(pool))
    }

    /// Whether one of `frames` is this entry's.
    pub fn matches_frames(&self, frames: &[String]) -> bool {
        frames
            .iter()
            .any(|frame| self.frames.iter().any(|p| p.matches_frame(frame)))
    }

    /// The first of `paths` (library files a process has open or mapped) that is this
    /// entry's.
    pub fn library_in<'p>(&self, paths: &'p [String]) -> Option<&'p String> {
        paths
            .iter()
            .find(|path| self.libraries.iter().any(|p| p.matches_path(path)))
    }

    /// Its default cap on a target that counts `cores` (unknown: a rule gives none).
    pub fn default_here(&self, cores: Option<&UsableCores>) -> Option<DefaultHere> {
        match &self.size {
            Some(DefaultSize::Fixed(size)) => Some(DefaultHere {
                size: *size,
                counted: None,
            }),
            Some(DefaultSize::Rule(rule)) => rule.on(cores?),
            None => None,
        }
    }

    /// Whether its default cap on a target that counts `cores` is `seen` (connections, or
    /// calls held at once), within the place's tolerance ([`crate::place::matches_limit`]).
    /// An entry without a cap agrees with nothing.
    pub fn agrees_with(&self, seen: f64, cores: Option<&UsableCores>) -> bool {
        self.default_here(cores)
            .is_some_and(|d| crate::place::matches_limit(seen, f64::from(d.size)))
    }

    /// Its setting on the target: its default cap with the `cores` it counts, and the size its
    /// processes state when they state one (`stated`: what the sweep read of them).
    pub fn setting_on(&self, cores: Option<&UsableCores>, stated: &[Stated]) -> Setting {
        Setting {
            default_here: self.default_here(cores),
            stated_here: crate::stated_size::size_stated(&self.stated, stated),
            ..self.setting.clone()
        }
    }

    /// The patterns as written: names, frames, then libraries.
    pub fn patterns(&self) -> impl Iterator<Item = &str> {
        self.names
            .iter()
            .chain(&self.frames)
            .chain(&self.libraries)
            .map(Pattern::as_str)
    }
}

/// Why a catalogue file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogueError {
    /// Not TOML of the catalogue's form.
    #[error("not a catalogue of pools: {0}")]
    Form(String),
    /// An entry that lacks something or has a bad pattern.
    #[error("entry {index} ({framework:?}): {problem}")]
    Entry {
        /// Its position in the file, from 1.
        index: usize,
        /// Its framework, as written.
        framework: String,
        /// What is wrong.
        problem: String,
    },
}

/// Known pools, the first match wins.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalogue {
    entries: Vec<Entry>,
}

impl Catalogue {
    /// Reads a catalogue in the form of `catalogue/pools.toml`.
    pub fn parse(text: &str) -> Result<Catalogue, CatalogueError> {
        let file: FileText =
            toml::from_str(text).map_err(|err| CatalogueError::Form(one_line(&err.to_string())))?;
        let entries = file
            .pool
            .into_iter()
            .enumerate()
            .map(|(i, entry)| {
                let framework = entry.framework.clone();
                checked(entry).map_err(|problem| CatalogueError::Entry {
                    index: i + 1,
                    framework,
                    problem,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Catalogue { entries })
    }

    /// The catalogue built into chokepoint.
    pub fn built_in() -> &'static Catalogue {
        static BUILT: OnceLock<Catalogue> = OnceLock::new();
        BUILT.get_or_init(|| {
            Catalogue::parse(BUILT_IN).expect("catalogue/pools.toml parses (a unit test checks)")
        })
    }

    /// Its entries, in order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// This catalogue's entries in front of the built-in ones: a user's file as a sweep uses it.
    pub fn with_built_in(self) -> Catalogue {
        self.then(Catalogue::built_in())
    }

    /// The framework default behind `pool` and the setting that changes it, when an entry
    /// knows the pool. `pool` is a pool name as `/proc` or a runtime gives it: a thread name
    /// without its counter (`ForkJoinPool.commonPool-worker`, or `ForkJoinPool.co` cut at 15
    /// bytes), or a process name (`php-fpm8.2`).
    pub fn setting_for(&self, pool: &str) -> Option<Setting> {
        self.entry_for(pool).map(|e| e.setting.clone())
    }

    /// The entry that knows `pool` (see [`Catalogue::setting_for`]): a proxy's upstream or front
    /// cap is no pool of threads and is never one.
    pub fn entry_for(&self, pool: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| {
            !matches!(e.kind, EntryKind::UpstreamCap | EntryKind::FrontCap) && e.matches_pool(pool)
        })
    }

    /// The front-cap entry of the proxy `program` (its process name).
    pub fn front_cap_for(&self, program: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|e| e.kind == EntryKind::FrontCap && e.matches_pool(program))
    }

    /// The upstream-cap entry of the proxy `program` (its process name).
    pub fn upstream_cap_for(&self, program: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|e| e.kind == EntryKind::UpstreamCap && e.matches_pool(program))
    }

    /// The setting behind a pool whose waiting threads stand in one of `frames` (a connection
    /// pool's `getConnection`), when an entry knows it.
    pub fn setting_for_frames(&self, frames: &[String]) -> Option<Setting> {
        self.entry_for_frames(frames).map(|e| e.setting.clone())
    }

    /// The thread-pool entry (not a connection pool's) that knows one of `frames`.
    pub fn thread_pool_for_frames(&self, frames: &[String]) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|e| e.kind == EntryKind::ThreadPool && e.matches_frames(frames))
    }

    /// The entry that knows one of `frames` (see [`Catalogue::setting_for_frames`]); a cap on
    /// accepted connections is not a pool's ([`Catalogue::front_cap_for_frames`]).
    pub fn entry_for_frames(&self, frames: &[String]) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|e| e.kind != EntryKind::FrontCap && e.matches_frames(frames))
    }

    /// The front-cap entry whose accepting waits in one of `frames` while its cap is full
    /// (`netutil.(*limitListener).acquire`).
    pub fn front_cap_for_frames(&self, frames: &[String]) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|e| e.kind == EntryKind::FrontCap && e.matches_frames(frames))
    }

    /// Of `paths` (the files a process has open or mapped), those some entry names as its
    /// library, in order: what a sweep keeps of them (`SweepContext::target_libraries`).
    pub fn known_libraries(&self, paths: &[String]) -> Vec<String> {
        paths
            .iter()
            .filter(|path| {
                self.entries
                    .iter()
                    .any(|e| e.libraries.iter().any(|p| p.matches_path(path)))
            })
            .cloned()
            .collect()
    }

    /// The connection pool a process shows, by one of `libraries` or one of its thread
    /// `pools`, whose default cap on a target that counts `cores` is the `connections` seen:
    /// its setting, and what showed it (the library file, or the pool's name). An entry with
    /// no default cap (unlimited), or a rule of cores not known, is never named this way:
    /// nothing would back it.
    pub fn connection_pool(
        &self,
        libraries: &[String],
        pools: &[&str],
        connections: f64,
        cores: Option<&UsableCores>,
        stated: &[Stated],
    ) -> Option<(Setting, String)> {
        self.entries
            .iter()
            .filter(|e| e.kind == EntryKind::ConnectionPool && e.agrees_with(connections, cores))
            .find_map(|e| {
                let shown_by = e.library_in(libraries).cloned().or_else(|| {
                    pools
                        .iter()
                        .find(|pool| e.matches_pool(pool))
                        .map(|pool| format!("threads `{pool}`"))
                })?;
                Some((e.setting_on(cores, stated), shown_by))
            })
    }

    /// The command-line flags (and JVM properties) and the environment variables its entries
    /// read for a size a process states: what a sweep asks the target's processes for.
    pub fn stated_names(&self) -> (Vec<String>, Vec<String>) {
        let factors = || self.entries.iter().flat_map(|e| &e.stated);
        let unique = |names: Vec<&String>| {
            let set: std::collections::BTreeSet<&String> = names.into_iter().collect();
            set.into_iter().cloned().collect()
        };
        (
            unique(factors().flat_map(|f| &f.flags).collect()),
            unique(factors().flat_map(|f| &f.env).collect()),
        )
    }

    /// This catalogue's entries, then `later`'s.
    pub fn then(mut self, later: &Catalogue) -> Catalogue {
        self.entries.extend(later.entries.iter().cloned());
        self
    }
}

/// An entry with every field it needs and its patterns compiled.
fn checked(entry: EntryText) -> Result<Entry, String> {
    for (field, value) in [
        ("framework", &entry.framework),
        ("setting", &entry.setting),
        ("default", &entry.default),
        ("source", &entry.source),
    ] {
        if value.trim().is_empty() {
            return Err(format!(
                "its {field} is empty: every entry names the framework, the setting, its default and the source that documents it"
            ));
        }
    }
    if entry.threads.is_empty()
        && entry.processes.is_empty()
        && entry.frames.is_empty()
        && entry.libraries.is_empty()
    {
        return Err(
            "no threads, processes, frames or libraries: the entry must say which pool it is"
                .to_string(),
        );
    }
    if let Some(problem) = entry.stated.iter().find_map(Factor::problem) {
        return Err(problem);
    }
    let size = match (entry.size, &entry.size_rule) {
        (Some(_), Some(_)) => {
            return Err(
                "both size and size_rule: a fixed default is `size = N`, one that follows the cores `size_rule = \"...\"`"
                    .to_string(),
            )
        }
        (Some(size), None) if size >= 1.0 && size.fract() == 0.0 && size <= f64::from(u32::MAX) => {
            Some(DefaultSize::Fixed(size as u32))
        }
        (Some(size), None) => {
            return Err(format!(
                "its size {size} is not a number of connections (a whole number, 1 or more): leave it out when the default is unlimited"
            ))
        }
        (None, Some(rule)) => Some(DefaultSize::Rule(
            SizeRule::parse(rule).map_err(|e| format!("its size_rule {rule:?}: {e}"))?,
        )),
        (None, None) => None,
    };
    let compile = |patterns: &[String]| -> Result<Vec<Pattern>, String> {
        patterns.iter().map(|p| Pattern::new(p)).collect()
    };
    let mut names = compile(&entry.threads)?;
    names.extend(compile(&entry.processes)?);
    Ok(Entry {
        names,
        frames: compile(&entry.frames)?,
        libraries: compile(&entry.libraries)?,
        kind: entry.kind,
        setting: Setting {
            framework: entry.framework.trim().to_string(),
            setting: entry.setting.trim().to_string(),
            default: entry.default.trim().to_string(),
            source: entry.source.trim().to_string(),
            size_rule: match &size {
                Some(DefaultSize::Rule(rule)) => Some(rule.as_str().to_string()),
                _ => None,
            },
            default_here: None,
            stated_here: None,
        },
        size,
        stated: entry.stated,
    })
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::size_rule::UsableCores;

    #[test]
    fn every_built_in_entry_parses_and_cites_a_pinned_source() {
        let catalogue = Catalogue::parse(BUILT_IN).expect("catalogue/pools.toml parses");
        assert!(
            catalogue.entries().len() >= 20,
            "{}",
            catalogue.entries().len()
        );
        for entry in catalogue.entries() {
            let s = &entry.setting;
            // A source is a repository file at a commit (40 hex digits), not a branch.
            let pinned = s.source.starts_with("https://github.com/")
                && s.source
                    .split('/')
                    .any(|part| part.len() == 40 && part.chars().all(|c| c.is_ascii_hexdigit()));
            assert!(pinned, "{}: source {:?}", s.framework, s.source);
            assert!(entry.patterns().count() > 0, "{}", s.framework);
        }
    }

    #[test]
    fn known_pools_say_their_setting_and_others_say_nothing() {
        // (pool name as observed, the framework it must name; None: must match no entry).
        let table = [
            (
                "ForkJoinPool.commonPool-worker",
                Some("ForkJoinPool.commonPool"),
            ),
            ("ForkJoinPool.co", Some("ForkJoinPool.commonPool")),
            ("scala-execution", Some("Scala's global ExecutionContext")),
            (
                "scala-execution-context-global",
                Some("Scala's global ExecutionContext"),
            ),
            ("MySystem-akka.a", Some("Akka's default dispatcher")),
            ("HikariPool-1 ho", Some("HikariCP")),
            ("qtp1734325451", Some("Jetty's QueuedThreadPool")),
            ("http-nio-8080-e", Some("Tomcat")),
            ("https-jsse-nio-8443-exec", Some("Tomcat")),
            ("XNIO-1 task", Some("Undertow")),
            ("nioEventLoopGro", Some("Netty")),
            ("epollEventLoopG", Some("Netty")),
            ("reactor-http-ni", Some("Reactor Netty")),
            ("boundedElastic", Some("Project Reactor")),
            ("RxComputationTh", Some("RxJava 3's Schedulers.computation")),
            ("RxCachedThreadS", Some("RxJava 3's Schedulers.io")),
            ("io-executor-thr", Some("Micronaut's io executor")),
            ("io-executor-thread", Some("Micronaut's io executor")),
            ("default-eventLo", Some("Micronaut's Netty event loops")),
            (
                "default-eventLoopGroup-2",
                Some("Micronaut's Netty event loops"),
            ),
            ("task", Some("Spring Boot")),
            ("ThreadPoolExecutor-0", Some("Python's concurrent.futures")),
            ("asyncio", Some("asyncio's default executor")),
            ("gunicorn", Some("gunicorn")),
            ("uvicorn", Some("uvicorn")),
            ("waitress", Some("waitress")),
            ("AnyIO worker thread", Some("AnyIO")),
            ("libuv-worker", Some("libuv")),
            ("puma srv tp", Some("Puma")),
            ("sidekiq.default", Some("Sidekiq")),
            ("php-fpm8", Some("PHP-FPM")),
            ("php-fpm8.2", Some("PHP-FPM")),
            ("php-fpm", Some("PHP-FPM")),
            ("apache2", Some("Apache httpd")),
            ("httpd", Some("Apache httpd")),
            ("nginx", Some("nginx")),
            // Pools no framework sizes by default: nothing to say.
            ("ForkJoinPool-1-worker", None),
            ("ForkJoinPool-1", None),
            ("pool-1-thread", None),
            ("http-nio-8080-P", None),
            ("http-nio-8080-A", None),
            ("sidekiq.heartbe", None),
            ("GC Thread", None),
            ("C2 CompilerThre", None),
            ("VM Thread", None),
            ("actor-pool", None),
            ("blocking-dispat", None),
            ("cp-demo-actors", None),
            ("tokio-runtime-w", None),
            ("python3", None),
            ("node", None),
            ("java", None),
            ("go-semaphore", None),
            ("", None),
        ];
        let catalogue = Catalogue::built_in();
        for (pool, framework) in table {
            let found = catalogue.setting_for(pool);
            match framework {
                Some(name) => {
                    let found = found.unwrap_or_else(|| panic!("{pool:?}: no entry"));
                    assert!(
                        found.framework.starts_with(name) || found.framework.contains(name),
                        "{pool:?}: {found:?}"
                    );
                }
                None => assert_eq!(found, None, "{pool:?}"),
            }
        }
        let common = catalogue.setting_for("ForkJoinPool.co").unwrap();
        assert_eq!(
            common.setting,
            "-Djava.util.concurrent.ForkJoinPool.common.parallelism=N"
        );
        assert_eq!(common.default, "cores − 1 (at least 1)");
        assert_eq!(
            catalogue.setting_for("php-fpm8").unwrap().default,
            "5 (the www.conf PHP ships)"
        );
    }

    #[test]
    fn a_connection_pool_is_known_by_the_frame_its_threads_wait_in() {
        let catalogue = Catalogue::built_in();
        let frames = vec![
            "java.util.concurrent.locks.LockSupport.parkNanos".to_string(),
            "com.zaxxer.hikari.pool.HikariPool.getConnection".to_string(),
        ];
        let hikari = catalogue.setting_for_frames(&frames).unwrap();
        assert_eq!(
            (hikari.setting.as_str(), hikari.default.as_str()),
            ("maximumPoolSize", "10")
        );
        assert_eq!(
            catalogue.setting_for_frames(&["java.net.http.HttpClient.send".to_string()]),
            None
        );
    }

    #[test]
    fn pgxpools_default_agrees_with_the_cap_its_cpus_give_and_no_other() {
        let pgxpool = Catalogue::built_in()
            .entry_for_frames(&[
                "golang.org/x/sync/semaphore.(*Weighted).Acquire".to_string(),
                "github.com/jackc/pgx/v5/pgxpool.(*Pool).Exec".to_string(),
            ])
            .expect("pgxpool's entry, by the pool's call the service made");
        assert_eq!(
            Catalogue::built_in()
                .entry_for_frames(&["golang.org/x/sync/semaphore.(*Weighted).Acquire".to_string()]),
            None,
            "a semaphore alone is not pgxpool's"
        );
        assert_eq!(pgxpool.setting.size_rule.as_deref(), Some("max(4, cpus)"));
        // (the target's CPUs, its CPU quota, the measured cap that is pgxpool's default there).
        let table = [
            (2, None, 4.0),
            (16, None, 16.0),
            (64, None, 64.0),
            // runtime.NumCPU() reads the CPUs it may run on, not the quota.
            (64, Some(2.0), 64.0),
            (16, Some(0.5), 16.0),
        ];
        let measured = [1.0, 2.0, 4.0, 8.0, 10.0, 16.0, 32.0, 64.0, 100.0];
        for (cpus, quota, truth) in table {
            let cores = UsableCores { cpus, quota };
            for seen in measured {
                assert_eq!(
                    pgxpool.agrees_with(seen, Some(&cores)),
                    seen == truth,
                    "{cores:?}: {seen} connections"
                );
            }
            let here = pgxpool.setting_on(Some(&cores), &[]).default_here.unwrap();
            assert_eq!(f64::from(here.size), truth, "{cores:?}");
        }
        // Within the place's tolerance of 15%: 4.5 held on 2 CPUs is the 4, 17 on 16 the 16.
        let two = UsableCores {
            cpus: 2,
            quota: None,
        };
        assert!(pgxpool.agrees_with(4.5, Some(&two)));
        assert!(!pgxpool.agrees_with(5.5, Some(&two)));
        // The CPUs unknown: a rule backs nothing.
        assert!(!pgxpool.agrees_with(4.0, None));
        assert_eq!(pgxpool.setting_on(None, &[]).default_here, None);
        // A fixed cap needs no cores: HikariCP's 10 wherever it runs.
        let hikari = Catalogue::built_in()
            .entry_for_frames(&["com.zaxxer.hikari.pool.HikariPool.getConnection".to_string()])
            .unwrap();
        assert!(hikari.agrees_with(10.0, None));
        assert!(!hikari.agrees_with(4.0, Some(&two)));
    }

    #[test]
    fn a_rule_entry_is_named_from_its_pool_only_where_the_rule_gives_the_connections_seen() {
        let user = Catalogue::parse(
            r#"
            [[pool]]
            framework = "our driver's pool"
            threads = ["ourdb-conn-#"]
            setting = "ourdb.max_conns"
            default = "2 × the cores"
            size_rule = "2 * cores"
            kind = "connection-pool"
            source = "docs/ourdb.md"
            "#,
        )
        .unwrap();
        let pools = ["ourdb-conn"];
        // (CPUs, quota, connections seen, named).
        let table = [
            (2, None, 4.0, true),
            (16, None, 32.0, true),
            (64, None, 128.0, true),
            (64, Some(4.0), 8.0, true),
            (64, Some(4.0), 128.0, false),
            (2, None, 10.0, false),
            (16, None, 4.0, false),
        ];
        for (cpus, quota, connections, named) in table {
            let cores = UsableCores { cpus, quota };
            let found = user.connection_pool(&[], &pools, connections, Some(&cores), &[]);
            assert_eq!(found.is_some(), named, "{cores:?} {connections}");
            if let Some((setting, shown_by)) = found {
                assert_eq!(shown_by, "threads `ourdb-conn`");
                let here = setting.default_here.unwrap();
                assert_eq!(f64::from(here.size), connections);
                assert_eq!(
                    here.counted,
                    Some((
                        chokepoint_result::CoreCount::Cores,
                        cores.count(chokepoint_result::CoreCount::Cores)
                    ))
                );
            }
        }
        assert_eq!(user.connection_pool(&[], &pools, 4.0, None, &[]), None);
    }

    #[test]
    fn a_malformed_size_rule_or_one_beside_a_size_is_refused_in_one_line() {
        let entry = |size: &str| {
            format!(
                r#"
                [[pool]]
                framework = "x"
                threads = ["xpool-#"]
                setting = "x.size"
                default = "4"
                kind = "connection-pool"
                source = "a"
                {size}
                "#
            )
        };
        // (the size lines, what the refusal says).
        let table = [
            (
                "size_rule = \"max(4, cores\"",
                "its size_rule \"max(4, cores\": `)` expected at the end",
            ),
            (
                "size_rule = \"4\"",
                "no `cpus` or `cores` in it: a fixed default is `size = N`",
            ),
            ("size_rule = \"threads\"", "`threads` is not"),
            ("size = 4\nsize_rule = \"cores\"", "both size and size_rule"),
            ("size = 4.5", "its size 4.5 is not a number of connections"),
        ];
        for (size, says) in table {
            let err = Catalogue::parse(&entry(size)).unwrap_err().to_string();
            assert!(err.starts_with("entry 1 (\"x\"): "), "{err}");
            assert!(err.contains(says), "{size}: {err}");
            assert!(!err.contains('\n'), "{err}");
        }
        assert!(Catalogue::parse(&entry("size_rule = \"max(1, cores - 1)\"")).is_ok());
    }

    #[test]
    fn a_users_entries_come_first_and_bad_ones_are_refused_with_the_reason() {
        let user = Catalogue::parse(
            r#"
            [[pool]]
            framework = "our order service's pool"
            threads = ["ForkJoinPool.commonPool-worker-#", "orders-#"]
            setting = "orders.pool.size"
            default = "16"
            source = "docs/orders.md"
            "#,
        )
        .unwrap();
        let both = user.with_built_in();
        assert_eq!(both.setting_for("orders").unwrap().default, "16");
        assert_eq!(
            both.setting_for("ForkJoinPool.co").unwrap().setting,
            "orders.pool.size"
        );
        assert_eq!(
            both.setting_for("php-fpm8").unwrap().framework,
            "PHP-FPM (one request at a time per child process)"
        );

        let no_source = r#"
            [[pool]]
            framework = "x"
            threads = ["xpool-#"]
            setting = "x.size"
            default = "4"
            source = " "
        "#;
        let err = Catalogue::parse(no_source).unwrap_err().to_string();
        assert!(
            err.starts_with("entry 1 (\"x\"): its source is empty"),
            "{err}"
        );
        let no_pattern = no_source
            .replace("threads = [\"xpool-#\"]", "")
            .replace("\" \"", "\"a\"");
        let err = Catalogue::parse(&no_pattern).unwrap_err().to_string();
        assert!(
            err.contains("no threads, processes, frames or libraries"),
            "{err}"
        );
        let no_size = no_source.replace("\" \"", "\"a\"").replace(
            "default = \"4\"",
            "default = \"unlimited\"\n            size = 0",
        );
        let err = Catalogue::parse(&no_size).unwrap_err().to_string();
        assert!(err.contains("is not a number of connections"), "{err}");
        let wildcard = no_source.replace("xpool-#", "*").replace("\" \"", "\"a\"");
        let err = Catalogue::parse(&wildcard).unwrap_err().to_string();
        assert!(err.contains("fewer than 3 plain characters"), "{err}");
        let typo = no_source.replace("threads", "thread");
        let err = Catalogue::parse(&typo).unwrap_err().to_string();
        assert!(
            err.starts_with("not a catalogue of pools:") && !err.contains('\n'),
            "{err}"
        );
    }
}
