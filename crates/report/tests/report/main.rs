//! The report crate's tests, one binary (a build links once): results in, text, JSON and HTML
//! out. `fixtures` builds the results.

mod files;
#[path = "../fixtures/mod.rs"]
mod fixtures;
mod flame;
mod place;
mod render;
