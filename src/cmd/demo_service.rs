//! `chokepoint demo-service`: not built yet.
use std::process::ExitCode;

/// Arguments of `chokepoint demo-service`.
#[derive(Debug, Default, clap::Args)]
pub struct Args {}

/// Runs the subcommand.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`chokepoint demo-service` is not built yet")
}
