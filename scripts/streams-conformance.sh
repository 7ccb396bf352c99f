#!/usr/bin/env bash
# The public Durable Streams conformance suite against the Worker on real workerd
# (tests/streams-conformance/run.mjs: starts wrangler dev, runs the suite, stops the server).
set -euo pipefail
cd "$(dirname "$0")/.."
exec node tests/streams-conformance/run.mjs
