//! The goroutine-dump reader on real dumps (Go 1.26, `net/http/pprof`), saved in
//! `crates/observe/tests/data/pprof/` with the program that made the smaller one.
use super::*;
use crate::stacks::fold;
use crate::stacks::test_support::{data, pool, stack_of, strings};

#[test]
fn the_go_semaphore_targets_handlers_wait_for_a_slot_or_in_the_downstream_call() {
    // tests/targets/go-semaphore at 24 clients: 12 handlers hold a slot of the channel of 12
    // and wait in http.Client.Get, 12 wait to send into the channel.
    let dump = data("pprof", "go-semaphore-24-clients.txt");
    assert_eq!(parse_dump(&dump).len(), 75);
    let goroutines = goroutine_stacks(&dump);
    assert_eq!(goroutines.len(), 74, "the dump's own goroutine is left out");
    let evidence = fold(StackSource::Pprof, &[goroutines]);
    let handlers = pool(&evidence.pools, "net/http.(*Server).Serve");
    assert_eq!((handlers.threads, handlers.most_threads), (24.0, 24));
    assert_eq!(
        stack_of(handlers, WaitKind::Lock),
        (
            12.0,
            strings(&["chan send", "main.main.func1 (main.go:54)"])
        )
    );
    assert_eq!(
        stack_of(handlers, WaitKind::Downstream),
        (
            12.0,
            strings(&[
                "net/http.(*persistConn).roundTrip",
                "net/http.(*Client).Get",
                "main.main.func1 (main.go:57)",
            ])
        )
    );
    assert_eq!(handlers.states.get("chan send"), Some(&12.0));
    // The client's connections: a reader and a writer in each, neither holding a call (the
    // handler in `roundTrip` does).
    let connections = pool(&evidence.pools, "net/http.(*Transport).dialConn");
    assert_eq!(connections.threads_in(WaitKind::Downstream), 0.0);
    assert_eq!(connections.threads_in(WaitKind::Idle), 24.0);
    let readers = pool(
        &evidence.pools,
        "net/http.(*connReader).startBackgroundRead",
    );
    assert_eq!(readers.threads_in(WaitKind::Idle), 24.0);
    let main = pool(&evidence.pools, "main");
    assert_eq!(
        stack_of(main, WaitKind::Idle).1,
        strings(&[
            "net.(*netFD).accept",
            "net/http.Serve",
            "main.main (main.go:74)"
        ])
    );
}

#[test]
fn mutexes_idle_workers_and_sleeps_of_a_trimpath_build() {
    let evidence = fold(
        StackSource::Pprof,
        &[goroutine_stacks(&data(
            "pprof",
            "mutex-workers-sleep-trimpath.txt",
        ))],
    );
    let started = pool(&evidence.pools, "main.main");
    assert_eq!(
        stack_of(started, WaitKind::Lock),
        (
            3.0,
            strings(&["sync.(*Mutex).Lock", "main.holdLock (main.go:17)"])
        )
    );
    assert_eq!(
        stack_of(started, WaitKind::Idle),
        (4.0, strings(&["chan receive", "main.worker (main.go:23)"]))
    );
    assert_eq!(started.threads_in(WaitKind::Sleep), 2.0);
    assert!(started
        .stacks
        .iter()
        .any(|s| s.frames == strings(&["time.Sleep", "main.holdLock (main.go:19)"])));
}

#[test]
fn headers_and_locations_parse_across_go_versions() {
    let table = [
        ("goroutine 50 [chan send]:", Some((50, "chan send"))),
        ("goroutine 7 [IO wait, 12 minutes]:", Some((7, "IO wait"))),
        (
            "goroutine 9 [select (no cases)]:",
            Some((9, "select (no cases)")),
        ),
        (
            "goroutine 3 [chan receive, locked to thread]:",
            Some((3, "chan receive")),
        ),
        // Go 1.23+ with GODEBUG tracebacklabels or newer headers.
        (
            "goroutine 12 gp=0xc000007c00 m=nil [semacquire]:",
            Some((12, "semacquire")),
        ),
        ("goroutine x [running]:", None),
        ("created by main.main in goroutine 1", None),
    ];
    for (line, parsed) in table {
        let expected = parsed.map(|(id, state)| (id, state.to_string()));
        assert_eq!(parse_header(line), expected, "{line}");
    }
    assert_eq!(
        parse_location("\t/usr/local/go/src/net/http/client.go:489 +0x5f"),
        ("/usr/local/go/src/net/http/client.go".to_string(), 489)
    );
    assert_eq!(
        parse_location("\texample.com/gomix/main.go:23"),
        ("example.com/gomix/main.go".to_string(), 23)
    );
}

fn frame(function: &str, file: &str) -> GoFrame {
    GoFrame {
        function: function.into(),
        file: file.into(),
        line: 10,
    }
}

#[test]
fn libraries_are_told_from_the_services_own_packages() {
    let table = [
        (
            "net/http.(*Client).Get",
            "/usr/local/go/src/net/http/client.go",
            true,
        ),
        ("net/http.(*Client).Get", "net/http/client.go", true), // -trimpath
        ("time.Sleep", "/usr/lib/go-1.22/src/runtime/time.go", true),
        ("main.handler", "/srv/app/main.go", false),
        ("main.handler", "example.com/app/main.go", false),
        (
            "github.com/acme/app/api.(*Server).Get",
            "/srv/app/api/server.go",
            false,
        ),
        (
            "github.com/lib/pq.(*conn).recv",
            "/root/go/pkg/mod/github.com/lib/pq@v1.10.9/conn.go",
            true,
        ),
        (
            "github.com/lib/pq.(*conn).recv",
            "github.com/lib/pq@v1.10.9/conn.go",
            true,
        ),
        (
            "myservice/handlers.Get",
            "/home/me/myservice/handlers/get.go",
            false,
        ),
    ];
    for (function, file, library) in table {
        assert_eq!(
            is_library(&frame(function, file)),
            library,
            "{function} in {file}"
        );
    }
}

#[test]
fn a_channel_wait_outside_a_request_is_a_worker_waiting_for_work_not_a_lock() {
    let in_handler = [
        frame("main.limit", "/srv/app/main.go"),
        frame(
            "net/http.HandlerFunc.ServeHTTP",
            "/usr/local/go/src/net/http/server.go",
        ),
    ];
    assert_eq!(classify("chan receive", &in_handler).0, WaitKind::Lock);
    assert_eq!(classify("semacquire", &in_handler).0, WaitKind::Lock);
    let worker = [frame("main.worker", "/srv/app/main.go")];
    assert_eq!(classify("chan receive", &worker).0, WaitKind::Idle);
    assert_eq!(classify("chan send", &worker).0, WaitKind::Other);
    assert_eq!(classify("running", &worker).0, WaitKind::Running);
    let sql = [
        frame(
            "database/sql.(*DB).conn",
            "/usr/local/go/src/database/sql/sql.go",
        ),
        frame(
            "database/sql.(*DB).QueryContext",
            "/usr/local/go/src/database/sql/sql.go",
        ),
        frame("main.handler", "/srv/app/main.go"),
    ];
    assert_eq!(
        classify("select", &sql),
        (
            WaitKind::PoolAcquire,
            strings(&[
                "database/sql.(*DB).conn",
                "database/sql.(*DB).QueryContext",
                "main.handler (main.go:10)",
            ])
        )
    );
}

#[test]
fn pprof_urls_must_be_loopback_http() {
    let table = [
        (
            "http://127.0.0.1:6060/debug/pprof",
            Ok("http://127.0.0.1:6060/debug/pprof/goroutine?debug=2"),
        ),
        (
            "http://localhost:8080/debug/pprof/",
            Ok("http://localhost:8080/debug/pprof/goroutine?debug=2"),
        ),
        (
            "http://[::1]:6060/debug/pprof/goroutine?debug=2",
            Ok("http://[::1]:6060/debug/pprof/goroutine?debug=2"),
        ),
        ("https://127.0.0.1:6060/debug/pprof", Err("http://")),
        ("http://10.0.0.5:6060/debug/pprof", Err("loopback")),
        ("http://127.0.0.1/debug/pprof", Err("no port")),
        ("http://127.0.0.1.evil.com:80/debug/pprof", Err("loopback")),
        ("127.0.0.1:6060", Err("http://")),
    ];
    for (text, expected) in table {
        match (goroutine_url(text), expected) {
            (Ok(url), Ok(want)) => assert_eq!(url, want),
            (Err(why), Err(part)) => assert!(why.contains(part), "{text}: {why}"),
            (got, want) => panic!("{text}: {got:?}, expected {want:?}"),
        }
    }
}

#[test]
fn a_wait_inside_pgxpools_acquire_is_a_pool_acquire_not_a_lock() {
    // pgx v5's pool on puddle v2: the wait for a connection is a semaphore inside puddle
    // (`semacquire`, or `select` on the context), under `pgxpool.(*Pool).Acquire`; it is a
    // queue for the pool's connections, as database/sql's `(*DB).conn` is.
    let pgx = [
        frame(
            "golang.org/x/sync/semaphore.(*Weighted).Acquire",
            "/root/go/pkg/mod/golang.org/x/sync@v0.10.0/semaphore/semaphore.go",
        ),
        frame(
            "github.com/jackc/puddle/v2.(*Pool[...]).Acquire",
            "/root/go/pkg/mod/github.com/jackc/puddle/v2@v2.2.2/pool.go",
        ),
        frame(
            "github.com/jackc/pgx/v5/pgxpool.(*Pool).Acquire",
            "/root/go/pkg/mod/github.com/jackc/pgx/v5@v5.7.2/pgxpool/pool.go",
        ),
        frame("main.handler", "/srv/app/main.go"),
    ];
    assert_eq!(classify("select", &pgx).0, WaitKind::PoolAcquire);
    assert_eq!(classify("semacquire", &pgx).0, WaitKind::PoolAcquire);
}
