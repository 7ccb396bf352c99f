#!/usr/bin/env bash
# `npm start`: set up, build, then run the demo Worker (src/cloudflare via js/cloudflare/worker.mjs, wrangler.toml)
# locally and offline on 127.0.0.1:8787 (PORT overrides the port).
# Durable Object state persists in .state/ across restarts (STATE_DIR overrides the folder); delete
# it to start afresh. No secret is needed: the page reads its session's stream from the Worker's
# own Durable Object (only the public /v1/stream/* API wants STREAMS_TOKEN, in .dev.vars).
# Environment passed through to the Worker as vars: OPENAI_BASE_URL and OPENAI_MODEL (use an
# OpenAI-compatible model instead of the demo model) and DEMO_CHUNK_DELAY_MS. A key goes in
# .dev.vars (`OPENAI_API_KEY=...`, read by wrangler dev, git-ignored), never on a command line.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Pre-built here, not as a wrangler [build] command (that would run twice at start); only what
# ships (the test build is for npm test).
bash scripts/build.sh --shipping
# Offline and quiet: no metrics, no error reports, no Cloudflare request-metadata fetch.
export WRANGLER_SEND_METRICS=false WRANGLER_SEND_ERROR_REPORTS=false CLOUDFLARE_CF_FETCH_ENABLED=false
host=127.0.0.1 port="${PORT:-8787}" state="${STATE_DIR:-.state}"
vars=()
for name in OPENAI_BASE_URL OPENAI_MODEL DEMO_CHUNK_DELAY_MS; do
  if [ -n "${!name:-}" ]; then vars+=(--var "$name:${!name}"); fi
done
if [ -n "${OPENAI_API_KEY:-}" ] && ! grep -qs '^OPENAI_API_KEY=' .dev.vars; then
  echo "[start] note: OPENAI_API_KEY is not forwarded from the environment; put it in .dev.vars" >&2
fi
echo "[start] turnkeep demo Worker: http://$host:$port/  (state in $state/, Ctrl-C to stop)"
echo "[start] try: curl -s http://$host:$port/api/sessions/s1 -H 'authorization: Bearer demo'"
exec node_modules/.bin/wrangler dev --ip "$host" --port "$port" --persist-to "$state" "${vars[@]}"
