// The stall watch (createChatHandler's and createUIMessageChatHandler's `modelStallMs`): a model
// stream that sends a chunk and then nothing, without closing (a hung provider), is aborted and
// the turn ends as a model failure, with its messages saved and its lease released; the operator
// is told why through onError. The model is ai/test's MockLanguageModelV3 over a stream that never
// closes. Nothing here asserts a time: the test's own timeout bounds a watch that never fires.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { MockLanguageModelV3 } from 'ai/test';
import * as pkg from '../../js/node.mjs';

const { createUIMessageChatHandler, createMemoryChatMemory, createMemorySessionStorage, defineChat } = pkg;

/** A stream that says `text` and then goes quiet; `aborted` resolves when the reader cancels. */
function quietStream(text) {
  let cancelled;
  const aborted = new Promise((resolve) => (cancelled = resolve));
  const stream = new ReadableStream({
    start(controller) {
      controller.enqueue({ type: 'stream-start', warnings: [] });
      controller.enqueue({ type: 'text-start', id: 't1' });
      controller.enqueue({ type: 'text-delta', id: 't1', delta: text });
    },
    cancel: () => cancelled(),
  });
  return { stream, aborted };
}

function answered(text) {
  return new ReadableStream({
    start(controller) {
      for (const part of [
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id: 't1' },
        { type: 'text-delta', id: 't1', delta: text },
        { type: 'text-end', id: 't1' },
        { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } } },
      ]) controller.enqueue(part);
      controller.close();
    },
  });
}

const send = (chat, id, text) => chat(new Request('http://x/api/chat', {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ id: 's1', trigger: 'submit-message', messages: [{ id, role: 'user', parts: [{ type: 'text', text }] }] }),
}));

test('a model that goes quiet mid-answer ends the turn as a model failure; the session takes the next turn', async () => {
  const quiet = quietStream('half an ');
  let calls = 0;
  const model = new MockLanguageModelV3({
    doStream: async () => ({ stream: ++calls === 1 ? quiet.stream : answered('a whole answer') }),
  });
  const memory = createMemoryChatMemory();
  const faults = [];
  const storage = createMemorySessionStorage();
  const chat = createUIMessageChatHandler({
    resolveDefinition: () => defineChat({ id: 'demo', revision: 1, model, memory }),
    sessionStorage: () => storage,
    modelStallMs: 200,
    onError: (error, info) => faults.push({ stage: info.stage, message: String(error?.message ?? error) }),
  });

  const first = await send(chat, 'u1', 'hello');
  assert.equal(first.status, 200);
  const events = (await first.text()).split('\n\n').filter(Boolean).map((e) => e.replace(/^data: /, ''));
  assert.equal(events.at(-1), '[DONE]');
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
  assert.ok(chunks.some((c) => c.type === 'text-delta' && c.delta === 'half an '), 'the partial answer streamed');
  assert.ok(chunks.some((c) => c.type === 'error'), `the stream ends in an error: ${JSON.stringify(chunks)}`);
  await quiet.aborted; // the model stream was cancelled
  assert.deepEqual(faults.map((f) => f.stage), ['model']);
  assert.match(faults[0].message, /sent nothing for 200 ms/);

  const saved = await memory.load({ signal: AbortSignal.timeout(5_000) });
  assert.deepEqual(saved.map((m) => m.role), ['user', 'assistant'], 'the messages are saved');
  assert.equal(saved[1].status, 'error');

  const second = await send(chat, 'u2', 'again');
  assert.equal(second.status, 200, 'the lease was released');
  assert.match(await second.text(), /a whole answer/);
});

test('modelStallMs must be a positive integer', () => {
  const base = { resolveDefinition: () => {}, sessionStorage: () => {} };
  for (const modelStallMs of [0, -1, 1.5, '200']) {
    assert.throws(() => createUIMessageChatHandler({ ...base, modelStallMs }), /modelStallMs/, String(modelStallMs));
  }
});
