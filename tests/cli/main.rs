//! The binary's tests, one binary (a build links once): each module runs `chokepoint` as a user
//! would (its commands, flags, bad input, TLS, the deploy files) or checks the workspace itself.

mod cli_baseline;
mod cli_compare;
mod cli_compare_ci;
mod cli_grpc;
mod cli_h2;
mod cli_help;
mod cli_load;
mod cli_merge;
mod cli_mock;
mod cli_mock_record;
mod cli_observe;
mod cli_report;
mod cli_shard_sweep;
mod cli_sweep;
mod cli_tls;
mod dependencies;
mod deploy;
mod generator_cpu;
mod support;
