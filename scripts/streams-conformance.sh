#!/usr/bin/env bash
# The public Durable Streams conformance suite (@durable-streams/server-conformance-tests, all
# 332 default tests) against the Worker on real workerd: starts `wrangler dev` on a free port
# with STREAMS_PUBLIC=1 and a 3 s long-poll, runs the suite with vitest, and stops the server
# afterwards, also when the suite fails. Expects pkg/ to be built (scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[streams-conformance] %s\n' "$*"; }
port="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
state="$(mktemp -d)"
log="$state/wrangler.log"
export WRANGLER_SEND_METRICS=false WRANGLER_SEND_ERROR_REPORTS=false CLOUDFLARE_CF_FETCH_ENABLED=false

# setsid: wrangler and its workerd child get their own process group, stopped as one below.
setsid node_modules/.bin/wrangler dev --ip 127.0.0.1 --port "$port" --persist-to "$state/persist" \
  --var STREAMS_PUBLIC:1 --var STREAMS_LONG_POLL_MS:3000 --show-interactive-dev-session=false \
  >"$log" 2>&1 &
pid=$!
stop() {
  kill -TERM -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$state"
}
trap stop EXIT

base="http://127.0.0.1:$port"
answers() { node -e 'fetch(process.argv[1], { method: "HEAD" }).then(() => 0, () => process.exit(1))' "$base/v1/stream/"; }
for _ in $(seq 1 120); do
  if answers; then break; fi
  kill -0 "$pid" 2>/dev/null || { cat "$log"; say "wrangler dev exited early"; exit 1; }
  sleep 0.5
done
answers || { cat "$log"; say "wrangler dev did not start"; exit 1; }

say "suite against $base"
STREAMS_BASE_URL="$base" node_modules/.bin/vitest run --config tests/streams-conformance/vitest.config.mjs
