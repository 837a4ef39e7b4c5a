//! One module per subcommand, each with its clap `Args` and a `run(args) -> Result<ExitCode>`.
//!
//! Exit codes (DESIGN.md): 0 done; 1 a gate given with `--expect` failed (the command returns
//! `Ok(ExitCode::from(1))` itself); 2 bad input or cannot run (any `Err`), printed as one line;
//! 130 interrupted (Ctrl-C or SIGTERM) after writing what was measured, as shells report a
//! process ended by SIGINT (128 + 2), so a script can tell it from a finished run.
pub mod baseline;
pub mod common;
pub mod compare;
pub mod demo;
pub mod demo_service;
pub mod grpc;
pub mod live;
pub mod load;
pub mod merge;
pub mod mock;
pub mod observe;
pub mod remote;
pub mod report;
pub mod shard;
pub mod sweep;

use std::io::Write;
use std::process::ExitCode;

/// The exit code of a run cut short by Ctrl-C (or SIGTERM), its results written.
pub fn interrupted() -> ExitCode {
    ExitCode::from(130)
}

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
            let _ = writeln!(
                std::io::stderr(),
                "chokepoint: {} (see chokepoint --help)",
                first_line(&rendered)
            );
            ExitCode::from(2)
        }
    }
}

/// The first line of clap's message; when it ends in a colon (the arguments that were not
/// provided follow on their own lines), with those lines after it: `... provided: <URL>`.
fn first_line(rendered: &str) -> String {
    let mut lines = rendered.lines().filter(|line| !line.trim().is_empty());
    let first = lines
        .next()
        .unwrap_or("invalid arguments")
        .trim_start_matches("error: ")
        .to_string();
    if !first.ends_with(':') {
        return first;
    }
    let named: Vec<&str> = lines
        .take_while(|line| line.starts_with(' '))
        .map(str::trim)
        .collect();
    format!("{first} {}", named.join(", "))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_missing_argument_is_named_on_the_one_line() {
        let rendered = "error: the following required arguments were not provided:\n  <URL>\n\n\
                        Usage: chokepoint load <URL>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            super::first_line(rendered),
            "the following required arguments were not provided: <URL>"
        );
        assert_eq!(
            super::first_line("error: unexpected argument '-x' found\n\n  tip: ...\n"),
            "unexpected argument '-x' found"
        );
    }
}
