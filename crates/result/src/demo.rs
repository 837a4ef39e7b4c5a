//! `chokepoint demo --json`: one record per scenario.
use crate::Kind;
use serde::{Deserialize, Serialize};

/// One scenario of `chokepoint demo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DemoScenario {
    /// Scenario name (the demo route, e.g. `actors`).
    pub name: String,
    /// The seed it comes from (`000`, ...).
    pub seed: String,
    /// The limit the scenario is built with; `None` for scenarios without one.
    pub expected_limit: Option<f64>,
    /// The limit the diagnosis found.
    pub found_limit: Option<f64>,
    /// The kind found.
    pub kind: Kind,
    /// The kind expected.
    pub expected_kind: Kind,
    /// Whether kind and limit (within 10%) match.
    pub ok: bool,
    /// Seconds the scenario took.
    pub seconds: f64,
    /// The finding's summary sentence.
    #[serde(default)]
    pub summary: String,
}

/// `demo --json FILE`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DemoResult {
    /// One entry per scenario, in the order they ran.
    pub scenarios: Vec<DemoScenario>,
    /// Seconds the whole demo took.
    pub seconds: f64,
}
