//! Renderers of finished results: text for the terminal, JSON files, and one self-contained HTML
//! page with SVG charts. A renderer reads a result and writes; it never reaches back into the
//! engine, and nothing here measures or decides.
//!
//! - [`sweep_text`]: the live per-step table of `chokepoint sweep` and the finding in plain words.
//! - [`demo_text`]: the findings table of `chokepoint demo`.
//! - [`load_text`]: the report of one `chokepoint load` run.
//! - [`html`]: `report.html`, one page with inline SVG charts drawn by plotters.
//! - `observed`: the report's section on the target as `/proc` saw it (processes, threads by
//!   pool and state per step, connections per step).
//! - `pools`: the report's section on where the limit sits (the place, and the target's pools
//!   at the step it was read from, from the runtime's stacks or `/proc`), with `flame`'s flame
//!   graphs of the knee's step and of what grew from the step below it.
//! - [`compare_html`]: `compare --out DIR`'s page, two runs compared, their curves on one chart.
//! - [`junit`]: the gates of a run (`--expect`, a comparison's figures) as JUnit XML for CI.
//! - [`files`]: `result.json` and `report.html` written atomically, and `result.json` read back.
mod charts;
pub mod compare_html;
pub mod demo_text;
pub mod files;
mod flame;
pub mod html;
pub mod junit;
pub mod load_text;
mod numbers;
mod observed;
mod pools;
pub mod sweep_text;

pub use files::ReportError;
