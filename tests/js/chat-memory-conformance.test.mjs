// The ChatMemory conformance suite (js/testing/chat-memory-conformance.mjs): the in-memory
// memory of createMemoryChatMemory passes it, and a memory that keeps no fences (an AgentsKit
// memory, or a store that drops `options.fence`) fails exactly its fence case. The Redis and
// Postgres memories run it in tests/stores, the Durable Object memory in tests/workerd.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { createMemoryChatMemory } from '../../js/node.mjs';
import { CASES, checkChatMemory } from '../../js/testing/chat-memory-conformance.mjs';

/** Saves replace the conversation; `options.fence` is never read. */
function unfencedMemory() {
  let saved = [];
  return { load: async () => saved, save: async (messages) => void (saved = messages) };
}

test('createMemoryChatMemory passes the ChatMemory conformance suite', async () => {
  const report = await checkChatMemory(() => createMemoryChatMemory());
  assert.deepEqual(report.failed, []);
  assert.deepEqual(report.passed, Object.values(CASES));
});

test('a memory that keeps no fences fails the suite on the fence case alone', async () => {
  const report = await checkChatMemory(unfencedMemory);
  assert.deepEqual(report.failed.map((f) => f.name), [CASES.lowerFence]);
});

test('the in-memory memory refuses a fence that is not a non-negative safe integer, storing nothing', async () => {
  const memory = createMemoryChatMemory();
  const message = { id: 'm1', role: 'user', content: 'hi', status: 'complete', createdAt: '2026-01-01T00:00:00.000Z' };
  await memory.save([message], {});
  for (const fence of ['9', -1, 1.5, 2 ** 53, {}]) {
    await assert.rejects(memory.save([], { fence }), /fence must be a non-negative safe integer/, String(fence));
  }
  assert.deepEqual(await memory.load(), [message]);
});
