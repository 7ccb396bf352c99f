// examples/next-edge: the chat route on Next.js's edge runtime, and the useChat pages with their
// Node routes on a real Redis (the AI SDK's, next-chat-page.mjs; TanStack AI's,
// next-tanstack-page.mjs), built once with `next build` and served by `next start` (with
// REDIS_URL, and once more without it), with turnkeep installed from the packed tarball.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { chatPageScenarios } from './next-chat-page.mjs';
import { tanStackPageScenarios } from './next-tanstack-page.mjs';
import { chatScenarios } from './scenarios.mjs';
import { clean, EXAMPLES, installTarball, packTurnkeep, printSizes, sizeOf, timed } from './harness.mjs';
import { startRedis } from '../support/databases.mjs';
import { spawnServer } from '../support/spawn-server.mjs';
import { removeDir, tempDir } from '../support/temp-dir.mjs';
import { freePort } from '../support/wrangler-dev.mjs';

const dir = join(EXAMPLES, 'next-edge');
const env = { NEXT_TELEMETRY_DISABLED: '1' };
let work;
let redis;
let server; // with REDIS_URL
let memoryServer; // the same build without it
let url;
let memoryUrl;

/** `next start` on a free port with `extra` in its environment: `{ server, url }`. */
async function nextStart(extra = {}) {
  const port = await freePort();
  const started = await spawnServer({
    command: join(dir, 'node_modules/.bin/next'),
    args: ['start', '--hostname', '127.0.0.1', '--port', String(port)],
    cwd: dir,
    env: { ...env, ...extra },
    ready: /Ready in/,
  });
  return { server: started, url: `http://127.0.0.1:${port}` };
}

before(async () => {
  work = tempDir('turnkeep-next-');
  installTarball(dir, packTurnkeep(work));
  clean(dir, ['.next']);
  const seconds = timed('npm', ['run', 'build'], { cwd: dir, env });
  console.log(`[examples] next-edge: next build ${seconds.toFixed(1)} s`);
  redis = await startRedis();
  ({ server, url } = await nextStart({ REDIS_URL: redis.url }));
  ({ server: memoryServer, url: memoryUrl } = await nextStart({ REDIS_URL: '' }));
});
chatScenarios(() => url);

chatPageScenarios(() => ({
  url,
  memoryUrl,
  redisUrl: redis.url,
  restart: async () => {
    await server.stop();
    ({ server, url } = await nextStart({ REDIS_URL: redis.url }));
  },
}));

tanStackPageScenarios(() => ({ url }));

// After the page scenarios' own `after` (hooks run in the order they were registered): the
// browser is closed first, so no tab holds a connection that `next start`'s shutdown waits for.
after(async () => {
  await server?.stop();
  await memoryServer?.stop();
  await redis?.stop();
  if (work) removeDir(work);
});

test('the route runs on the edge runtime with one precompiled wasm (never bundled twice)', () => {
  const manifest = JSON.parse(readFileSync(join(dir, '.next/server/middleware-manifest.json'), 'utf8'));
  const route = manifest.functions['/api/chat/route'];
  assert.ok(route, 'the chat route is an edge function');
  assert.equal(route.wasm.length, 1, 'one wasm binding');
  const wasmFile = join(dir, '.next', route.wasm[0].filePath);
  const shipped = readFileSync(join(dir, 'node_modules/turnkeep/pkg/turnkeep_bg.wasm'));
  assert.ok(readFileSync(wasmFile).equals(shipped), 'the bound wasm is the package\'s');
  const serverWasm = readdirSync(join(dir, '.next/server'), { recursive: true }).filter((f) => f.endsWith('.wasm'));
  assert.equal(serverWasm.length, 1, `wasm files in .next/server/: ${serverWasm.join(', ')}`);
  // The chat page's browser client (turnkeep/client), once, as a static asset.
  const pageWasm = readdirSync(join(dir, '.next/static'), { recursive: true }).filter((f) => f.endsWith('.wasm'));
  assert.equal(pageWasm.length, 1, `wasm files in .next/static/: ${pageWasm.join(', ')}`);
  const clientWasm = readFileSync(join(dir, '.next/static', pageWasm[0]));
  assert.ok(clientWasm.equals(readFileSync(join(dir, 'node_modules/turnkeep/pkg-client/turnkeep_bg.wasm'))), 'the page\'s wasm is the client package\'s');
  const js = sizeOf(route.files.filter((f) => f.endsWith('.js')).map((f) => join(dir, '.next', f)));
  printSizes('next-edge /api/chat edge bundle', js, sizeOf([wasmFile]));
});

test('tsc --noEmit passes', () => {
  const seconds = timed(join(dir, 'node_modules/.bin/tsc'), ['--noEmit'], { cwd: dir });
  console.log(`[examples] next-edge: tsc --noEmit ${seconds.toFixed(1)} s`);
});
