#!/usr/bin/env bash
# The mock against WireMock's standalone jar, request by request: the differential test of
# crates/mock/tests/wiremock_suite/differential.rs (fixtures in crates/mock/tests/fixtures/differential,
# one mapping file per WireMock feature class), printed per class with the share that agrees;
# both recording the same upstream (recording.rs: alike mappings, alike replays); and WireMock's
# Java and Python clients driving the mock.
# Needs: java + javac, mvn (fetches the jar from Maven Central once), cargo.
# Env: WIREMOCK_VERSION (3.9.1; the test compares against the jar of that name in the cache).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
version="${WIREMOCK_VERSION:-3.9.1}"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/chokepoint-bench"
for tool in java javac mvn cargo; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is missing (see the header of $0)" >&2; exit 2; }
done
jar="$cache/wiremock-standalone-$version.jar"
if [[ ! -f "$jar" ]]; then
    mkdir -p "$cache"
    mvn -q dependency:copy -Dartifact="org.wiremock:wiremock-standalone:$version" -DoutputDirectory="$cache" >&2
fi
cd "$repo"
WIREMOCK_JAR="$jar" cargo test --release -q -p chokepoint-mock --test wiremock -- --nocapture --test-threads 1 2>&1 \
    | grep -Ev '^(running|test result|$)'
