//! One module per subcommand, each with its clap `Args` and a `run(args) -> Result<ExitCode>`.
//!
//! Exit codes (DESIGN.md): 0 done; 1 a gate given with `--expect` failed (the command returns
//! `Ok(ExitCode::from(1))` itself); 2 bad input or cannot run (any `Err`), printed as one line.
#[allow(dead_code)] // until every subcommand uses its parsers
pub mod common;
pub mod demo;
pub mod demo_service;
pub mod load;
pub mod merge;
pub mod mock;
pub mod report;
pub mod shard;
pub mod sweep;

use std::io::Write;
use std::process::ExitCode;

/// Turns a command's outcome into the process exit code, printing an error as one line.
pub fn exit_code(outcome: anyhow::Result<ExitCode>) -> ExitCode {
    match outcome {
        Ok(code) => code,
        Err(err) => {
            let message = format!("{err:#}").replace('\n', " ");
            let _ = writeln!(std::io::stderr(), "chokepoint: {message}");
            ExitCode::from(2)
        }
    }
}

/// Prints clap's help or version as usual; any other parse error as one line, exit code 2.
pub fn exit_on_usage_error(err: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match err.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = err.print();
            ExitCode::SUCCESS
        }
        _ => {
            let rendered = err.render().to_string();
            let first = rendered
                .lines()
                .find(|line| !line.trim().is_empty())
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ");
            let _ = writeln!(
                std::io::stderr(),
                "chokepoint: {first} (see chokepoint --help)"
            );
            ExitCode::from(2)
        }
    }
}
