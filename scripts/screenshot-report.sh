#!/usr/bin/env bash
# Renders the fixture sweep reports with `chokepoint report` and screenshots them in headless
# Chromium, so people (and reviewers) can see the page: docs/img/report.png (seed 000, a pool of
# 20) and docs/img/report-leaky.png (a connection limit with stalls).
#
# Installs Debian's chromium if it is missing (needs root and the Debian archive).
# Usage: scripts/screenshot-report.sh [OUT_DIR]   (default: docs/img)
set -euo pipefail
cd "$(dirname "$0")/.."
out_dir=${1:-docs/img}
mkdir -p "$out_dir"

if ! command -v chromium >/dev/null 2>&1; then
    echo "installing chromium (Debian package)" >&2
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
fi

work=$(mktemp -d)
profile=$(mktemp -d)
trap 'rm -rf "$work" "$profile"' EXIT

cargo build -q --bin chokepoint
shoot() { # fixture-name png-name height
    local fixture=$1 png=$2 height=$3
    mkdir -p "$work/$fixture"
    cp "tests/fixtures/$fixture/result.json" "$work/$fixture/"
    target/debug/chokepoint report "$work/$fixture" >/dev/null
    # --virtual-time-budget lets layout settle; the page has no script and loads nothing.
    chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --hide-scrollbars --user-data-dir="$profile" --window-size=1280,"$height" \
        --screenshot="$PWD/$out_dir/$png" "file://$work/$fixture/report.html" 2>/dev/null
    test -s "$out_dir/$png"
    echo "$out_dir/$png"
}
shoot sweep-seed000 report.png 3300
shoot sweep-leaky report-leaky.png 3300
