//! `chokepoint load`: not built yet.
use std::process::ExitCode;

/// Arguments of `chokepoint load`.
#[derive(Debug, Default, clap::Args)]
pub struct Args {}

/// Runs the subcommand.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`chokepoint load` is not built yet")
}
