#!/usr/bin/env bash
# Hunts flaky tests: runs the live suites (the test binaries that start real servers and sweep
# them) ROUNDS times in a row while a CPU burner holds one of the cores, as a busy CI machine
# would, and prints how many rounds each test failed. After each round it checks that no
# process a test started is left running (scripts/leftovers.sh).
#
# Usage: bench/flake-hunt.sh [ROUNDS=5]
#   SUITES="cli:cli_tls sweeps:stacks_jvm ..." (the root package's live test modules, each as
#     BINARY:MODULE of tests/BINARY/MODULE.rs; default: every live one)
#   CRATE_SUITES="chokepoint-demo:jvm_demo ..." (other crates' test binaries)
#   BURNERS=1 (how many cores to keep busy; 0 for none)
# The burner is a shell loop of our own (no stress-ng needed), bounded by the run and killed on
# exit. Loopback only: the suites themselves send traffic to 127.0.0.1 alone.
set -uo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
SUITES=${SUITES:-"cli:cli_tls cli:cli_h2 cli:cli_grpc cli:cli_observe cli:cli_load cli:cli_baseline cli:cli_sweep cli:cli_mock cli:cli_merge cli:cli_shard_sweep cli:generator_cpu sweeps:catalogue_pools sweeps:connection_pools sweeps:database_pools sweeps:forwarders sweeps:frameworks sweeps:observer_netns sweeps:what_if sweeps:grpc sweeps:stream_cap sweeps:namespaces sweeps:growing_pool sweeps:hangs sweeps:place sweeps:process_trees sweeps:quota sweeps:stacks_jvm sweeps:stacks_py_go sweeps:targets"}
CRATE_SUITES=${CRATE_SUITES-"chokepoint-demo:jvm_demo chokepoint-demo:scenarios chokepoint-mock:tests chokepoint-mock:wiremock chokepoint-experiment:sweep chokepoint-experiment:demo chokepoint-load:engine"}
BURNERS=${BURNERS:-1}
export CI=1
WORK=$(mktemp -d /tmp/cp-flake-hunt.XXXXXX)
BURNER_PIDS=()
cleanup() {
  for pid in "${BURNER_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

cargo build --release --workspace --tests --quiet || exit 2
for _ in $(seq 1 "$BURNERS"); do
  # Bounded: at most 4 hours, and killed when this script ends.
  timeout 4h bash -c 'while :; do :; done' &
  BURNER_PIDS+=($!)
done

run_suite() { # round, label, cargo args...
  local round=$1 label=$2; shift 2
  local log="$WORK/$round-$label.log"
  local started=$SECONDS
  cargo test --release "$@" > "$log" 2>&1
  local status=$?
  local failed
  # libtest ends a failed run with "failures:" and the failed tests' names, indented by four.
  failed=$(awk '/^failures:$/ {names = ""; listing = 1; next}
                listing && /^    [^ ]/ {names = names " " $1; next}
                listing && /^$/ && names != "" {listing = 0}
                END {print names}' "$log")
  if [ "$status" -ne 0 ] && [ -z "$failed" ]; then failed="(the binary: exit $status)"; fi
  for name in $failed; do echo "$label::$name" >> "$WORK/failures"; done
  printf '  round %d  %-32s %4d s  %s\n' "$round" "$label" $((SECONDS - started)) \
    "$([ "$status" -eq 0 ] && echo ok || echo "FAILED: $(echo $failed | tr '\n' ' ')")"
}

touch "$WORK/failures"
leftover_rounds=0
for round in $(seq 1 "$ROUNDS"); do
  echo "round $round of $ROUNDS ($BURNERS core(s) kept busy)"
  for suite in $SUITES; do
    # A module's tests are those whose path starts with MODULE:: in its binary.
    run_suite "$round" "${suite#*:}" --test "${suite%%:*}" -- "${suite#*:}::"
  done
  for pair in $CRATE_SUITES; do
    run_suite "$round" "${pair#*:}" -p "${pair%%:*}" --test "${pair#*:}"
  done
  bash scripts/leftovers.sh > "$WORK/leftovers-$round.log" 2>&1 || {
    leftover_rounds=$((leftover_rounds + 1))
    sed 's/^/  /' "$WORK/leftovers-$round.log"
  }
done

echo
echo "failures per test over $ROUNDS round(s), $BURNERS core(s) busy (logs in $WORK):"
if [ -s "$WORK/failures" ]; then
  sort "$WORK/failures" | uniq -c | sort -rn | awk -v r="$ROUNDS" '{printf "  %s of %d  %s\n", $1, r, $2}'
else
  echo "  none"
fi
echo "rounds that left a process running: $leftover_rounds of $ROUNDS"
[ ! -s "$WORK/failures" ] && [ "$leftover_rounds" -eq 0 ]
