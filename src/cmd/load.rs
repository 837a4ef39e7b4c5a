//! `chokepoint load URL`: one load run with live summariser lines and an ab-like final report.
use super::common;
use super::live::LiveLine;
use super::shard::{wait_for_start, ShardArgs, Sharding};
use anyhow::Context;
use chokepoint_compare::{Run, RunKind};
use chokepoint_load::hdrhistogram::serialization::{interval_log, V2DeflateSerializer};
use chokepoint_load::{LoadConfig, LoadEvent};
use chokepoint_report::load_text;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `chokepoint load`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Stopping: -d runs for a time, -n sends exactly N requests in total (as ab -n); they cannot be \
combined. With neither, the run lasts 10s.
Models: without --rate, -c clients each send the next request when the last one ended (closed \
model, as JMeter threads and ab -c). With --rate, requests go out on a fixed schedule whatever \
the service does (open model); -c caps the connections, and latency counts from the scheduled \
time (wrk2), the uncorrected latency shown beside it.")]
pub struct Args {
    /// The target, http://host:port/path or https://host:port/path (or give --targets FILE)
    #[arg(required_unless_present = "targets")]
    pub url: Option<String>,
    /// Clients (closed model), or the most connections at once (with --rate)
    #[arg(short, long, default_value_t = 10, value_parser = common::client_count, allow_hyphen_values = true)]
    pub clients: u32,
    /// Run for this long, e.g. 30s (default 10s); cannot be combined with -n
    #[arg(short, long, value_parser = common::positive_duration, allow_hyphen_values = true, conflicts_with = "requests")]
    pub duration: Option<Duration>,
    /// Send exactly N requests in total, then stop; cannot be combined with -d
    #[arg(short = 'n', long, value_name = "N", value_parser = common::positive_count, allow_hyphen_values = true)]
    pub requests: Option<u64>,
    /// Open model: R requests per second on a fixed schedule
    #[arg(long, value_name = "R", value_parser = rate)]
    pub rate: Option<f64>,
    /// Closed model: pause between a response and the client's next request
    #[arg(long, value_parser = common::duration, allow_hyphen_values = true, default_value = "0s")]
    pub think_time: Duration,
    #[command(flatten)]
    pub request: common::RequestArgs,
    /// Print a JMeter summariser line this often
    #[arg(long, value_parser = common::positive_duration, allow_hyphen_values = true, default_value = "10s")]
    pub interval: Duration,
    /// Write the report as JSON to FILE
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write an HdrHistogram interval log (latency in microseconds) to FILE
    #[arg(long, value_name = "FILE")]
    pub hdr_log: Option<PathBuf>,
    /// No progress bar, even on a terminal
    #[arg(long)]
    pub no_progress: bool,
    #[command(flatten)]
    pub baseline: super::baseline::BaselineArgs,
    /// With --baseline: also write its figures as JUnit XML test cases to this file (for CI)
    #[arg(long, value_name = "FILE", requires = "baseline")]
    pub junit: Option<PathBuf>,
    #[command(flatten)]
    pub sharding: ShardArgs,
}

fn rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        Ok(_) => Err(format!(
            "'{text}' must be a number of requests per second above 0"
        )),
        Err(_) => Err(format!("'{text}' is not a number of requests per second")),
    }
}

/// Turns the arguments into the engine's configuration; every check that can fail does so here.
fn config(args: &Args) -> anyhow::Result<LoadConfig> {
    let mut config = args.request.config(args.url.as_deref())?;
    config.clients = args.clients;
    config.requests = args.requests;
    config.duration = match (args.duration, args.requests) {
        (Some(d), _) => Some(d),
        (None, Some(_)) => None,
        (None, None) => Some(Duration::from_secs(10)),
    };
    config.rate = args.rate;
    config.think_time = args.think_time;
    config.interval = args.interval;
    config.validate()?;
    Ok(config)
}

/// The HdrHistogram log, written beside its final path as the run goes and renamed into place
/// when complete (the JSON report, written at once, goes through the report crate's writer).
struct PendingFile {
    temp: PathBuf,
    path: PathBuf,
}

impl PendingFile {
    fn new(path: &Path) -> PendingFile {
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".{}.tmp", std::process::id()));
        PendingFile {
            temp: path.with_file_name(name),
            path: path.to_path_buf(),
        }
    }

    fn commit(&self, flag: &str) -> anyhow::Result<()> {
        std::fs::rename(&self.temp, &self.path)
            .with_context(|| format!("{flag} {}: cannot write it", self.path.display()))
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.temp);
    }
}

/// This shard's part of the run, and where its interval log goes (beside its JSON unless
/// --hdr-log says otherwise).
fn shard_of(args: &Args, config: &mut LoadConfig) -> anyhow::Result<Option<(Sharding, PathBuf)>> {
    let Some(sharding) = args.sharding.sharding(&config.url, |shards| {
        chokepoint_load::shard::load_plan(config, shards)
    })?
    else {
        return Ok(None);
    };
    let Some(json) = &args.json else {
        anyhow::bail!("--shard needs --json FILE: the merge reads each shard's file");
    };
    sharding.shard.split(config)?;
    let log = args
        .hdr_log
        .clone()
        .unwrap_or_else(|| json.with_extension("hlog"));
    Ok(Some((sharding, log)))
}

/// Runs the subcommand.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut config = config(&args)?;
    let sharding = shard_of(&args, &mut config)?;
    let hdr_log_path = sharding
        .as_ref()
        .map(|(_, log)| log.clone())
        .or_else(|| args.hdr_log.clone());
    if let Some(path) = &args.json {
        common::check_writable(path, "--json")?;
    }
    if let Some(path) = &hdr_log_path {
        common::check_writable(path, "--hdr-log")?;
    }
    if let Some(path) = &args.junit {
        common::check_writable(path, "--junit")?;
    }
    // Checked before any load: a baseline that cannot be compared is bad input.
    let baseline = args.baseline.open(RunKind::Load, &config.url)?;
    let sharding = sharding.map(|(sharding, _)| sharding);
    let by_count = config.duration.is_none();
    let cancel = common::cancel_on_ctrl_c();
    if !wait_for_start(args.sharding.start_at, &cancel) {
        anyhow::bail!("interrupted before --start-at: nothing was run");
    }
    let run = chokepoint_load::start(config.clone(), cancel)?;

    let hdr_file = hdr_log_path.as_deref().map(PendingFile::new);
    let mut hdr_out = match &hdr_file {
        Some(pending) => Some(std::io::BufWriter::new(
            std::fs::File::create(&pending.temp).with_context(|| {
                format!("--hdr-log {}: cannot create it", pending.path.display())
            })?,
        )),
        None => None,
    };
    let mut serializer = V2DeflateSerializer::new();
    let mut log_builder = interval_log::IntervalLogWriterBuilder::new();
    log_builder.add_comment(&format!("chokepoint load {}", config.url));
    if let Some(sharding) = &sharding {
        log_builder.add_comment(&sharding.log_comment());
    }
    let mut hdr_log = match &mut hdr_out {
        Some(out) => Some(
            log_builder
                .with_start_time(std::time::SystemTime::now())
                .with_max_value_divisor(1000.0)
                .begin_log_with(out, &mut serializer)
                .context("--hdr-log: cannot write the log header")?,
        ),
        None => None,
    };

    let progress = LiveLine::run_bar(config.duration, config.requests, !args.no_progress);
    let mut hdr_error = None;
    let mut started = std::time::SystemTime::now();
    for event in run.events() {
        match event {
            LoadEvent::MeasurementStarted { .. } => started = std::time::SystemTime::now(),
            LoadEvent::Interval(summary) => {
                progress.println(&load_text::summary_interval_line(
                    &summary.interval,
                    summary.active,
                ));
                progress.println(&load_text::summary_total_line(&summary.total));
                progress.update(
                    summary.total.requests,
                    summary.total.errors,
                    summary.active,
                    by_count,
                );
                if let Some(log) = &mut hdr_log {
                    if let Err(e) = log.write_histogram(
                        &summary.histogram,
                        summary.start,
                        summary.elapsed,
                        None,
                    ) {
                        hdr_error.get_or_insert(e.to_string());
                    }
                }
            }
        }
    }
    drop(progress);
    let report = run.finish()?;

    println!();
    print!("{}", load_text::load_report(&report));

    drop(hdr_log);
    if let (Some(mut out), Some(pending)) = (hdr_out, &hdr_file) {
        use std::io::Write;
        if let Some(e) = hdr_error {
            anyhow::bail!(
                "--hdr-log {}: cannot write it ({e})",
                pending.path.display()
            );
        }
        out.flush()
            .with_context(|| format!("--hdr-log {}: cannot write it", pending.path.display()))?;
        drop(out);
        pending.commit("--hdr-log")?;
    }
    let interrupted = report.interrupted;
    let compared = match &baseline {
        Some(baseline) => Some(baseline.compare(&Run::Load(Box::new(report.clone())))?),
        None => None,
    };
    if let (Some(path), Some(compared)) = (&args.junit, &compared) {
        super::baseline::write_junit(path, &[compared.suite()])?;
    }
    if let Some(path) = &args.json {
        match &sharding {
            Some(sharding) => {
                let log = hdr_log_path.as_ref().and_then(|log| relative_to(log, path));
                let info = sharding.info(started, log);
                sharding.warn_if_late(&info);
                chokepoint_report::files::write_json_file(
                    path,
                    &chokepoint_result::LoadResultFile {
                        report,
                        shard: Some(info),
                        merge: None,
                    },
                )
            }
            None => chokepoint_report::files::write_json_file(path, &report),
        }
        .with_context(|| format!("--json {}: cannot write it", path.display()))?;
    }
    Ok(if interrupted {
        eprintln!("chokepoint: interrupted; the report covers the run until then");
        super::interrupted()
    } else if compared.is_some_and(|c| c.failed) {
        eprintln!("chokepoint: --fail-on worse: a figure got worse than the baseline's");
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `log`'s path as seen from the folder of `json` (its file name when they share a folder).
fn relative_to(log: &Path, json: &Path) -> Option<String> {
    let folder = json.parent().unwrap_or(Path::new(""));
    let relative = log.strip_prefix(folder).unwrap_or(log);
    Some(relative.to_string_lossy().into_owned())
}
