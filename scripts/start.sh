#!/usr/bin/env bash
# `npm start`: set up, build, then run the demo Worker locally and offline on 127.0.0.1:8787.
# State (Durable Objects, KV) persists in .state/ across restarts.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
export WRANGLER_SEND_METRICS=false WRANGLER_SEND_ERROR_REPORTS=false CLOUDFLARE_CF_FETCH_ENABLED=false
host=127.0.0.1 port="${PORT:-8787}"
echo "[start] turnkeep demo Worker: http://$host:$port/  (Ctrl-C to stop)"
exec node_modules/.bin/wrangler dev --ip "$host" --port "$port" --persist-to .state
