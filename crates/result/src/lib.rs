//! The records that cross chokepoint's stages, and nothing else.
//!
//! Data flows one way through chokepoint: the load engine measures a run and hands back a
//! [`LoadReport`]; the experiment turns each load run of a sweep into a [`Step`] (adding what the
//! mock saw, [`MockStats`], and what the observers saw of the target); the diagnosis reads the
//! steps and a [`SweepContext`], decides a [`Finding`] and tells it in words, a [`Diagnosis`];
//! the renderers read a finished [`SweepResult`]. Every type here is plain data with serde derives: the JSON they produce is
//! chokepoint's contract with other tools (see DESIGN.md "Results"), so fields may be added but the
//! documented ones are never renamed.
//!
//! Error kinds are strings so that new kinds can be added without breaking readers; the
//! constants in [`error_kind`] are the names the engine uses.
#![deny(missing_docs)]

mod fact;
mod finding;
pub mod format;
pub use fact::{
    CeilingReading, Fact, FanOutShape, Model, Plateau, Service, Span, StreamCapReading, Stuck,
};
pub use finding::Finding;
mod shard;
pub use shard::{LatencyHistograms, LoadResultFile, MergeInfo, MergedShard, ShardInfo};
pub mod observed;
pub use observed::{
    ConnectionCounts, Connections, CpuQuota, ObservationNote, PeerConnections, PoolThreads,
    Runtime, RuntimeCores, RuntimeCoresSource, SocketCounts, ThreadCounts, ThreadsByPool,
    WaitReason,
};
mod overload;
mod place;
pub use place::{
    CoreCount, DefaultHere, FrontCap, ListenQueue, Place, PlaceKind, PlaceSource, PlaceUnclearWhy,
    PoolSeen, Setting, Stated, StatedHere, StatedIn, UpstreamCap,
};
mod stacks;
mod stats;
pub use overload::{Overload, Peak};
pub use stacks::{PoolStacks, SharedStack, StackEvidence, StackSource, WaitKind};
pub use stats::median;

mod demo;
mod diagnosis;
mod load;
mod mock;
mod sweep;
mod what_if;
pub use demo::{DemoResult, DemoScenario};
pub use diagnosis::*;
pub use load::*;
pub use mock::*;
pub use sweep::*;
pub use what_if::{EmulatedStep, MeasuredBy, NextLimit, NotEmulated, WhatIf};
