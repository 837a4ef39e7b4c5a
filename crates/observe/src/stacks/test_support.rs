//! What the readers' tests share: saved dumps, and finding a pool and a stack in evidence.
use chokepoint_result::{PoolStacks, WaitKind};

/// The saved file `crates/observe/tests/data/{dir}/{name}`.
pub fn data(dir: &str, name: &str) -> String {
    let path = format!("{}/tests/data/{dir}/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{path}: {err}"))
}

/// The pool called `name`.
pub fn pool<'e>(pools: &'e [PoolStacks], name: &str) -> &'e PoolStacks {
    pools
        .iter()
        .find(|pool| pool.pool == name)
        .unwrap_or_else(|| panic!("no pool {name:?} in {pools:#?}"))
}

/// The pool's first stack whose threads do `kind`: its threads and frames.
pub fn stack_of(pool: &PoolStacks, kind: WaitKind) -> (f64, Vec<String>) {
    let stack = pool
        .stacks
        .iter()
        .find(|s| s.waiting == Some(kind))
        .unwrap_or_else(|| panic!("no {kind:?} stack in {pool:#?}"));
    (stack.threads, stack.frames.clone())
}

/// Frames as the evidence holds them.
pub fn strings(frames: &[&str]) -> Vec<String> {
    frames.iter().map(|frame| frame.to_string()).collect()
}
