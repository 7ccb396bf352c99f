// A host model's iterator is read through readNext (src/web/adapters/models/reader.rs), whose
// callbacks belong to the stream: a read still pending when the turn let go of the stream settles
// later into callbacks that are gone. That must stay silent (no unhandled rejection, no thrown
// error) and leave the handler working.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import * as pkg from '../../js/node.mjs';
import { assistantText, chatRequest, demoSetup, readTurn, submitEvent } from '../support/chat-harness.mjs';

const macrotask = () => new Promise((resolve) => setImmediate(resolve));

test('a model read that settles after its turn let go of the stream is ignored quietly', async () => {
  const problems = [];
  const onProblem = (error) => problems.push(error);
  process.on('unhandledRejection', onProblem);
  process.on('uncaughtException', onProblem);
  try {
    let release;
    const late = new Promise((resolve) => (release = resolve));
    let settledLate = false;
    let calls = 0;
    // An iterator (not a generator: `return()` does not wait for a pending `next()`) whose second
    // `next()` answers only when the test says so.
    const model = {
      stream() {
        return {
          [Symbol.asyncIterator]() {
            return this;
          },
          next() {
            calls += 1;
            if (calls === 1) return Promise.resolve({ done: false, value: { type: 'text', text: 'first' } });
            return late.then(() => {
              settledLate = true;
              return { done: false, value: { type: 'text', text: ' late' } };
            });
          },
          return() {
            return Promise.resolve({ done: true });
          },
        };
      },
    };
    const { handler, storage } = demoSetup(pkg, { chat: { model } });
    const response = await handler(chatRequest(submitEvent({ sessionId: 'late-read', turnId: 't1', input: 'go' })));
    const reader = response.body.getReader();
    while (calls < 2) {
      await reader.read();
      await macrotask();
    }
    await reader.cancel(); // the turn stops; its model stream is dropped with a read pending
    await storage.released('t1');
    for (let i = 0; i < 5; i++) await macrotask();
    release();
    for (let i = 0; i < 5; i++) await macrotask();
    assert.equal(settledLate, true, 'the pending read settled after the turn ended');
    assert.deepEqual(problems, []);

    // The handler (and its wasm instance) still answers.
    const { handler: again } = demoSetup(pkg);
    const next = await readTurn(pkg, await again(chatRequest(submitEvent({ sessionId: 'after', turnId: 't2', input: 'still here' }))));
    assert.deepEqual(next.faults, []);
    assert.equal(assistantText(next.last.payload.messages), 'echo: still here');
  } finally {
    process.off('unhandledRejection', onProblem);
    process.off('uncaughtException', onProblem);
  }
});
