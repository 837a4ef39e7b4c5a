//! A load run is started, not run: [`start`] checks the configuration and returns a
//! [`LoadHandle`] at once; the caller reads the run's live events from it and ends with its
//! report (vegeta's attack → results → metrics, in one handle).
//!
//! ```no_run
//! # fn main() -> Result<(), chokepoint_load::LoadError> {
//! let config = chokepoint_load::LoadConfig::new("http://127.0.0.1:8080/")?;
//! let run = chokepoint_load::start(config, Default::default())?;
//! for event in run.events() {
//!     println!("{event:?}");
//! }
//! let report = run.finish()?;
//! # Ok(()) }
//! ```
use crate::engine::{coordinate, current_thread_runtime, Ending};
use crate::{LoadConfig, LoadError, LoadEvent};
use chokepoint_result::LoadReport;
use std::sync::mpsc::{channel, Receiver};
use std::thread::JoinHandle;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// A load run under way: its events while it runs, then its report.
///
/// Dropping the handle before [`LoadHandle::finish`] stops the run and waits for its threads.
#[derive(Debug)]
pub struct LoadHandle {
    /// Events from the run's control thread; closed when the run has ended.
    events: Receiver<LoadEvent>,
    /// Stops the run (requests in flight are abandoned; the report says `interrupted`).
    stop: CancellationToken,
    /// Ends the measured window early; the report is whole.
    end_window: CancellationToken,
    /// The control thread (`cp-load-ctl`): it paces the run and returns its report.
    control: Option<JoinHandle<Result<LoadReport, LoadError>>>,
}

/// Starts one load run and returns its handle.
///
/// The configuration is checked here (a bad one is an error before anything starts). The run
/// gets threads of its own, so this works from a plain thread and from inside another runtime:
/// a control thread (`cp-load-ctl`) that resolves and checks the target (nothing listening, or a
/// certificate that is not trusted, ends the run with an error before any load), then paces the
/// window and the intervals; and one worker thread (`cp-load`) per core this process may use,
/// each with its own single-threaded tokio runtime driving its share of the clients (one event
/// loop per thread, as wrk does: no work stealing, no cross-thread wake-ups per request).
/// Cancelling `stop` (or [`LoadHandle::stop`]) ends the run at once and its report comes back
/// with `interrupted: true`. Failures during the run are counted by kind, not returned.
pub fn start(config: LoadConfig, stop: CancellationToken) -> Result<LoadHandle, LoadError> {
    config.validate()?;
    let parsed = config.parsed_url()?;
    let cores = chokepoint_observe::available_cores();
    let (sender, events) = channel();
    let end_window = CancellationToken::new();
    let ending = Ending {
        cancel: stop.clone(),
        end_window: end_window.clone(),
    };
    let control = std::thread::Builder::new()
        .name("cp-load-ctl".into())
        .spawn(move || {
            // The generator's CPU: this thread and the workers, each counted to its end.
            let generator = chokepoint_observe::ThreadGroupCpu::new();
            let _member = generator.join();
            let runtime = current_thread_runtime()?;
            let result =
                runtime.block_on(coordinate(config, parsed, sender, ending, cores, generator));
            runtime.shutdown_timeout(Duration::from_millis(200));
            result
        })
        .map_err(|e| LoadError::Engine(format!("cannot start the load thread: {e}")))?;
    Ok(LoadHandle {
        events,
        stop,
        end_window,
        control: Some(control),
    })
}

impl LoadHandle {
    /// The run's events as they come (blocking between them); the iterator ends when the run
    /// has ended.
    pub fn events(&self) -> impl Iterator<Item = LoadEvent> + '_ {
        self.events.iter()
    }

    /// Stops the run; [`LoadHandle::finish`] then returns the partial report.
    pub fn stop(&self) {
        self.stop.cancel();
    }

    /// Ends the measured window now, as if `duration` had run out: requests in flight are
    /// abandoned, and [`LoadHandle::finish`] returns a whole report (not `interrupted`) whose
    /// window is the time measured so far. The sweep uses it when a step knows enough.
    pub fn end_window(&self) {
        self.end_window.cancel();
    }

    /// Waits for the run's end and returns its report (events not read are dropped).
    pub fn finish(mut self) -> Result<LoadReport, LoadError> {
        self.join()
    }

    fn join(&mut self) -> Result<LoadReport, LoadError> {
        let control = self
            .control
            .take()
            .ok_or_else(|| LoadError::Engine("the run was already finished".into()))?;
        control
            .join()
            .map_err(|_| LoadError::Engine("the load thread panicked".into()))?
    }
}

impl Drop for LoadHandle {
    fn drop(&mut self) {
        if self.control.is_some() {
            self.stop.cancel();
            let _ = self.join();
        }
    }
}
