//! `chokepoint report`: not built yet.
use std::process::ExitCode;

/// Arguments of `chokepoint report`.
#[derive(Debug, Default, clap::Args)]
pub struct Args {}

/// Runs the subcommand.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`chokepoint report` is not built yet")
}
