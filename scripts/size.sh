#!/usr/bin/env bash
# `npm run size`: raw and gzip (-9) size of both builds (run scripts/build.sh first):
#   pkg/         the npm package's wasm and glue (no `worker` crate code)
#   pkg-worker/  the demo Worker's (feature `cloudflare`: workers-rs, the entry and both objects)
set -euo pipefail
cd "$(dirname "$0")/.."
row() {
  local label="$1"; shift
  local raw=0 gz=0 f
  for f in "$@"; do
    [ -f "$f" ] || { echo "[size] $f missing: run scripts/build.sh first" >&2; exit 1; }
    raw=$((raw + $(stat -c %s "$f"))); gz=$((gz + $(gzip -9 -c "$f" | wc -c)))
  done
  printf '[size] %-44s raw %8d B (%6.1f kB)  gzip -9 %8d B (%6.1f kB)\n' "$label" "$raw" "$(awk "BEGIN{print $raw/1000}")" "$gz" "$(awk "BEGIN{print $gz/1000}")"
}
row "npm package wasm (pkg/turnkeep_bg.wasm)" pkg/turnkeep_bg.wasm
row "npm package glue (pkg/turnkeep.js)" pkg/turnkeep.js
row "demo Worker wasm (pkg-worker/turnkeep_bg.wasm)" pkg-worker/turnkeep_bg.wasm
row "demo Worker JS (glue + js/cloudflare/worker.mjs)" pkg-worker/turnkeep.js js/cloudflare/worker.mjs pkg-worker/snippets/*/*.js
