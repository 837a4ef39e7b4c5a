//! `chokepoint compare BEFORE AFTER`: two runs of one experiment (two sweeps, or two load runs),
//! figure by figure. Reads the two files, hands them to `chokepoint_compare`, prints its text,
//! writes its JSON; exit 1 with `--fail-on worse` when a figure got worse.
use anyhow::Context;
use chokepoint_compare::{compare, text, Run};
use chokepoint_report::files;
use chokepoint_result::{LoadResultFile, SweepResult};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `chokepoint compare`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Each of BEFORE and AFTER is a sweep's --out folder (its result.json), a result.json, or a \
`load --json` file; both of one kind. Throughput is compared at each client count both measured \
(Mann-Whitney U on the 100 ms buckets), p50 and p99 by a bootstrap of the exact histograms; a \
figure is better or worse only when the test shows it at the 5% level, else no difference.")]
pub struct Args {
    /// The run before the change
    #[arg(value_name = "BEFORE")]
    pub before: PathBuf,
    /// The run after the change
    #[arg(value_name = "AFTER")]
    pub after: PathBuf,
    /// Also write the comparison as JSON to this file
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Exit 1 when any figure got worse (for CI)
    #[arg(long, value_name = "WHEN")]
    pub fail_on: Option<FailOn>,
    /// Compare runs that loaded different paths (another route) anyway
    #[arg(long)]
    pub force: bool,
}

/// When `--fail-on` fails the command.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum FailOn {
    // Any figure worse (throughput, p50 or p99 at a client count, or the plateau). A plain
    // comment: a doc comment would turn clap's help to its long form.
    Worse,
}

/// Reads one run: a sweep folder, a `result.json` or a `load --json` file.
fn read(path: &Path, which: &str) -> anyhow::Result<Run> {
    if !path.exists() {
        anyhow::bail!(
            "{which} {}: no such file or folder; give a sweep's --out folder, its result.json or \
             a load --json file",
            path.display()
        );
    }
    let file = if path.is_dir() {
        let file = path.join(files::RESULT_FILE);
        if !file.is_file() {
            anyhow::bail!(
                "{which} {}: the folder has no {}; give a sweep's --out folder, its result.json \
                 or a load --json file",
                path.display(),
                files::RESULT_FILE
            );
        }
        file
    } else {
        path.to_path_buf()
    };
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("{which} {}: cannot read it", file.display()))?;
    let json: serde_json::Value = serde_json::from_str(&text).with_context(|| {
        format!(
            "{which} {}: not JSON; give a sweep's result.json or a load --json file",
            file.display()
        )
    })?;
    let not_ours = || {
        format!(
            "{which} {}: not a chokepoint result; give a sweep's result.json or a load --json file",
            file.display()
        )
    };
    if json.get("steps").is_some() {
        let sweep: SweepResult = serde_json::from_value(json).with_context(not_ours)?;
        Ok(Run::Sweep(Box::new(sweep)))
    } else if json.get("requests").is_some() && json.get("throughput_rps").is_some() {
        let load: LoadResultFile = serde_json::from_value(json).with_context(not_ours)?;
        Ok(Run::Load(Box::new(load.report)))
    } else {
        anyhow::bail!(not_ours())
    }
}

/// Runs the subcommand.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(path) = &args.json {
        super::common::check_writable(path, "--json")?;
    }
    let before = read(&args.before, "BEFORE")?;
    let after = read(&args.after, "AFTER")?;
    let comparison = compare(&before, &after, args.force)?;
    if let Some(path) = &args.json {
        files::write_json_file(path, &comparison)
            .with_context(|| format!("--json {}: cannot write it", path.display()))?;
    }
    match write!(std::io::stdout().lock(), "{}", text::render(&comparison)) {
        // A closed pipe (`| head`) is not a failure of the comparison.
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.context("cannot print the comparison")?,
    }
    let failed = matches!(args.fail_on, Some(FailOn::Worse)) && comparison.any_worse();
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
