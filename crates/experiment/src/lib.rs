//! The experiment: load at growing concurrency, what the downstream saw, and the finding.
//!
//! [`sweep::sweep`] runs the load engine (`chokepoint-load`) once per client count, either the
//! counts given or the adaptive search of `chokepoint-diagnose`. Around each step it resets the
//! mock's window when the measured part begins, reads the mock's stats when it ends
//! ([`downstream::MockClient`]), measures the target's CPU (`chokepoint-observe`), and turns all
//! of it into a [`chokepoint_result::Step`]. Each finished step is saved at once (result.json),
//! so an interrupted sweep keeps what it measured; at the end the diagnosis reads the steps.
//! With `--observer` the target is read by the observer beside it over HTTP
//! (`chokepoint-remote`) instead of this machine's `/proc` (`watch`: one window per step).
//! While a step runs the sweep reports its [`progress`] as typed figures; the caller renders them.
//!
//! When the finding's calls multiplexed on fewer connections to a peer than were in flight, the
//! sweep asks that peer for its HTTP/2 SETTINGS ([`h2_peers`], on loopback only) and diagnoses
//! again with its answer, so that a stream cap held by a proxy can be named.
//!
//! With [`SweepConfig::what_if`] set, the finished sweep runs a what-if (`what_if`): a step or
//! two with the mock's delay scaled so that the pool found serves as a pool of another size,
//! the delay put back after, and the prediction in `diagnosis.what_if`.
//!
//! [`demo::run_demo`] is `chokepoint demo`: it starts mocks and the demo service in this process
//! on free loopback ports and sweeps each of the seeds' scenarios.
pub mod demo;
pub mod downstream;
mod forwarder;
pub mod h2_peers;
pub mod progress;
pub mod sweep;
mod warmup;
mod watch;
mod what_if;

pub use chokepoint_diagnose::what_if::PoolSize;
pub use progress::{StepProgress, SweepEvent};
pub use sweep::{ramp_limit, sweep, StepClock, SweepConfig, DEFAULT_MAX_CLIENTS, DEFAULT_STEP};
pub use warmup::DEFAULT_WARMUP_LIMIT;
