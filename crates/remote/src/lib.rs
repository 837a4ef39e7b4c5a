//! The observer beside the target: what a sweep reads of the target through `/proc`, served over
//! HTTP from the target's own host or namespace (`chokepoint observe`), and the sweep's client
//! of it (`chokepoint sweep --observer URL`).
//!
//! Data flow: the sweep's [`client::RemoteObserver`] opens a session (`POST /v1/sessions`: the
//! URL's and the mock's ports, the sampling interval); the [`server`] finds the target there
//! (its `--pid`, its `--port`, or the process listening on the sweep's port, as `--pid auto`
//! does: a forwarder there is followed to the process behind it by the same bounded probe,
//! sent from the observer's side to the forwarder's own listener) and holds the session for
//! that sweep alone. For each step the sweep opens a window
//! (`POST /v1/steps/start`) when the measured part begins and closes it (`POST
//! /v1/steps/finish`) when the step ends; the server runs one
//! [`chokepoint_observe::ObservedWindow`] in between and answers with its
//! [`chokepoint_observe::WindowObservation`] as JSON. `GET /v1/target` says what the target is
//! there (its processes, cores, quota, library files). The session ends with `DELETE
//! /v1/sessions/current`, or after [`server::LEASE`] without a request.
//!
//! The security rules ([`auth`]): loopback unless told otherwise; on any other address a token
//! file is required and every request must carry `Authorization: Bearer TOKEN` (compared in
//! constant time), else 401. The server runs no command a request names: the stack tools are
//! the fixed ones its own flags allow, and the only traffic it sends is the forwarder probe
//! (`chokepoint_observe::forward::probe`: at most 40 `GET`s of the sweep's path within 3 s, to
//! a port where a forwarder listens on the observer's own host).
#![deny(missing_docs)]

pub mod auth;
pub mod client;
pub mod server;
mod sessions;

use serde::{Deserialize, Serialize};

/// The header that names the session of a step request.
pub const SESSION_HEADER: &str = "x-chokepoint-session";

/// What a sweep asks for when it opens a session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionRequest {
    /// The swept URL's port: the target is the process listening on it there, unless the
    /// observer was started with `--pid` or `--port`.
    pub listen_port: Option<u16>,
    /// The mock's port, named among the target's downstream connections.
    pub mock_port: Option<u16>,
    /// How often the target is sampled in a window, milliseconds (clamped to 50 ms..10 s).
    pub interval_ms: u64,
    /// The swept URL's path and query: when the process on the port is a forwarder, the
    /// observer's probe requests it to see where the forwarder passes requests on (absent from
    /// older sweeps: `/`).
    #[serde(default)]
    pub probe_path: Option<String>,
    /// Whether the swept URL is `https://` (the probe then holds connections open instead).
    #[serde(default)]
    pub tls: bool,
}

/// The session a sweep holds, and its target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionStarted {
    /// Names the session in [`SESSION_HEADER`].
    pub session: String,
    /// The target as the observer found it.
    pub target: TargetView,
}

/// The target as the observer sees it on its host.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetView {
    /// The target's root processes (each one's descendants are the target too).
    pub roots: Vec<i32>,
    /// Every process of the target now.
    pub pids: Vec<i32>,
    /// The port it listens on, when known.
    pub listen_port: Option<u16>,
    /// Cores the observer may run on there (what the target's CPU share is a share of).
    pub cores: u32,
    /// Cores of the machine there, online.
    pub machine_cores: u32,
    /// Cores the first root's CPU quota allows, when it has one.
    pub quota_cores: Option<f64>,
    /// Files the target's processes have mapped or open (the sweep's catalogue picks the
    /// known client libraries from them).
    pub library_files: Vec<String>,
    /// The observer's chokepoint version.
    pub version: String,
    /// The forwarder on the port, followed there to the process behind it (both are roots);
    /// absent when the port's process is no forwarder, and from older observers.
    #[serde(default)]
    pub forwarder: Option<chokepoint_result::Forwarder>,
}

/// A refusal, as JSON: `{"error": "..."}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// One line saying what was wrong.
    pub error: String,
}
