#!/usr/bin/env bash
# Runs two real demo sweeps (`chokepoint demo --only actors,leaky`: a pool of 20 actors behind a
# 50 ms mock, and seed 001's connection limit), and screenshots the first screen of each
# report.html in headless Chromium, so people (and reviewers) see what a user sees on opening
# it: docs/img/report.png (actors) and docs/img/report-leaky.png (leaky). The figures are a real
# run's on this machine, so they move a little from one run to the next.
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

cargo build -q --release --bin chokepoint
target/release/chokepoint demo --only actors,leaky --step 2s --out "$work" >&2

shoot() { # scenario png-name
    local scenario=$1 png=$2
    test -s "$work/$scenario/report.html"
    # The first screen of a laptop: 1280×1000. --virtual-time-budget lets layout settle; the
    # page has no script and loads nothing.
    chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --hide-scrollbars --user-data-dir="$profile" --window-size=1280,1000 \
        --virtual-time-budget=2000 \
        --screenshot="$PWD/$out_dir/$png" "file://$work/$scenario/report.html" 2>/dev/null
    test -s "$out_dir/$png"
    echo "$out_dir/$png"
}
shoot actors report.png
shoot leaky report-leaky.png
