//! `chokepoint merge FILES...`: the shards of one run (`load`/`sweep --shard`) into one result,
//! printed as one process prints it; a sweep's merged steps are diagnosed and reported.
use anyhow::Context;
use chokepoint_diagnose::catalogue::Catalogue;
use chokepoint_merge::{describe, ShardFile};
use chokepoint_report::{files, load_text, sweep_text};
use chokepoint_result::{LoadReport, LoadResultFile, ShardInfo, SweepResult};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `chokepoint merge`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Give every shard's file once: the JSON of `load --shard I/N --json FILE`, or the --out folder of \
`sweep --shard I/N` (its result.json). Files of different runs (target, plan or --start-at), \
or a missing or repeated shard, are refused.")]
pub struct Args {
    /// The shards' result files (or sweep --out folders)
    #[arg(value_name = "FILES")]
    pub files: Vec<PathBuf>,
    /// Write the merged result as JSON to this file
    #[arg(long, value_name = "OUT")]
    pub json: Option<PathBuf>,
    /// Sweeps: write result.json and report.html of the merge into this folder
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print every evidence sentence and the models after the finding, not one screen
    #[arg(short = 'v', long)]
    pub verbose: bool,
    #[command(flatten)]
    pub catalogue: super::common::CatalogueArgs,
}

/// One file as read: its name for messages, and its JSON.
struct Read {
    name: String,
    json: serde_json::Value,
}

fn read(path: &Path) -> anyhow::Result<Read> {
    let file = if path.is_dir() {
        path.join(files::RESULT_FILE)
    } else {
        path.to_path_buf()
    };
    let name = path.display().to_string();
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("{}: cannot read it", file.display()))?;
    let json = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a chokepoint result", file.display()))?;
    Ok(Read { name, json })
}

fn shard_file<T: serde::de::DeserializeOwned>(read: Read) -> anyhow::Result<ShardFile<T>> {
    let shard: Option<ShardInfo> = read
        .json
        .get("shard")
        .map(|v| serde_json::from_value(v.clone()))
        .transpose()
        .with_context(|| format!("{}: its \"shard\" block is not readable", read.name))?;
    let Some(shard) = shard else {
        anyhow::bail!(
            "{} is not a shard's result (no \"shard\" block): merge the files written with --shard I/N",
            read.name
        );
    };
    let result = serde_json::from_value(read.json)
        .with_context(|| format!("{}: not a chokepoint result", read.name))?;
    Ok(ShardFile {
        file: read.name,
        shard,
        result,
    })
}

/// Runs the subcommand.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let catalogue = args.catalogue.catalogue()?;
    if args.files.is_empty() {
        anyhow::bail!("no FILES: give every shard's result file, chokepoint merge FILES...");
    }
    if let Some(path) = &args.json {
        super::common::check_writable(path, "--json")?;
    }
    let reads = args
        .files
        .iter()
        .map(|path| read(path))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let is_sweep = |r: &Read| r.json.get("steps").is_some();
    if let Some(sweep) = reads.iter().find(|r| is_sweep(r)) {
        if let Some(load) = reads.iter().find(|r| !is_sweep(r)) {
            anyhow::bail!(
                "{} is a sweep's result but {} a load run's: merge the shards of one run",
                sweep.name,
                load.name
            );
        }
        return merge_sweeps(&args, reads, &catalogue);
    }
    if let Some(out) = &args.out {
        anyhow::bail!(
            "--out {}: load results have no report folder; use --json OUT",
            out.display()
        );
    }
    let shards = reads
        .into_iter()
        .map(shard_file::<LoadReport>)
        .collect::<anyhow::Result<Vec<_>>>()?;
    let merged: LoadResultFile = chokepoint_merge::merge_loads(shards)?;
    print!("{}", load_text::load_report(&merged.report));
    if let Some(info) = &merged.merge {
        println!();
        for line in describe::merge_lines(info, merged.report.duration_s) {
            println!("{line}");
        }
        for sentence in describe::saturation_sentences(info, None) {
            println!("{sentence}");
        }
    }
    if let Some(path) = &args.json {
        files::write_json_file(path, &merged)
            .with_context(|| format!("--json {}: cannot write it", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn merge_sweeps(args: &Args, reads: Vec<Read>, catalogue: &Catalogue) -> anyhow::Result<ExitCode> {
    let shards = reads
        .into_iter()
        .map(shard_file::<SweepResult>)
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut result = chokepoint_merge::merge_sweeps(shards)?;
    let mut diagnosis =
        chokepoint_diagnose::diagnose_with(&result.steps, &result.context, catalogue)
            .into_diagnosis();
    let info = result.merge.clone().unwrap_or_default();
    diagnosis.evidence.extend(describe::saturation_sentences(
        &info,
        Some((&result.steps, chokepoint_load::SATURATED_PCT)),
    ));
    result.diagnosis = Some(diagnosis);
    println!("{}", sweep_text::step_header());
    for step in &result.steps {
        println!("{}", sweep_text::step_line(step));
    }
    println!();
    print!(
        "{}",
        sweep_text::after_table(&result, super::sweep::detail(args.verbose))
    );
    let window_s = result
        .steps
        .iter()
        .map(|s| s.duration_s)
        .fold(0.0, f64::max);
    for line in describe::merge_lines(&info, window_s) {
        println!("{line}");
    }
    if let Some(dir) = &args.out {
        files::write_result(dir, &result)
            .and_then(|_| files::write_html(dir, &result))
            .with_context(|| format!("--out {}: cannot write the report", dir.display()))?;
    }
    if let Some(path) = &args.json {
        files::write_json_file(path, &result)
            .with_context(|| format!("--json {}: cannot write it", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}
