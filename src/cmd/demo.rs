//! `chokepoint demo`: the main job. Mock, demo service and a sweep of every scenario, in one
//! process, with embedded defaults: no flags needed.
use super::common;
use super::live::{step_text, LiveLine};
use chokepoint_experiment::demo::{run_demo, DemoEvent, DemoOptions};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `chokepoint demo`.
#[derive(Debug, Default, clap::Args)]
pub struct Args {
    /// Write the findings table as JSON to this file
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Keep each scenario's result.json and report.html under DIR/<scenario>/
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Measured length of each step (default 1s)
    #[arg(long, value_parser = common::positive_duration, allow_hyphen_values = true)]
    pub step: Option<Duration>,
    /// Run only these scenarios (comma-separated: actors,global,blocking,dispatcher,async,
    /// recommendations,cpu,leaky)
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
}

/// Runs the demo and prints the findings table. Exit 1 when a scenario's finding is wrong.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let known = [
        "actors",
        "global",
        "blocking",
        "dispatcher",
        "async",
        "recommendations",
        "cpu",
        "leaky",
    ];
    if let Some(unknown) = args.only.iter().find(|n| !known.contains(&n.as_str())) {
        anyhow::bail!(
            "--only {unknown}: no such scenario; choose from {}",
            known.join(",")
        );
    }
    if let Some(json) = &args.json {
        common::check_writable(json, "--json")?;
    }
    let options = DemoOptions {
        out: args.out,
        step: args.step.unwrap_or(DemoOptions::default().step),
        only: args.only,
    };
    println!("chokepoint demo: mock + demo service on loopback, one sweep per scenario");
    let cancel = common::cancel_on_ctrl_c();
    let mut live = LiveLine::for_steps();
    let result = run_demo(&options, cancel.clone(), &mut |event| {
        let scenario = match event {
            DemoEvent::Progress { scenario, step } => {
                return live.show(format!("  {scenario:<16} {}", step_text(&step)))
            }
            DemoEvent::Scenario(scenario, _) => scenario,
        };
        live.clear();
        println!(
            "  {:<16} {:<16} found {:<6} {} ({:.1} s)",
            scenario.name,
            scenario.kind.as_str(),
            scenario
                .found_limit
                .map(|l| format!("{l:.1}"))
                .unwrap_or_else(|| "-".into()),
            if scenario.ok { "ok" } else { "WRONG" },
            scenario.seconds
        );
    });
    live.clear();
    let result = result?;
    println!();
    print!("{}", chokepoint_report::demo_text::render(&result));
    println!();
    for scenario in &result.scenarios {
        println!("{:<16} {}", scenario.name, scenario.summary);
    }
    if let Some(path) = &args.json {
        chokepoint_report::files::write_json_file(path, &result)
            .map_err(|e| anyhow::anyhow!("--json {}: cannot write it: {e}", path.display()))?;
    }
    Ok(if cancel.is_cancelled() {
        eprintln!(
            "chokepoint: interrupted; the {} finished scenarios are kept",
            result.scenarios.len()
        );
        super::interrupted()
    } else if result.scenarios.iter().all(|s| s.ok) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
