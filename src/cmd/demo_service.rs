//! `chokepoint demo-service`: the demo service alone (crate chokepoint-demo), to be poked with
//! curl or swept by hand. Runs until Ctrl-C.
use super::common;
use chokepoint_demo::DemoConfig;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::ExitCode;

/// Arguments of `chokepoint demo-service`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Port to listen on (0 picks a free one; the URL is printed)
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Address to listen on
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub bind: IpAddr,
    /// Base URL of the downstream the routes call (e.g. `chokepoint mock --port 9090`)
    #[arg(long, default_value = "http://127.0.0.1:9090")]
    pub downstream: String,
    /// Threads of the /actors pool
    #[arg(long, default_value_t = 20, value_parser = common::positive_count, allow_hyphen_values = true)]
    pub actors: u64,
    /// Threads of the /global pool [default: the available cores]
    #[arg(long, value_parser = common::positive_count, allow_hyphen_values = true)]
    pub cpu_pool: Option<u64>,
    /// Downstream calls /blocking allows at once
    #[arg(long, default_value_t = 25, value_parser = common::positive_count, allow_hyphen_values = true)]
    pub client_pool: u64,
    /// Threads of the /dispatcher pool
    #[arg(long, default_value_t = 16, value_parser = common::positive_count, allow_hyphen_values = true)]
    pub dispatcher: u64,
    /// Milliseconds of CPU time /cpu spends per request
    #[arg(long, default_value_t = 10, value_parser = common::positive_count, allow_hyphen_values = true)]
    pub cpu_ms: u64,
    /// Product ids /recommendations fetches as /product/{id}, comma-separated
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "PROD-001,PROD-002,PROD-003,PROD-004"
    )]
    pub products: Vec<String>,
}

/// Runs the subcommand: serves until Ctrl-C.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let size = |value: u64| usize::try_from(value).unwrap_or(usize::MAX);
    let defaults = DemoConfig::default();
    let config = DemoConfig {
        downstream: args.downstream,
        actors: size(args.actors),
        cpu_pool: args.cpu_pool.map_or(defaults.cpu_pool, size),
        client_pool: size(args.client_pool),
        dispatcher: size(args.dispatcher),
        cpu_ms: args.cpu_ms,
        product_ids: args
            .products
            .iter()
            .map(|id| id.trim().to_string())
            .collect(),
    };
    let listing = chokepoint_demo::routes_json(&config);
    let running = chokepoint_demo::start(SocketAddr::new(args.bind, args.port), config)?;
    println!(
        "chokepoint demo-service listening on {} (downstream {}); GET / lists the routes; Ctrl-C stops",
        running.url(),
        listing["downstream"].as_str().unwrap_or_default()
    );
    for route in listing["routes"].as_array().into_iter().flatten() {
        let limit = match &route["limit"] {
            serde_json::Value::Null => "no pool".to_string(),
            limit => format!("limit {limit}"),
        };
        println!(
            "  {:<25} {:<10} {}",
            route["path"].as_str().unwrap_or_default(),
            limit,
            route["what"].as_str().unwrap_or_default()
        );
    }
    let waiter = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    waiter.block_on(tokio::signal::ctrl_c())?;
    running.stop();
    Ok(ExitCode::SUCCESS)
}
