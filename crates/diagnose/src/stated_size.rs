//! A pool's size as the target's processes state it: the catalogue says which values set it
//! (`stated = [{ flags = ["--workers", "-w"], env = ["WEB_CONCURRENCY"], unstated = 1 }, ...]`),
//! the sweep reads those its processes were started with (`SweepContext::stated`,
//! `chokepoint_observe::stated`), and the size is the product of the factors, each at the value
//! stated or at its default. gunicorn's `--workers 2 --threads 4` is 8 calls at once.
//!
//! A flag comes before a variable for one factor: argument parsers read the environment as the
//! default a flag overrides (gunicorn's `WEB_CONCURRENCY`). When no factor is stated the
//! process runs the catalogue's default, and nothing is claimed here.
use chokepoint_result::{Stated, StatedHere};
use serde::Deserialize;

/// One value that multiplies a pool's size, and where a process states it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Factor {
    /// Command-line flags and JVM system properties (`-Dname`), in the order they win.
    #[serde(default)]
    pub flags: Vec<String>,
    /// Environment variables, after the flags.
    #[serde(default)]
    pub env: Vec<String>,
    /// Its value when the process states none (the framework's default), when that is one
    /// number; a factor without it (a default that follows the cores) gives no size unstated.
    #[serde(default)]
    pub unstated: Option<u32>,
}

impl Factor {
    /// Why it cannot be used, if it cannot.
    pub(crate) fn problem(&self) -> Option<String> {
        if self.flags.is_empty() && self.env.is_empty() {
            return Some(
                "a stated factor with no flags and no env: say where a process states it".into(),
            );
        }
        (self.unstated == Some(0)).then(|| {
            "a stated factor whose unstated value is 0: give the framework's default (1 or more)"
                .into()
        })
    }

    /// The value stated for it, if any: its first flag stated, else its first variable.
    fn stated<'s>(&self, stated: &'s [Stated]) -> Option<&'s Stated> {
        let named = |name: &String| stated.iter().find(|s| &s.name == name);
        self.flags
            .iter()
            .find_map(named)
            .or_else(|| self.env.iter().find_map(named))
    }
}

/// The size `factors` give with the values `stated`; `None` when none of them is stated, or
/// one not stated has no one default.
pub fn size_stated(factors: &[Factor], stated: &[Stated]) -> Option<StatedHere> {
    let by: Vec<Stated> = factors
        .iter()
        .filter_map(|f| f.stated(stated).cloned())
        .collect();
    if by.is_empty() {
        return None;
    }
    let size = factors
        .iter()
        .map(|f| f.stated(stated).map(|s| s.value).or(f.unstated))
        .try_fold(1u32, |size, factor| Some(size.saturating_mul(factor?)))?;
    Some(StatedHere { size, by })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chokepoint_result::StatedIn;

    fn gunicorn() -> Vec<Factor> {
        vec![
            Factor {
                flags: vec!["--workers".into(), "-w".into()],
                env: vec!["WEB_CONCURRENCY".into()],
                unstated: Some(1),
            },
            Factor {
                flags: vec!["--threads".into()],
                env: Vec::new(),
                unstated: Some(1),
            },
        ]
    }

    fn stated(name: &str, value: u32, from: StatedIn) -> Stated {
        Stated {
            name: name.into(),
            value,
            from,
            file: None,
        }
    }

    #[test]
    fn the_size_is_the_product_of_the_factors_each_stated_or_at_its_default() {
        let line = [
            stated("--threads", 4, StatedIn::CommandLine),
            stated("-w", 2, StatedIn::CommandLine),
        ];
        let here = size_stated(&gunicorn(), &line).unwrap();
        assert_eq!(here.size, 8);
        assert_eq!(here.by.len(), 2);
        // Threads alone: one worker, its default.
        let threads = [stated("--threads", 16, StatedIn::CommandLine)];
        assert_eq!(size_stated(&gunicorn(), &threads).unwrap().size, 16);
        // Nothing stated: the default stands, and nothing is claimed.
        assert_eq!(size_stated(&gunicorn(), &[]), None);
    }

    #[test]
    fn a_factor_unstated_whose_default_follows_the_cores_gives_no_size() {
        let pool = vec![
            Factor {
                flags: vec!["--threads".into()],
                env: Vec::new(),
                unstated: Some(1),
            },
            Factor {
                flags: vec!["-Dloops".into()],
                env: Vec::new(),
                unstated: None,
            },
        ];
        let threads = [stated("--threads", 4, StatedIn::CommandLine)];
        assert_eq!(size_stated(&pool, &threads), None);
        let both = [
            stated("--threads", 4, StatedIn::CommandLine),
            stated("-Dloops", 3, StatedIn::CommandLine),
        ];
        assert_eq!(size_stated(&pool, &both).unwrap().size, 12);
    }

    #[test]
    fn a_flag_wins_over_the_variable_it_overrides() {
        let both = [
            stated("WEB_CONCURRENCY", 9, StatedIn::Environment),
            stated("--workers", 3, StatedIn::CommandLine),
        ];
        let here = size_stated(&gunicorn(), &both).unwrap();
        assert_eq!((here.size, here.by[0].name.as_str()), (3, "--workers"));
        let variable = [stated("WEB_CONCURRENCY", 9, StatedIn::Environment)];
        assert_eq!(size_stated(&gunicorn(), &variable).unwrap().size, 9);
    }
}
