// The response's lines leave wasm memory as views into shared JS buffers (src/web/chat/slab.rs):
// a line handed to a reader never changes afterwards, and a consumer that detaches a chunk's
// buffer (transfers it) does not break the lines that follow.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import * as pkg from '../../js/node.mjs';
import { assistantText, chatRequest, demoSetup, submitEvent, words } from '../support/chat-harness.mjs';

const decoder = new TextDecoder();

/** A model that streams `w1 … wN`, one chunk per microtask (a reader keeps up with it). */
const wordsModel = (n) => ({
  async *stream() {
    for (let i = 1; i <= n; i++) {
      await Promise.resolve();
      yield { type: 'text', text: i === 1 ? 'w1' : ` w${i}` };
    }
  },
});

/** Every chunk of an n-word turn, as the reader received it (not copied). */
async function chunksOf(sessionId, n, onChunk = () => {}) {
  const { handler } = demoSetup(pkg, { chat: { model: wordsModel(n) } });
  const response = await handler(chatRequest(submitEvent({ sessionId, turnId: 't1', input: 'go' })));
  const reader = response.body.getReader();
  const chunks = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return chunks;
    chunks.push({ value, text: decoder.decode(value) });
    onChunk(value);
  }
}

const lastSnapshot = (texts) => JSON.parse(texts.at(-1).trim());

test('lines read earlier are unchanged after the whole turn (several slabs filled)', async () => {
  const chunks = await chunksOf('kept', 300);
  const total = chunks.reduce((sum, c) => sum + c.value.byteLength, 0);
  assert.ok(total > 3 * 65_536, `the turn wrote ${total} bytes: several slabs`);
  const shared = new Set(chunks.map((c) => c.value.buffer)).size;
  assert.ok(shared < chunks.length / 4, `${chunks.length} lines in ${shared} buffers`);
  for (const [i, c] of chunks.entries()) {
    assert.equal(decoder.decode(c.value), c.text, `line ${i} changed after it was read`);
    assert.equal(c.text.at(-1), '\n');
    JSON.parse(c.text);
  }
  const last = lastSnapshot(chunks.map((c) => c.text));
  assert.equal(last.payload.status, 'complete');
  assert.equal(assistantText(last.payload.messages), words(300));
});

test('a consumer that transfers every chunk’s buffer still gets every line whole', async () => {
  const chunks = await chunksOf('transferred', 120, (value) => {
    structuredClone(value.buffer, { transfer: [value.buffer] });
    assert.equal(value.byteLength, 0, 'the chunk was detached');
  });
  const texts = chunks.map((c) => c.text);
  assert.ok(texts.length > 100, `${texts.length} lines`);
  for (const text of texts) JSON.parse(text);
  const sequences = texts.map((t) => JSON.parse(t).sequence);
  assert.deepEqual(sequences, [...sequences].sort((a, b) => a - b), 'in order');
  assert.equal(assistantText(lastSnapshot(texts).payload.messages), words(120));
});
