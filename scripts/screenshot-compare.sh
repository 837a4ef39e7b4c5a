#!/usr/bin/env bash
# Makes docs/img/compare.png: the page of `chokepoint compare --out` on the recorded pool-20 →
# pool-40 sweeps (tests/fixtures/compare/), shot by headless Chromium (Debian's `chromium`).
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${CARGO_TARGET_DIR:-target}/release/chokepoint"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$bin" compare tests/fixtures/compare/pool-20 tests/fixtures/compare/pool-40 --out "$out" >/dev/null
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --screenshot=docs/img/compare.png --window-size=1200,1400 "file://$out/compare.html"
