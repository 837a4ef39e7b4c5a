//! The merge crate's tests, one binary (a build links once).

mod exact;
mod saturated;
