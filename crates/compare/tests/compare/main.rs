//! The comparison crate's tests, one binary (a build links once): the statistics on seeded
//! samples, and comparisons of runs built in code.

mod comparison;
mod statistics;
