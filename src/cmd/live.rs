//! Live lines on a terminal (indicatif), drawn from what the engines report: `load`'s progress
//! bar on stderr, with the summariser lines printed above it, and the line of a sweep's step
//! under way on stdout (`sweep` and `demo`), cleared before the step's row is printed. Off a
//! terminal nothing is drawn and printed lines go to stdout as they are. [`step_text`] writes a
//! step's line from its typed [`StepProgress`]; it is a pure function.
use chokepoint_experiment::StepProgress;
use chokepoint_result::format::{clients, duration, rate};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// A live line: `load`'s bar, or the line of a sweep's step under way.
pub struct LiveLine {
    /// The line drawn now, if any.
    bar: Option<ProgressBar>,
    /// A step's line is drawn (stdout is a terminal).
    steps_shown: bool,
}

/// A bar drawn on `target` every 200 ms, with indicatif's `template`.
fn drawn_bar(target: ProgressDrawTarget, length: Option<u64>, template: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(length, target);
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

impl LiveLine {
    /// `load`'s bar for a run of `duration` (moved by the clock) or `requests` (moved by the
    /// requests done); hidden when stderr is not a terminal or `enabled` is false.
    pub fn run_bar(duration: Option<Duration>, requests: Option<u64>, enabled: bool) -> LiveLine {
        let hidden = LiveLine {
            bar: None,
            steps_shown: false,
        };
        if !enabled || !std::io::stderr().is_terminal() {
            return hidden;
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
        let bar = drawn_bar(ProgressDrawTarget::stderr(), Some(length), template);
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
        LiveLine {
            bar: Some(bar),
            ..hidden
        }
    }

    /// The line of a sweep's steps: drawn by [`LiveLine::show`] when stdout is a terminal,
    /// never otherwise.
    pub fn for_steps() -> LiveLine {
        LiveLine {
            bar: None,
            steps_shown: std::io::stdout().is_terminal(),
        }
    }

    /// Shows `text` as the step's line (drawing it on stdout if it is not yet drawn), cut to the
    /// terminal's width so that it never wraps.
    pub fn show(&mut self, text: String) {
        if !self.steps_shown {
            return;
        }
        self.bar
            .get_or_insert_with(|| {
                drawn_bar(ProgressDrawTarget::stdout(), None, "{spinner} {wide_msg}")
            })
            .set_message(text);
    }

    /// Prints a line above the bar (or to stdout without one).
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => println!("{line}"),
        }
    }

    /// Shows `load`'s running totals: requests done, in flight, errors.
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

    /// Removes the line from the terminal; a step's line is drawn again by the next
    /// [`LiveLine::show`].
    pub fn clear(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for LiveLine {
    fn drop(&mut self) {
        self.clear();
    }
}

/// The line of a step under way: `20 clients · 1.8 s, ≤ 8.2 s left · 1234 req/s · 0 errors`.
/// The time left is the most that is left when the step may end early (it ends once it knows
/// enough), exactly what is left of a fixed step.
pub fn step_text(progress: &StepProgress) -> String {
    let who = clients(progress.clients);
    let Some(so_far) = progress.so_far else {
        return format!("{who} · ramping up (until every client has an answer)");
    };
    let ms = |d: Duration| duration(d.as_secs_f64() * 1000.0);
    let left = match progress.left() {
        Duration::ZERO => "ending".to_string(),
        left if progress.may_end_early => format!("≤ {} left", ms(left)),
        left => format!("{} left", ms(left)),
    };
    format!(
        "{who} · {}, {left} · {} req/s · {} {}",
        ms(progress.elapsed()),
        rate(so_far.rate()),
        so_far.errors,
        if so_far.errors == 1 {
            "error"
        } else {
            "errors"
        }
    )
}

/// The live line of the warm-up before the first step.
pub fn warmup_text(clients_n: u32, elapsed: Duration, latency_ms: Option<f64>) -> String {
    let latency = latency_ms.map_or_else(
        || "waiting for answers".to_string(),
        |ms| format!("latency {}", duration(ms)),
    );
    format!(
        "{} · warming up, unmeasured (until latency stops falling) · {} · {latency}",
        clients(clients_n),
        duration(elapsed.as_secs_f64() * 1000.0)
    )
}

/// The line that says how the warm-up ended.
pub fn warmed_up_line(warmup: &chokepoint_result::Warmup) -> String {
    format!(
        "chokepoint: warmed up {:.1} s at {}, unmeasured: latency {} → {}{}",
        warmup.seconds,
        clients(warmup.clients),
        duration(warmup.first_ms),
        duration(warmup.last_ms),
        if warmup.settled {
            ", no longer falling"
        } else {
            ", still falling when --warmup ran out"
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use chokepoint_result::SpanFigures;

    fn measuring(clients: u32, requests: u64, errors: u64, elapsed_s: f64) -> StepProgress {
        StepProgress {
            clients,
            so_far: Some(SpanFigures {
                requests,
                errors,
                elapsed_s,
                ..SpanFigures::default()
            }),
            ceiling: Duration::from_secs(10),
            may_end_early: true,
        }
    }

    #[test]
    fn a_steps_line_says_clients_time_rate_and_errors() {
        let fixed = StepProgress {
            may_end_early: false,
            ..measuring(20, 2_000, 0, 5.0)
        };
        let ramp = StepProgress {
            so_far: None,
            ..measuring(1, 0, 0, 0.0)
        };
        let table = [
            // A settling step at 1.8 s of a 10 s ceiling: at most 8.2 s left.
            (
                measuring(20, 2_221, 0, 1.8),
                "20 clients · 1.8 s, ≤ 8.2 s left · 1234 req/s · 0 errors",
            ),
            // A fixed step measures its whole ceiling: exactly what is left.
            (
                fixed,
                "20 clients · 5.0 s, 5.0 s left · 400 req/s · 0 errors",
            ),
            // Under a second reads in ms; one error is one error.
            (
                measuring(1, 9, 1, 0.3),
                "1 client · 300 ms, ≤ 9.7 s left · 30.0 req/s · 1 error",
            ),
            // The last partial interval may pass the ceiling: the step is ending.
            (
                measuring(40, 4_300, 12, 10.2),
                "40 clients · 10.2 s, ending · 422 req/s · 12 errors",
            ),
            // Nothing measured before every client has answered once.
            (
                ramp,
                "1 client · ramping up (until every client has an answer)",
            ),
        ];
        for (progress, line) in table {
            assert_eq!(step_text(&progress), line, "{progress:?}");
        }
    }
}
