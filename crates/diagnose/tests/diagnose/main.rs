//! The diagnosis crate's tests, one binary (a build links once): tables of steps and recorded
//! sweeps in, findings and words out. Each module is one subject; `common` builds steps.

mod busy;
mod ceiling;
#[path = "../common/mod.rs"]
mod common;
mod connection_ceiling;
mod diagnosis_json;
mod gates;
mod growing;
mod hang;
mod models;
mod overload;
mod place;
mod quota;
mod recorded;
mod search;
mod seeds;
mod settle;
mod stream_cap;
mod summaries;
mod thrash;
mod truth;
mod unanswered;
mod waves;
mod whole_cores;
