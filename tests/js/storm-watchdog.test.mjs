// The storm's watchdog (tests/support/storm.mjs) is able to fail: against a server that never
// answers a submit, or answers and then never sends a byte of its body, the storm ends with a
// violation naming the stalled request and where it stood — instead of waiting for ever, which is
// how a client-side hang once held CI until its time limit. Without the watchdog these tests
// hang and fail by their timeout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';

import { runStorm } from '../support/storm.mjs';

/** Short enough for a test; the storm's own bound is STORM_STALL_MS. */
const STALL_MS = 300;
const TEST_MS_MAX = 30_000;

/** A server with the storm's memory hook that handles every `POST /api/chat` with `onChat(response)`. */
async function serve(onChat) {
  const held = [];
  const server = createServer((request, response) => {
    if (request.url === '/__test/memory') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ wasmMemoryBytes: 0, heapLiveBytes: 0, liveObjects: {} }));
      return;
    }
    request.resume();
    held.push(response);
    onChat(response);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () => {
    for (const response of held) response.destroy();
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  };
  return { url: `http://127.0.0.1:${server.address().port}`, close };
}

function check(name, onChat, expectedPhase) {
  test(name, { timeout: TEST_MS_MAX }, async () => {
    const server = await serve(onChat);
    try {
      const report = await runStorm({ dev: { url: server.url, pid: -1 }, seed: 1, turns: 2, sessions: 2, ops: ['read'], stallMs: STALL_MS });
      const stalls = report.violations.filter((v) => v.startsWith(`stalled for ${STALL_MS} ms`));
      assert.ok(stalls.length > 0, `no stall named: ${JSON.stringify(report.violations)}`);
      for (const stall of stalls) assert.match(stall, /read st-storm1-s\d-/);
      assert.ok(stalls.some((v) => v.includes(expectedPhase)), `phase "${expectedPhase}" not named: ${stalls.join(' | ')}`);
    } finally {
      await server.close();
    }
  });
}

check('a submit that is never answered ends the storm with a named stall', () => {}, 'fetch attempt 0');
check('an answer whose body never comes ends the storm with a named stall', (response) => {
  response.writeHead(200, { 'content-type': 'application/x-ndjson' });
  response.flushHeaders();
}, 'reading body after 0 lines');
