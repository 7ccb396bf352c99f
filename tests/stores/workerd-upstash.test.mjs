// turnkeep/redis on an edge runtime: a Worker in real workerd (Miniflare 4) uses the Cloudflare
// build of `@upstash/redis` (HTTP) and passes the SessionStorage conformance suite, 32 racing
// saves included, and the SessionLog conformance suite (the log's fencing runs in the package's
// wasm, loaded through its `workerd` entry). Upstash's hosted service cannot be reached here, so the Worker talks to the
// REST stand-in (tests/support/upstash-rest-proxy.mjs) in front of a real redis-server.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';

import { CASES as LOG_CASES } from '../../js/testing/session-log-conformance.mjs';
import { CASES } from '../../js/testing/session-storage-conformance.mjs';
import { startRedis } from '../support/databases.mjs';
import { removeDir, tempDir } from '../support/temp-dir.mjs';
import { startUpstashRestProxy } from '../support/upstash-rest-proxy.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const toml = readFileSync(`${root}wrangler.toml`, 'utf8');
const compatibilityDate = toml.match(/^compatibility_date\s*=\s*"([^"]+)"/m)[1];

let redis;
let proxy;
let dir;
before(async () => {
  redis = await startRedis();
  proxy = await startUpstashRestProxy(redis.url);
  dir = tempDir('turnkeep-workerd-upstash-');
});
after(async () => {
  await proxy?.close();
  await redis?.stop();
  if (dir) removeDir(dir);
});

test('in workerd, turnkeep/redis over @upstash/redis passes the storage and log conformance suites', async (t) => {
  // Bundled the way wrangler resolves a Worker's imports (export conditions workerd, worker,
  // browser; the package's .wasm beside the script, loaded as a compiled module).
  const scriptPath = join(dir, 'worker.mjs');
  await build({
    entryPoints: [fileURLToPath(new URL('./fixtures/upstash-worker.mjs', import.meta.url))],
    outfile: scriptPath,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    loader: { '.wasm': 'copy' },
    logLevel: 'silent',
  });
  const mf = new Miniflare({
    modules: true,
    modulesRoot: dir,
    scriptPath,
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
    compatibilityDate,
    bindings: { UPSTASH_URL: proxy.url, UPSTASH_TOKEN: proxy.token },
  });
  t.after(() => mf.dispose());

  const response = await mf.dispatchFetch('http://localhost/', { method: 'POST' });
  const body = await response.text();
  assert.equal(response.status, 200, body);
  const { report, memoryRoundTrip, logReport } = JSON.parse(body);
  assert.deepEqual(report.failed, []);
  assert.deepEqual(report.passed, Object.values(CASES));
  assert.equal(memoryRoundTrip, true);
  assert.deepEqual(logReport.failed, []);
  assert.deepEqual(logReport.passed, Object.values(LOG_CASES));
});
