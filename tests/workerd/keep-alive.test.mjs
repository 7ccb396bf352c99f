// Refusals decided from the headers alone (401 without credentials, 403 for a foreign corpus)
// must leave the connection usable: the Worker reads the unread body before it answers
// (limits::UNREAD_BODY_DRAIN_BYTES_MAX). Without that, workerd reset the connection and the
// client's next request on it failed (80 of 900 requests with ECONNRESET when this was found).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { startWorker } from './harness.mjs';

const ROUNDS = 100;
let worker;

before(async () => {
  worker = await startWorker({ bindings: { DEMO_CHUNK_DELAY_MS: '0' } });
});
after(async () => {
  await worker?.stop();
});

const question = JSON.stringify({ protocol: 'agentskit.chat.ask', version: 1, messages: [{ role: 'user', content: 'How do I run the tests?' }] });
const submit = JSON.stringify({ version: 1, event: 'client.turn.submit', sessionId: 'keepalive', turnId: 't1', payload: { input: 'hi' } });

function post(path, body, authorization) {
  const headers = { 'content-type': 'application/json' };
  if (authorization) headers.authorization = authorization;
  return fetch(`${worker.url}${path}`, { method: 'POST', headers, body });
}

test('a request after a header-decided refusal on the same keep-alive connection is answered', async () => {
  const sequence = [
    ['/api/ask', question, null, 401],
    ['/api/ask?corpus=someone-elses-docs', question, 'Bearer demo', 403],
    ['/api/chat', submit, null, 401],
    ['/api/ask', question, 'Bearer demo', 200],
  ];
  const failures = {};
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [path, body, authorization, status] of sequence) {
      try {
        const response = await post(path, body, authorization);
        await response.arrayBuffer();
        assert.equal(response.status, status, path);
      } catch (error) {
        if (error instanceof assert.AssertionError) throw error;
        const kind = `${path}: ${error.cause?.code ?? error.message}`;
        failures[kind] = (failures[kind] ?? 0) + 1;
      }
    }
  }
  assert.deepEqual(failures, {});
});
