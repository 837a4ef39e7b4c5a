//! The live sweeps, one binary (a build links once): each module starts real targets (JVMs,
//! Python, Go, Ruby, nginx, PHP-FPM, Apache, HAProxy) from `tests/targets/` and sweeps them; `common`
//! launches them and holds the turns across every module: a sweep that measures the machine runs
//! alone, one that leaves it mostly idle may run beside one other (`common::beside_one_other`).

mod catalogue_pools;
#[path = "../common/mod.rs"]
mod common;
mod connection_caps;
mod connection_pools;
mod database_pools;
mod flask;
mod forwarders;
mod frameworks;
mod growing_pool;
mod grpc;
mod hangs;
mod jvm_frameworks;
mod libuv;
mod machine_taken;
mod namespaces;
mod observer_netns;
mod place;
mod process_trees;
mod proxies;
mod quota;
mod stacks_jvm;
mod stacks_py_go;
mod stream_cap;
mod targets;
mod waitress;
mod what_if;
