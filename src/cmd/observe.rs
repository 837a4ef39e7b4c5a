//! `chokepoint observe`: the observer beside the target. Serves over HTTP what a sweep reads of
//! the target through `/proc` (the `chokepoint-remote` crate), for a sweep run on another host
//! or namespace with `sweep --observer URL`.
use super::sweep::StacksChoice;
use chokepoint_observe::stacks::StackOptions;
use chokepoint_remote::server::{Settings, TargetChoice};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `chokepoint observe`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The address and port to serve on; any address but a loopback one needs --token-file
    #[arg(long, default_value = "127.0.0.1:7070")]
    pub listen: SocketAddr,
    /// A file holding the token every request must carry (Authorization: Bearer TOKEN), at
    /// least 16 characters, e.g. made with `openssl rand -hex 32 > FILE`
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// The target is the process listening on this port here (default: the port of the URL
    /// each sweep names)
    #[arg(long, conflicts_with = "pid")]
    pub port: Option<u16>,
    /// The target is this process and its descendants
    #[arg(long, value_parser = positive_pid)]
    pub pid: Option<i32>,
    /// Read where the target's threads wait from its runtime's own tools (jcmd or JFR for a
    /// JVM, py-spy for CPython, pprof for Go) when they are there: auto, off for /proc only, or
    /// jfr; chosen here, never by a sweep's request
    #[arg(long, value_enum, default_value = "auto")]
    pub stacks: StacksChoice,
    /// The target is a JVM even though its executable is not called java (jcmd is asked)
    #[arg(long)]
    pub jvm: bool,
}

fn positive_pid(text: &str) -> Result<i32, String> {
    match text.trim().parse::<i32>() {
        Ok(pid) if pid > 0 => Ok(pid),
        _ => Err(format!(
            "'{text}' is not a process id: give the target's PID"
        )),
    }
}

/// Serves until Ctrl-C or SIGTERM.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let token = args
        .token_file
        .as_deref()
        .map(|path| chokepoint_remote::auth::read_token(path, "--token-file"))
        .transpose()
        .map_err(anyhow::Error::msg)?;
    chokepoint_remote::auth::check_listen(args.listen, token.as_deref())
        .map_err(anyhow::Error::msg)?;
    let target = match (args.pid, args.port) {
        (Some(pid), _) => {
            if chokepoint_observe::process_tree(pid).is_err() {
                anyhow::bail!(
                    "--pid {pid}: no such process to observe; give the target's process id"
                );
            }
            TargetChoice::Pid(pid)
        }
        (None, Some(port)) => TargetChoice::Port(port),
        (None, None) => TargetChoice::SweepPort,
    };
    let settings = Settings {
        token,
        target,
        stacks: StackOptions {
            enabled: args.stacks != StacksChoice::Off,
            force_jvm: args.jvm,
            pprof_url: None,
            jfr: args.stacks == StacksChoice::Jfr,
        },
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .max_blocking_threads(4)
        .thread_name("cp-observer")
        .enable_all()
        .build()?;
    let cancel = super::common::cancel_on_ctrl_c();
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .map_err(|e| anyhow::anyhow!("--listen {}: cannot listen there: {e}", args.listen))?;
        let bound = listener.local_addr()?;
        println!("chokepoint observer listening on http://{bound}");
        let whom = match target {
            TargetChoice::Pid(pid) => format!("process {pid} and its descendants"),
            TargetChoice::Port(port) => format!("the process listening on port {port}"),
            TargetChoice::SweepPort => "the process listening on each sweep's port".into(),
        };
        let guard = if settings.token.is_some() {
            "every request must carry the token"
        } else {
            "loopback only, no token"
        };
        eprintln!("chokepoint: observing {whom} for one sweep at a time ({guard}); Ctrl-C stops");
        chokepoint_remote::server::serve(listener, settings, cancel).await;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}
