//! chokepoint: finds hidden blocking operations and concurrency limits in HTTP services.
//!
//! This binary parses arguments and wires the crates together, nothing else: each subcommand
//! lives in `cmd/`, and the work is done by the crates under `crates/`.
mod cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Finds hidden blocking operations and concurrency limits in HTTP services.
#[derive(Debug, Parser)]
#[command(name = "chokepoint", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Mock + demo service + a sweep of every scenario, in one process (the default)
    Demo(cmd::demo::Args),
    /// The controlled downstream: WireMock-compatible stubs, delays, faults, in-flight stats
    Mock(cmd::mock::Args),
    /// One load run against a URL: live summary lines and a final report
    Load(cmd::load::Args),
    /// The experiment: load at growing concurrency, then the finding
    Sweep(cmd::sweep::Args),
    /// The demo service alone, with the seeds' hidden limits
    DemoService(cmd::demo_service::Args),
    /// Re-render the report of a sweep from its saved results
    Report(cmd::report::Args),
    /// Merge the results of one run's shards (load/sweep --shard I/N) into one
    Merge(cmd::merge::Args),
    /// Compare two runs (sweeps or load runs): each figure better, worse, or no difference
    Compare(cmd::compare::Args),
    /// The observer beside the target: serves what a sweep reads of it to a sweep elsewhere
    Observe(cmd::observe::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return cmd::exit_on_usage_error(err),
    };
    let outcome = match cli.command {
        None => cmd::demo::run(cmd::demo::Args::default()),
        Some(Command::Demo(args)) => cmd::demo::run(args),
        Some(Command::Mock(args)) => cmd::mock::run(args),
        Some(Command::Load(args)) => cmd::load::run(args),
        Some(Command::Sweep(args)) => cmd::sweep::run(args),
        Some(Command::DemoService(args)) => cmd::demo_service::run(args),
        Some(Command::Report(args)) => cmd::report::run(args),
        Some(Command::Merge(args)) => cmd::merge::run(args),
        Some(Command::Compare(args)) => cmd::compare::run(args),
        Some(Command::Observe(args)) => cmd::observe::run(args),
    };
    cmd::exit_code(outcome)
}
