//! Where the limit sits, decided on real recordings.
//!
//! `data/place/` holds sweeps of real processes observed through `/proc` (saved without their
//! diagnosis), run with `chokepoint sweep URL --mock URL --pid PID --max-clients N --step 5s` on
//! the 2-core development machine, busy with other work: the JVM twin
//! (`examples/jvm/BlockingDemo.java --actors 20 --dispatcher 16`, a mock of 150 ms) on `/actors`
//! (a pool of 20), `/dispatcher` (16), `/global` (a pool sized to the 2 cores), `/blocking` (a
//! cached pool behind a semaphore of 25) and `/cpu`, and `tests/targets/py-threadpool` (a
//! `ThreadPoolExecutor` of 6; CPython names every OS thread `python3`). The older recordings
//! carry no threads: the place must then say nothing it cannot back.
use chokepoint_diagnose::catalogue::Catalogue;
use chokepoint_diagnose::{diagnose, diagnose_with};
use chokepoint_result::{Fact, Kind, PlaceKind, PlaceSource, SweepResult};

fn load(path: &str) -> SweepResult {
    let path = format!("{}/tests/data/{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn observed_recordings_name_the_pool_that_holds_the_limit() {
    // (recording, kind, pool as /proc names it, its threads held, its size at the step read)
    let table: &[(&str, Kind, &str, f64, f64)] = &[
        ("jvm-actors", Kind::BlockingPool, "actor-pool", 20.0, 20.0),
        (
            "jvm-dispatcher",
            Kind::BlockingPool,
            "blocking-dispat",
            16.0,
            16.0,
        ),
        ("jvm-global", Kind::BlockingPool, "cpu-pool", 2.0, 2.0),
        // 25 held by the semaphore, of a cached pool grown to 103 threads at 100 clients.
        (
            "jvm-blocking",
            Kind::BlockingPool,
            "elastic-pool",
            25.0,
            103.0,
        ),
        // 7 in a network wait: the 6 workers and the accept loop, there at 1 client already.
        ("py-threadpool", Kind::BlockingPool, "python3", 6.0, 15.0),
    ];
    let mut wrong = Vec::new();
    for &(name, kind, pool, held, size) in table {
        let r = load(&format!("place/{name}.json"));
        let d = diagnose(&r.steps, &r.context).into_diagnosis();
        let Some(place) = &d.place else {
            wrong.push(format!("{name}: no place: {:?}", d.evidence.last()));
            continue;
        };
        println!("{name}: {}", d.attribution.as_deref().unwrap_or("-"));
        let near = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 0.5);
        if d.kind() != kind
            || place.kind != Some(PlaceKind::ThreadPool)
            || place.pool.as_deref() != Some(pool)
            || place.source != Some(PlaceSource::Proc)
            || !near(place.held, held)
            || !near(place.size, size)
        {
            wrong.push(format!("{name}: {} {place:?}", d.kind()));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn the_catalogue_passed_in_is_the_one_the_place_reads() {
    let r = load("place/jvm-actors.json");
    let built_in = diagnose(&r.steps, &r.context).into_diagnosis();
    let place = built_in.place.clone().expect("a place");
    assert_eq!(place.pool.as_deref(), Some("actor-pool"));
    assert_eq!(
        place.setting, None,
        "the built-in catalogue does not know it"
    );

    let user = Catalogue::parse(
        r#"
        [[pool]]
        framework = "BlockingDemo"
        threads = ["actor-pool-#"]
        setting = "--actors"
        default = "20"
        source = "examples/jvm/BlockingDemo.java"
        "#,
    )
    .unwrap();
    let with_user = diagnose_with(&r.steps, &r.context, &user.with_built_in()).into_diagnosis();
    let setting = with_user
        .place
        .clone()
        .and_then(|p| p.setting)
        .expect("the user's entry");
    assert_eq!(
        (setting.setting.as_str(), setting.default.as_str()),
        ("--actors", "20")
    );
    // The same finding otherwise: the catalogue names a setting, it decides nothing.
    assert_eq!(
        (with_user.kind(), with_user.limit()),
        (built_in.kind(), built_in.limit())
    );
}

#[test]
fn an_observed_cpu_limit_names_the_cpu_and_its_busiest_pool() {
    let r = load("place/jvm-cpu.json");
    let d = diagnose(&r.steps, &r.context).into_diagnosis();
    assert_eq!(d.kind(), Kind::CpuBound);
    let place = d.place.expect("a place");
    assert_eq!(place.kind, Some(PlaceKind::Cpu));
    // BlockingDemo's /cpu runs on its cached pool `cpu-work`.
    assert_eq!(place.pool.as_deref(), Some("cpu-work"));
    assert!(place.cpu_pct.is_some_and(|c| c > 20.0), "{place:?}");
}

#[test]
fn recordings_without_threads_say_nothing_they_cannot_back() {
    let recordings = [
        "demo-run-1/actors",
        "demo-run-1/async",
        "demo-run-1/blocking",
        "demo-run-1/cpu",
        "demo-run-1/dispatcher",
        "demo-run-1/global",
        "demo-run-1/leaky",
        "demo-run-1/recommendations",
        "demo-run-2/dispatcher",
        "demo-run-3/cpu",
        "long-steps/actors",
        "long-steps/cpu",
        "long-steps/leaky",
        "long-steps/warmup",
        "overload/java-thrash-adaptive",
        "overload/java-thrash-list",
        "overload/java-thrash-probes",
        "overload/node-cpu-downstream-adaptive",
        "overload/node-cpu-downstream-list",
        "overload/node-cpu-downstream-probes",
        "overload/py-pool-timeout-adaptive",
        "overload/py-pool-timeout-list",
        "overload/py-pool-timeout-probes",
    ];
    let mut places = 0;
    for name in recordings {
        let r = load(&format!("{name}.json"));
        let d = diagnose(&r.steps, &r.context).into_diagnosis();
        assert!(
            !d.facts()
                .iter()
                .any(|f| matches!(f, Fact::PlaceUnclear { .. })),
            "{name}: nothing observed, nothing to be unclear about"
        );
        if let Some(place) = &d.place {
            // Only the CPU figure is there to read: the CPU, no pool.
            assert_eq!(
                (d.kind(), place.kind, place.pool.as_deref()),
                (Kind::CpuBound, Some(PlaceKind::Cpu), None),
                "{name}"
            );
            assert!(place.cpu_pct.is_some(), "{name}: {place:?}");
            places += 1;
        }
    }
    assert!(places > 0, "the CPU-bound recordings name the CPU");
}

/// tests/targets/py-warmup without a pool (listen backlog 5, overflowing behind its GIL-bound
/// accept loop), swept from the client side with its process observed: the clients it never
/// answered were half-open, their end established with none at the target's, and the kernel
/// counted the overflows; the place is its accept path, no knob named.
#[test]
fn a_listen_backlog_that_overflows_is_placed_in_the_accept_path_with_its_half_open_clients() {
    let r = load("place/py-warmup-listen.json");
    let d = diagnose(&r.steps, &r.context).into_diagnosis();
    assert_eq!(d.kind(), Kind::ConnectionLimit);
    let place = d.place.as_ref().expect("a place");
    println!("{}", d.attribution.as_deref().unwrap_or("-"));
    assert_eq!(place.kind, Some(PlaceKind::AcceptCap));
    assert_eq!(place.source, Some(PlaceSource::Connections));
    assert_eq!(place.setting, None);
    assert!(place.half_open.is_some_and(|n| n > 100.0), "{place:?}");
    assert!(place.listen_overflows.is_some_and(|n| n > 0), "{place:?}");
}
