#!/usr/bin/env bash
# Builds the wasm module and its JS glue into pkg/ (wasm-bindgen --target web output, shared by
# the workerd, node and browser entry points in js/).
# Skips wasm-bindgen when the cargo artifact is unchanged since the last build.
# No wasm-opt: measured on this crate, binaryen 132 (-Os/-Oz/-O3) cuts the raw module ~10% but
# makes the gzip size ~1% larger, and gzip is what Workers and browsers pay for.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[build] %s\n' "$*"; }
die() { printf '[build] ERROR: %s\n' "$*" >&2; exit 1; }
command -v wasm-bindgen >/dev/null || die "wasm-bindgen not found: run scripts/setup.sh first."

# The demo's Ask corpus (README and ARCHITECTURE by section), regenerated so it follows the docs.
node scripts/docs-corpus.mjs || die "scripts/docs-corpus.mjs failed."

# One artifact for every host: the `cloudflare` feature adds the Durable Object store (src/cloudflare).
cargo build --release --target wasm32-unknown-unknown --lib --features cloudflare || die "cargo build for wasm32 failed."

src="${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/release/turnkeep.wasm"
stamp="pkg/.built-from"
[ -f "$src" ] || die "$src was not produced."
# The artifact's hash (milliseconds for ~1 MB) plus the CLI version identify the pkg/ output.
fingerprint="$(sha256sum "$src" | cut -d' ' -f1) $(wasm-bindgen --version)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$fingerprint" ] && [ -f pkg/turnkeep_bg.wasm ]; then
  say "pkg/ is up to date"
  node scripts/demo-assets.mjs || die "scripts/demo-assets.mjs failed."
  exit 0
fi

rm -rf pkg
wasm-bindgen "$src" --target web --out-dir pkg --remove-name-section --remove-producers-section \
  || die "wasm-bindgen failed."
echo "$fingerprint" > "$stamp"
say "built pkg/ ($(stat -c %s pkg/turnkeep_bg.wasm) bytes of wasm)"
# The demo Worker's static assets (the browser entry, pkg/ and the page's script), from pkg/.
node scripts/demo-assets.mjs || die "scripts/demo-assets.mjs failed."
