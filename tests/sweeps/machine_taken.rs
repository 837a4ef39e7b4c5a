//! Other processes taking the machine in the middle of a sweep (a build or a test starting on a
//! shared runner): the target's throughput falls past its peak because it is given less CPU,
//! not because its requests get in each other's way (crates/diagnose `busy.rs`,
//! `reconsider_fall`, and the target mode built after it).

use crate::common;

use chokepoint_experiment::SweepConfig;
use chokepoint_result::{Fact, Kind};
use common::*;
use std::process::{Child, Command};

/// Processes that spin on every core until dropped: others holding the machine.
struct Spinners(Vec<Child>);

impl Spinners {
    fn start(n: usize) -> Spinners {
        Spinners(
            (0..n)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .expect("sh runs")
                })
                .collect(),
        )
    }
}

impl Drop for Spinners {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// tests/targets/go-cpu with `-permits 20 -sleep 50ms -work 2ms`: a pool of 20 whose requests
/// each need 2 ms of CPU. Truth by hand (`chokepoint load -c N -d 4s`, the process's CPU from
/// `/proc/PID/stat`): quiet, 335-348 req/s at 20, 40 and 80 clients on 0.73-0.75 of a core;
/// beside 16 spinning shells, 150 req/s at 40 clients on 0.34 of a core and 101 at 80 on 0.25,
/// each request costing about what it did (2.2 ms quiet, 2.3-2.4 ms starved). Swept, the
/// spinners start when the 40-client step ends: throughput falls at 80 and 160 clients, which
/// alone reads as contention. It must be `machine-saturated`, naming no limit, and say that
/// others took the machine as it fell.
#[test]
fn a_pool_whose_machine_others_take_mid_sweep_is_no_contention() {
    assert!(
        toolchain_present("go", "version"),
        "go is needed (.ci/run installs it)"
    );
    let _one = one_at_a_time();
    let mut command = Command::new(build_go_target("go-cpu"));
    command.args([
        "-port", "0", "-permits", "20", "-sleep", "50ms", "-work", "2ms",
    ]);
    let target = Target::launch("go-cpu -permits 20", command);
    let config = SweepConfig::new(&target.url())
        .expect("a valid URL")
        .with_target_pid(target.pid());
    let mut spinners = None;
    let result = sweep_watching(
        "go-cpu -permits 20",
        config,
        Some(vec![1, 10, 20, 40, 80, 160]),
        STEP,
        160,
        None,
        &mut |step| {
            if step.clients == 40 {
                spinners = Some(Spinners::start(16));
            }
        },
    );
    drop(spinners);
    drop(target);
    let name = "go-cpu -permits 20, others taking the machine from 80 clients";

    // The truth: a pool of 20 before the spinners, and a fall after them.
    let x = |clients: u32| {
        result
            .steps
            .iter()
            .find(|s| s.clients == clients)
            .map_or(0.0, |s| s.ok_throughput_rps)
    };
    assert!(
        (300.0..420.0).contains(&x(20)),
        "{name}: {} req/s at 20",
        x(20)
    );
    assert!(x(160) < 0.8 * x(20), "{name}: {} req/s at 160", x(160));

    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    println!("{name}: {}", diagnosis.summary);
    for line in &diagnosis.evidence {
        println!("  {line}");
    }
    assert_eq!(diagnosis.finding.kind, Kind::MachineSaturated, "{name}");
    assert_eq!(diagnosis.limit(), None, "{name}");
    let taken = diagnosis.finding.facts.iter().find_map(|fact| match fact {
        Fact::MachineTakenAtFall {
            clients, suggested, ..
        } => Some((clients.clone(), *suggested)),
        _ => None,
    });
    let (clients, suggested) =
        taken.unwrap_or_else(|| panic!("{name}: {:?}", diagnosis.finding.facts));
    assert!(clients.contains(&160), "{name}: {clients:?}");
    assert_eq!(suggested, Kind::Contention, "{name}");
    assert!(
        diagnosis
            .summary
            .contains("fell past it while other processes held"),
        "{name}: {}",
        diagnosis.summary
    );
}
