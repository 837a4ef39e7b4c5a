//! One measuring window of a step, everything read of the target in it: the [`Observer`]'s
//! threads, connections, stacks and quota, the target's CPU share and the machine's. The sweep
//! opens one when a step's measured part begins and closes it when the step ends; the observer
//! beside the target (`chokepoint observe`) opens and closes the same windows when told to.
use crate::cpu::{available_cores, CpuMeter, CpuScope, MachineCpuMeter};
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
}

/// An open window: its meters and its observer thread.
#[derive(Debug)]
pub struct ObservedWindow {
    target_meter: Option<CpuMeter>,
    machine_meter: Option<MachineCpuMeter>,
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
        ObservedWindow {
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
        WindowObservation {
            observation: self.observer.map(Observer::finish),
            target_cpu_pct: self
                .target_meter
                .and_then(|m| m.percent(available_cores()).ok()),
            machine_cpu_pct: self.machine_meter.and_then(|m| m.percent().ok()),
        }
    }
}
