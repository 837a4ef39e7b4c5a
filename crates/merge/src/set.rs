//! Whether a set of files is one whole run: the same run id everywhere, every shard exactly once.
use crate::{MergeError, ShardFile};

/// Checks that `files` are the shards of one run, each once and none missing, and sorts them by
/// shard index. The error names the files at fault.
pub fn check_set<T>(files: &mut [ShardFile<T>]) -> Result<(), MergeError> {
    let Some(first) = files.first() else {
        return Err(MergeError(
            "no files to merge: give every shard's result file".into(),
        ));
    };
    let (run_id, count) = (first.shard.run_id.clone(), first.shard.count);
    if let Some(other) = files.iter().find(|f| f.shard.run_id != run_id) {
        return Err(MergeError(format!(
            "{} and {} are from different runs (run id {} vs {}: another target, plan or --start-at); merge the shards of one run",
            first.file, other.file, run_id, other.shard.run_id
        )));
    }
    if let Some(other) = files.iter().find(|f| f.shard.count != count) {
        return Err(MergeError(format!(
            "{} is shard {}/{} but {} is shard {}/{}; merge the shards of one run",
            first.file, first.shard.index, count, other.file, other.shard.index, other.shard.count
        )));
    }
    files.sort_by_key(|f| f.shard.index);
    if let Some(pair) = files
        .windows(2)
        .find(|w| w[0].shard.index == w[1].shard.index)
    {
        return Err(MergeError(format!(
            "{} and {} are both shard {}/{count}; give each shard once",
            pair[0].file, pair[1].file, pair[0].shard.index
        )));
    }
    let missing: Vec<String> = (0..count)
        .filter(|i| !files.iter().any(|f| f.shard.index == *i))
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        let given: Vec<String> = files
            .iter()
            .map(|f| format!("{} ({}/{count})", f.file, f.shard.index))
            .collect();
        return Err(MergeError(format!(
            "shard {} of run {run_id} is missing (given: {}); give every shard's file",
            missing.join(", "),
            given.join(", ")
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chokepoint_result::ShardInfo;

    fn file(name: &str, run: &str, index: u32, count: u32) -> ShardFile<()> {
        ShardFile {
            file: name.into(),
            shard: ShardInfo {
                run_id: run.into(),
                index,
                count,
                ..ShardInfo::default()
            },
            result: (),
        }
    }

    #[test]
    fn sets_of_files_are_accepted_or_refused_naming_the_files() {
        // (files as (name, run id, index, count), None when accepted or what the error says)
        type Row = (
            &'static [(&'static str, &'static str, u32, u32)],
            Option<&'static str>,
        );
        let table: &[Row] = &[
            (&[("b", "r", 1, 2), ("a", "r", 0, 2)], None),
            (&[("a", "r", 0, 1)], None),
            (
                &[("a", "r", 0, 2), ("b", "s", 1, 2)],
                Some("a and b are from different runs (run id r vs s"),
            ),
            (
                &[("a", "r", 0, 3), ("b", "r", 1, 3)],
                Some("shard 2/3 of run r is missing (given: a (0/3), b (1/3))"),
            ),
            (
                &[("a", "r", 0, 2), ("b", "r", 0, 2)],
                Some("a and b are both shard 0/2"),
            ),
            (
                &[("a", "r", 0, 2), ("b", "r", 1, 3)],
                Some("a is shard 0/2 but b is shard 1/3"),
            ),
            (&[], Some("no files")),
        ];
        for (files, expected) in table {
            let mut set: Vec<_> = files
                .iter()
                .map(|&(name, run, index, count)| file(name, run, index, count))
                .collect();
            match (check_set(&mut set), expected) {
                (Ok(()), None) => {
                    let indexes: Vec<u32> = set.iter().map(|f| f.shard.index).collect();
                    assert!(indexes.windows(2).all(|w| w[0] < w[1]), "{indexes:?}");
                }
                (Err(e), Some(says)) => assert!(e.0.contains(says), "{files:?}: {e}"),
                (got, _) => panic!("{files:?}: {got:?}, expected {expected:?}"),
            }
        }
    }
}
