// The response's lines leave wasm memory as views into shared JS buffers (src/web/chat/slab.rs):
// a line handed to a reader never changes afterwards, and a consumer that detaches a chunk's
// buffer (transfers it) does not break the lines that follow.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import * as pkg from '../../js/node.mjs';
import { assistantText, chatRequest, demoSetup, submitEvent } from '../support/chat-harness.mjs';

const decoder = new TextDecoder();

/** `w1 … wN`, each word padded to `bytes`: long enough for the lines to fill several slabs. */
const word = (i, bytes) => `${i === 1 ? '' : ' '}w${i}`.padEnd(bytes, '.');

/**
 * A model that streams n words, one chunk a little more than a frame apart (the stream sends at
 * most a line a frame), to a handler whose byte budget never holds a line back: a reader that
 * keeps up gets a line per chunk.
 */
const wordsModel = (n, bytes) => ({
  async *stream() {
    for (let i = 1; i <= n; i++) {
      await new Promise((resolve) => setTimeout(resolve, 18));
      yield { type: 'text', text: word(i, bytes) };
    }
  },
});

const UNPACED = { snapshotBytesPerSecond: Number.MAX_SAFE_INTEGER };

/** Every chunk of an n-word turn, as the reader received it (not copied). */
async function chunksOf(sessionId, n, bytes, onChunk = () => {}) {
  const { handler } = demoSetup(pkg, { chat: { model: wordsModel(n, bytes) }, options: UNPACED });
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
  const chunks = await chunksOf('kept', 80, 80);
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
  assert.equal(assistantText(last.payload.messages), Array.from({ length: 80 }, (_, i) => word(i + 1, 80)).join(''));
});

test('a consumer that transfers every chunk’s buffer still gets every line whole', async () => {
  const chunks = await chunksOf('transferred', 120, 4, (value) => {
    structuredClone(value.buffer, { transfer: [value.buffer] });
    assert.equal(value.byteLength, 0, 'the chunk was detached');
  });
  const texts = chunks.map((c) => c.text);
  assert.ok(texts.length > 100, `${texts.length} lines`);
  for (const text of texts) JSON.parse(text);
  const sequences = texts.map((t) => JSON.parse(t).sequence);
  assert.deepEqual(sequences, [...sequences].sort((a, b) => a - b), 'in order');
  assert.equal(assistantText(lastSnapshot(texts).payload.messages), Array.from({ length: 120 }, (_, i) => word(i + 1, 4)).join(''));
});
