//! Temporary: the catalogue of known pools is the `catalogue` helper's (issue 12); this stand-in
//! knows no pool, so a place names no setting until that file replaces it.
use chokepoint_result::Setting;

/// The framework default and the setting behind a pool of this name; `None`: not known.
pub fn setting_for(_pool: &str) -> Option<Setting> {
    None
}

/// The setting behind a pool whose waiting threads stand in one of `frames`; `None`: not known.
pub fn setting_for_frames(_frames: &[String]) -> Option<Setting> {
    None
}
