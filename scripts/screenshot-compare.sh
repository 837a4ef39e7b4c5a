#!/usr/bin/env bash
# Screenshots the page `chokepoint compare --out` writes for the recorded pool-20 → pool-40
# sweeps of the demo's /actors (tests/fixtures/compare/), in headless Chromium: docs/img/compare.png.
# The fixtures are recorded, so the picture is the same on every run.
#
# Installs Debian's chromium if it is missing (needs root and the Debian archive).
# Usage: scripts/screenshot-compare.sh [OUT_DIR]   (default: docs/img)
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
target=${CARGO_TARGET_DIR:-target}
"$target/release/chokepoint" compare tests/fixtures/compare/pool-20 \
    tests/fixtures/compare/pool-40 --out "$work" >/dev/null
test -s "$work/compare.html"
# 1200×1400: the verdicts, both findings, the two charts and the table on one screen.
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --hide-scrollbars --user-data-dir="$profile" --window-size=1200,1400 \
    --virtual-time-budget=2000 \
    --screenshot="$PWD/$out_dir/compare.png" "file://$work/compare.html" 2>/dev/null
test -s "$out_dir/compare.png"
echo "$out_dir/compare.png"
