//! What every stage of the diagnosis reads and none writes: the sweep's steps, its context and
//! the catalogue of known pools. [`crate::diagnose_with`] builds it once and hands it down the
//! stages; the catalogue comes in from the caller (the binary puts a user's entries in front of
//! the built-in ones), never from a process-wide setting.
use crate::catalogue::Catalogue;
use chokepoint_result::{Step, SweepContext};

/// The evidence of one sweep.
#[derive(Clone, Copy)]
pub(crate) struct Evidence<'e> {
    /// The steps, in any order, with repeats.
    pub steps: &'e [Step],
    pub context: &'e SweepContext,
    /// The known pools a place's setting is looked up in.
    pub catalogue: &'e Catalogue,
}
