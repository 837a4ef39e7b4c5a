//! Where a step's evidence of the target comes from: this machine's `/proc` (a local
//! [`ObservedWindow`]) or the observer beside the target (`--observer`: the same window, opened
//! and closed over HTTP). The sweep opens a [`StepWatch`] when a step's measured part begins and
//! closes it when the step ends; a remote observer that fails leaves a note on the step.
use crate::sweep::SweepConfig;
use chokepoint_observe::{ObservedWindow, StepObservation, WindowObservation};
use chokepoint_remote::client::RemoteObserver;
use chokepoint_result::ObservationNote;
use std::sync::Arc;

/// One step's window on the target.
pub(crate) enum StepWatch {
    Local(Box<ObservedWindow>),
    Remote(Arc<RemoteObserver>),
    /// The observer could not open the window: the step gets this note.
    Failed(ObservationNote),
}

impl StepWatch {
    /// Opens the step's window now.
    pub fn start(config: &SweepConfig) -> StepWatch {
        match &config.observer {
            Some(remote) => match remote.start_window() {
                Ok(()) => StepWatch::Remote(remote.clone()),
                Err(why) => StepWatch::Failed(failed(remote, why)),
            },
            None => StepWatch::Local(Box::new(ObservedWindow::start(
                config.target_cpu.clone(),
                config.target_spec(),
                config.observe_interval,
            ))),
        }
    }

    /// Whether the window's stack tool has had its first look at the step (an observer beside
    /// the target takes its stacks on its own schedule: it is not waited for).
    pub fn stacks_looked(&self) -> bool {
        match self {
            StepWatch::Local(window) => window.stacks_looked(),
            StepWatch::Remote(_) | StepWatch::Failed(_) => true,
        }
    }

    /// Closes the window and returns what it saw.
    pub fn finish(self) -> WindowObservation {
        let note = match self {
            StepWatch::Local(window) => return window.finish(),
            StepWatch::Remote(remote) => match remote.finish_window() {
                Ok(seen) => return seen,
                Err(why) => failed(&remote, why),
            },
            StepWatch::Failed(note) => note,
        };
        WindowObservation {
            observation: Some(StepObservation {
                notes: vec![note],
                ..StepObservation::default()
            }),
            ..WindowObservation::default()
        }
    }
}

fn failed(remote: &RemoteObserver, why: String) -> ObservationNote {
    ObservationNote::ObserverFailed {
        observer: remote.url().to_string(),
        why,
    }
}
