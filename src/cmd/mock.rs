//! `chokepoint mock`: not built yet.
use std::process::ExitCode;

/// Arguments of `chokepoint mock`.
#[derive(Debug, Default, clap::Args)]
pub struct Args {}

/// Runs the subcommand.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`chokepoint mock` is not built yet")
}
