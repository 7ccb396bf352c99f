// A live reader gets the end of every run, however close the last appends come. A turn that
// pauses for a tool approval ends with two appends back to back (the confirmation record, then
// `RUN_FINISHED`); the stream object's SSE writer used to be busy writing the first when the
// second committed, so its wake-up was lost and the reader slept past the run's end until
// something else was appended (TanStack's sendMessage and the page's "turn idle" hung there).
// Checked here through the demo's chat-stream route, on the demo Worker's defaults.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { createChatConnection } from '../../js/client/node.mjs';
import { postTurn, removeDir, startWorker, tempDir } from './harness.mjs';
import { submitEvent } from '../support/chat-harness.mjs';

const RUNS = 6;
const END_MS_MAX = 3_000; // from the POST's last byte to the reader's RUN_FINISHED
let worker;
let state;

before(async () => {
  state = tempDir('turnkeep-run-end-');
  worker = await startWorker({ persistDir: state });
});
after(async () => {
  await worker?.stop();
  if (state) removeDir(state);
});

const connect = (sessionId) =>
  createChatConnection({
    target: {
      url: `${worker.url}/api/chat/stream/${sessionId}`,
      chatUrl: `${worker.url}/api/chat`,
      sessionId,
      headers: { authorization: 'Bearer demo' },
    },
  });

/** The next chunk of `reader` that ends a run, or a timeout after `ms`. */
async function nextRunEnd(reader, ms) {
  const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), ms));
  const end = (async () => {
    for (;;) {
      const { value, done } = await reader.next();
      if (done) return 'ended';
      if (value.type === 'RUN_FINISHED' || value.type === 'RUN_ERROR') return value;
    }
  })();
  return Promise.race([end, timeout]);
}

test(`a live reader gets RUN_FINISHED of a run that paused for an approval, and of its continuation (${RUNS} sessions)`, async () => {
  for (let i = 0; i < RUNS; i += 1) {
    const sessionId = `run-end-${process.pid}-${i}`;
    const connection = connect(sessionId);
    const reader = connection.subscribe()[Symbol.asyncIterator]();
    await new Promise((resolve) => setTimeout(resolve, 200)); // the live read is open
    await (await postTurn(worker.url, 'demo', sessionId, '/confirm 5')).text();
    const paused = await nextRunEnd(reader, END_MS_MAX);
    assert.equal(paused?.type, 'RUN_FINISHED', `session ${i}: the paused run's end (${JSON.stringify(paused)})`);
    assert.equal(paused.outcome?.type, 'interrupt');

    const token = paused.outcome.interrupts[0].id;
    const decision = submitEvent({
      sessionId,
      turnId: token,
      extra: { eventId: `e-decide-${i}`, event: 'client.confirmation.resolve', payload: { token, decision: 'approve' } },
    });
    const resolved = await fetch(`${worker.url}/api/chat`, {
      method: 'POST',
      headers: { authorization: 'Bearer demo', 'content-type': 'application/json' },
      body: JSON.stringify(decision),
    });
    await resolved.text();
    assert.equal(resolved.status, 200);
    const continued = await nextRunEnd(reader, END_MS_MAX);
    assert.equal(continued?.type, 'RUN_FINISHED', `session ${i}: the continuation's end (${JSON.stringify(continued)})`);
    connection.dispose();
  }
});
