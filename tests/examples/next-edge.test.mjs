// examples/next-edge: the chat route on Next.js's edge runtime, built with `next build` and
// served by `next start`, with turnkeep installed from the packed tarball.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { chatScenarios } from './scenarios.mjs';
import { clean, EXAMPLES, installTarball, packTurnkeep, printSizes, sizeOf, timed } from './harness.mjs';
import { spawnServer } from '../support/spawn-server.mjs';
import { removeDir, tempDir } from '../support/temp-dir.mjs';
import { freePort } from '../support/wrangler-dev.mjs';

const dir = join(EXAMPLES, 'next-edge');
const env = { NEXT_TELEMETRY_DISABLED: '1' };
let work;
let server;
let url;

before(async () => {
  work = tempDir('turnkeep-next-');
  installTarball(dir, packTurnkeep(work));
  clean(dir, ['.next']);
  const seconds = timed('npm', ['run', 'build'], { cwd: dir, env });
  console.log(`[examples] next-edge: next build ${seconds.toFixed(1)} s`);
  const port = await freePort();
  server = await spawnServer({
    command: join(dir, 'node_modules/.bin/next'),
    args: ['start', '--hostname', '127.0.0.1', '--port', String(port)],
    cwd: dir,
    env,
    ready: /Ready in/,
  });
  url = `http://127.0.0.1:${port}`;
});
after(async () => {
  await server?.stop();
  if (work) removeDir(work);
});

chatScenarios(() => url);

test('the route runs on the edge runtime with one precompiled wasm (never bundled twice)', () => {
  const manifest = JSON.parse(readFileSync(join(dir, '.next/server/middleware-manifest.json'), 'utf8'));
  const route = manifest.functions['/api/chat/route'];
  assert.ok(route, 'the chat route is an edge function');
  assert.equal(route.wasm.length, 1, 'one wasm binding');
  const wasmFile = join(dir, '.next', route.wasm[0].filePath);
  const shipped = readFileSync(join(dir, 'node_modules/turnkeep/pkg/turnkeep_bg.wasm'));
  assert.ok(readFileSync(wasmFile).equals(shipped), 'the bound wasm is the package\'s');
  const allWasm = (readdirSync(join(dir, '.next'), { recursive: true })).filter((f) => f.endsWith('.wasm'));
  assert.equal(allWasm.length, 1, `wasm files in .next/: ${allWasm.join(', ')}`);
  const js = sizeOf(route.files.filter((f) => f.endsWith('.js')).map((f) => join(dir, '.next', f)));
  printSizes('next-edge /api/chat edge bundle', js, sizeOf([wasmFile]));
});

test('tsc --noEmit passes', () => {
  const seconds = timed(join(dir, 'node_modules/.bin/tsc'), ['--noEmit'], { cwd: dir });
  console.log(`[examples] next-edge: tsc --noEmit ${seconds.toFixed(1)} s`);
});
