//! `chokepoint sweep URL`: the experiment and the finding.
use super::common;
use super::live::{self, step_text, LiveLine};
use chokepoint_compare::{Run, RunKind};
use chokepoint_diagnose::Gate;
use chokepoint_experiment::{PoolSize, SweepConfig, SweepEvent};
use chokepoint_observe::stacks::StackOptions;
use chokepoint_report::sweep_text;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `chokepoint sweep`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The URL to sweep, http:// or https:// (or give --targets FILE)
    #[arg(required_unless_present = "targets")]
    pub url: Option<String>,
    /// Client counts to run, e.g. 1,5,20,40,100 (default: adaptive search for the knee)
    #[arg(short = 'c', long, value_delimiter = ',', value_parser = common::client_count, allow_hyphen_values = true)]
    pub clients: Option<Vec<u32>>,
    /// The largest client count the adaptive search may try
    #[arg(long, default_value_t = chokepoint_experiment::DEFAULT_MAX_CLIENTS, value_parser = common::client_count, allow_hyphen_values = true)]
    pub max_clients: u32,
    /// The longest a step measures (the ramp until every client has answered comes on top); a
    /// step ends sooner once its throughput is known within ±3% (see --step-fixed)
    #[arg(long, default_value = "10s", value_parser = common::positive_duration, allow_hyphen_values = true)]
    pub step: Duration,
    /// Every step measures the whole --step, as before steps could end early
    #[arg(long)]
    pub step_fixed: bool,
    /// The first step is thrown away while its latency still falls (a JIT, caches), and its
    /// clients run unmeasured until it stops, for at most this long; 0 for no such check
    #[arg(long, default_value = "20s", value_parser = common::duration, allow_hyphen_values = true)]
    pub warmup: Duration,
    /// Base URL of the running `chokepoint mock` the target calls (downstream evidence)
    #[arg(long)]
    pub mock: Option<String>,
    /// Save result.json (after each step) and report.html (at the end) in this folder
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also write the result (steps and diagnosis, as DIR/result.json) to this file
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Print every evidence sentence and the models after the finding, not one screen
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// The target's process, observed with its descendants (CPU, threads by pool, connections):
    /// a process id, `auto` (the process listening on the URL's port; the default when the URL
    /// is on this machine) or `none`
    #[arg(long, value_parser = pid_choice, allow_hyphen_values = true)]
    pub pid: Option<PidChoice>,
    /// Read the target through the observer beside it (chokepoint observe on the target's host
    /// or namespace), e.g. http://10.0.0.5:7070, instead of this machine's /proc; the
    /// observer's own --stacks and --jvm choose its stack tools
    #[arg(long, value_name = "URL", conflicts_with = "pid")]
    pub observer: Option<String>,
    /// A file holding the observer's token (the one its --token-file holds)
    #[arg(long, value_name = "FILE", requires = "observer")]
    pub observer_token_file: Option<PathBuf>,
    /// Read where the target's threads wait from its runtime's own tools (jcmd or JFR for a
    /// JVM, py-spy for CPython, pprof for Go) when they are there: auto, off for /proc only, or
    /// jfr for a Flight Recorder recording per step of a JVM instead of thread dumps
    #[arg(long, value_enum, default_value = "auto")]
    pub stacks: StacksChoice,
    /// The target is a JVM even though its executable is not called java (jcmd is asked)
    #[arg(long)]
    pub jvm: bool,
    /// A Go target's net/http/pprof base URL, e.g. http://127.0.0.1:6060/debug/pprof
    /// (default: for a Go target, /debug/pprof/ on the loopback ports it listens on, when it answers)
    #[arg(long, value_parser = pprof_url)]
    pub pprof: Option<String>,
    /// A gate for CI, e.g. 'limit>=100', 'p99<500ms@40', 'kind!=blocking-pool' (repeatable):
    /// exit 1 when one fails
    #[arg(long = "expect")]
    pub expect: Vec<Gate>,
    /// Also write the --expect gates and the --baseline figures as JUnit XML test cases to
    /// this file (for CI)
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// After the finding, predict the pool at M slots by emulation (needs --mock): when the
    /// limit is a pool held for the mock's delay, a step or two run with that delay scaled so
    /// the pool found serves as a pool of M would (Little's law), then the delay is put back.
    /// M is a size (40) or a factor of the pool found (2x)
    #[arg(long, value_name = "M", value_parser = what_if_size, allow_hyphen_values = true)]
    pub what_if: Option<PoolSize>,
    #[command(flatten)]
    pub baseline: super::baseline::BaselineArgs,
    #[command(flatten)]
    pub request: common::RequestArgs,
    #[command(flatten)]
    pub sharding: super::shard::ShardArgs,
    #[command(flatten)]
    pub catalogue: common::CatalogueArgs,
    /// With --start-at: from one step's start to the next (ramp, step and drain fit in it;
    /// default 2 × --step + 2s)
    #[arg(long, value_parser = common::positive_duration, allow_hyphen_values = true)]
    pub slot: Option<Duration>,
}

/// What `--stacks` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StacksChoice {
    /// Use the runtime's tool when it is there.
    Auto,
    /// `/proc` only.
    Off,
    /// A JVM is recorded with Flight Recorder (`jcmd JFR.start`/`JFR.stop`, `jfr print`)
    /// instead of thread dumps; any other runtime as with auto.
    Jfr,
}

/// What `--pid` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PidChoice {
    /// The process listening on the URL's port.
    Auto,
    /// Do not observe the target.
    None,
    /// This process and its descendants.
    Pid(i32),
}

fn pprof_url(text: &str) -> Result<String, String> {
    chokepoint_observe::stacks::pprof::goroutine_url(text)
}

fn what_if_size(text: &str) -> Result<PoolSize, String> {
    text.parse()
}

fn pid_choice(text: &str) -> Result<PidChoice, String> {
    match text.trim() {
        "auto" => Ok(PidChoice::Auto),
        "none" => Ok(PidChoice::None),
        number => match number.parse::<i32>() {
            Ok(pid) if pid > 0 => Ok(PidChoice::Pid(pid)),
            _ => Err(format!(
                "'{text}' is not a process id: give the target's PID (pgrep -f my-service), auto or none"
            )),
        },
    }
}

/// Runs the sweep, prints a line per step, the finding, and checks the gates.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let catalogue = args.catalogue.catalogue()?;
    let base = args.request.config(args.url.as_deref())?;
    base.validate()?;
    let mut config = SweepConfig::new(&base.url)?;
    config.base = base;
    config.catalogue = catalogue;
    if let Some(clients) = &args.clients {
        if let Some(&largest) = clients.iter().max() {
            config.max_clients = largest;
        }
    } else {
        config.max_clients = args.max_clients;
    }
    config.clients = args.clients;
    config.set_step(args.step);
    config.stacks = StackOptions {
        enabled: args.stacks != StacksChoice::Off,
        force_jvm: args.jvm,
        pprof_url: args.pprof.clone(),
        jfr: args.stacks == StacksChoice::Jfr,
    };
    config.step_fixed = args.step_fixed;
    config.warmup_limit = args.warmup;
    if let Some(json) = &args.json {
        common::check_writable(json, "--json")?;
    }
    if let Some(junit) = &args.junit {
        if args.expect.is_empty() && args.baseline.baseline.is_none() {
            anyhow::bail!(
                "--junit records the gates: give --expect GATE or --baseline PATH with it"
            );
        }
        common::check_writable(junit, "--junit")?;
    }
    // Checked before any load: a baseline that cannot be compared is bad input.
    let baseline = args.baseline.open(RunKind::Sweep, &config.base.url)?;
    if let Some(size) = args.what_if {
        if args.mock.is_none() {
            anyhow::bail!(
                "--what-if needs --mock URL: the prediction scales the mock's delay (without a mock, read the finding's limit)"
            );
        }
        if let PoolSize::Pool(m) = size {
            if m >= config.max_clients {
                anyhow::bail!(
                    "--what-if {m}: a pool of {m} needs more than {m} clients and the largest step is {}: raise --max-clients (or -c)",
                    config.max_clients
                );
            }
        }
        if args.sharding.start_at.is_some() {
            anyhow::bail!("--what-if runs on one machine's sweep: drop --start-at or --what-if");
        }
    }
    config.what_if = args.what_if;
    config.mock = args.mock;
    config.out = args.out;
    // Printed with the first step, so that a target that cannot be reached gets its one line.
    let mut observe_note = None;
    if let Some(url) = &args.observer {
        let remote = super::remote::connect(url, args.observer_token_file.as_deref(), &config)?;
        observe_note = Some(super::remote::observing_line(&remote));
        config.forwarder = remote.target().forwarder.clone();
        config.observer = Some(std::sync::Arc::new(remote));
    }
    match args.pid.unwrap_or(if args.observer.is_some() {
        PidChoice::None
    } else {
        PidChoice::Auto
    }) {
        PidChoice::Pid(pid) => {
            if chokepoint_observe::process_tree(pid).is_err() {
                anyhow::bail!(
                    "--pid {pid}: no such process to observe; give the target's process id, or auto"
                );
            }
            config = config.with_target_pid(pid);
        }
        PidChoice::Auto => {
            let found = config.listening_target();
            if found.is_empty() {
                if args.pid.is_some() {
                    observe_note = Some(
                        "chokepoint: --pid auto: no process this user may read listens on the URL's port on this machine; the target is not observed (give --pid PID)"
                            .to_string(),
                    );
                }
            } else {
                let list = |pids: &[i32]| {
                    pids.iter()
                        .map(i32::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                config = config.with_listening_target(found.clone());
                observe_note = Some(match &config.forwarder {
                    Some(f) => format!(
                        "chokepoint: the URL's port is {} (process {}), a forwarder to {}: observing it and {} (process {}) behind it, and their descendants; --pid PID observes one process instead",
                        f.name, f.pid, f.hop(), f.served_name, list(&f.served_pids)
                    ),
                    None => format!(
                        "chokepoint: observing process {} (listening on the URL's port) and its descendants; --pid none turns this off",
                        list(&found)
                    ),
                });
            }
        }
        PidChoice::None => {}
    }
    let sharding = super::shard::shard_sweep(&args.sharding, &mut config, args.slot)?;
    let without_mock = config.mock.is_none();
    let cancel = common::cancel_on_ctrl_c();
    if let (Some(sharding), Some(clock)) = (&sharding, &config.clock) {
        eprintln!(
            "chokepoint: shard {} of run {}: steps every {:?} from --start-at",
            sharding.shard, sharding.run_id, clock.slot
        );
    }
    let mut first = true;
    let mut observer_failed = false;
    let mut live = LiveLine::for_steps();
    // The header waits for the first step, so that a target that cannot be reached gets its
    // one-line error alone. The live line of a step under way is cleared before its row.
    let result = chokepoint_experiment::sweep(&config, cancel, &mut |event| {
        let step = match event {
            SweepEvent::Progress(progress) => return live.show(step_text(&progress)),
            SweepEvent::WarmingUp {
                clients,
                elapsed,
                latency_ms,
            } => return live.show(live::warmup_text(clients, elapsed, latency_ms)),
            SweepEvent::WarmedUp(warmup) => {
                live.clear();
                eprintln!("{}", live::warmed_up_line(warmup));
                return;
            }
            SweepEvent::Step(step) => step,
            SweepEvent::Emulating(emulation) => {
                live.clear();
                println!(
                    "{}",
                    sweep_text::emulation_line(
                        emulation.from_pool,
                        emulation.pool,
                        emulation.delay_ms,
                        emulation.emulated_delay_ms
                    )
                );
                return;
            }
            SweepEvent::EmulatedStep(step) => {
                live.clear();
                println!("{}", sweep_text::step_line(step));
                return;
            }
            SweepEvent::WhatIfRefused(refusal) => {
                live.clear();
                eprintln!("chokepoint: {refusal}");
                return;
            }
        };
        live.clear();
        if std::mem::take(&mut first) {
            if let Some(note) = observe_note.take() {
                eprintln!("{note}");
            }
            if without_mock {
                eprintln!(
                    "chokepoint: no --mock given: the downstream evidence (calls in flight) is missing"
                );
            }
            println!("{}", sweep_text::step_header());
        }
        println!("{}", sweep_text::step_line(step));
        // Said once: the next steps carry the same note in the result.
        let failed = step.observation_notes.iter().find(|note| {
            matches!(
                note,
                chokepoint_result::ObservationNote::ObserverFailed { .. }
            )
        });
        if let Some(note) = failed.filter(|_| !std::mem::replace(&mut observer_failed, true)) {
            eprintln!("chokepoint: {note}");
        }
    });
    live.clear();
    let result = result?;
    println!();
    print!("{}", sweep_text::after_table(&result, detail(args.verbose)));
    if let (Some(sharding), Some(dir), Some(clock)) = (&sharding, &config.out, &config.clock) {
        super::shard::write_sweep_log(dir, sharding, &result, clock.slot)?;
        if let Some(info) = &result.shard {
            sharding.warn_if_late(info);
        }
    }
    if result.interrupted {
        eprintln!(
            "chokepoint: interrupted; the {} finished steps are kept{}",
            result.steps.len(),
            config
                .out
                .as_ref()
                .map(|d| format!(" in {}", d.display()))
                .unwrap_or_default()
        );
    }
    if let Some(path) = &args.json {
        chokepoint_report::files::write_json_file(path, &result)
            .map_err(|e| anyhow::anyhow!("--json {}: cannot write it: {e}", path.display()))?;
    }
    let diagnosis = result
        .diagnosis
        .as_ref()
        .expect("a finished sweep has a diagnosis");
    let failures = chokepoint_diagnose::check_gates(&args.expect, &result.steps, diagnosis);
    for failure in &failures {
        eprintln!("chokepoint: {failure}");
    }
    let compared = match &baseline {
        Some(baseline) => Some(baseline.compare(&Run::Sweep(Box::new(result.clone())))?),
        None => None,
    };
    if let Some(path) = &args.junit {
        let mut suites = Vec::new();
        if !args.expect.is_empty() {
            suites.push(super::baseline::gate_suite(
                &result.target,
                &args.expect,
                &result.steps,
                diagnosis,
            ));
        }
        suites.extend(compared.as_ref().map(|c| c.suite()));
        super::baseline::write_junit(path, &suites)?;
    }
    let worse = compared.is_some_and(|c| c.failed);
    if worse {
        eprintln!("chokepoint: --fail-on worse: a figure got worse than the baseline's");
    }
    Ok(if result.interrupted {
        super::interrupted()
    } else if failures.is_empty() && !worse {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// One screen of finding, or all of it with `--verbose`.
pub fn detail(verbose: bool) -> sweep_text::Detail {
    if verbose {
        sweep_text::Detail::Full
    } else {
        sweep_text::Detail::Screen
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Sweep {
        #[command(flatten)]
        args: Args,
    }

    #[test]
    fn the_flags_defaults_are_the_sweep_configurations() {
        let Sweep { args } = Sweep::parse_from(["sweep", "http://127.0.0.1:1/"]);
        let config = SweepConfig::new("http://127.0.0.1:1/").unwrap();
        assert_eq!(args.step, config.step);
        assert_eq!(args.max_clients, config.max_clients);
        assert_eq!(args.warmup, config.warmup_limit);
    }
}
