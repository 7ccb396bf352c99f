#!/usr/bin/env bash
# Builds the two wasm modules and their JS glue (wasm-bindgen --target web):
#
#   pkg/         the npm package's build: no Cargo features. No Cloudflare code, no test hooks;
#                it is what every `import 'turnkeep'` loads (node, browser, edge-light, workerd).
#   pkg-worker/  the demo Worker's build: features `cloudflare` (the Durable Object stores, and
#                later the workers-rs entry) and `test-hooks` (the `__...ForTest` exports
#                tests/js drives the adapters through). Not shipped on npm.
#
# Why two builds rather than one wasm behind two entries: an entry cannot drop code from a
# shared .wasm, and the Cloudflare stores plus the test hooks are about a fifth of the module
# (`npm run size` prints both). Each build has its own cargo target dir, so switching features
# never invalidates the other (the dependencies compile once per dir).
#
# Each build skips wasm-bindgen when its cargo artifact is unchanged since the last run.
# No wasm-opt: measured on this crate, binaryen 132 (-Os/-Oz/-O3) cuts the raw module ~10% but
# makes the gzip size ~1% larger, and gzip is what Workers and browsers pay for.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[build] %s\n' "$*"; }
die() { printf '[build] ERROR: %s\n' "$*" >&2; exit 1; }
command -v wasm-bindgen >/dev/null || die "wasm-bindgen not found: run scripts/setup.sh first."

# The demo's Ask corpus (README and ARCHITECTURE by section), regenerated so it follows the docs.
node scripts/docs-corpus.mjs || die "scripts/docs-corpus.mjs failed."

target_dir="${CARGO_TARGET_DIR:-target}"

# build_one OUT_DIR TARGET_DIR FEATURES
build_one() {
  local out="$1" dir="$2" features="$3"
  local feature_args=()
  [ -z "$features" ] || feature_args=(--features "$features")
  CARGO_TARGET_DIR="$dir" cargo build --release --target wasm32-unknown-unknown --lib "${feature_args[@]}" \
    || die "cargo build for wasm32 (${features:-no features}) failed."

  local src="$dir/wasm32-unknown-unknown/release/turnkeep.wasm"
  local stamp="$out/.built-from"
  [ -f "$src" ] || die "$src was not produced."
  # The artifact's hash (milliseconds for ~1 MB), the CLI version and this script identify the output.
  local fingerprint
  fingerprint="$(sha256sum "$src" | cut -d' ' -f1) $(wasm-bindgen --version) $(sha256sum "$0" | cut -c1-16)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$fingerprint" ] && [ -f "$out/turnkeep_bg.wasm" ]; then
    say "$out/ is up to date"
    return
  fi
  rm -rf "$out"
  wasm-bindgen "$src" --target web --out-dir "$out" --remove-name-section --remove-producers-section \
    || die "wasm-bindgen failed for $out/."
  drop_default_wasm_url "$out/turnkeep.js"
  echo "$fingerprint" > "$stamp"
  say "built $out/ ($(stat -c %s "$out/turnkeep_bg.wasm") bytes of wasm, features: ${features:-none})"
}

# The generated `init()` falls back to `new URL('turnkeep_bg.wasm', import.meta.url)` when called
# without a module. Every entry in js/ passes the module itself, and bundlers (Next.js, webpack,
# Vite) follow that URL and emit a second copy of the wasm next to the one the entry imports.
# So the fallback becomes an error, and a glue that no longer has that line fails the build
# (a wasm-bindgen upgrade must be looked at, not silently bundled twice).
drop_default_wasm_url() {
  local glue="$1"
  local line="module_or_path = new URL('turnkeep_bg.wasm', import.meta.url);"
  grep -qF "$line" "$glue" || die "$glue: the default wasm URL line was not found (wasm-bindgen changed?)."
  local replacement="throw new Error('turnkeep: init() needs { module_or_path } (the entry points in js/ pass it)');"
  LINE="$line" REPLACEMENT="$replacement" perl -0pi -e 's/\Q$ENV{LINE}\E/$ENV{REPLACEMENT}/' "$glue"
  ! grep -q "import.meta.url" "$glue" || die "$glue still refers to import.meta.url."
}

build_one pkg "$target_dir" ""
build_one pkg-worker "$target_dir/worker" "cloudflare,test-hooks"
