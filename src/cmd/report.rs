//! `chokepoint report DIR`: re-renders a saved sweep. Reads `DIR/result.json`, rewrites
//! `DIR/report.html`, and prints the terminal report. Bad input writes nothing.
use anyhow::Context;
use chokepoint_report::{files, sweep_text};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `chokepoint report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The directory a sweep wrote with --out (it holds result.json)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

/// Runs the subcommand.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let result = files::read_result(&args.dir)?;
    let html = files::write_html(&args.dir, &result)
        .with_context(|| format!("cannot write the report into {}", args.dir.display()))?;
    let mut out = std::io::stdout().lock();
    let printed = write!(out, "{}", sweep_text::render(&result))
        .and_then(|()| writeln!(out, "\nreport: {}", html.display()));
    match printed {
        // A closed pipe (`| head`) is not a failure of the report.
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.context("cannot print the report")?,
    }
    Ok(ExitCode::SUCCESS)
}
