//! A sharded sweep: two `sweep --shard I/2` processes, started by the clock a few seconds ahead,
//! against the demo service's pool of 20 behind a 50 ms mock; `chokepoint merge` of their
//! folders finds the pool of 20, as one process sweeping alone does (each shard alone sees only
//! its half of the load). Steps are short (2 s in 4 s slots, five of them: about 25 s), as two
//! generators share this machine's cores with the target.
use chokepoint_testkit::Server;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chokepoint_result::{Kind, SweepResult};

fn chokepoint() -> Command {
    Command::new(env!("CARGO_BIN_EXE_chokepoint"))
}

/// Starts `chokepoint ARGS` and reads its URL from the first stdout line.
fn serve(args: &[&str]) -> (Server, String) {
    let mut server = Server::spawn(
        "chokepoint",
        chokepoint()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    );
    let mut line = String::new();
    let mut stdout = BufReader::new(server.child_mut().stdout.take().unwrap());
    stdout.read_line(&mut line).unwrap();
    // Keep reading: the demo service prints its routes after the URL, and a closed pipe would
    // end it (println! on a broken pipe) before the shards start.
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("{args:?}: no URL in {line}"))
        .to_string();
    (server, url)
}

fn read(dir: &Path) -> SweepResult {
    serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap()).unwrap()
}

#[test]
fn two_shards_on_the_clock_merge_into_the_pool_of_20() {
    let dir = std::env::temp_dir().join(format!("cp-shard-sweep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (_mock, mock) = serve(&["mock", "--port", "0", "--delay", "50ms"]);
    let (_service, service) = serve(&["demo-service", "--port", "0", "--downstream", &mock]);
    let target = format!("{service}/actors");
    let start = SystemTime::now() + Duration::from_secs(3);
    let start = format!(
        "{:.3}",
        start.duration_since(UNIX_EPOCH).unwrap().as_secs_f64()
    );

    let shards: Vec<PathBuf> = (0..2).map(|i| dir.join(format!("shard-{i}"))).collect();
    let children: Vec<Child> = shards
        .iter()
        .enumerate()
        .map(|(i, out)| {
            chokepoint()
                .args([
                    "sweep",
                    &target,
                    "--mock",
                    &mock,
                    "--clients",
                    "5,10,20,30,40",
                ])
                .args(["--step", "2s", "--slot", "4s", "--start-at", &start])
                .args(["--shard", &format!("{i}/2"), "--out"])
                .arg(out)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{output:?}");
    }
    let merged_dir = dir.join("merged");
    let output = chokepoint()
        .arg("merge")
        .args(&shards)
        .arg("--out")
        .arg(&merged_dir)
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(merged_dir.join("report.html").exists());

    let parts: Vec<SweepResult> = shards.iter().map(|d| read(d)).collect();
    let merged = read(&merged_dir);
    let clients: Vec<u32> = merged.steps.iter().map(|s| s.clients).collect();
    assert_eq!(clients, [5, 10, 20, 30, 40], "{printed}");
    for (k, step) in merged.steps.iter().enumerate() {
        let requests: u64 = parts.iter().map(|p| p.steps[k].requests).sum();
        assert_eq!(step.requests, requests);
    }
    for part in &parts {
        let shard = part.shard.as_ref().unwrap();
        assert_eq!(shard.step_late_s.len(), 5);
        let log = std::fs::read_to_string(
            dir.join(format!("shard-{}", shard.index))
                .join("latency.hlog"),
        )
        .unwrap();
        assert!(log.contains(&format!("#run-id={} shard={}/2", shard.run_id, shard.index)));
    }
    let diagnosis = merged.diagnosis.as_ref().unwrap();
    let limit = diagnosis.limit().unwrap_or(0.0);
    assert!(
        diagnosis.kind() == Kind::BlockingPool && (18.0..=22.0).contains(&limit),
        "the merge should find the pool of 20: {:?} {limit}\n{printed}",
        diagnosis.kind()
    );
    let info = merged.merge.as_ref().unwrap();
    assert_eq!(info.shards.len(), 2);
    assert!(printed.contains("merged 2 shards"), "{printed}");
    let _ = std::fs::remove_dir_all(&dir);
}
