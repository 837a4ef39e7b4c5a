//! WireMock's scenarios: named state machines that start in `Started`; a stub with a required
//! state matches only in it, and serving a stub with a new state moves its scenario there.
use crate::mapping::{Mapping, ScenarioStep, SCENARIO_STARTED};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

/// The current state of every scenario that has left `Started`.
#[derive(Debug, Default)]
pub(crate) struct Scenarios {
    states: Mutex<BTreeMap<String, String>>,
}

impl Scenarios {
    fn states(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, String>> {
        self.states.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the stub's scenario is in the state the stub requires.
    pub fn allows(&self, step: &ScenarioStep) -> bool {
        let Some(required) = &step.required else {
            return true;
        };
        let states = self.states();
        states
            .get(&step.name)
            .map_or(SCENARIO_STARTED, String::as_str)
            == required
    }

    /// Moves the stub's scenario to its new state, if it has one.
    pub fn advance(&self, step: &ScenarioStep) {
        if let Some(next) = &step.next {
            self.states().insert(step.name.clone(), next.clone());
        }
    }

    /// Every scenario back to `Started`.
    pub fn reset(&self) {
        self.states().clear();
    }

    /// Sets a scenario's state; false when no stub names the scenario.
    pub fn set(&self, stubs: &[&Mapping], name: &str, state: &str) -> bool {
        if !stubs
            .iter()
            .any(|m| m.scenario.as_ref().is_some_and(|s| s.name == name))
        {
            return false;
        }
        self.states().insert(name.to_string(), state.to_string());
        true
    }

    /// `GET /__admin/scenarios`: each scenario named by a stub, its state and possible states.
    pub fn json(&self, stubs: &[&Mapping]) -> Value {
        let mut possible: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for step in stubs.iter().filter_map(|m| m.scenario.as_ref()) {
            let states = possible.entry(&step.name).or_default();
            states.insert(SCENARIO_STARTED);
            states.extend(step.required.as_deref());
            states.extend(step.next.as_deref());
        }
        let current = self.states();
        let list: Vec<Value> = possible
            .into_iter()
            .map(|(name, states)| {
                json!({
                    "id": name,
                    "name": name,
                    "state": current.get(name).map_or(SCENARIO_STARTED, String::as_str),
                    "possibleStates": states.into_iter().collect::<Vec<_>>(),
                })
            })
            .collect();
        json!({ "scenarios": list })
    }
}
