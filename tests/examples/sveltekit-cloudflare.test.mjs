// examples/sveltekit-cloudflare: the chat route as a SvelteKit `+server.ts`, built with
// `vite build` (@sveltejs/adapter-cloudflare) and served by `wrangler dev` in workerd, with
// turnkeep installed from the packed tarball.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

import { chatScenarios } from './scenarios.mjs';
import { clean, EXAMPLES, installTarball, packTurnkeep, printSizes, sizeOf, timed } from './harness.mjs';
import { removeDir, tempDir } from '../support/temp-dir.mjs';
import { OFFLINE_ENV, startWranglerDev } from '../support/wrangler-dev.mjs';

const dir = join(EXAMPLES, 'sveltekit-cloudflare');
let work;
let server;

before(async () => {
  work = tempDir('turnkeep-sveltekit-');
  installTarball(dir, packTurnkeep(work));
  clean(dir, ['.svelte-kit', '.wrangler']);
  const seconds = timed('npm', ['run', 'build'], { cwd: dir });
  console.log(`[examples] sveltekit-cloudflare: vite build ${seconds.toFixed(1)} s`);
  server = await startWranglerDev({ cwd: dir, persistDir: join(work, 'state') });
});
after(async () => {
  await server?.stop();
  if (work) removeDir(work);
});

chatScenarios(() => server.url);

test('the Worker wrangler would deploy carries one wasm module', () => {
  const out = join(work, 'deploy');
  timed(join(dir, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', out], { cwd: dir, env: OFFLINE_ENV });
  const files = readdirSync(out, { recursive: true }).map((f) => join(out, f));
  const wasm = files.filter((f) => f.endsWith('.wasm'));
  assert.equal(wasm.length, 1, `wasm files: ${wasm.join(', ')}`);
  printSizes('sveltekit-cloudflare Worker bundle', sizeOf(files.filter((f) => /\.m?js$/.test(f))), sizeOf(wasm));
});

test('tsc --noEmit passes', () => {
  const seconds = timed(join(dir, 'node_modules/.bin/tsc'), ['--noEmit'], { cwd: dir });
  console.log(`[examples] sveltekit-cloudflare: tsc --noEmit ${seconds.toFixed(1)} s`);
});
