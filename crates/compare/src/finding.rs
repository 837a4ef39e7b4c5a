//! What a sweep's diagnosis found, as the comparison reads it: the kind, the limit, the place's
//! pool and setting, and the plateau. [`read`] is the one function that reaches into
//! [`Diagnosis`]: when the diagnosis changes shape, it is the one place to follow it.
use chokepoint_result::Diagnosis;
use serde::{Deserialize, Serialize};

/// A finding, as compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FindingRead {
    /// The kind of limit (`blocking-pool`, `no-limit-found`, ...).
    pub kind: String,
    /// Its size in requests in service; `None` when none was found.
    pub limit: Option<f64>,
    /// The pool that holds it; `None` when the evidence named no place.
    pub pool: Option<String>,
    /// The setting that sizes it, as a user writes it; `None` when it is not in the catalogue.
    pub setting: Option<String>,
    /// The plateau's throughput, per second; `None` without a plateau.
    pub plateau_rps: Option<f64>,
    /// The plateau's steps (their client counts); empty without a plateau.
    pub plateau_clients: Vec<u32>,
}

/// Reads `diagnosis`.
pub fn read(diagnosis: &Diagnosis) -> FindingRead {
    let place = diagnosis.place.as_ref();
    FindingRead {
        kind: diagnosis.kind().as_str().to_string(),
        limit: diagnosis.limit(),
        pool: place.and_then(|p| p.pool.clone()),
        setting: place
            .and_then(|p| p.setting.as_ref())
            .map(|s| s.setting.clone()),
        plateau_rps: diagnosis.plateau().map(|p| p.throughput_rps),
        plateau_clients: diagnosis
            .plateau()
            .map(|p| p.clients.clone())
            .unwrap_or_default(),
    }
}
