#!/usr/bin/env bash
# How much of a corpus of real WireMock folders the mock loads: CORPUS holds one folder per
# project (a WireMock root with mappings/ and __files/, or a folder of mapping files). Each
# folder is loaded as a user would (`chokepoint mock --mappings FOLDER`): it loads whole when the
# mock starts listening; otherwise the mock names every problem with its file (exit 2), and the
# files named are those that do not load. Prints each problem, then
#   files: N of M load (P %); folders: F of G load whole
# The corpus itself is not in the repository (real projects' files); the figure in issue 26
# ("94 % of 145 files, 31 of 36 folders") came from such a corpus.
# Usage: bench/mock-corpus-load.sh CORPUS   Env: CHOKEPOINT (a built binary; default: cargo
# build --release). Starts one short-lived mock per folder on a free loopback port.
set -euo pipefail
corpus="${1:?usage: $0 CORPUS (a folder of WireMock folders)}"
[[ -d "$corpus" ]] || { echo "bench: $corpus is not a folder" >&2; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
if [[ -z "${CHOKEPOINT:-}" ]]; then
    (cd "$repo" && cargo build --release -q --bin chokepoint)
    CHOKEPOINT="${CARGO_TARGET_DIR:-$repo/target}/release/chokepoint"
fi
files_ok=0 files_all=0 folders_ok=0 folders_all=0
out="$(mktemp /tmp/cp-corpus-XXXXXX)"
trap 'rm -f "$out"' EXIT
for folder in "$corpus"/*/; do
    folder="${folder%/}"
    mappings="$folder"
    [[ -d "$folder/mappings" ]] && mappings="$folder/mappings"
    mapfile -t files < <(find "$mappings" -name __files -prune -o -type f -name '*.json' -print)
    [[ ${#files[@]} -eq 0 ]] && continue
    folders_all=$((folders_all + 1))
    files_all=$((files_all + ${#files[@]}))
    "$CHOKEPOINT" mock --port 0 --mappings "$folder" >"$out" 2>&1 &
    pid=$!
    # Listening (it loaded) or exited (it refused), within 10 s.
    for _ in $(seq 100); do
        grep -q "listening on" "$out" && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    if grep -q "listening on" "$out"; then
        files_ok=$((files_ok + ${#files[@]}))
        folders_ok=$((folders_ok + 1))
        continue
    fi
    grep -v "problems in the mappings at" "$out" | sed "s|^chokepoint: ||; s|$corpus/||" || true
    refused="$(grep -o "$folder/[^:]*\.json" "$out" | sort -u | wc -l)"
    files_ok=$((files_ok + ${#files[@]} - refused))
done
[[ $files_all -gt 0 ]] || { echo "bench: no *.json mappings under $corpus" >&2; exit 2; }
echo "files: $files_ok of $files_all load ($((100 * files_ok / files_all)) %); folders: $folders_ok of $folders_all load whole"
