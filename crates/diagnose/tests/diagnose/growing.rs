//! Sweeps of pools that grow instead of queueing (`tests/data/growing`), recorded as a user
//! sweeps them, and every other recorded sweep, which must not be called one.
//!
//! `java-pools-cached-busy`: `tests/targets/java-pools` `/cached` (a `newCachedThreadPool`
//! around a 50 ms downstream call and 2 ms of CPU) swept adaptively, `--pid auto --mock ...
//! --max-clients 512 --step 3s`, on the shared 2-core machine with a load average of 11 (the
//! target got half a core). The mock saw every client's call in flight at every step, which
//! alone made the diagnosis say `no-limit-found` although throughput stopped near 400 req/s
//! from 32 clients on: the cached pool gave every call a thread (2 → 513 threads) and the
//! threads waited for the CPU.

use chokepoint_diagnose::diagnose;
use chokepoint_result::{Fact, Kind, SweepResult};
use std::path::{Path, PathBuf};

fn read(path: &Path) -> SweepResult {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

#[test]
fn a_cached_pool_swept_as_a_user_would_is_a_growing_pool_with_its_threads_per_step() {
    let r = read(&data().join("growing/java-pools-cached-busy.json"));
    let finding = diagnose(&r.steps, &r.context);
    let text = chokepoint_diagnose::describe(&finding);
    println!("{}\n{:#?}", text.summary, text.evidence);
    assert_eq!(finding.kind, Kind::GrowingPool, "{}", text.summary);
    let (pool, clients, threads) = finding
        .facts
        .iter()
        .find_map(|f| match f {
            Fact::GrowingPool {
                pool,
                clients,
                threads,
                ..
            } => Some((pool.clone(), clients.clone(), threads.clone())),
            _ => None,
        })
        .expect("a growing-pool fact");
    assert_eq!(pool, "pool-1-thread");
    // A thread per client in flight, and more: the pool keeps idle threads 60 s.
    assert_eq!(clients.len(), threads.len());
    for (c, t) in clients.iter().zip(&threads) {
        assert!(*t >= f64::from(*c), "{c} clients: {t} threads");
    }
    assert!(*threads.last().unwrap() >= 512.0, "{threads:?}");
    assert!(
        text.summary
            .contains("pool `pool-1-thread` grows a thread per client"),
        "{}",
        text.summary
    );
}

#[test]
fn no_other_recorded_sweep_is_a_growing_pool() {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(data())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && !p.ends_with("growing"))
        .collect();
    runs.sort();
    let mut seen = 0;
    for run in runs {
        for file in std::fs::read_dir(&run).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let r = read(&path);
            let finding = diagnose(&r.steps, &r.context);
            assert_ne!(finding.kind, Kind::GrowingPool, "{}", path.display());
            seen += 1;
        }
    }
    assert!(seen >= 20, "{seen} recordings");
}
