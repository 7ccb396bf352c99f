// js/workerd.mjs in real workerd (Miniflare 4, the runtime `wrangler dev` uses): a minimal
// Worker imports the package's workerd entry, whose `.wasm` import arrives as a compiled
// WebAssembly.Module, and decodes an event with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Miniflare } from 'miniflare';

const root = fileURLToPath(new URL('../..', import.meta.url));
// The same date and flags `wrangler dev` uses, read from wrangler.toml.
const toml = readFileSync(`${root}wrangler.toml`, 'utf8');
const compatibilityDate = toml.match(/^compatibility_date\s*=\s*"([^"]+)"/m)[1];
const compatibilityFlags = JSON.parse(toml.match(/^compatibility_flags\s*=\s*(\[[^\]]*\])/m)[1]);

test('a Worker loads js/workerd.mjs in workerd and decodes with the wasm core', async (t) => {
  const mf = new Miniflare({
    modules: true,
    modulesRoot: root,
    scriptPath: `${root}tests/js/fixtures/workerd-worker.mjs`,
    modulesRules: [
      { type: 'ESModule', include: ['**/*.js', '**/*.mjs'] },
      { type: 'CompiledWasm', include: ['**/*.wasm'] },
    ],
    compatibilityDate,
    compatibilityFlags,
  });
  t.after(() => mf.dispose());

  const page = await mf.dispatchFetch('http://localhost/');
  assert.equal(page.status, 200);
  const html = await page.text();
  assert.match(html, /turnkeep is alive/);
  // The sample was decoded by the wasm core: the unknown `note` field was dropped and the
  // decoded payload is shown (HTML-escaped quotes).
  assert.match(html, /&#34;ok&#34;: true/);
  assert.match(html, /hello from the demo Worker/);
  assert.doesNotMatch(html, /unknown fields are dropped/);

  const missing = await mf.dispatchFetch('http://localhost/nope');
  assert.equal(missing.status, 404);
  await missing.arrayBuffer();
  const post = await mf.dispatchFetch('http://localhost/', { method: 'POST', body: 'x' });
  assert.equal(post.status, 405);
  await post.arrayBuffer();
});
