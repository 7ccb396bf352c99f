#!/usr/bin/env bash
# Prints the raw and gzip size of the built wasm (run scripts/build.sh first).
set -euo pipefail
cd "$(dirname "$0")/.."
for f in "${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/release/turnkeep.wasm" pkg/turnkeep_bg.wasm; do
  [ -f "$f" ] || { echo "[size] $f missing: run scripts/build.sh first" >&2; exit 1; }
  raw=$(stat -c %s "$f"); gz=$(gzip -9 -c "$f" | wc -c)
  printf '[size] %-52s raw %8d B (%6.1f kB)  gzip -9 %8d B (%6.1f kB)\n' "$f" "$raw" "$(awk "BEGIN{print $raw/1000}")" "$gz" "$(awk "BEGIN{print $gz/1000}")"
done
