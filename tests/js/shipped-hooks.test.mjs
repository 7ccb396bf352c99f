// No test or bench hook in what ships: the four npm builds (pkg/, pkg-client/, pkg-ask/,
// pkg-sandbox/) and the demo Worker `wrangler deploy` publishes (pkg-worker/, through
// js/cloudflare/worker.mjs; on npm too, for turnkeep/cloudflare's Durable Objects) export none of the test build's hooks (`__…ForTest`,
// `__snapshotCountsForBench`, `sqlIoForTest`), and that Worker answers no `/__test/*` route even
// with `TEST_HOOKS=1`. The test build (pkg-worker-test/, through its own entry) has every one of
// them, which shows each check can find what it looks for. Needs `bash scripts/build.sh`.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { removeDir, tempDir } from '../support/temp-dir.mjs';
import { serveWorkerd } from '../support/workerd-serve.mjs';
import { TEST_HOOKS_WORKER } from '../support/wrangler-dev.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SHIPPED = ['pkg', 'pkg-client', 'pkg-ask', 'pkg-sandbox', 'pkg-worker'];
const TEST_BUILD = 'pkg-worker-test';
/** The test build's exports, as the JS glue names them. */
const HOOK_EXPORTS = [/__\w+ForTest\b/, /__snapshotCountsForBench/, /sqlIoForTest/];

const glue = (dir) => readFileSync(`${root}${dir}/turnkeep.js`, 'utf8');

test('the shipped builds export no test or bench hook; the test build exports each', () => {
  for (const dir of SHIPPED) {
    for (const hook of HOOK_EXPORTS) assert.doesNotMatch(glue(dir), hook, `${dir}/turnkeep.js`);
  }
  for (const hook of HOOK_EXPORTS) assert.match(glue(TEST_BUILD), hook, `${TEST_BUILD}/turnkeep.js`);
});

const dir = tempDir('turnkeep-shipped-hooks-');
after(() => removeDir(dir));

/** What `GET /__test/memory` and `/__test/stream-io/<name>` answer on `entry` with TEST_HOOKS=1. */
async function testRoutes(entry, name) {
  const server = await serveWorkerd({ entry, persistDir: `${dir}/${name}`, vars: { TEST_HOOKS: '1', STREAMS_PUBLIC: '1' } });
  try {
    const answers = [];
    for (const path of ['/__test/memory', '/__test/stream-io/s1']) {
      const response = await fetch(`${server.baseUrl}${path}`);
      answers.push({ path, status: response.status, body: await response.text() });
    }
    return answers;
  } finally {
    await server.stop();
  }
}

test('the Worker that deploys has no /__test/* route; its test build has them', async () => {
  for (const answer of await testRoutes('js/cloudflare/worker.mjs', 'shipped')) {
    assert.notEqual(answer.status, 200, `${answer.path}: ${answer.body}`);
  }
  const [memory, io] = await testRoutes(TEST_HOOKS_WORKER, 'test-build');
  assert.equal(memory.status, 200, memory.body);
  assert.ok('heapLiveBytes' in JSON.parse(memory.body), 'the counting allocator reports');
  assert.equal(io.status, 200, io.body);
});
