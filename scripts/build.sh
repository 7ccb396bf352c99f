#!/usr/bin/env bash
# Builds the wasm modules and their JS glue (wasm-bindgen --target web), one per npm entry plus
# the demo Worker's, each with --no-default-features and its surface's Cargo features
# (src/web/mod.rs lists what each feature exports):
#
#   pkg/          `turnkeep`: feature `server` (the chat handler, durable chat, the protocol, the
#                 projection). No Cloudflare code (no `worker` crate), no test hooks.
#   pkg-client/   `turnkeep/client`: feature `client` (the live connection, the protocol, the
#                 projection): what a page loads.
#   pkg-ask/      `turnkeep/ask`: feature `ask` (the Ask service, the BM25 retriever).
#   pkg-sandbox/  `turnkeep/sandbox`: feature `sandbox` (the MCP ui:// sandbox).
#   pkg-worker/   the demo Worker `wrangler deploy` publishes: feature `cloudflare` — the Worker
#                 entry and the two Durable Objects in Rust (src/cloudflare, workers-rs),
#                 instantiated by js/cloudflare/worker.mjs. No test hooks. Not shipped on npm.
#   pkg-worker-test/  the test build: the same Worker plus feature `test-hooks` (the `__...ForTest`
#                 exports tests/js drives the adapters through, `__snapshotCountsForBench`, the
#                 Worker's `/__test/*` routes, hold points and counting allocator), loaded by its
#                 own entry, tests/support/test-hooks-worker.mjs (workerd) and
#                 tests/support/test-hooks.mjs (Node). Never published.
#
# `scripts/build.sh --shipping` builds only what ships (the npm modules and the demo Worker), as
# `npm start` needs; without it the test build is built too, as `npm test` needs.
#
# Why one build per entry rather than one wasm behind several entries: an entry cannot drop code
# from a shared .wasm (`npm run size` prints each). Why wasm-bindgen plus a thin entry rather than
# worker-build (see ARCHITECTURE.md, "The Worker build"): worker-build exports every
# wasm-bindgen class of the module as a Durable Object under its Rust name, and the npm build
# already has a class named `ChatSession`; its entry cannot make the objects RPC-capable; and it
# needs a second CLI (~10 min cold install) to do what these lines do.
#
# Each build has its own cargo target dir: cargo names the cdylib without a feature hash, so
# builds with other features in the same dir would overwrite (and recompile) each other.
# Each skips wasm-bindgen when its cargo artifact is unchanged since the last run. A build whose
# Rust code uses inline JS (`#[wasm_bindgen(inline_js)]`: the model reader,
# src/web/adapters/models/reader.rs) also gets <out>/snippets/, which its glue imports and the
# package ships (package.json "files").
# No wasm-opt: measured on this crate, binaryen 132 (-Os/-Oz/-O3) cuts the raw module ~10% but
# makes the gzip size ~1% larger, and gzip is what Workers and browsers pay for.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[build] %s\n' "$*"; }
die() { printf '[build] ERROR: %s\n' "$*" >&2; exit 1; }
command -v wasm-bindgen >/dev/null || die "wasm-bindgen not found: run scripts/setup.sh first."

# The demo's Ask corpus (README, CONTRIBUTING and ARCHITECTURE by section), compiled into the
# Worker build.
node scripts/docs-corpus.mjs || die "scripts/docs-corpus.mjs failed."

target_dir="${CARGO_TARGET_DIR:-target}"
shipping_only=false
case "${1:-}" in
  "") ;;
  --shipping) shipping_only=true ;;
  *) die "unknown argument $1 (scripts/build.sh [--shipping])" ;;
esac

# build_one OUT_DIR TARGET_DIR PROFILE FEATURES
build_one() {
  local out="$1" dir="$2" profile="$3" features="$4"
  CARGO_TARGET_DIR="$dir" cargo build --profile "$profile" --target wasm32-unknown-unknown --lib \
    --no-default-features --features "$features" \
    || die "cargo build for wasm32 (features $features) failed."

  local src="$dir/wasm32-unknown-unknown/$profile/turnkeep.wasm"
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
  say "built $out/ ($(stat -c %s "$out/turnkeep_bg.wasm") bytes of wasm, features: $features)"
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

# All with profile `release` (opt-level "s"): "z" is smaller and measured slower for each npm
# build (docs/figures.md, "Sizes").
npm_builds() {
  build_one pkg "$target_dir" release server
  build_one pkg-ask "$target_dir/ask" release ask
  build_one pkg-sandbox "$target_dir/sandbox" release sandbox
}
# pkg-client (profile `release`, as above) goes with the Worker builds to even out the streams.
# Profile `worker` (Cargo.toml): opt-level "z", measured smaller for the same CPU.
# The test build: the same profile, so tests measure the Worker as it deploys, plus the hooks.
# Its dependencies are the Worker's, compiled the same: a first build starts from a copy of the
# Worker's target dir (seconds) instead of compiling them all again (minutes).
worker_builds() {
  build_one pkg-client "$target_dir/client" release client
  build_one pkg-worker "$target_dir/worker" worker cloudflare
  if [ "$shipping_only" = false ]; then
    if [ ! -d "$target_dir/worker-test" ] && [ -d "$target_dir/worker" ]; then
      cp -a "$target_dir/worker" "$target_dir/worker-test"
    fi
    build_one pkg-worker-test "$target_dir/worker-test" worker "cloudflare,test-hooks"
  fi
}
# Two streams at once: a build with LTO and one codegen unit is one thread for most of its time
# (a warm run: 122 s wall for 132 s of CPU one after another, 73-80 s in two streams), and each
# stream has target dirs of its own, so neither waits on the other's lock. Each line is printed
# as it comes, marked with its stream; either stream failing fails the build.
status_dir="$(mktemp -d)"
trap 'rm -rf "$status_dir"' EXIT
in_stream() {
  local name="$1"; shift
  { "$@" 2>&1; echo $? > "$status_dir/$name"; } | sed -u "s/^/[$name] /"
}
in_stream npm npm_builds &
in_stream worker worker_builds &
wait
for name in npm worker; do
  code="$(cat "$status_dir/$name" 2>/dev/null || echo 1)"
  [ "$code" -eq 0 ] || die "the $name builds failed (exit $code; their lines above are marked [$name])."
done

# The Worker's JS dependency (workers-ai-provider, for the `AI` binding), beside its wasm.
node scripts/worker-deps.mjs || die "scripts/worker-deps.mjs failed."
# The demo Worker's static assets (wrangler.toml [assets]): the npm package's browser client
# (js/client/, pkg-client/), and the demo page's script, so the page runs the same projection
# and connection rules.
node scripts/demo-assets.mjs || die "scripts/demo-assets.mjs failed."
