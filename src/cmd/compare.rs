//! `chokepoint compare BEFORE AFTER`: two runs of one experiment (two sweeps, or two load runs),
//! figure by figure. Reads the two files, hands them to `chokepoint_compare`, prints its text,
//! writes its JSON, its JUnit XML and its page; exit 1 with `--fail-on worse` when a figure got
//! worse. [`read_run`] and the flags' parsers serve `--baseline` too.
use anyhow::Context;
use chokepoint_compare::{compare_with, text, Options, Run};
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
figure is better or worse only when the test shows it at the 5% level and it moved by at least \
--min-change of its value before, else no difference. --out DIR writes DIR/compare.html: both \
runs' curves on one chart, the findings and the verdicts.")]
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
    /// The smallest change called better or worse, in percent of the figure before; a smaller
    /// one is no difference however sure the test
    #[arg(long, value_name = "PCT", default_value = "5", value_parser = min_change, allow_hyphen_values = true)]
    pub min_change: f64,
    /// Also write every figure as a JUnit XML test case to this file (a worse one fails under
    /// --fail-on worse)
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Also write the comparison as one HTML page, DIR/compare.html
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// `--min-change PCT`: a percentage from 0 to under 100 (`5`, `2.5`, `10%`), as a share.
pub fn min_change(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches('%');
    match number.parse::<f64>() {
        Ok(pct) if pct.is_finite() && (0.0..100.0).contains(&pct) => Ok(pct / 100.0),
        Ok(_) => Err(format!(
            "'{text}' must be a percentage from 0 to under 100, e.g. 5 or 2.5"
        )),
        Err(_) => Err(format!("'{text}' is not a percentage; give e.g. 5 or 2.5")),
    }
}

/// When `--fail-on` fails the command.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum FailOn {
    // Any figure worse (throughput, p50 or p99 at a client count, or the plateau). A plain
    // comment: a doc comment would turn clap's help to its long form.
    Worse,
}

/// Reads one run: a sweep folder, a `result.json` or a `load --json` file; `which` names it in
/// the one-line error (`BEFORE`, `--baseline`).
pub fn read_run(path: &Path, which: &str) -> anyhow::Result<Run> {
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

/// `--out DIR` may be a folder or a path to make one at, not a file.
fn check_out_dir(dir: &Path) -> anyhow::Result<()> {
    if dir.exists() && !dir.is_dir() {
        anyhow::bail!(
            "--out {}: is a file; give a folder for compare.html",
            dir.display()
        );
    }
    Ok(())
}

/// Runs the subcommand.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(path) = &args.json {
        super::common::check_writable(path, "--json")?;
    }
    if let Some(path) = &args.junit {
        super::common::check_writable(path, "--junit")?;
    }
    if let Some(dir) = &args.out {
        check_out_dir(dir)?;
    }
    let before = read_run(&args.before, "BEFORE")?;
    let after = read_run(&args.after, "AFTER")?;
    let options = Options {
        force: args.force,
        min_change: args.min_change,
    };
    let comparison = compare_with(&before, &after, &options)?;
    let fail_on_worse = matches!(args.fail_on, Some(FailOn::Worse));
    if let Some(path) = &args.json {
        files::write_json_file(path, &comparison)
            .with_context(|| format!("--json {}: cannot write it", path.display()))?;
    }
    if let Some(path) = &args.junit {
        super::baseline::write_junit(
            path,
            &[super::baseline::figure_suite(&comparison, fail_on_worse)],
        )?;
    }
    if let Some(dir) = &args.out {
        files::write_compare_html(dir, &comparison, &before, &after)
            .with_context(|| format!("--out {}: cannot write the page", dir.display()))?;
    }
    match write!(std::io::stdout().lock(), "{}", text::render(&comparison)) {
        // A closed pipe (`| head`) is not a failure of the comparison.
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.context("cannot print the comparison")?,
    }
    let failed = fail_on_worse && comparison.any_worse();
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
