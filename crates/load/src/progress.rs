//! A progress bar for a run on a terminal (indicatif), with a way to print lines above it so the
//! summariser lines are not garbled. Off the terminal it does nothing and lines go to stdout.
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// The bar of one run: time-based for a `-d` run, request-based for `-n`.
pub struct RunProgress {
    bar: Option<ProgressBar>,
}

impl RunProgress {
    /// A bar for a run of `duration` or `requests`; hidden when stderr is not a terminal or
    /// `enabled` is false.
    pub fn new(duration: Option<Duration>, requests: Option<u64>, enabled: bool) -> RunProgress {
        if !enabled || !std::io::stderr().is_terminal() {
            return RunProgress { bar: None };
        }
        let (length, template) = match (duration, requests) {
            (Some(d), _) => (
                d.as_millis() as u64,
                "{spinner} [{elapsed_precise}] {wide_bar} {percent:>3}% {msg}",
            ),
            (None, Some(n)) => (
                n,
                "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} {msg}",
            ),
            (None, None) => (0, "{spinner} [{elapsed_precise}] {msg}"),
        };
        let bar = ProgressBar::with_draw_target(Some(length), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
        bar.enable_steady_tick(Duration::from_millis(200));
        if duration.is_some() {
            // Time-based: move the bar with the clock, from a thread of its own.
            let moving = bar.clone();
            let start = Instant::now();
            let _ = std::thread::Builder::new()
                .name("cp-progress".into())
                .spawn(move || {
                    while !moving.is_finished() {
                        moving.set_position(start.elapsed().as_millis() as u64);
                        std::thread::sleep(Duration::from_millis(200));
                    }
                });
        }
        RunProgress { bar: Some(bar) }
    }

    /// Prints a line above the bar (or to stdout without one).
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => println!("{line}"),
        }
    }

    /// Shows the running totals: requests done, in flight, errors.
    pub fn update(&self, requests: u64, errors: u64, active: u64, by_count: bool) {
        if let Some(bar) = &self.bar {
            if by_count {
                bar.set_position(requests);
            }
            bar.set_message(format!(
                "{requests} done, {errors} failed, {active} in flight"
            ));
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Drop for RunProgress {
    fn drop(&mut self) {
        self.finish();
    }
}
