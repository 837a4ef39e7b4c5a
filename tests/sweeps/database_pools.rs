//! Connection pools in front of a database, as places: a real PostgreSQL started by the test
//! (`common::postgres`), a target whose requests each hold one pooled connection for a known
//! time (`SELECT pg_sleep(d)`), swept from `/proc` alone (`--stacks off`) and without the mock,
//! as a user sweeps a service whose downstream is its database. The rule under test
//! (`crates/diagnose/src/place`) reads any peer port, not only the mock's; the targets were built
//! after it:
//! - `tests/targets/py-asyncpg`: one event loop, an asyncpg pool at its defaults (10). Truth by
//!   hand: 10 connections × 100 ms each = 100 req/s, and the coroutines past the 10th wait
//!   inside the pool, holding no thread and no socket.
//! - `tests/targets/java-hikari`: the JDK's HttpServer on 30 handler threads, HikariCP at its
//!   defaults (maximumPoolSize 10). Truth by hand: 100 req/s as above; past 10 in flight the
//!   handlers park inside `HikariPool.getConnection`, so their pool (30) is not the knob.
//!
//! - `tests/targets/go-pgxpool`: Go's net/http, pgx v5's pgxpool at its defaults, whose size
//!   follows the CPUs: max(4, runtime.NumCPU()), built after the catalogue's `size_rule`. Truth
//!   by hand on this 2-core machine: 4 connections × 100 ms = 40 req/s; past 4 in flight the
//!   handlers' goroutines wait in puddle's `Acquire`, which pprof shows (`-pprof`).
//! - `tests/targets/go-database-sql`: Go's net/http, database/sql on pgx's stdlib driver, capped
//!   by the service with `db.SetMaxOpenConns(6)` (database/sql's own default is no cap), built
//!   after the catalogue's entry. Truth by hand: 6 connections × 100 ms = 60 req/s; past 6 in
//!   flight the handlers wait in `database/sql.(*DB).conn`, which pprof shows.
//! - `tests/targets/py-sqlalchemy`: a thread per connection (Python's ThreadingHTTPServer), one
//!   query per request through SQLAlchemy's `create_engine` pool at its defaults (QueuePool, 5 +
//!   10 overflow: 15) or, with `--pool psycopg`, psycopg_pool's `ConnectionPool` (4), both on
//!   psycopg 3, built after the catalogue's entries. Truth by hand: 15 (4) connections × ~100 ms;
//!   the handler threads idle on their clients' kept-alive connections are not network waits
//!   (`chokepoint_observe::threads::ThreadSample::idle_on_a_client`).
//! - `tests/targets/node-pg`: one Node.js event loop, node-postgres's `Pool` at its defaults
//!   (`max` 10, opened on demand). Truth by hand: 100 req/s as above. Node's modules are read,
//!   never mapped, and it runs no pool thread: nothing in `/proc` names the pool, so the place
//!   must stay unclear (a right size, no wrong knob).
//!
//! Each needs its tools (PostgreSQL's server from Debian's `postgresql`; node with `pg` from npm; python3 with asyncpg
//! and aiohttp, SQLAlchemy and psycopg from PyPI; java with HikariCP's and the JDBC driver's jars from Maven Central):
//! `.ci/run` installs them, and a missing one fails the test.
use crate::common;

use chokepoint_experiment::SweepConfig;
use chokepoint_observe::stacks::StackOptions;
use chokepoint_result::{Kind, PlaceKind, PlaceSource, SweepResult};
use common::postgres::Postgres;
use common::*;
use std::process::Command;

/// The sweep of `url` with `--pid auto`, `/proc` alone, no mock, over `clients`.
fn sweep_without_mock(name: &str, url: &str, clients: Vec<u32>) -> SweepResult {
    sweep_without_mock_stacks(name, url, clients, false)
}

/// The same, with the runtime's stacks on or off.
fn sweep_without_mock_stacks(
    name: &str,
    url: &str,
    clients: Vec<u32>,
    stacks: bool,
) -> SweepResult {
    let config = SweepConfig::new(url).expect("a valid URL");
    let found = config.listening_target();
    assert_eq!(found.len(), 1, "{name}: --pid auto finds one process");
    let mut config = config.with_target_pids(found);
    config.stacks = StackOptions {
        enabled: stacks,
        ..StackOptions::default()
    };
    let most = clients.iter().copied().max().unwrap_or(1);
    sweep_with(name, config, Some(clients), STEP, most, None)
}

/// The place of a Go service's pool found by pprof: a `connection-pool` from the goroutine
/// dumps, with the one-line attribution (printed).
fn pprof_connection_pool(name: &str, result: &SweepResult) -> (chokepoint_result::Place, String) {
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    let attribution = diagnosis.attribution.clone().unwrap_or("no place".into());
    println!("{name}: {attribution}");
    let place = diagnosis
        .place
        .clone()
        .unwrap_or_else(|| panic!("{name}: no place: {:#?}", diagnosis.evidence));
    assert_eq!(place.kind, Some(PlaceKind::ConnectionPool));
    assert_eq!(
        place.source,
        Some(PlaceSource::Stacks(chokepoint_result::StackSource::Pprof))
    );
    (place, attribution)
}

/// The most connections the target held to `port` at any step.
fn most_connections_to(result: &SweepResult, port: u16) -> Option<u32> {
    result
        .steps
        .iter()
        .filter_map(|s| s.connections.as_ref())
        .flat_map(|c| c.downstream.iter())
        .filter(|peer| peer.peer_port == port)
        .map(|peer| peer.counts.most.established)
        .max()
}

/// The place a connection pool of 10 to PostgreSQL should get: read from the connections to
/// the database's port, with a catalogue entry's setting; printed as a user reads it.
fn database_pool_place(
    name: &str,
    result: &SweepResult,
    database: &Postgres,
) -> chokepoint_result::Place {
    assert_eq!(
        most_connections_to(result, database.port()),
        Some(10),
        "the truth: the pool's 10 connections to PostgreSQL"
    );
    assert_finding(name, result, Kind::BlockingPool, 10.0);
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    println!(
        "{name}: {}; libraries {:?}",
        diagnosis.attribution.as_deref().unwrap_or("no place"),
        result.context.target_libraries
    );
    let place = diagnosis
        .place
        .clone()
        .unwrap_or_else(|| panic!("{name}: no place: {:#?}", diagnosis.evidence));
    assert_eq!(place.kind, Some(PlaceKind::ConnectionPool), "{name}");
    assert_eq!(place.source, Some(PlaceSource::Connections), "{name}");
    assert_eq!(place.size, Some(10.0), "{name}");
    assert_eq!(
        place.peer_port,
        Some(database.port()),
        "{name}: PostgreSQL's port"
    );
    place
}

/// The jars of tests/targets/java-hikari, which scripts/install-test-deps.sh fetches.
fn hikari_jars() -> std::path::PathBuf {
    crate::place::cached_jars("hikari", "HikariCP-7.1.0.jar", "HikariCP")
}

#[test]
fn hikaricps_pool_in_front_of_postgresql_is_named_from_its_connections_and_its_jar() {
    assert!(
        toolchain_present("java", "-version"),
        "java is needed: install it (.ci/run does)"
    );
    let jars = hikari_jars();
    let _turn = beside_one_other();
    let database = Postgres::start();
    let jdbc = format!(
        "jdbc:postgresql://127.0.0.1:{}/postgres?user=postgres",
        database.port()
    );
    let mut command = Command::new("java");
    command
        .arg("-cp")
        .arg(jars.join("*"))
        .arg(targets_dir().join("java-hikari/HikariServer.java"))
        .args(["--port", "0", "--jdbc", &jdbc, "--sleep", "0.1"]);
    let target = Target::launch("java-hikari", command);
    let result = sweep_without_mock("java-hikari", &target.url(), vec![2, 5, 20, 40]);
    drop(target);
    let place = database_pool_place("java-hikari", &result, &database);
    let setting = place.setting.as_ref().expect("HikariCP's entry");
    assert_eq!(setting.setting, "maximumPoolSize", "{setting:?}");
    let shown_by = place.shown_by.as_deref().unwrap_or_default();
    assert!(
        shown_by.ends_with("HikariCP-7.1.0.jar") || shown_by.contains("HikariPool"),
        "{shown_by}"
    );
    let handlers = place.queued_threads.as_ref().expect("the handlers");
    assert!(
        handlers.threads > handlers.held,
        "handlers parked beside those on the network: {handlers:?}"
    );
}

#[test]
fn an_asyncpg_pool_in_front_of_postgresql_is_named_from_its_connections_and_its_extension() {
    assert!(
        Command::new("python3")
            .args(["-c", "import asyncpg, aiohttp"])
            .status()
            .is_ok_and(|s| s.success()),
        "python3 with asyncpg and aiohttp is needed: pip install asyncpg aiohttp (.ci/run does)"
    );
    let _turn = beside_one_other();
    let database = Postgres::start();
    let mut command = Command::new("python3");
    command
        .arg(targets_dir().join("py-asyncpg/server.py"))
        .args(["--port", "0", "--dsn", &database.dsn(), "--sleep", "0.1"]);
    let target = Target::launch("py-asyncpg", command);
    let result = sweep_without_mock("py-asyncpg", &target.url(), vec![2, 5, 20, 40]);
    drop(target);
    let place = database_pool_place("py-asyncpg", &result, &database);
    let setting = place.setting.as_ref().expect("asyncpg's entry");
    assert!(setting.setting.contains("max_size"), "{setting:?}");
    let shown_by = place.shown_by.as_deref().unwrap_or_default();
    assert!(shown_by.contains("/asyncpg/"), "{shown_by}");
    assert_eq!(
        place.queued_threads, None,
        "an event loop: no thread queues"
    );
}

#[test]
fn a_node_postgres_pool_is_sized_and_left_unplaced_when_nothing_names_it() {
    assert!(
        toolchain_present("node", "--version"),
        "node is needed (.ci/run installs it)"
    );
    let dir = targets_dir().join("node-pg");
    assert!(
        dir.join("node_modules/pg").is_dir(),
        "node-postgres is missing in {}: run scripts/install-test-deps.sh",
        dir.display()
    );
    let _turn = beside_one_other();
    let database = Postgres::start();
    let mut command = Command::new("node");
    command.arg(dir.join("server.js")).args([
        "--port",
        "0",
        "--dsn",
        &database.dsn(),
        "--sleep",
        "0.1",
    ]);
    let target = Target::launch("node-pg", command);
    let result = sweep_without_mock("node-pg", &target.url(), vec![2, 5, 20, 40]);
    drop(target);
    assert_eq!(
        most_connections_to(&result, database.port()),
        Some(10),
        "the truth: node-postgres's 10 connections to PostgreSQL"
    );
    assert_finding("node-pg", &result, Kind::BlockingPool, 10.0);
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    println!(
        "node-pg: {}",
        diagnosis.attribution.as_deref().unwrap_or("no place")
    );
    assert_eq!(
        diagnosis.place, None,
        "no pool of threads and no library names it: no knob to name"
    );
}

#[test]
fn a_pgxpool_sized_by_the_cpus_is_named_by_pprof_with_its_rule_on_this_machine() {
    assert!(
        toolchain_present("go", "version"),
        "go is needed: install it (.ci/run does)"
    );
    // Built before the sweep's turn: a cold build (CI's first) is no measurement.
    let binary = build_go_target("go-pgxpool");
    let _turn = beside_one_other();
    let database = Postgres::start();
    let mut command = Command::new(binary);
    command.args([
        "-port",
        "0",
        "-dsn",
        &database.dsn(),
        "-sleep",
        "0.1",
        "-pprof",
    ]);
    let target = Target::launch("go-pgxpool", command);
    let result = sweep_without_mock_stacks("go-pgxpool", &target.url(), vec![1, 2, 8, 16], true);
    drop(target);
    // pgxpool's default here: runtime.NumCPU() counts the CPUs this process may run on, as
    // the standard library does.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let cap = 4.max(cpus);
    assert_eq!(
        most_connections_to(&result, database.port()),
        Some(cap),
        "the truth: pgxpool's max(4, {cpus}) connections to PostgreSQL"
    );
    assert_finding("go-pgxpool", &result, Kind::BlockingPool, f64::from(cap));
    let (place, attribution) = pprof_connection_pool("go-pgxpool", &result);
    let queued = place
        .queued
        .as_ref()
        .expect("handlers queued for a connection");
    assert!(
        queued
            .frames
            .iter()
            .any(|f| f.starts_with("github.com/jackc/pgx/v5/pgxpool.(*Pool).")),
        "{:?}",
        queued.frames
    );
    let setting = place.setting.as_ref().expect("pgxpool's entry");
    assert!(
        setting.setting.starts_with("pool_max_conns=N"),
        "{setting:?}"
    );
    assert_eq!(setting.size_rule.as_deref(), Some("max(4, cpus)"));
    let here = setting
        .default_here
        .expect("the rule on this machine's CPUs");
    assert_eq!(here.size, cap, "{here:?}");
    assert!(
        attribution.ends_with(&format!("(default max(4, cpus) = {cap} on {cpus} CPUs)")),
        "{attribution}"
    );
}

/// Go's database/sql with the cap a service sets, `db.SetMaxOpenConns(6)` (the target was built
/// after the catalogue's database/sql entry): past 6 queries in flight the handlers wait inside
/// `database/sql.(*DB).conn` for a connection to be put back, which pprof shows.
#[test]
fn a_database_sql_pool_capped_by_set_max_open_conns_is_named_by_pprof() {
    assert!(
        toolchain_present("go", "version"),
        "go is needed: install it (.ci/run does)"
    );
    // Built before the sweep's turn: a cold build (CI's first) is no measurement.
    let binary = build_go_target("go-database-sql");
    let _turn = beside_one_other();
    let database = Postgres::start();
    let mut command = Command::new(binary);
    command.args([
        "-port",
        "0",
        "-dsn",
        &database.dsn(),
        "-max-open",
        "6",
        "-sleep",
        "0.1",
        "-pprof",
    ]);
    let target = Target::launch("go-database-sql", command);
    let result =
        sweep_without_mock_stacks("go-database-sql", &target.url(), vec![1, 3, 12, 24], true);
    drop(target);
    assert_eq!(
        most_connections_to(&result, database.port()),
        Some(6),
        "the truth: SetMaxOpenConns(6) connections to PostgreSQL"
    );
    assert_finding("go-database-sql", &result, Kind::BlockingPool, 6.0);
    let (place, _) = pprof_connection_pool("go-database-sql", &result);
    let queued = place
        .queued
        .as_ref()
        .expect("handlers queued for a connection");
    assert!(
        queued.frames.iter().any(|f| f == "database/sql.(*DB).conn"),
        "{:?}",
        queued.frames
    );
    let setting = place.setting.as_ref().expect("database/sql's entry");
    assert_eq!(setting.setting, "db.SetMaxOpenConns(N)", "{setting:?}");
}

/// tests/targets/py-sqlalchemy: a thread per connection, one query per request through the
/// pool, on psycopg 3 (pip: sqlalchemy, psycopg[binary], psycopg-pool).
fn py_sqlalchemy(database: &Postgres, pool: &str, sleep: &str) -> Target {
    assert!(
        Command::new("python3")
            .args(["-c", "import sqlalchemy, psycopg, psycopg_pool"])
            .status()
            .is_ok_and(|s| s.success()),
        "python3 with sqlalchemy, psycopg and psycopg_pool is needed: pip install sqlalchemy 'psycopg[binary]' psycopg-pool (.ci/run does)"
    );
    let mut command = Command::new("python3");
    command
        .arg(targets_dir().join("py-sqlalchemy/server.py"))
        .args(["--port", "0", "--dsn", &database.dsn(), "--pool", pool])
        .args(["--sleep", sleep]);
    Target::launch("py-sqlalchemy", command)
}

/// The place of a Python pool of `size` connections to PostgreSQL, read from `/proc` alone: the
/// connections to the database's port, the library by its C extension, the threads queued
/// beside those on the network.
fn python_database_pool(
    name: &str,
    result: &SweepResult,
    database: &Postgres,
    size: u32,
) -> chokepoint_result::Place {
    assert_eq!(
        most_connections_to(result, database.port()),
        Some(size),
        "{name}: the truth, the pool's {size} connections to PostgreSQL"
    );
    assert_finding(name, result, Kind::BlockingPool, f64::from(size));
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    println!(
        "{name}: {}; libraries {:?}",
        diagnosis.attribution.as_deref().unwrap_or("no place"),
        result.context.target_libraries
    );
    let place = diagnosis
        .place
        .clone()
        .unwrap_or_else(|| panic!("{name}: no place: {:#?}", diagnosis.evidence));
    assert_eq!(place.kind, Some(PlaceKind::ConnectionPool), "{name}");
    assert_eq!(place.source, Some(PlaceSource::Connections), "{name}");
    assert_eq!(place.size, Some(f64::from(size)), "{name}");
    assert_eq!(place.peer_port, Some(database.port()), "{name}");
    let handlers = place.queued_threads.as_ref().expect("the handler threads");
    assert!(
        handlers.threads > handlers.held,
        "{name}: handler threads waiting beside those on the network: {handlers:?}"
    );
    place
}

/// SQLAlchemy's `create_engine` at its defaults: a QueuePool of 5 plus 10 overflow, so 15
/// connections. Truth by hand: 15 × 100 ms = 150 req/s. psycopg's C extension is mapped too,
/// and its own pool's entry (4) must not be the one named.
#[test]
fn sqlalchemys_queue_pool_in_front_of_postgresql_is_15_and_named_with_its_overflow() {
    let _turn = beside_one_other();
    let database = Postgres::start();
    let target = py_sqlalchemy(&database, "sqlalchemy", "0.1");
    let name = "py-sqlalchemy";
    let result = sweep_without_mock(name, &target.url(), vec![3, 8, 30, 60]);
    drop(target);
    let place = python_database_pool(name, &result, &database, 15);
    let setting = place.setting.as_ref().expect("SQLAlchemy's entry");
    assert_eq!(
        setting.setting,
        "create_engine(url, pool_size=N, max_overflow=M)"
    );
    let shown_by = place.shown_by.as_deref().unwrap_or_default();
    assert!(shown_by.contains("/sqlalchemy/"), "{shown_by}");
}

/// psycopg_pool's `ConnectionPool` at its defaults: 4 connections (max_size is min_size).
/// Truth by hand: 4 connections to PostgreSQL, 31–38 req/s at 100 ms queries; SQLAlchemy is not
/// imported. Dropped twice (sessions 14 and 15) after full runs read 5 held and Little's law's
/// 4.4–5.5: the server's listener, polling its socket between accepts, was counted as a network
/// wait beside the 4 holders, and only an estimate at 1 client took it off. The listener is now
/// seen polling its own listening socket, idle (`chokepoint_observe::polled`).
#[test]
fn a_psycopg_pool_in_front_of_postgresql_is_4_and_named_by_its_extension() {
    let _turn = beside_one_other();
    let database = Postgres::start();
    let target = py_sqlalchemy(&database, "psycopg", "0.1");
    let name = "py-sqlalchemy --pool psycopg";
    let result = sweep_without_mock(name, &target.url(), vec![1, 2, 8, 16]);
    drop(target);
    let place = python_database_pool(name, &result, &database, 4);
    let setting = place.setting.as_ref().expect("psycopg_pool's entry");
    assert_eq!(
        setting.setting,
        "ConnectionPool(conninfo, min_size=M, max_size=N)"
    );
    let shown_by = place.shown_by.as_deref().unwrap_or_default();
    assert!(shown_by.contains("/psycopg_binary/"), "{shown_by}");
}
