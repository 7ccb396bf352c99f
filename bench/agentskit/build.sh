#!/usr/bin/env bash
# Bundles AgentsKit Chat's own chat handler (`@agentskit/chat/server`'s createChatHandler) from
# checkouts of its two public repositories, for the benchmarks that compare against it
# (bench/snapshot-bytes.mjs: AGENTSKIT_SERVER=<OUT>/agentskit-server.mjs). AgentsKit's packages
# are not on npm; nothing of theirs is kept in this repository.
#
#   git clone https://github.com/AgentsKit-io/agentskit-chat CHAT
#   git clone https://github.com/AgentsKit-io/agentskit KIT
#   bash bench/agentskit/build.sh CHAT KIT OUT
#
# The workspace packages resolve to their TypeScript sources (tsconfig paths); their two npm
# dependencies come from the registry; esbuild (this repository's) bundles the handler.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: bash bench/agentskit/build.sh CHAT_CHECKOUT KIT_CHECKOUT OUT_DIR" >&2; exit 2; }
root="$(cd "$(dirname "$0")/../.." && pwd)"
chat="$(cd "$1" && pwd)"
kit="$(cd "$2" && pwd)"
out="$3"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cat > "$out/tsconfig.json" <<JSON
{ "compilerOptions": { "baseUrl": "/", "paths": {
  "@agentskit/core": ["$kit/packages/core/src/index.ts"],
  "@agentskit/core/*": ["$kit/packages/core/src/*"],
  "@agentskit/statechart": ["$kit/packages/statechart/src/index.ts"],
  "@agentskit/memory": ["$kit/packages/memory/src/index.ts"],
  "@agentskit/memory/*": ["$kit/packages/memory/src/*"],
  "@agentskit/eval": ["$kit/packages/eval/src/index.ts"],
  "@agentskit/eval/*": ["$kit/packages/eval/src/*"],
  "@agentskit/chat-protocol": ["$chat/packages/protocol/src/index.ts"],
  "@agentskit/chat": ["$chat/packages/chat/src/index.ts"],
  "@agentskit/chat/*": ["$chat/packages/chat/src/*"]
} } }
JSON
( cd "$out" && [ -f package.json ] || npm init -y >/dev/null
  cd "$out" && npm install --no-audit --no-fund --save-exact zod@4.3.6 @noble/hashes@2.2.0 >/dev/null )
NODE_PATH="$out/node_modules" "$root/node_modules/.bin/esbuild" "$chat/packages/server/src/index.ts" \
  --bundle --format=esm --platform=node --target=node20 --tsconfig="$out/tsconfig.json" \
  --outfile="$out/agentskit-server.mjs" --log-level=error
echo "built $out/agentskit-server.mjs ($(git -C "$chat" rev-parse --short HEAD) of agentskit-chat, $(git -C "$kit" rev-parse --short HEAD) of agentskit)"
