// AI SDK language models as turnkeep models inside real workerd (Miniflare 4): the scenarios of
// tests/support/aisdk-scenarios.mjs — ai/test's MockLanguageModelV3 / V4, a hand-written V2
// model, @ai-sdk/anthropic, @ai-sdk/openai (Responses and chat completions) and
// @ai-sdk/openai-compatible against the fixture server this test runs, workers-ai-provider over
// a stand-in env.AI binding — bundled into one Worker the way wrangler bundles one (export
// conditions workerd, worker, browser; the package's .wasm beside the script), and checked
// exactly as in Node (tests/js/aisdk-models).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';

import { check } from '../support/aisdk-checks.mjs';
import { FIXTURES, startFixtureServer } from '../support/aisdk-fixture-server.mjs';
import { SCENARIO_NAMES } from '../support/aisdk-scenarios.mjs';
import { removeDir, tempDir } from '../support/temp-dir.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const toml = readFileSync(`${root}wrangler.toml`, 'utf8');
const compatibilityDate = toml.match(/^compatibility_date\s*=\s*"([^"]+)"/m)[1];

let server;
let dir;
let mf;
before(async () => {
  server = await startFixtureServer();
  dir = tempDir('turnkeep-workerd-aisdk-');
  const scriptPath = join(dir, 'worker.mjs');
  await build({
    entryPoints: [fileURLToPath(new URL('./fixtures/aisdk-worker.mjs', import.meta.url))],
    outfile: scriptPath,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    loader: { '.wasm': 'copy' },
    logLevel: 'silent',
  });
  mf = new Miniflare({
    modules: true,
    modulesRoot: dir,
    scriptPath,
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
    compatibilityDate,
    bindings: { FIXTURE_URL: server.url, WORKERS_AI_FIXTURES: JSON.stringify(FIXTURES.workersAi) },
  });
  await mf.ready;
});
after(async () => {
  await mf?.dispose();
  await server?.close();
  if (dir) removeDir(dir);
});

for (const name of SCENARIO_NAMES) {
  test(`in workerd: ${name}`, async () => {
    const response = await mf.dispatchFetch(`http://localhost/run?name=${encodeURIComponent(name)}`, { method: 'POST' });
    const body = await response.text();
    assert.equal(response.status, 200, body);
    check(name, JSON.parse(body), server.requests);
  });
}
