#!/usr/bin/env bash
# The test command of the README: installs what the tests need (scripts/install-test-deps.sh,
# Debian, as root), then checks formatting and lints, runs every test, and fails if any process
# a test started is still running. .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
# Every tool is installed below, so a test whose tool is missing fails instead of skipping.
export CI="${CI:-1}"

bash scripts/install-test-deps.sh
command -v cargo >/dev/null 2>&1 || {
  echo "cargo is missing: install Rust with rustup (Debian's rustc is too old for the crates)" >&2
  exit 1
}
cargo fetch --locked || cargo fetch
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --release -- -D warnings
status=0
cargo test --workspace --release "$@" || status=$?
bash scripts/leftovers.sh || status=1
exit "$status"
