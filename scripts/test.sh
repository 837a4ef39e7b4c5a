#!/usr/bin/env bash
# The test command of the README: installs what the tests need (scripts/install-test-deps.sh,
# Debian, as root), then checks formatting and lints, runs every test, and fails if any process
# a test started is still running. .ci/run calls it.
#
# The install runs beside the build: it is downloads and unpacking, the build is the CPU, and
# nothing cargo compiles needs what it installs (no build script calls a tool of it). Its output
# is kept in a file and shown when it ends; the tests start only once it has succeeded.
set -euo pipefail
cd "$(dirname "$0")/.."
# Every tool is installed below, so a test whose tool is missing fails instead of skipping.
export CI="${CI:-1}"

command -v cargo >/dev/null 2>&1 || {
  echo "cargo is missing: install Rust with rustup (Debian's rustc is too old for the crates)" >&2
  exit 1
}
deps_log=$(mktemp /tmp/chokepoint-test-deps.XXXXXX)
bash scripts/install-test-deps.sh > "$deps_log" 2>&1 &
deps_pid=$!
# An install is never cut short (a killed dpkg leaves the machine broken): on any early exit
# this script waits for it.
trap 'wait "$deps_pid" 2>/dev/null || true; rm -f "$deps_log"' EXIT

# Each phase's end, seconds from the start: where CI's time goes (issue 25's 25 minutes).
phase() { echo "scripts/test.sh: $1 at ${SECONDS} s" >&2; }
cargo fetch --locked || cargo fetch
phase "fetched"
cargo fmt --all -- --check
phase "fmt clean"
# The sweeps' binary first (304 s of a cold 495 s build on the 2-core machine): they are CI's
# longest path, and start as soon as it and the tools are there; the other tests build beside
# them on one core.
cargo test --release -p chokepoint --test sweeps --no-run "$@"
phase "sweeps built"
deps_status=0
wait "$deps_pid" || deps_status=$?
cat "$deps_log"
phase "test tools installed"
if [ "$deps_status" -ne 0 ]; then
  echo "installing what the tests need failed (exit $deps_status; its output is above)" >&2
  exit 1
fi
# Two lanes. The live sweeps (`tests/sweeps`, one binary, about 1,300 s cold and 1,050 s warm)
# run inside their binary. The other lane builds every other test binary and runs clippy at
# nice 19 on both cores (the sweeps take what they need), and runs those tests between, at nice
# 0 on one core. Cargo holds its build lock only while it compiles, so the two `cargo test` runs
# do not wait on each other. The sweeps' output is kept in a file and shown when they end.
status=0
sweep_times=target/tmp/sweep-times.tsv
# Sweeps that leave the machine mostly idle run two at a time while this file is there (the
# tests' `beside_one_other`); those that measure the machine run alone. Pairs run while the
# other lane builds and lints, at nice 19: the fair scheduler gives the sweeps those cores, and
# the diagnosis counts niced work in the sweeps' own scheduling group as yielding
# (`Step::machine_contended_cpu_pct`). Not while the other lane's tests run, at nice 0: two
# sweeps beside them left a sweep less than half a core (`machine-saturated`, rightly) and
# slowed a JVM demo's timing test (session 23). Pairing only after the whole lane, cold, left
# 88 of 108 sweeps one at a time (1,643 s against 1,353 s with pairs from the start).
sweeps_may_pair=target/tmp/sweeps-may-pair
rm -f "$sweep_times" "$sweeps_may_pair"
sweeps_log=$(mktemp /tmp/chokepoint-sweeps.XXXXXX)
trap 'wait "$deps_pid" 2>/dev/null || true; rm -f "$deps_log" "$sweeps_log" "$sweeps_may_pair"' EXIT
# Two phases: every sweep that may share the machine, then those that take it alone
# (`tests/sweeps/alone.txt`, which the binary checks in each phase). Spread through the
# alphabet, each alone turn waited for the shared turns before it to drain; last, they also run
# after the other lane, on a quiet machine. Three test threads in the first phase: a light sweep
# (`beside_two_others`) may run beside a pair; two threads would leave it no room. One in the
# second: its turns are one at a time.
alone_sweeps=()
while read -r line; do
  [[ -z "$line" || "$line" == \#* ]] || alone_sweeps+=("$line")
done < tests/sweeps/alone.txt
skip_alone=()
for test in "${alone_sweeps[@]}"; do skip_alone+=(--skip "$test"); done
# A name in the list that no sweep has would run nothing, silently (`--exact`).
listed=$(cargo test --release -p chokepoint --test sweeps "$@" -- --exact --list "${alone_sweeps[@]}" 2>/dev/null \
  | sed -n 's/: test$//p')
for test in "${alone_sweeps[@]}"; do
  grep -qxF "$test" <<< "$listed" || {
    echo "tests/sweeps/alone.txt names $test, which is no sweep: take it out or correct it" >&2
    status=1
  }
done
(
  shared_status=0
  SWEEPS_PHASE=shared RUST_TEST_THREADS=3 cargo test --release -p chokepoint --test sweeps "$@" \
    -- --exact "${skip_alone[@]}" || shared_status=$?
  alone_status=0
  SWEEPS_PHASE=alone RUST_TEST_THREADS=1 cargo test --release -p chokepoint --test sweeps "$@" \
    -- --exact "${alone_sweeps[@]}" || alone_status=$?
  [ "$shared_status" -eq 0 ] && exit "$alone_status"
  exit "$shared_status"
) > "$sweeps_log" 2>&1 &
sweeps_pid=$!
# Cargo holds its build lock until it starts the test binary: had the other lane's build taken
# it first, the sweeps would wait for that build (a cold full run started them 300 s late). The
# other lane starts once the sweeps run (or their cargo has ended), within 60 s.
for _ in $(seq 300); do
  grep -q "Running tests/sweeps" "$sweeps_log" && break
  kill -0 "$sweeps_pid" 2>/dev/null || break
  sleep 0.2
done
mkdir -p target/tmp && touch "$sweeps_may_pair"
nice -n 19 cargo test --workspace --release --exclude chokepoint --no-run "$@" || status=$?
nice -n 19 cargo test --release -p chokepoint --bins --test cli --no-run "$@" || status=$?
phase "every other test built"
rm -f "$sweeps_may_pair"
cargo test --workspace --release --exclude chokepoint -j 1 --no-fail-fast "$@" || status=$?
cargo test --release -p chokepoint --bins --test cli -j 1 --no-fail-fast "$@" || status=$?
phase "every test but the sweeps run"
# The lints last in this lane, at nice 19 beside pairs of sweeps: clippy's ~105 s of checking
# (its own artifacts: nothing the build made serves it) is off CI's longest path.
touch "$sweeps_may_pair"
nice -n 19 cargo clippy --workspace --all-targets --release -- -D warnings || status=$?
phase "clippy run"
sweeps_status=0
wait "$sweeps_pid" || sweeps_status=$?
cat "$sweeps_log"
phase "sweeps run"
rm -f "$sweeps_may_pair"
# A sweep that failed runs once more at the end, when nothing else runs. Overlapping the lanes
# (pairs of sweeps, and every sweep beside the other lane's tests at nice 0) is this script's
# way to save CI time, not a condition any test is written for: on a slow machine (session 25,
# builds 2-3 times slower than the day before) a partner's JVM compiling itself took most of
# the cores under a sweep (4 such failures in one clean-clone run, each passed alone), and a
# flat-out nginx swept alone beside the other lane's tests lost 74 % of its throughput at one
# step. Each rerun is said at the end with the turn it failed in; a sweep that fails again
# fails the run.
failed_sweeps=$(awk '/^---- .* stdout ----$/ {print $2}' "$sweeps_log")
reruns=""
if [ "$sweeps_status" -ne 0 ] && [ -n "$failed_sweeps" ]; then
  rerun_status=0
  for test in $failed_sweeps; do
    turn=$(grep -P "^\Q$test\E\t" "$sweep_times" 2>/dev/null | tail -1 | cut -f5)
    rerun_log=$(mktemp /tmp/chokepoint-rerun.XXXXXX)
    cargo test --release -p chokepoint --test sweeps "$@" -- --exact "$test" > "$rerun_log" 2>&1 || true
    cat "$rerun_log" >> "$sweeps_log"
    # It passed only if it ran: `--exact` with a name no test has runs none and succeeds.
    if grep -q "^test result: ok. 1 passed" "$rerun_log"; then
      reruns+="  $test failed (its turn: ${turn:-none}), then passed with nothing beside it"$'\n'
    else
      reruns+="  $test failed (its turn: ${turn:-none}), and again with nothing beside it"$'\n'
      rerun_status=1
    fi
    rm -f "$rerun_log"
  done
  sweeps_status=$rerun_status
  phase "failed sweeps run again alone"
fi
if [ -s "$sweep_times" ]; then
  echo "scripts/test.sh: the longest turns of the sweeps (seconds held, machine busy % mean and peak, of $(awk '{s+=$2} END {printf "%.0f", s}' "$sweep_times") in all):" >&2
  # sed reads to the end: `head` would close the pipe early, and sort's SIGPIPE (exit 141)
  # failed a full run whose every test had passed.
  sort -t$'\t' -k2,2 -rn "$sweep_times" | sed -n '1,15s/^/  /p' >&2
fi
[ "$sweeps_status" -eq 0 ] || status=$sweeps_status
bash scripts/leftovers.sh || status=1
# Last, as CI keeps only the head and tail of a run's output: each failed sweep's name and the
# first line of its message (a finding's summary), cut to 400 characters.
if [ -n "$failed_sweeps" ]; then
  echo "scripts/test.sh: the sweeps that failed, and why:" >&2
  awk '/^---- .* stdout ----$/ {name=$2; next}
       name != "" && /panicked at/ {getline why; print "  " name ": " substr(why, 1, 400); name=""}' \
    "$sweeps_log" >&2
  echo "scripts/test.sh: the failed sweeps run again alone:" >&2
  printf '%s' "$reruns" >&2
fi
exit "$status"
