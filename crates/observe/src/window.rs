//! One measuring window of a step, everything read of the target in it: the [`Observer`]'s
//! threads, connections, stacks and quota, the target's CPU share and the machine's. The sweep
//! opens one when a step's measured part begins and closes it when the step ends; the observer
//! beside the target (`chokepoint observe`) opens and closes the same windows when told to.
use crate::cpu::{available_cores, CpuMeter, CpuScope, MachineCpuMeter};
use crate::niced::{any_niced, NicedElsewhere};
use crate::sampler::{Observer, StepObservation, TargetSpec};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What a closed window saw.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowObservation {
    /// The target's threads, connections, stacks, quota; `None` when the target is not observed.
    pub observation: Option<StepObservation>,
    /// The target's CPU, percent of all the cores of its machine; `None` when not measured.
    pub target_cpu_pct: Option<f64>,
    /// The whole machine's CPU, percent of all its cores; `None` when `/proc/stat` is unreadable.
    pub machine_cpu_pct: Option<f64>,
    /// Of `machine_cpu_pct`, the work of processes at a positive nice value, which gave its
    /// cores to the target (`chokepoint_result::Step::machine_contended_cpu_pct`); 0 when none
    /// ran. `None` when some ran and cannot be counted as yielding: the target was not
    /// measured, it or this process ran niced (their own time would be in it), or a niced
    /// process in another scheduling group than the target's ran in the window
    /// ([`crate::niced`]); and when `/proc/stat` is unreadable.
    #[serde(default)]
    pub machine_niced_cpu_pct: Option<f64>,
}

/// An open window: its meters and its observer thread.
#[derive(Debug)]
pub struct ObservedWindow {
    target_meter: Option<CpuMeter>,
    machine_meter: Option<MachineCpuMeter>,
    /// The target's first process, when its CPU is measured.
    target_pid: Option<i32>,
    /// The niced processes in other groups than the target's when the window opened; `None`
    /// when the target or this process ran niced then, or the target is not measured.
    niced_elsewhere: Option<NicedElsewhere>,
    observer: Option<Observer>,
}

impl ObservedWindow {
    /// Starts measuring now: the CPU of `cpu` (when given), the machine's, and an [`Observer`]
    /// of `spec` sampling every `interval` (when given).
    pub fn start(
        cpu: Option<CpuScope>,
        spec: Option<TargetSpec>,
        interval: Duration,
    ) -> ObservedWindow {
        let target = cpu.as_ref().map(CpuScope::processes).unwrap_or_default();
        let mut ours = target.clone();
        ours.push(std::process::id() as i32);
        let target_pid = target.first().copied();
        ObservedWindow {
            target_pid,
            niced_elsewhere: target_pid
                .filter(|_| !any_niced(&ours))
                .and_then(NicedElsewhere::now),
            target_meter: cpu.and_then(|scope| CpuMeter::start(scope).ok()),
            machine_meter: MachineCpuMeter::start().ok(),
            observer: spec.and_then(|spec| Observer::start(spec, interval)),
        }
    }

    /// Whether the target's stack tool, if it has one, has had its first look at the step: a
    /// step that may end early waits for it.
    pub fn stacks_looked(&self) -> bool {
        self.observer.as_ref().is_none_or(Observer::stacks_looked)
    }

    /// Stops measuring and returns what the window saw.
    pub fn finish(self) -> WindowObservation {
        let machine = self.machine_meter.and_then(|m| m.share().ok());
        WindowObservation {
            observation: self.observer.map(Observer::finish),
            target_cpu_pct: self
                .target_meter
                .and_then(|m| m.percent(available_cores()).ok()),
            machine_cpu_pct: machine.map(|m| m.busy_pct),
            machine_niced_cpu_pct: machine.map(|m| m.niced_pct).filter(|&niced| {
                // Niced work yields only where it competes with the target (crate::niced).
                let elsewhere_ran = || {
                    let later = self.target_pid.and_then(NicedElsewhere::now);
                    (self.niced_elsewhere.as_ref())
                        .zip(later.as_ref())
                        .is_none_or(|(opened, closed)| opened.ran_until(closed))
                };
                niced == 0.0 || !elsewhere_ran()
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::cpu_seconds;
    use std::process::{Child, Command};

    /// A shell spinning on a CPU at a nice value, pinned to `cpu` when given; `timeout` ends it
    /// after 10 s should the test fail before it kills it.
    fn spinner(nice: i32, cpu: Option<usize>) -> Child {
        let mut command = Command::new("timeout");
        command.arg("10");
        if let Some(cpu) = cpu {
            command.args(["taskset", "-c", &cpu.to_string()]);
        }
        command
            .args([
                "nice",
                "-n",
                &nice.to_string(),
                "sh",
                "-c",
                "while :; do :; done",
            ])
            .spawn()
            .expect("timeout, taskset, nice and sh are on every Debian machine")
    }

    /// One niced spinner at a time: each test's reading is of its own.
    static SPINNING: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn spinning() -> std::sync::MutexGuard<'static, ()> {
        SPINNING.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn stop(mut child: Child) {
        let _ = Command::new("pkill")
            .args(["-KILL", "-P", &child.id().to_string()])
            .status();
        let _ = child.kill();
        let _ = child.wait();
    }

    #[test]
    fn niced_work_is_its_own_share_of_the_machine_unless_the_target_is_niced() {
        let _one = spinning();
        // Nice 1 is enough to land in `/proc/stat`'s `nice` column, and gets a fair share of a
        // busy machine (weight 820 against 1024), so the figure shows on a loaded CI machine.
        let niced = spinner(1, None);
        std::thread::sleep(Duration::from_millis(100));
        let beside = ObservedWindow::start(Some(CpuScope::this_process()), None, Duration::ZERO);
        let of_niced = ObservedWindow::start(
            Some(CpuScope::Tree(vec![niced.id() as i32])),
            None,
            Duration::ZERO,
        );
        std::thread::sleep(Duration::from_millis(1500));
        let (beside, of_niced) = (beside.finish(), of_niced.finish());
        stop(niced);
        let one_core = 100.0 / crate::cpu::machine_cores().max(1) as f64;
        let niced_pct = beside.machine_niced_cpu_pct.unwrap_or_else(|| {
            panic!(
                "the niced share was not told: this test runs at nice 0, and niced processes \
                 in other scheduling groups were {:?}",
                NicedElsewhere::now(std::process::id() as i32).map(|n| n.pids())
            )
        });
        let busy = beside.machine_cpu_pct.unwrap();
        assert!(
            niced_pct >= 0.1 * one_core && niced_pct <= busy + 1e-9,
            "niced {niced_pct}% of a machine {busy}% busy"
        );
        // A niced target's own time is in the column: the share is not told.
        assert_eq!(of_niced.machine_niced_cpu_pct, None);
        assert!(of_niced.machine_cpu_pct.is_some());
    }

    #[test]
    fn niced_work_in_another_cpu_group_is_not_counted_as_yielding() {
        let _one = spinning();
        // A niced spinner in a cgroup v1 `cpu` group of its own competes with this process's
        // group by the groups' weights, not by its nice value: its share is not told.
        let group = std::path::Path::new("/sys/fs/cgroup/cpu")
            .join(format!("chokepoint-niced-{}", std::process::id()));
        std::fs::create_dir_all(&group).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (this test needs root and the v1 cpu controller, as CI has)",
                group.display()
            )
        });
        let script = format!(
            "echo $$ > {}/cgroup.procs && exec nice -n 1 sh -c 'while :; do :; done'",
            group.display()
        );
        let niced = Command::new("timeout")
            .args(["10", "sh", "-c", &script])
            .spawn()
            .expect("timeout and sh are on every Debian machine");
        std::thread::sleep(Duration::from_millis(100));
        let window = ObservedWindow::start(Some(CpuScope::this_process()), None, Duration::ZERO);
        std::thread::sleep(Duration::from_millis(1500));
        let seen = window.finish();
        stop(niced);
        for _ in 0..50 {
            if std::fs::remove_dir(&group).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(seen.machine_cpu_pct.is_some_and(|busy| busy > 0.0));
        assert_eq!(seen.machine_niced_cpu_pct, None);
        assert!(!group.exists(), "{} was left behind", group.display());
    }

    #[test]
    fn a_niced_process_asleep_in_another_cpu_group_takes_no_core_and_leaves_the_share_told() {
        let _one = spinning();
        // A desktop's indexer at nice 19, waiting for work in a group of its own, beside a
        // niced spinner in this process's group: the spinner's share is told.
        let group = std::path::Path::new("/sys/fs/cgroup/cpu")
            .join(format!("chokepoint-asleep-{}", std::process::id()));
        std::fs::create_dir_all(&group).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (this test needs root and the v1 cpu controller, as CI has)",
                group.display()
            )
        });
        let script = format!(
            "echo $$ > {}/cgroup.procs && exec nice -n 19 sleep 10",
            group.display()
        );
        let asleep = Command::new("sh")
            .args(["-c", &script])
            .spawn()
            .expect("sh is on every Debian machine");
        let niced = spinner(1, None);
        std::thread::sleep(Duration::from_millis(100));
        let window = ObservedWindow::start(Some(CpuScope::this_process()), None, Duration::ZERO);
        std::thread::sleep(Duration::from_millis(1500));
        let seen = window.finish();
        let moved = std::fs::read_to_string(format!("/proc/{}/cgroup", asleep.id()))
            .is_ok_and(|c| c.contains("chokepoint-asleep"));
        stop(niced);
        stop(asleep);
        for _ in 0..50 {
            if std::fs::remove_dir(&group).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(moved, "the sleeper is in a group of its own");
        assert!(!group.exists(), "{} was left behind", group.display());
        let niced_pct = seen.machine_niced_cpu_pct.expect("the niced share is told");
        let one_core = 100.0 / crate::cpu::machine_cores().max(1) as f64;
        assert!(niced_pct >= 0.1 * one_core, "niced {niced_pct}%");
    }

    #[test]
    fn the_fair_scheduler_gives_a_nice_0_spinner_its_core_beside_a_nice_19_one() {
        let _one = spinning();
        // The premise of `Step::machine_contended_cpu_pct`, on this kernel: two spinners on one
        // core, weights 1024 and 15.
        let (normal, niced) = (spinner(0, Some(0)), spinner(19, Some(0)));
        std::thread::sleep(Duration::from_millis(100));
        let seconds = |child: &Child| cpu_seconds(&CpuScope::Tree(vec![child.id() as i32]));
        let before = (seconds(&normal).unwrap(), seconds(&niced).unwrap());
        std::thread::sleep(Duration::from_millis(1500));
        let after = (seconds(&normal).unwrap(), seconds(&niced).unwrap());
        stop(normal);
        stop(niced);
        let (normal_s, niced_s) = (after.0 - before.0, after.1 - before.1);
        assert!(
            normal_s > 0.0 && normal_s >= 10.0 * niced_s,
            "nice 0 spun {normal_s} s, nice 19 {niced_s} s"
        );
    }
}
