//! `chokepoint demo`: the seeds' scenarios, found for real in one process.
//!
//! Starts two mocks (one plain, one that caps connections and holds idle ones open, as seed
//! 001's Apache did) and a demo service in front of each, all on free loopback ports, then sweeps
//! each route of the demo service and compares the finding with what the route is built with.
use crate::progress::{StepProgress, SweepEvent};
use crate::sweep::{sweep, SweepConfig};
use anyhow::Context;
use chokepoint_observe::CpuScope;
use chokepoint_result::{DemoResult, DemoScenario, Kind, SweepResult};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Delay of the plain mock's stubs for the blocking routes.
const POOL_DELAY_MS: u64 = 50;
/// Delay of the `/async` stub: longer, so that many clients stay cheap for the generator.
const ASYNC_DELAY_MS: u64 = 100;
/// Delays of the four products `/recommendations` fetches (slowest 120 ms, sum 300 ms).
const PRODUCT_DELAYS_MS: [u64; 4] = [40, 60, 80, 120];
/// The capped mock behind `/leaky`: connections it serves at once, and how long it holds an
/// idle one open.
const LEAKY_MAX_CONNECTIONS: usize = 10;
const LEAKY_KEEPALIVE_MS: u64 = 500;
const LEAKY_DELAY_MS: u64 = 20;

/// Options of `chokepoint demo`.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// Keep each scenario's result.json and report.html under `out/<scenario>/`.
    pub out: Option<PathBuf>,
    /// Measured length of each step.
    pub step: Duration,
    /// Run only the scenarios with these names (all when empty).
    pub only: Vec<String>,
}

impl Default for DemoOptions {
    fn default() -> Self {
        DemoOptions {
            out: None,
            step: Duration::from_millis(1000),
            only: Vec::new(),
        }
    }
}

/// One scenario: a route of the demo service and what it is built with.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The route without its slash (`actors`).
    pub name: &'static str,
    /// The seed it comes from.
    pub seed: &'static str,
    /// What the finding should be.
    pub expected_kind: Kind,
    /// The limit the route is built with, when it has one.
    pub expected_limit: Option<f64>,
    /// Client counts to run; `None` for the adaptive search.
    pub clients: Option<Vec<u32>>,
    /// The adaptive search's ceiling.
    pub max_clients: u32,
    /// Whether the route calls the capped mock.
    pub behind_capped_mock: bool,
    /// Longer steps, for patterns that need time to show (stalls).
    pub step_factor: u32,
}

/// The demo's scenarios, with the demo service's default pool sizes.
pub fn scenarios(defaults: &chokepoint_demo::DemoConfig) -> Vec<Scenario> {
    let pool = |name, seed, size: usize| Scenario {
        name,
        seed,
        expected_kind: Kind::BlockingPool,
        expected_limit: Some(size as f64),
        clients: None,
        max_clients: 128,
        behind_capped_mock: false,
        step_factor: 1,
    };
    vec![
        pool("actors", "000", defaults.actors),
        pool("global", "000+002", defaults.cpu_pool),
        pool("blocking", "000", defaults.client_pool),
        pool("dispatcher", "002", defaults.dispatcher),
        Scenario {
            expected_kind: Kind::NoLimitFound,
            expected_limit: None,
            ..pool("async", "004", 0)
        },
        Scenario {
            expected_kind: Kind::NoLimitFound,
            expected_limit: None,
            max_clients: 64,
            ..pool("recommendations", "004", 0)
        },
        Scenario {
            expected_kind: Kind::CpuBound,
            expected_limit: None,
            max_clients: 32,
            ..pool("cpu", "003", 0)
        },
        Scenario {
            expected_kind: Kind::ConnectionLimit,
            expected_limit: Some(LEAKY_MAX_CONNECTIONS as f64),
            clients: Some(vec![1, 4, 16]),
            behind_capped_mock: true,
            step_factor: 3,
            ..pool("leaky", "001", 0)
        },
    ]
}

/// The plain mock's stubs: one per route, so its per-stub counts tell the scenarios apart.
fn plain_mock_mappings() -> String {
    let stub = |path: &str, delay: u64, body: &str| {
        serde_json::json!({
            "name": path.trim_start_matches('/'),
            "request": { "method": "GET", "urlPath": path },
            "response": { "status": 200, "body": body, "fixedDelayMilliseconds": delay }
        })
    };
    let mut mappings = vec![
        stub("/actors", POOL_DELAY_MS, "ok"),
        stub("/global", POOL_DELAY_MS, "ok"),
        stub("/blocking", POOL_DELAY_MS, "ok"),
        stub("/dispatcher", POOL_DELAY_MS, "ok"),
        stub("/async", ASYNC_DELAY_MS, "ok"),
    ];
    for (i, delay) in PRODUCT_DELAYS_MS.iter().enumerate() {
        let id = format!("PROD-00{}", i + 1);
        let body = format!(
            r#"{{"id":"{id}","name":"Product {}","price":31.22}}"#,
            i + 1
        );
        mappings.push(stub(&format!("/product/{id}"), *delay, &body));
    }
    serde_json::json!({ "mappings": mappings }).to_string()
}

fn capped_mock_mappings() -> String {
    serde_json::json!({ "mappings": [{
        "name": "leaky",
        "request": { "method": "GET", "urlPath": "/leaky" },
        "response": { "status": 200, "body": "ok", "fixedDelayMilliseconds": LEAKY_DELAY_MS }
    }]})
    .to_string()
}

/// What [`run_demo`] tells its caller as it goes.
#[derive(Debug, Clone, Copy)]
pub enum DemoEvent<'a> {
    /// A step of the scenario `scenario`'s sweep under way.
    Progress {
        /// The scenario's name.
        scenario: &'static str,
        /// The step.
        step: StepProgress,
    },
    /// A scenario has ended: its row, and the sweep it came from.
    Scenario(&'a DemoScenario, &'a SweepResult),
}

/// Runs every scenario (or those in `options.only`); `on_event` sees each step's progress and
/// each scenario as it ends.
pub fn run_demo(
    options: &DemoOptions,
    cancel: CancellationToken,
    on_event: &mut dyn FnMut(DemoEvent<'_>),
) -> anyhow::Result<DemoResult> {
    let started = Instant::now();
    let loopback: std::net::SocketAddr = "127.0.0.1:0".parse().expect("a valid address");
    let plain_mock = chokepoint_mock::start(
        loopback,
        chokepoint_mock::MockConfig {
            mappings: chokepoint_mock::parse_mappings(&plain_mock_mappings(), "demo stubs")
                .map_err(|e| anyhow::anyhow!("{e}"))?,
            ..Default::default()
        },
    )
    .map_err(|e| anyhow::anyhow!("cannot start the demo's mock: {e}"))?;
    let capped_mock = chokepoint_mock::start(
        loopback,
        chokepoint_mock::MockConfig {
            mappings: chokepoint_mock::parse_mappings(&capped_mock_mappings(), "leaky stub")
                .map_err(|e| anyhow::anyhow!("{e}"))?,
            max_connections: Some(LEAKY_MAX_CONNECTIONS),
            keepalive_timeout: Some(Duration::from_millis(LEAKY_KEEPALIVE_MS)),
            ..Default::default()
        },
    )
    .map_err(|e| anyhow::anyhow!("cannot start the demo's capped mock: {e}"))?;
    let defaults = chokepoint_demo::DemoConfig::default();
    let service = chokepoint_demo::start(
        loopback,
        chokepoint_demo::DemoConfig {
            downstream: plain_mock.url(),
            ..defaults.clone()
        },
    )
    .map_err(|e| anyhow::anyhow!("cannot start the demo service: {e}"))?;
    let leaky_service = chokepoint_demo::start(
        loopback,
        chokepoint_demo::DemoConfig {
            downstream: capped_mock.url(),
            ..defaults.clone()
        },
    )
    .map_err(|e| anyhow::anyhow!("cannot start the demo service for /leaky: {e}"))?;

    let mut results = Vec::new();
    for scenario in scenarios(&defaults) {
        if !options.only.is_empty() && !options.only.iter().any(|n| n == scenario.name) {
            continue;
        }
        if cancel.is_cancelled() {
            break;
        }
        let scenario_started = Instant::now();
        let (service_url, mock_url) = if scenario.behind_capped_mock {
            (leaky_service.url(), capped_mock.url())
        } else {
            (service.url(), plain_mock.url())
        };
        let mut config = SweepConfig::new(&format!("{service_url}/{}", scenario.name))?;
        config.clients = scenario.clients.clone();
        config.max_clients = scenario.max_clients;
        config.set_step(options.step * scenario.step_factor);
        config.base.timeout = Duration::from_secs(10);
        config.drain_timeout = Duration::from_secs(10);
        config.mock = Some(mock_url);
        // The demo's service is native code in this process, its pools made at start: there
        // is no JIT or lazy pool to warm (the demo found 8 of 8 in 53.6 s before sweeps had a
        // warm-up, and 74.7 s with one).
        config.warmup_limit = Duration::ZERO;
        config.out = options.out.as_ref().map(|dir| dir.join(scenario.name));
        // The target runs in this process: its CPU is every thread but the generator's and
        // the mocks'.
        config.target_cpu = Some(CpuScope::ThreadsExcept {
            pid: std::process::id() as i32,
            prefixes: vec!["cp-load".into(), "cp-mock".into()],
        });
        let result = sweep(&config, cancel.clone(), &mut |event| {
            if let SweepEvent::Progress(step) = event {
                on_event(DemoEvent::Progress {
                    scenario: scenario.name,
                    step,
                });
            }
        })
        .with_context(|| format!("scenario {}", scenario.name))?;
        if result.interrupted {
            break;
        }
        let diagnosis = result
            .diagnosis
            .clone()
            .expect("a finished sweep has a diagnosis");
        let found_limit = diagnosis.limit();
        let limit_ok = match (scenario.expected_limit, found_limit) {
            (Some(expected), Some(found)) => (found - expected).abs() <= 0.1 * expected,
            (Some(_), None) => false,
            (None, _) => true,
        };
        let entry = DemoScenario {
            name: scenario.name.to_string(),
            seed: scenario.seed.to_string(),
            expected_limit: scenario.expected_limit,
            found_limit,
            kind: diagnosis.kind(),
            expected_kind: scenario.expected_kind,
            ok: limit_ok && diagnosis.kind() == scenario.expected_kind,
            seconds: scenario_started.elapsed().as_secs_f64(),
            summary: diagnosis.summary.clone(),
        };
        on_event(DemoEvent::Scenario(&entry, &result));
        results.push(entry);
    }
    leaky_service.stop();
    service.stop();
    capped_mock.stop();
    plain_mock.stop();
    Ok(DemoResult {
        scenarios: results,
        seconds: started.elapsed().as_secs_f64(),
    })
}
