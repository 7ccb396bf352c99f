#!/usr/bin/env bash
# `npm test`: everything CI runs, in order, failing on the first broken step.
#   1. setup (toolchain, npm deps, Chromium, Redis, PostgreSQL)   2. cargo test on the host
#   3. build pkg/ and pkg-worker/, sizes       4. wasm-bindgen tests in Node and headless Chromium
#   5. node --test tests/js/ (npm-pack import test, browser load test, storage conformance)
#   6. node --test tests/stores/ (turnkeep/redis and turnkeep/postgres against real servers)
#   7. node --test tests/workerd/ (the demo Worker)  8. the Durable Streams conformance suite
set -euo pipefail
cd "$(dirname "$0")/.."

t0=$(date +%s)
t_step=
# Prints the previous step's wall time, then the next step's title.
step() {
  local now; now=$(date +%s)
  [ -z "$t_step" ] || printf '[test] (%ss)\n' "$(( now - t_step ))"
  t_step=$now
  printf '\n[test] === %s ===\n' "$*"
}

step "setup"
bash scripts/setup.sh

step "cargo test (host)"
cargo test
# src/cloudflare (feature-gated): its unit tests, and the host tests of its decisions (the
# Worker's routes, the streams routes, the streams timing with an injected clock).
cargo test --features cloudflare --lib cloudflare::
cargo test --features cloudflare --test worker_routes --test streams_route --test streams_timing

step "build pkg/ (npm) and pkg-worker/ (the demo Worker), and their sizes"
bash scripts/build.sh
bash scripts/size.sh

step "wasm-bindgen tests (Node and headless Chromium)"
# The runner picks Node or the browser per test file; chromedriver drives Debian's Chromium.
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
CHROMEDRIVER=/usr/bin/chromedriver \
  cargo test --target wasm32-unknown-unknown --test wasm_node --test wasm_browser --test wasm_panic

step "node --test tests/js/"
node --test tests/js/

step "node --test tests/stores/ (Redis and PostgreSQL adapters against real servers)"
# Each file starts its own redis-server / postgres on free loopback ports and stops them after.
node --test tests/stores/

step "node --test tests/workerd/ (the demo Worker and its Durable Object in workerd)"
# One file at a time: each starts workerd (Miniflare or wrangler dev), one also Chromium.
node --test --test-concurrency=1 tests/workerd/

step "Durable Streams conformance suite against the Worker (wrangler dev, STREAMS_PUBLIC=1)"
bash scripts/streams-conformance.sh

printf '[test] (%ss)\n\n[test] all green in %ss\n' "$(( $(date +%s) - t_step ))" "$(( $(date +%s) - t0 ))"
