// wrangler.toml deploys as is: `wrangler deploy --dry-run` (offline; it bundles and checks the
// configuration without contacting Cloudflare) accepts it and lists both Durable Object bindings,
// and what it would publish is the shipping build (pkg-worker/), not the test build with its
// `/__test/*` routes (pkg-worker-test/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { removeDir, tempDir } from '../support/temp-dir.mjs';
import { OFFLINE_ENV, ROOT as root } from '../support/wrangler-dev.mjs';

test('wrangler deploy --dry-run accepts wrangler.toml with both Durable Object bindings', () => {
  const outdir = tempDir('turnkeep-dry-run-');
  try {
    const output = execFileSync(join(root, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', outdir], {
      cwd: root,
      encoding: 'utf8',
      env: {
        ...process.env,
        ...OFFLINE_ENV,
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    });
    assert.match(output, /env\.CHAT_SESSION \(ChatSession\)\s+Durable Object/);
    assert.match(output, /env\.SESSION_STREAM \(SessionStream\)\s+Durable Object/);
    assert.match(output, /--dry-run: exiting now/);
    assert.ok(statSync(join(outdir, 'worker.js')).size > 0, 'the bundled Worker was written');
    const modules = readdirSync(outdir).filter((f) => f.endsWith('.wasm'));
    assert.equal(modules.length, 1, `one wasm module in the bundle: ${modules.join(', ')}`);
    const bundled = readFileSync(join(outdir, modules[0]));
    assert.ok(bundled.equals(readFileSync(join(root, 'pkg-worker/turnkeep_bg.wasm'))), 'the bundle carries pkg-worker/');
    // (That build answers no /__test/* route: tests/js/shipped-hooks.test.mjs.)
    assert.ok(!bundled.equals(readFileSync(join(root, 'pkg-worker-test/turnkeep_bg.wasm'))), 'the test build differs (this check can tell)');
  } finally {
    removeDir(outdir);
  }
});
