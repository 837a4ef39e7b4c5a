//! Sweeps and load over gRPC (issue 26), as a user runs them (`chokepoint sweep --grpc`,
//! `chokepoint load --targets --descriptor-set`), against tests/targets/py-grpc-pool: a real
//! grpcio server, `grpc.server(futures.ThreadPoolExecutor(max_workers=4))`, whose servicer
//! sleeps the request's `sleep_ms` in its worker thread. Built after the blocking-pool rule, to
//! test it over gRPC: its truth is the pool of 4 (4 workers × 100 ms = 40 calls/s), which the
//! diagnosis is not told. The descriptor set is made from the target's pool.proto by grpcio-tools'
//! protoc, as a user makes one.
use crate::common::*;
use chokepoint_result::{Kind, LoadReport, SweepResult};
use std::path::{Path, PathBuf};
use std::process::Command;

const METHOD: &str = "chokepoint.pool.v1.Pool/Work";

/// A scratch folder of this test's own, removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("cp-grpc-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// pool.proto's descriptor set, made by `python3 -m grpc_tools.protoc` into `dir`.
fn descriptor_set(dir: &Path) -> PathBuf {
    let out = dir.join("pool.pb");
    let made = Command::new("python3")
        .args(["-m", "grpc_tools.protoc", "-I"])
        .arg(targets_dir().join("py-grpc-pool"))
        .arg("--include_imports")
        .arg(format!("--descriptor_set_out={}", out.display()))
        .arg("pool.proto")
        .output()
        .expect("python3 is missing: scripts/install-test-deps.sh installs it");
    assert!(
        made.status.success(),
        "grpcio-tools' protoc failed (install it: pip install grpcio-tools==1.85.1, as \
         scripts/install-test-deps.sh does): {}",
        String::from_utf8_lossy(&made.stderr)
    );
    out
}

fn launch_pool() -> Target {
    launch_pool_with(&[])
}

fn launch_pool_with(flags: &[&str]) -> Target {
    let mut command = Command::new("python3");
    command
        .arg(targets_dir().join("py-grpc-pool/server.py"))
        .args(["--port", "0"])
        .args(flags);
    Target::launch("py-grpc-pool", command)
}

fn chokepoint(args: &[&str]) {
    let output = Command::new(env!("CARGO_BIN_EXE_chokepoint"))
        .args(args)
        .output()
        .expect("the binary runs");
    assert!(
        output.status.success(),
        "chokepoint {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn read<T: serde::de::DeserializeOwned>(path: &Path) -> T {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn a_grpc_sweep_of_a_grpcio_server_of_4_workers_finds_a_blocking_pool_of_4() {
    let _turn = beside_one_other();
    let scratch = Scratch::new("sweep");
    let schema = descriptor_set(&scratch.0);
    let target = launch_pool();
    let json = scratch.0.join("sweep.json");
    chokepoint(&[
        "sweep",
        &target.url(),
        "--grpc",
        METHOD,
        "--descriptor-set",
        schema.to_str().unwrap(),
        "--data",
        r#"{"name": "sweep", "sleepMs": 100}"#,
        "-c",
        "2,4,8,16",
        "--step",
        "2s",
        "--warmup",
        "0",
        "--json",
        json.to_str().unwrap(),
    ]);
    drop(target);
    let result: SweepResult = read(&json);
    for step in &result.steps {
        println!("{}", step_line(step));
        let grpc = step
            .load
            .grpc
            .as_ref()
            .expect("each step has its gRPC figures");
        assert_eq!(grpc.methods, vec![METHOD.to_string()]);
        // Every call decoded (the server answers INVALID_ARGUMENT to one that does not).
        assert_eq!(grpc.statuses.get("OK").copied(), Some(step.load.requests));
        assert_eq!(step.load.error_count(), 0, "{:?}", step.load.errors);
    }
    assert_finding("py-grpc-pool over gRPC", &result, Kind::BlockingPool, 4.0);
    // What py-spy saw at the last step: grpcio's executor, 4 threads, as many as the limit.
    let last = result.steps.last().expect("a step");
    assert_eq!(pool(last, "ThreadPoolExecutor-0").most_threads, 4);
    let most = result
        .steps
        .iter()
        .map(|s| s.load.ok_throughput_rps)
        .fold(0.0, f64::max);
    assert!(
        (34.0..=42.0).contains(&most),
        "4 workers × 100 ms serve at most 40 calls/s; the sweep saw {most:.1}"
    );
}

#[test]
fn a_mix_of_calls_through_a_targets_file_is_counted_exactly_by_status() {
    let _turn = beside_one_other();
    let scratch = Scratch::new("mix");
    let schema = descriptor_set(&scratch.0);
    let target = launch_pool();
    let ok_body = scratch.0.join("ok.json");
    let failing_body = scratch.0.join("failing.json");
    std::fs::write(&ok_body, r#"{"name": "mix", "sleepMs": 5}"#).unwrap();
    std::fs::write(&failing_body, r#"{"failCode": 14}"#).unwrap();
    let url = target.url_of(&format!("/{METHOD}"));
    let targets = scratch.0.join("targets.txt");
    std::fs::write(
        &targets,
        format!(
            "POST {url}\n@{}\n\nPOST {url}\nx-tenant: 7\n@{}\n",
            ok_body.display(),
            failing_body.display()
        ),
    )
    .unwrap();
    let json = scratch.0.join("load.json");
    chokepoint(&[
        "load",
        "--targets",
        targets.to_str().unwrap(),
        "--descriptor-set",
        schema.to_str().unwrap(),
        "-c",
        "4",
        "-n",
        "200",
        "--no-progress",
        "--json",
        json.to_str().unwrap(),
    ]);
    drop(target);
    let report: LoadReport = read(&json);
    assert_eq!((report.requests, report.ok), (200, 100));
    assert_eq!(
        report.errors.get("grpc_unavailable"),
        Some(&100),
        "{:?}",
        report.errors
    );
    assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
    let grpc = report.grpc.expect("a gRPC run has its figures");
    assert_eq!(grpc.methods, vec![METHOD.to_string(), METHOD.to_string()]);
    let statuses: Vec<(&str, u64)> = grpc
        .statuses
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(statuses, vec![("OK", 100), ("UNAVAILABLE", 100)]);
    assert_eq!((report.targets[0].ok, report.targets[1].ok), (100, 0));
    assert_eq!(report.http2.map(|h| h.protocol).as_deref(), Some("h2c"));
}

/// `--grpc` without `--descriptor-set` (issue 26): the schema is asked from the server's
/// reflection service, as grpcurl does. grpcio-reflection serves v1alpha only, so the v1 call
/// is answered UNIMPLEMENTED and chokepoint asks again on v1alpha. Every call must decode on the
/// server (it answers INVALID_ARGUMENT otherwise). A server without reflection is refused in
/// one line before any load, saying what to give instead.
#[test]
fn without_a_descriptor_set_the_schema_comes_from_the_servers_reflection() {
    let _turn = beside_one_other();
    let scratch = Scratch::new("reflection");
    let json = scratch.0.join("load.json");
    let reflecting = launch_pool_with(&["--reflection"]);
    chokepoint(&[
        "load",
        &reflecting.url(),
        "--grpc",
        METHOD,
        "--data",
        r#"{"name": "reflected", "sleepMs": 1}"#,
        "-c",
        "2",
        "-n",
        "40",
        "--no-progress",
        "--json",
        json.to_str().unwrap(),
    ]);
    drop(reflecting);
    let report: LoadReport = read(&json);
    assert_eq!(
        (report.requests, report.ok),
        (40, 40),
        "{:?}",
        report.errors
    );
    let grpc = report.grpc.expect("a gRPC run has its figures");
    assert_eq!(grpc.statuses.get("OK").copied(), Some(40));

    let silent = launch_pool();
    let refused = scratch.0.join("refused.json");
    let output = Command::new(env!("CARGO_BIN_EXE_chokepoint"))
        .args(["load", &silent.url(), "--grpc", METHOD, "-n", "5", "--json"])
        .arg(&refused)
        .output()
        .expect("the binary runs");
    drop(silent);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("gave no schema by server reflection")
            && stderr.contains("--descriptor-set FILE"),
        "{stderr}"
    );
    assert!(!refused.exists(), "nothing written for a refused run");
}
